//===- SafeTensors.h - Reading and writing safetensors files ----*- C++ -*-===//
//
// The safetensors format, read and written without MLIR or third-party code,
// so that the CPU runtime can load each rank's own tile of a weight and write
// checkpoints. A file is
//
//   8 bytes    N, a little-endian u64
//   N bytes    a JSON object: {"NAME": {"dtype": "F32", "shape": [2, 3],
//              "data_offsets": [BEGIN, END]}, ..., "__metadata__": {"k": "v"}},
//              possibly padded with trailing spaces
//   the rest   the data section: each tensor's row-major little-endian
//              elements at [BEGIN, END), relative to the data section's start
//
// parseHeader() validates every field of an untrusted file and never reads
// outside the bytes it is given; readTile() copies one box of a tensor into a
// strided buffer. layoutHeader() computes the header and every tensor's file
// offset before any data exists, so that several processes can each write
// their tiles at known offsets (writeTile()); writeFile() writes a whole file
// from one process.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_SAFETENSORS_H
#define TOFU_RUNTIME_SAFETENSORS_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tofu {
namespace safetensors {

/// The element types of the format.
enum class DType {
  BOOL,
  U8,
  I8,
  F8_E5M2,
  F8_E4M3,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  I64,
  U64,
  F64,
};

/// The bytes of one element of `type`.
size_t getDTypeSize(DType type);
/// The name the format gives `type` ("F32").
const char *getDTypeName(DType type);
/// The type named `name`, or std::nullopt for a name the format does not
/// define.
std::optional<DType> parseDType(std::string_view name);

/// One tensor of a file.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Byte offsets of its data, relative to the start of the data section.
  uint64_t begin = 0, end = 0;

  /// The number of elements (1 for a 0-d tensor). Callers rely on
  /// parseHeader() or layoutHeader() having checked that it does not
  /// overflow.
  uint64_t getNumElements() const;
};

/// The parsed header of a file.
struct Header {
  /// N: the bytes of the JSON text (with its padding).
  uint64_t jsonSize = 0;
  /// The file offset of the data section: 8 + N.
  uint64_t dataStart = 0;
  /// The tensors in the order of the JSON text.
  std::vector<TensorInfo> tensors;
  /// `__metadata__`, in the order of the JSON text.
  std::vector<std::pair<std::string, std::string>> metadata;

  /// The tensor named `name`, or null.
  const TensorInfo *find(std::string_view name) const;
  /// Checks the invariants that parseHeader() establishes for a file of
  /// `fileSize` bytes: known sizes, names non-empty and unique, each
  /// tensor's bytes equal to its elements times its element size, within
  /// the data section and not overlapping another's. Returns false with `error` set otherwise.
  bool verify(uint64_t fileSize, std::string &error) const;
  /// Prints one line per tensor and metadata entry.
  void dump(std::ostream &os) const;
  void dump() const;
};

/// The largest JSON header parseHeader() accepts, as the reference
/// implementation (100 MB).
constexpr uint64_t kMaxJSONSize = 100'000'000;

/// Parses and validates the header of the `size`-byte file at `data`: the
/// length prefix against the file size, the JSON syntax (an object of
/// objects; strings with escapes; nesting at most a few levels deep), every
/// dtype, every shape (non-negative, its element count times the element
/// size equal to `end - begin` without overflow), every data offset
/// (`begin <= end`, within the data section), no two tensors overlapping,
/// names non-empty and unique, and `__metadata__` a string-to-string
/// object. Unknown keys inside a tensor's entry are errors. Gaps between
/// tensors and bytes after the last one are accepted. Returns false with a one-line `error` on the
/// first problem found; never reads outside [data, data + size).
bool parseHeader(const uint8_t *data, size_t size, Header &header,
                 std::string &error);

/// Copies the box of `tensor` that starts at `lo` and spans `sizes`
/// elements per dimension, from the file mapped at `file` (`fileSize` bytes,
/// with `header` parsed from it), into `dst`, where element (i0, ..., ik) of
/// the box goes to `dst + (i0 * dstStrides[0] + ... + ik * dstStrides[k]) *
/// elementSize`. The box must lie inside the tensor and `lo`, `sizes` and
/// `dstStrides` must have the tensor's rank; an empty box copies nothing.
/// Returns false with `error` set otherwise.
bool readTile(const uint8_t *file, size_t fileSize, const Header &header,
              const TensorInfo &tensor, const std::vector<int64_t> &lo,
              const std::vector<int64_t> &sizes, void *dst,
              const std::vector<int64_t> &dstStrides, std::string &error);

/// A read-only memory mapping of a whole file.
class MappedFile {
public:
  /// Maps `path`, or returns null with `error` set.
  static std::unique_ptr<MappedFile> open(const std::string &path,
                                          std::string &error);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const uint8_t *data() const { return bytes; }
  size_t size() const { return length; }

private:
  MappedFile(const uint8_t *bytes, size_t length, void *mapping)
      : bytes(bytes), length(length), mapping(mapping) {}
  const uint8_t *bytes;
  size_t length;
  void *mapping;
};

/// A tensor to lay out: its name, element type and shape.
struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

/// Where everything of a file goes, before any data is written.
struct Layout {
  /// The first bytes of the file: the length prefix and the JSON header,
  /// padded with spaces so that the data section starts at a multiple of 8.
  std::string prefix;
  /// The header that parseHeader() reads back from the file.
  Header header;
  /// The size of the whole file.
  uint64_t fileSize = 0;

  /// The file offset of the first byte of tensor `index` of `header`.
  uint64_t getFileOffset(size_t index) const {
    return header.dataStart + header.tensors[index].begin;
  }
};

/// Lays out a file holding `tensors` and `metadata`. The data section
/// starts at a multiple of 8 and the tensors follow each other without gaps
/// (readers such as the reference implementation reject gaps), ordered by
/// element size, largest first, and otherwise as given: every tensor starts
/// at a multiple of its element size, so a mapping of the file reads each
/// element aligned. `header.tensors` is in that order. Returns false with
/// `error` set for an empty, duplicate or over-long name, a negative
/// dimension, or sizes that overflow.
bool layoutHeader(
    const std::vector<TensorSpec> &tensors,
    const std::vector<std::pair<std::string, std::string>> &metadata,
    Layout &layout, std::string &error);

/// Writes `count` bytes at a file offset; returns false with `error` set
/// if the write fails.
using WriteAt = std::function<bool(const void *bytes, uint64_t count,
                                   uint64_t offset, std::string &error)>;

/// Writes the box of tensor `index` of `layout` that starts at `lo` and
/// spans `sizes`, from `src` with element strides `srcStrides`, at its place
/// in the file, one innermost row at a time through `writeAt` (pwrite, or
/// MPI-IO in the runtime, so that processes can write disjoint tiles of one
/// file concurrently). Returns false with `error` set for a box outside the
/// tensor or a failed write.
bool writeTile(const WriteAt &writeAt, const Layout &layout, size_t index,
               const std::vector<int64_t> &lo,
               const std::vector<int64_t> &sizes, const void *src,
               const std::vector<int64_t> &srcStrides, std::string &error);
/// writeTile() with pwrite() to the file open for writing as `fd`.
bool writeTile(int fd, const Layout &layout, size_t index,
               const std::vector<int64_t> &lo,
               const std::vector<int64_t> &sizes, const void *src,
               const std::vector<int64_t> &srcStrides, std::string &error);

/// A tensor and its contiguous row-major data, for writeFile().
struct TensorData {
  TensorSpec spec;
  const void *data = nullptr;
};

/// Writes a whole file at `path` from one process. Returns false with
/// `error` set if the layout or a write fails.
bool writeFile(const std::string &path, const std::vector<TensorData> &tensors,
               const std::vector<std::pair<std::string, std::string>> &metadata,
               std::string &error);

} // namespace safetensors
} // namespace tofu

#endif // TOFU_RUNTIME_SAFETENSORS_H
