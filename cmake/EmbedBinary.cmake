# Writes the bytes of INPUT as a C array NAME, 16-byte aligned (a CUDA
# fatbin must be 8-byte aligned), to OUTPUT:
#   cmake -DINPUT=f.fatbin -DOUTPUT=f.c -DNAME=symbol -P EmbedBinary.cmake
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR bytes "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," array "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n  " array "${array}")
file(WRITE ${OUTPUT}
  "/* Generated from ${INPUT} by cmake/EmbedBinary.cmake. */\n"
  "const unsigned char ${NAME}[${bytes}] __attribute__((aligned(16))) = {\n"
  "  ${array}\n};\n")
