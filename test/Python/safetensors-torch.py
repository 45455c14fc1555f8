# Files that PyTorch writes read identically with tofu.safetensors, and files
# that tofu.safetensors writes read identically in PyTorch. The PyTorch side
# uses the `safetensors` package where it is installed, else a small writer
# and reader below built on torch.frombuffer. Needs a Python with torch.
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: env PYTHONPATH=%tofu_src/python %torch_python %s %t | FileCheck %s
#
# CHECK: torch -> tofu: 5 tensors identical
# CHECK: tofu -> torch: 5 tensors identical

import json
import os
import struct
import sys

import torch

from tofu import safetensors

TO_DTYPE = {torch.float32: "F32", torch.float64: "F64", torch.int32: "I32",
            torch.int64: "I64", torch.float16: "F16", torch.bfloat16: "BF16"}
FROM_DTYPE = {v: k for k, v in TO_DTYPE.items()}


def torch_save(tensors, path):
    try:
        from safetensors.torch import save_file
        save_file(tensors, path, metadata={"format": "pt"})
        return
    except ImportError:
        pass
    header, data, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        raw = bytes(t.contiguous().view(-1).view(torch.uint8).tolist())
        header[name] = {"dtype": TO_DTYPE[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        data.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(data))


def torch_load(path):
    try:
        from safetensors.torch import load_file
        return load_file(path)
    except ImportError:
        pass
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    out = {}
    for name, e in json.loads(data[8:8 + n]).items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        raw = bytearray(data[8 + n + b:8 + n + end])
        t = (torch.frombuffer(raw, dtype=FROM_DTYPE[e["dtype"]])
             if raw else torch.empty(0, dtype=FROM_DTYPE[e["dtype"]]))
        out[name] = t.reshape(e["shape"])
    return out


def main(dir):
    g = torch.Generator().manual_seed(0)
    tensors = {
        "w": torch.randn(3, 4, generator=g),
        "w64": torch.randn(5, dtype=torch.float64, generator=g),
        "ids": torch.tensor([[-1, 2**40], [3, 0]], dtype=torch.int64),
        "half": torch.tensor([1.5, -0.125, 65504.0], dtype=torch.float16),
        "scalar": torch.tensor(7, dtype=torch.int32),
    }
    path = os.path.join(dir, "torch.safetensors")
    torch_save(tensors, path)
    loaded = safetensors.load(path)
    for name, t in tensors.items():
        dtype, shape, values = loaded[name]
        assert dtype == TO_DTYPE[t.dtype], (name, dtype)
        assert shape == list(t.shape), (name, shape)
        assert list(values) == t.reshape(-1).tolist(), name
    print(f"torch -> tofu: {len(tensors)} tensors identical")

    ours = {name: (TO_DTYPE[t.dtype], list(t.shape), t.reshape(-1).tolist())
            for name, t in tensors.items()}
    path = os.path.join(dir, "tofu.safetensors")
    safetensors.save(path, ours, {"format": "pt"})
    back = torch_load(path)
    for name, t in tensors.items():
        assert back[name].dtype == t.dtype, name
        assert torch.equal(back[name], t), name
    print(f"tofu -> torch: {len(tensors)} tensors identical")


if __name__ == "__main__":
    main(sys.argv[1])
