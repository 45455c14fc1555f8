"""safetensors files with the standard library only.

    from tofu import safetensors
    safetensors.save("w.safetensors",
                     {"w1": ("F32", [2, 3], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])},
                     metadata={"step": "3"})
    tensors = safetensors.load("w.safetensors")
    dtype, shape, values = tensors["w1"]       # "F32", [2, 3], array('f', ...)
    tensors, metadata = safetensors.load_with_metadata("w.safetensors")

A file is an 8-byte little-endian header length N, N bytes of JSON
(`{"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
"__metadata__": {str: str}}`, padded with spaces) and the data section, in
which each tensor's row-major little-endian elements lie at [begin, end).

Values load as `array.array` ('f' for F32, F16 and BF16, 'd' for F64, signed
and unsigned integers of their width, 'B' for F8 codes) and BOOL as a list
of bools. `save` takes any sequence of numbers (or bools). It lays files out
as the C++ writer (include/tofu/Runtime/SafeTensors.h) does, byte for byte
for ASCII names: tensors ordered by element size, largest first, without
gaps, and the header padded so that the data starts at a multiple of 8.

`load` checks what the C++ reader checks and raises `SafeTensorsError` with
the reason: header length, JSON syntax, unique names, known dtypes, sizes
that match the shapes, offsets inside the data section and no overlaps.

    python3 -m tofu.safetensors FILE     prints each tensor's dtype and shape
"""

import array
import json
import struct
import sys

# name: (bytes per element, array typecode or None)
DTYPES = {
    "BOOL": (1, None), "U8": (1, "B"), "I8": (1, "b"),
    "F8_E5M2": (1, "B"), "F8_E4M3": (1, "B"),
    "I16": (2, "h"), "U16": (2, "H"), "F16": (2, "f"), "BF16": (2, "f"),
    "I32": (4, None), "U32": (4, None), "F32": (4, "f"),
    "I64": (8, None), "U64": (8, None), "F64": (8, "d"),
}

MAX_HEADER = 100_000_000


class SafeTensorsError(ValueError):
    """A file that is not a valid safetensors file, or tensors that cannot
    be saved."""


def _int_code(size, signed):
    """The array typecode of integers of `size` bytes."""
    for code in ("bhilq" if signed else "BHILQ"):
        if array.array(code).itemsize == size:
            return code
    raise SafeTensorsError(f"no array type holds {size}-byte integers")


def _typecode(dtype):
    size, code = DTYPES[dtype]
    if code is None and dtype != "BOOL":
        code = _int_code(size, dtype.startswith("I"))
    return code


def _count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _decode(dtype, raw):
    """The values of `raw` (little-endian bytes) as `dtype`."""
    if dtype == "BOOL":
        return [b != 0 for b in raw]
    if dtype == "F16":
        return array.array("f", (v for (v,) in struct.iter_unpack("<e", raw)))
    if dtype == "BF16":
        halves = array.array("H", raw)
        if sys.byteorder == "big":
            halves.byteswap()
        return array.array("f", (struct.unpack("<f", struct.pack("<I", h << 16))[0]
                                 for h in halves))
    values = array.array(_typecode(dtype))
    values.frombytes(raw)
    if sys.byteorder == "big" and values.itemsize > 1:
        values.byteswap()
    return values


def _encode(dtype, values, count, name):
    """`values` as little-endian bytes of `dtype`."""
    values = list(values) if not isinstance(values, array.array) else values
    if len(values) != count:
        raise SafeTensorsError(f"tensor '{name}': {len(values)} values for "
                               f"a shape of {count} elements")
    if dtype == "BOOL":
        return bytes(1 if v else 0 for v in values)
    if dtype == "F16":
        return b"".join(struct.pack("<e", v) for v in values)
    if dtype == "BF16":
        # Rounded to nearest even from the f32 bits.
        out = bytearray()
        for v in values:
            (bits,) = struct.unpack("<I", struct.pack("<f", v))
            if (bits & 0x7F800000) == 0x7F800000 and bits & 0xFFFF:
                top = (bits >> 16) | 0x40  # NaN stays NaN
            else:
                top = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
            out += struct.pack("<H", top & 0xFFFF)
        return bytes(out)
    code = _typecode(dtype)
    if isinstance(values, array.array) and values.typecode == code:
        arr = array.array(code, values)
    else:
        try:
            arr = array.array(code, values)
        except (OverflowError, TypeError) as e:
            raise SafeTensorsError(f"tensor '{name}': {e}") from None
    if sys.byteorder == "big" and arr.itemsize > 1:
        arr.byteswap()
    return arr.tobytes()


class _Object(list):
    """A JSON object, as its (key, value) pairs in order."""


def _no_duplicates(pairs):
    keys = set()
    for k, _ in pairs:
        if k in keys:
            raise SafeTensorsError(f"'{k}' appears twice")
        keys.add(k)
    return _Object(pairs)


def parse_header(data):
    """Parses and checks the header of the file contents `data` (bytes).
    Returns (list of (name, dtype, shape, begin, end), metadata dict, the
    offset of the data section)."""
    if len(data) < 8:
        raise SafeTensorsError(f"the file has {len(data)} bytes, fewer than "
                               "the 8 of the header length")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise SafeTensorsError(f"the header length {n} is larger than the "
                               f"rest of the file ({len(data) - 8} bytes)")
    if n > MAX_HEADER:
        raise SafeTensorsError(f"the header length {n} is over the limit")
    try:
        text = data[8:8 + n].decode("utf-8")
        pairs = json.loads(text, object_pairs_hook=_no_duplicates,
                           parse_constant=lambda c: c)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SafeTensorsError(f"invalid JSON header: {e}") from None
    if not isinstance(pairs, _Object):
        raise SafeTensorsError("the JSON header is not an object")
    start = 8 + n
    size = len(data) - start
    tensors, metadata = [], {}
    for name, entry in pairs:
        if name == "__metadata__":
            if not isinstance(entry, _Object):
                raise SafeTensorsError("'__metadata__' is not an object")
            for k, v in entry:
                if not isinstance(v, str):
                    raise SafeTensorsError(f"metadata '{k}' is not a string")
                metadata[k] = v
            continue
        if not isinstance(entry, _Object):
            raise SafeTensorsError(f"tensor '{name}': its entry is not an "
                                   "object")
        fields = dict(entry)
        unknown = set(fields) - {"dtype", "shape", "data_offsets"}
        if unknown:
            raise SafeTensorsError(f"tensor '{name}': unknown key "
                                   f"'{sorted(unknown)[0]}'")
        for key in ("dtype", "shape", "data_offsets"):
            if key not in fields:
                raise SafeTensorsError(f"tensor '{name}': missing '{key}'")
        dtype, shape, offsets = (fields["dtype"], fields["shape"],
                                 fields["data_offsets"])
        if dtype not in DTYPES:
            raise SafeTensorsError(f"tensor '{name}': unknown dtype "
                                   f"'{dtype}'")

        def is_uint(x, bits):
            return (type(x) is int and 0 <= x < 2 ** bits)
        if type(shape) is not list or not all(is_uint(d, 63)
                                                  for d in shape):
            raise SafeTensorsError(f"tensor '{name}': a dimension of 'shape' "
                                   "is not a non-negative 64-bit integer")
        if (type(offsets) is not list or len(offsets) != 2 or
                not all(is_uint(o, 64) for o in offsets)):
            raise SafeTensorsError(f"tensor '{name}': 'data_offsets' is not "
                                   "an array of two 64-bit integers")
        begin, end = offsets
        nbytes = _count(shape) * DTYPES[dtype][0]
        if begin > end:
            raise SafeTensorsError(f"tensor '{name}': data_offsets end "
                                   "before they begin")
        if end - begin != nbytes:
            raise SafeTensorsError(f"tensor '{name}': its shape and dtype "
                                   f"give {nbytes} bytes but data_offsets "
                                   f"hold {end - begin}")
        if end > size:
            raise SafeTensorsError(f"tensor '{name}': data_offsets end at "
                                   f"{end}, past the data section of {size} "
                                   "bytes")
        tensors.append((name, dtype, list(shape), begin, end))
    last = None
    for t in sorted((t for t in tensors if t[3] != t[4]),
                    key=lambda t: (t[3], t[4])):
        if last is not None and t[3] < last[4]:
            raise SafeTensorsError(f"tensors '{last[0]}' and '{t[0]}' "
                                   "overlap")
        if last is None or t[4] > last[4]:
            last = t
    return tensors, metadata, start


def load_with_metadata(path):
    """Reads `path`: ({name: (dtype, shape, values)}, {key: value})."""
    with open(path, "rb") as f:
        data = f.read()
    entries, metadata, start = parse_header(data)
    tensors = {}
    for name, dtype, shape, begin, end in entries:
        tensors[name] = (dtype, shape,
                         _decode(dtype, data[start + begin:start + end]))
    return tensors, metadata


def load(path):
    """Reads `path`: {name: (dtype, shape, values)}."""
    return load_with_metadata(path)[0]


def _json_string(s):
    """`s` as the C++ writer escapes it."""
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def dumps(tensors, metadata=None):
    """The bytes of a file holding `tensors` ({name: (dtype, shape,
    values)}) and `metadata` ({str: str})."""
    metadata = metadata or {}
    specs = []
    for name, (dtype, shape, values) in tensors.items():
        if not name or name == "__metadata__":
            raise SafeTensorsError(f"invalid tensor name '{name}'")
        if dtype not in DTYPES:
            raise SafeTensorsError(f"tensor '{name}': unknown dtype "
                                   f"'{dtype}'")
        shape = list(shape)
        if any(type(d) is not int or d < 0 for d in shape):
            raise SafeTensorsError(f"tensor '{name}': a dimension is not a "
                                   "non-negative integer")
        specs.append((name, dtype, shape,
                      _encode(dtype, values, _count(shape), name)))
    # Stable: largest elements first, otherwise as given.
    specs.sort(key=lambda s: -DTYPES[s[1]][0])
    parts, offset, data = [], 0, []
    if metadata:
        parts.append(_json_string("__metadata__") + ":{" + ",".join(
            _json_string(str(k)) + ":" + _json_string(str(v))
            for k, v in metadata.items()) + "}")
    for name, dtype, shape, raw in specs:
        parts.append(f'{_json_string(name)}:{{"dtype":"{dtype}","shape":['
                     f'{",".join(str(d) for d in shape)}],"data_offsets":'
                     f'[{offset},{offset + len(raw)}]}}')
        offset += len(raw)
        data.append(raw)
    header = ("{" + ",".join(parts) + "}").encode("utf-8")
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + b"".join(data)


def save(path, tensors, metadata=None):
    """Writes `tensors` ({name: (dtype, shape, values)}) and `metadata`
    ({str: str}) to `path`."""
    data = dumps(tensors, metadata)
    with open(path, "wb") as f:
        f.write(data)


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--values", action="store_true",
                    help="print every value too")
    args = ap.parse_args(argv)
    try:
        tensors, metadata = load_with_metadata(args.file)
    except (OSError, SafeTensorsError) as e:
        sys.stderr.write(f"{args.file}: {e}\n")
        return 1
    for k, v in metadata.items():
        print(f"metadata {k} = {v}")
    for name, (dtype, shape, values) in tensors.items():
        print(f"{name}: {dtype} {list(shape)}")
        if args.values:
            print("  " + " ".join(repr(v) if isinstance(v, float) else str(v)
                                  for v in values))
    return 0


if __name__ == "__main__":
    from tofu import cli
    cli.run_main(main)
