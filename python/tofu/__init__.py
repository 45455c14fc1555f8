"""Tofu-MLIR Python tools (standard library only): the model zoo
(`python3 -m tofu.models`) and the TDL DSL (`tofu.tdl`)."""
