"""Prints a PNG's size, whether it is the size its SVG declares, and whether
anything is drawn (some pixel row differs from the first), decoding the
PNG with the standard library (8-bit RGB or RGBA, no interlace)."""
import re
import struct
import sys
import zlib

data = open(sys.argv[1], "rb").read()
width, height, depth, colour, _, _, interlace = struct.unpack(
    ">IIBBBBB", data[16:29])
svg = open(sys.argv[2]).read()
declared = tuple(map(int, re.search(r"<svg [^>]*width='(\d+)' height='(\d+)'",
                                    svg).groups()))
print("png %dx%d, as the svg declares: %s" %
      (width, height, "yes" if (width, height) == declared else "no"))
pos, idat = 8, b""
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + length]
    pos += 12 + length
raw = zlib.decompress(idat)
channels = {2: 3, 6: 4}.get(colour)
if depth != 8 or channels is None or interlace:
    print("drawn: cannot decode this PNG")
    sys.exit(0)
stride = width * channels + 1
rows = {raw[r * stride + 1:(r + 1) * stride] for r in range(height)
        if raw[r * stride] == 0}
# Unfiltered rows only; a picture with tiles and text has rows that differ.
print("drawn:", "yes" if len(rows) > 2 else "no")
