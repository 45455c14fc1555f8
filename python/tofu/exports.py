"""The PyTorch modules that the repo's torch-mlir-style exports came from.

`models/torch-mlir-style/*.mlir` are written in the form torch-mlir's
TorchToLinalg emits for a PyTorch module. Here is the module of each
export with a loss, and how its parameters map to the export's arguments:
`tofu-run --list-inputs` names an argument without `tofu.name` `arg<N>`,
N being its position in `@forward`. `python3 -m tofu.torchcheck --export
NAME` trains the module in PyTorch and the export in tofu-run from the
same files and compares them.

    EXPORTS[name] = (path of the export, weights= and inputs= of
                     tofu-autodiff, builder(torch, dtype) -> ExportTwin)

This module imports torch only inside its functions.
"""

import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _twin_class(torch):
    class ExportTwin(torch.nn.Module):
        """A module with the interface of tofu.twins' twins: `params` maps
        the export's argument names (arg<N>) to the module's parameters,
        `data_names` lists the data arguments in `@forward` order, and
        calling it with the data returns the loss."""

        def __init__(self, model, module, weights, data_names, loss):
            super().__init__()
            self.model = model
            self.module = module
            self.weight_names = list(weights)
            self.data_names = data_names
            self._weights = weights
            self._loss = loss

        @property
        def params(self):
            named = dict(self.module.named_parameters())
            return {arg: named[p] for arg, p in self._weights.items()}

        def forward(self, *data):
            return self._loss(self.module, *data)

        def load(self, values):
            with torch.no_grad():
                for arg, param in self.params.items():
                    param.copy_(values[arg])
            return self
    return ExportTwin


def mlp_loss(torch, dtype):
    """models/torch-mlir-style/mlp-loss.mlir: Linear(6, 8), ReLU,
    Linear(8, 3) and F.mse_loss against the target (arguments: x, w0, b0,
    w1, b1, target)."""
    tdtype = torch.float64 if dtype == "f64" else torch.float32
    module = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(),
                                 torch.nn.Linear(8, 3)).to(tdtype)
    weights = {"arg1": "0.weight", "arg2": "0.bias", "arg3": "2.weight",
               "arg4": "2.bias"}
    loss = lambda m, x, target: torch.nn.functional.mse_loss(m(x), target)
    return _twin_class(torch)("mlp-loss", module, weights, ["arg0", "arg5"],
                              loss)


EXPORTS = {
    "mlp-loss": (os.path.join(REPO, "models", "torch-mlir-style",
                              "mlp-loss.mlir"), "weights=all inputs=0",
                 mlp_loss),
}
