# tofu.safetensors (Python, standard library only) and the C++ reader and
# writer of the runtime (tofu-safetensors) agree: a file that Python writes
# reads back in C++ with the same values, tiles and metadata, and the C++
# writer rewrites it byte for byte; what C++ writes reads back in Python.
# Corrupt files are errors in both, never crashes.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s write %t
# RUN: tofu-safetensors dump %t/w.safetensors | FileCheck %s --check-prefix=DUMP
# RUN: tofu-safetensors tile %t/w.safetensors cube 1,0,1 1,2,2 | FileCheck %s --check-prefix=TILE
# RUN: tofu-safetensors copy %t/w.safetensors %t/copy.safetensors
# RUN: cmp %t/w.safetensors %t/copy.safetensors
# RUN: %python %s read %t/copy.safetensors | FileCheck %s --check-prefix=READ
# RUN: %python %s corrupt %t
# RUN: not tofu-safetensors dump %t/overlap.safetensors 2>&1 | FileCheck %s --check-prefix=OVERLAP
# RUN: not tofu-safetensors dump %t/truncated.safetensors 2>&1 | FileCheck %s --check-prefix=TRUNCATED
# RUN: not tofu-safetensors dump %t/dtype.safetensors 2>&1 | FileCheck %s --check-prefix=DTYPE
# RUN: not %python -m tofu.safetensors %t/overlap.safetensors 2>&1 | FileCheck %s --check-prefix=OVERLAP
# RUN: not %python -m tofu.safetensors %t/truncated.safetensors 2>&1 | FileCheck %s --check-prefix=TRUNCATED
# RUN: not %python -m tofu.safetensors %t/dtype.safetensors 2>&1 | FileCheck %s --check-prefix=DTYPE

# DUMP:      safetensors header: {{[0-9]+}} bytes of JSON, data at {{[0-9]*[02468]}}
# DUMP-NEXT:   w: F64 [2, 2] bytes [0, 32)
# DUMP-NEXT:   ids: I64 [3] bytes [32, 56)
# DUMP-NEXT:   b: F32 [3] bytes [56, 68)
# DUMP-NEXT:   cube: F32 [2, 3, 4] bytes [68, 164)
# DUMP-NEXT:   n: I32 [] bytes [164, 168)
# DUMP-NEXT:   metadata format = pt
# DUMP-NEXT:   metadata step = 3
# DUMP:      w:
# DUMP-NEXT:   0.10000000000000001 -2.5 1e-300 3
# DUMP:      ids:
# DUMP-NEXT:   -1 0 1099511627776
# DUMP:      b:
# DUMP-NEXT:   0.5 -0.25 3.40282347e+38
# DUMP:      cube:
# DUMP-NEXT:   0 1 2 3 10 11 12 13 20 21 22 23 100 101 102 103 110 111 112 113 120 121 122 123
# DUMP:      n:
# DUMP-NEXT:   -7

# TILE: 101 102 111 112

# READ:      metadata format = pt
# READ-NEXT: metadata step = 3
# READ-NEXT: w: F64 [2, 2] [0.1, -2.5, 1e-300, 3.0]
# READ-NEXT: ids: I64 [3] [-1, 0, 1099511627776]
# READ-NEXT: b: F32 [3] [0.5, -0.25, 3.4028234663852886e+38]
# READ-NEXT: cube: F32 [2, 3, 4] [0.0, 1.0, 2.0, 3.0, 10.0,
# READ-NEXT: n: I32 [] [-7]

# OVERLAP: tensors 'a' and 'b' overlap
# TRUNCATED: the header length {{[0-9]+}} is larger than the rest of the file
# DTYPE: tensor 'a': unknown dtype 'F128'

import os
import struct
import sys

from tofu import safetensors


def write(dir):
    cube = [100.0 * i + 10 * j + k
            for i in range(2) for j in range(3) for k in range(4)]
    safetensors.save(os.path.join(dir, "w.safetensors"), {
        "b": ("F32", [3], [0.5, -0.25, 3.4028234663852886e38]),
        "w": ("F64", [2, 2], [0.1, -2.5, 1e-300, 3.0]),
        "cube": ("F32", [2, 3, 4], cube),
        "n": ("I32", [], [-7]),
        "ids": ("I64", [3], [-1, 0, 1 << 40]),
    }, metadata={"format": "pt", "step": "3"})


def read(path):
    tensors, metadata = safetensors.load_with_metadata(path)
    for k, v in metadata.items():
        print(f"metadata {k} = {v}")
    for name, (dtype, shape, values) in tensors.items():
        print(f"{name}: {dtype} {shape} {list(values)}")


def raw(json):
    data = json.encode()
    return struct.pack("<Q", len(data)) + data


def corrupt(dir):
    files = {
        "overlap": raw('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                       '"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}'
                       ) + bytes(12),
        "truncated": struct.pack("<Q", 1000) + b'{"a":',
        "dtype": raw('{"a":{"dtype":"F128","shape":[1],'
                     '"data_offsets":[0,16]}}') + bytes(16),
    }
    for name, data in files.items():
        with open(os.path.join(dir, name + ".safetensors"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    {"write": write, "read": read, "corrupt": corrupt}[sys.argv[1]](
        sys.argv[2])
