//===- tofu-safetensors.cpp - Inspect and copy safetensors files ----------===//
//
// A command-line front end of include/tofu/Runtime/SafeTensors.h:
//
//   tofu-safetensors dump FILE             the header and every value
//   tofu-safetensors tile FILE NAME LO SIZES
//                                          one box (LO and SIZES are
//                                          comma-separated, empty for 0-d)
//   tofu-safetensors copy IN OUT           reads every tensor of IN and
//                                          writes them with their metadata
//                                          to OUT
//
// A file that does not parse is an error with the reason (exit 1).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/SafeTensors.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

using namespace tofu::safetensors;

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "tofu-safetensors: %s\n", message.c_str());
  return 1;
}

/// Prints element `i` of `bytes` as `type`.
void printElement(DType type, const uint8_t *p) {
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (type) {
  case DType::F32:
    std::printf("%.9g", double(get(float())));
    return;
  case DType::F64:
    std::printf("%.17g", get(double()));
    return;
  case DType::I8:
    std::printf("%d", int(get(int8_t())));
    return;
  case DType::I16:
    std::printf("%d", int(get(int16_t())));
    return;
  case DType::I32:
    std::printf("%" PRId32, get(int32_t()));
    return;
  case DType::I64:
    std::printf("%" PRId64, get(int64_t()));
    return;
  case DType::U16:
    std::printf("%u", unsigned(get(uint16_t())));
    return;
  case DType::U32:
    std::printf("%" PRIu32, get(uint32_t()));
    return;
  case DType::U64:
    std::printf("%" PRIu64, get(uint64_t()));
    return;
  default: // BOOL, U8, 8- and 16-bit floats: the raw code
    std::printf("0x");
    for (size_t i = getDTypeSize(type); i-- > 0;)
      std::printf("%02x", p[i]);
    return;
  }
}

/// Reads the box `lo` + `sizes` of `tensor` into a row-major buffer.
bool readBox(const MappedFile &file, const Header &header,
             const TensorInfo &tensor, const std::vector<int64_t> &lo,
             const std::vector<int64_t> &sizes, std::vector<uint8_t> &out,
             std::string &error) {
  std::vector<int64_t> strides(sizes.size(), 1);
  uint64_t n = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = int64_t(n);
    n *= uint64_t(sizes[d] < 0 ? 0 : sizes[d]);
  }
  out.assign(n * getDTypeSize(tensor.dtype), 0);
  return readTile(file.data(), file.size(), header, tensor, lo, sizes,
                  out.data(), strides, error);
}

void printValues(DType type, const std::vector<uint8_t> &bytes) {
  size_t es = getDTypeSize(type);
  for (size_t i = 0; i < bytes.size(); i += es) {
    std::printf(i ? " " : "  ");
    printElement(type, bytes.data() + i);
  }
  std::printf("\n");
}

bool parseList(const char *text, std::vector<int64_t> &out) {
  std::string s(text);
  size_t pos = 0;
  while (pos < s.size()) {
    size_t comma = s.find(',', pos);
    std::string item = s.substr(
        pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char *end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end)
      return false;
    out.push_back(v);
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    return fail("usage: tofu-safetensors dump FILE | tile FILE NAME LO SIZES "
                "| copy IN OUT");
  std::string command = argv[1], error;
  std::unique_ptr<MappedFile> file = MappedFile::open(argv[2], error);
  if (!file)
    return fail(error);
  Header header;
  if (!parseHeader(file->data(), file->size(), header, error))
    return fail(std::string(argv[2]) + ": " + error);

  if (command == "dump" && argc == 3) {
    header.dump(std::cout);
    std::cout.flush();
    for (const TensorInfo &t : header.tensors) {
      std::vector<uint8_t> bytes;
      if (!readBox(*file, header, t, std::vector<int64_t>(t.shape.size(), 0),
                   t.shape, bytes, error))
        return fail(error);
      std::printf("%s:\n", t.name.c_str());
      printValues(t.dtype, bytes);
    }
    return 0;
  }
  if (command == "tile" && argc == 6) {
    const TensorInfo *t = header.find(argv[3]);
    if (!t)
      return fail(std::string("no tensor '") + argv[3] + "'");
    std::vector<int64_t> lo, sizes;
    if (!parseList(argv[4], lo) || !parseList(argv[5], sizes))
      return fail("LO and SIZES are comma-separated integers");
    std::vector<uint8_t> bytes;
    if (!readBox(*file, header, *t, lo, sizes, bytes, error))
      return fail(error);
    printValues(t->dtype, bytes);
    return 0;
  }
  if (command == "copy" && argc == 4) {
    std::vector<std::vector<uint8_t>> buffers;
    std::vector<TensorData> tensors;
    for (const TensorInfo &t : header.tensors) {
      buffers.emplace_back();
      if (!readBox(*file, header, t, std::vector<int64_t>(t.shape.size(), 0),
                   t.shape, buffers.back(), error))
        return fail(error);
    }
    for (size_t i = 0; i < header.tensors.size(); ++i) {
      const TensorInfo &t = header.tensors[i];
      tensors.push_back({{t.name, t.dtype, t.shape}, buffers[i].data()});
    }
    if (!writeFile(argv[3], tensors, header.metadata, error))
      return fail(error);
    return 0;
  }
  return fail("unknown command or wrong arguments: " + command);
}
