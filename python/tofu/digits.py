"""The digits demo: a real dataset trained partitioned, checked in PyTorch.

    /usr/bin/python3 -m tofu.digits --build build --out build/demo

1. Takes scikit-learn's handwritten digits (1,797 images of 8x8 pixels,
   `sklearn.datasets.load_digits`), shuffles them with a fixed seed and
   keeps 360 for testing; the 1,437 others go to `digits-data.safetensors`
   (pixels scaled to [0, 1], labels one-hot).
2. Builds an MLP training step (the zoo's `mlp`, Adam), searches the plan
   with the least communication over --ranks devices and partitions it.
3. Trains it with `mpiexec -n RANKS tofu-run --data ... --save ...`, one
   batch of 64 images per step, printing the loss every 50 steps, and
   compares the bytes the ranks moved with the plan's prediction.
4. Loads the checkpoint into the model's PyTorch twin (`tofu.twins`) and
   prints its accuracy on the 360 test images; draws the loss curve as a
   PNG with matplotlib.

Needs Debian's python3-sklearn, python3-torch and python3-matplotlib.
"""

import argparse
import json
import os
import re
import subprocess
import sys

from tofu import cli, models, safetensors, twins

MODEL = dict(layers=2, hidden=64, batch=64, features=64, classes=10)
TEST_IMAGES = 360


def run(cmd, **kwargs):
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.stderr.write(f"digits: {' '.join(cmd)} failed:\n{done.stderr}")
        sys.exit(1)
    return done


def load_split(seed):
    """(train x, train labels, test x, test labels) as nested lists."""
    import numpy
    from sklearn.datasets import load_digits
    digits = load_digits()
    order = numpy.random.RandomState(seed).permutation(len(digits.target))
    x = (digits.data[order] / 16.0).tolist()
    y = digits.target[order].tolist()
    return x[TEST_IMAGES:], y[TEST_IMAGES:], x[:TEST_IMAGES], y[:TEST_IMAGES]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m tofu.digits",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build", help="the build directory")
    ap.add_argument("--out", default="build/demo", help="where files go")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mpiexec", default="mpiexec")
    args = ap.parse_args(argv)
    for option in ("ranks", "steps"):
        if getattr(args, option) < 1:
            ap.error(f"--{option} must be at least 1")
    tofu_opt = os.path.join(args.build, "bin", "tofu-opt")
    tofu_run = os.path.join(args.build, "bin", "tofu-run")
    for tool in (tofu_opt, tofu_run):
        if not os.path.isfile(tool):
            ap.error(f"--build: no {tool}; give the build directory")
    problem = cli.tool_problem("--mpiexec", args.mpiexec)
    if problem:
        ap.error(problem)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        ap.error(f"--out: {args.out} is not a directory")
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as err:
        ap.error(f"--out: cannot create {args.out}: {err.strerror}")
    import torch
    path = lambda name: os.path.join(args.out, name)

    train_x, train_y, test_x, test_y = load_split(args.seed)
    classes = MODEL["classes"]
    one_hot = [float(label == c) for label in train_y for c in range(classes)]
    safetensors.save(path("digits-data.safetensors"), {
        "x": ("F32", [len(train_x), MODEL["features"]],
              [v for row in train_x for v in row]),
        "labels": ("F32", [len(train_y), classes], one_hot)})
    print(f"digits: {len(train_x) + len(test_x)} images of 8x8 pixels, "
          f"{len(train_x)} to train ({path('digits-data.safetensors')}), "
          f"{len(test_x)} to test")

    b, loss = models.build("mlp", "f32", **MODEL)
    with open(path("digits-forward.mlir"), "w") as f:
        f.write(b.finish(loss))
    plan_file = path("digits-plan.json")
    run([tofu_opt, path("digits-forward.mlir"), "--tofu-autodiff",
         f"--tofu-optimizer=kind=adam lr={args.lr!r}", "--tdl-attach",
         f"--tofu-search=devices={args.ranks} report=none plan-out={plan_file}",
         "--tofu-partition", "-o", path("digits-step.mlir")])
    with open(plan_file) as f:
        plan = json.load(f)
    predicted = plan.get("program_bytes")
    print(f"model: MLP {MODEL['features']}-{MODEL['hidden']}-{classes} "
          f"(ReLU, softmax cross-entropy), Adam lr {args.lr:g}, batch "
          f"{MODEL['batch']}; plan for {args.ranks} devices: {plan_file}")

    print(f"training: mpiexec -n {args.ranks} tofu-run "
          f"{path('digits-step.mlir')} --data ... --steps {args.steps} "
          f"--save {path('digits.safetensors')}")
    proc = subprocess.Popen(
        [args.mpiexec, "-n", str(args.ranks), tofu_run,
         path("digits-step.mlir"), "--data", path("digits-data.safetensors"),
         "--steps", str(args.steps), "--save", path("digits.safetensors")],
        stdout=subprocess.PIPE, text=True)
    losses, measured = [], None
    for line in proc.stdout:
        m = re.match(r"step (\d+): loss (\S+)", line)
        if m:
            losses.append(float(m.group(2)))
            step = int(m.group(1))
            if step % 50 == 0 or step == args.steps - 1:
                print(f"  step {step:4d}: loss {losses[-1]:.4f}", flush=True)
        m = re.match(r"measured bytes per step: (\d+)", line)
        if m:
            measured = int(m.group(1))
    if proc.wait() != 0 or len(losses) != args.steps:
        sys.stderr.write("digits: tofu-run failed\n")
        return 1
    if predicted is not None and measured is not None:
        print(f"communication: {measured} B/step measured, "
              f"{predicted:.0f} B/step in the plan")

    # The checkpoint in the PyTorch twin.
    tensors = safetensors.load(path("digits.safetensors"))
    twin, _ = twins.build("mlp", MODEL, "f32")
    twin.load({n: torch.tensor(list(v), dtype=torch.float32).reshape(shape)
               for n, (_, shape, v) in tensors.items()
               if n in twin.weight_names})
    with torch.no_grad():
        logits = twins.mlp_logits(torch, twin.params, twin.options,
                                  torch.tensor(test_x, dtype=torch.float32))
    predicted_class = logits.argmax(dim=1).tolist()
    right = sum(p == t for p, t in zip(predicted_class, test_y))
    print(f"test accuracy: {100.0 * right / len(test_y):.1f}% "
          f"({right} of {len(test_y)} test images; checkpoint "
          f"{path('digits.safetensors')} at step {args.steps}, loaded into "
          "the PyTorch twin)")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(range(len(losses)), losses, linewidth=1)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss")
    ax.set_title(f"Digits MLP on {args.ranks} MPI ranks (tofu-run)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path("digits-loss.png"), dpi=100)
    print(f"loss curve: {path('digits-loss.png')}")
    return 0


if __name__ == "__main__":
    cli.run_main(main)
