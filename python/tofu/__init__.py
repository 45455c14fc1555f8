"""Tofu-MLIR Python tools (standard library only): the model zoo
(`python3 -m tofu.models`), plan checks (`tofu.plan`), the differential
test (`tofu.difftest`) and the TDL DSL (`tofu.tdl`). `python3 -m tofu
COMMAND` (or `build/bin/tofu COMMAND`) runs the first three."""
