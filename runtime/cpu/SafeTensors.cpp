//===- SafeTensors.cpp - Reading and writing safetensors files ------------===//
//
// Implements include/tofu/Runtime/SafeTensors.h: a small JSON parser for the
// header (bounded nesting, every byte checked against the length it was
// given), the validation of every tensor entry, box copies between a file
// and strided buffers, and the layout and writing of new files.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/SafeTensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <limits>
#include <numeric>
#include <set>

using namespace tofu::safetensors;

namespace {

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

/// A parser of the header's JSON text that fills a Header as it reads, so
/// that memory stays proportional to what the header describes (a shape of
/// n dimensions takes 8n bytes) and nesting is bounded by the format: an
/// object of tensor objects, each holding two arrays of integers, and
/// `__metadata__`, an object of strings. Anything else is an error; no
/// arbitrary JSON value is ever skipped over.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  bool parse(Header &header, std::string &error) {
    if (!parseRoot(header)) {
      if (semantic.empty())
        error = "invalid JSON header at byte " + std::to_string(pos) + ": " +
                message;
      else
        error = semantic;
      return false;
    }
    return true;
  }

private:
  bool failWith(const char *why) {
    message = why;
    return false;
  }
  bool failTensor(const std::string &name, const std::string &why) {
    semantic = "tensor '" + name + "': " + why;
    return false;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  bool peek(char c) {
    skipSpace();
    return pos < text.size() && text[pos] == c;
  }

  /// Calls `member(key)` for each member of an object, which must read the
  /// member's value.
  template <typename Fn> bool parseObject(Fn member) {
    if (!consume('{'))
      return failWith("expected '{'");
    if (consume('}'))
      return true;
    while (true) {
      std::string key;
      if (!peek('"'))
        return failWith("expected a string key");
      if (!parseString(key))
        return false;
      if (!consume(':'))
        return failWith("expected ':'");
      if (!member(key))
        return false;
      if (consume('}'))
        return true;
      if (!consume(','))
        return failWith("expected ',' or '}'");
    }
  }

  /// Calls `item()` for each item of an array, which must read it.
  template <typename Fn> bool parseArray(Fn item) {
    if (!consume('['))
      return failWith("expected '['");
    if (consume(']'))
      return true;
    while (true) {
      if (!item())
        return false;
      if (consume(']'))
        return true;
      if (!consume(','))
        return failWith("expected ',' or ']'");
    }
  }

  bool isDigit(size_t at) const {
    return at < text.size() && text[at] >= '0' && text[at] <= '9';
  }

  /// Reads a JSON number; `value` is set when it is a non-negative integer
  /// of at most `max`.
  bool parseNumber(std::optional<uint64_t> &value, uint64_t max) {
    skipSpace();
    value.reset();
    bool integer = true;
    uint64_t result = 0;
    bool overflow = false;
    if (consume('-'))
      integer = false;
    if (!isDigit(pos))
      return failWith("expected a number");
    if (text[pos] == '0') {
      ++pos;
    } else {
      while (isDigit(pos)) {
        overflow |=
            __builtin_mul_overflow(result, uint64_t(10), &result) ||
            __builtin_add_overflow(result, uint64_t(text[pos] - '0'), &result);
        ++pos;
      }
    }
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      integer = false;
      if (!isDigit(pos))
        return failWith("expected a digit after '.'");
      while (isDigit(pos))
        ++pos;
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      integer = false;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (!isDigit(pos))
        return failWith("expected a digit in the exponent");
      while (isDigit(pos))
        ++pos;
    }
    if (integer && !overflow && result <= max)
      value = result;
    return true;
  }

  /// Reads 4 hex digits.
  bool parseHex4(uint32_t &code) {
    if (text.size() - pos < 4)
      return failWith("truncated \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      code <<= 4;
      if (c >= '0' && c <= '9')
        code |= c - '0';
      else if (c >= 'a' && c <= 'f')
        code |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        code |= c - 'A' + 10;
      else
        return failWith("invalid \\u escape");
    }
    return true;
  }

  static void appendUTF8(std::string &out, uint32_t code) {
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xC0 | (code >> 6));
      out += char(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += char(0xE0 | (code >> 12));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    } else {
      out += char(0xF0 | (code >> 18));
      out += char(0x80 | ((code >> 12) & 0x3F));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    }
  }

  /// Reads a string (the caller has seen its opening quote).
  bool parseString(std::string &out) {
    skipSpace();
    ++pos; // '"'
    while (true) {
      if (pos >= text.size())
        return failWith("unterminated string");
      unsigned char c = text[pos++];
      if (c == '"')
        return true;
      if (c < 0x20)
        return failWith("control character in a string");
      if (c != '\\') {
        out += char(c);
        continue;
      }
      if (pos >= text.size())
        return failWith("unterminated string");
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t code;
        if (!parseHex4(code))
          return false;
        if (code >= 0xDC00 && code <= 0xDFFF)
          return failWith("unpaired surrogate in a \\u escape");
        if (code >= 0xD800 && code <= 0xDBFF) {
          uint32_t low;
          if (text.substr(pos, 2) != "\\u")
            return failWith("unpaired surrogate in a \\u escape");
          pos += 2;
          if (!parseHex4(low))
            return false;
          if (low < 0xDC00 || low > 0xDFFF)
            return failWith("unpaired surrogate in a \\u escape");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUTF8(out, code);
        break;
      }
      default:
        return failWith("invalid escape in a string");
      }
    }
  }

  bool parseTensor(const std::string &name, TensorInfo &tensor) {
    tensor.name = name;
    if (!peek('{'))
      return failTensor(name, "its entry is not an object");
    bool hasDType = false, hasShape = false, hasOffsets = false;
    bool ok = parseObject([&](const std::string &key) {
      if (key == "dtype") {
        if (hasDType)
          return failTensor(name, "'dtype' appears twice");
        hasDType = true;
        if (!peek('"'))
          return failTensor(name, "'dtype' is not a string");
        std::string type;
        if (!parseString(type))
          return false;
        std::optional<DType> parsed = parseDType(type);
        if (!parsed)
          return failTensor(name, "unknown dtype '" + type + "'");
        tensor.dtype = *parsed;
        return true;
      }
      if (key == "shape") {
        if (hasShape)
          return failTensor(name, "'shape' appears twice");
        hasShape = true;
        if (!peek('['))
          return failTensor(name, "'shape' is not an array");
        return parseArray([&]() {
          std::optional<uint64_t> d;
          if (!parseNumber(d, uint64_t(std::numeric_limits<int64_t>::max())))
            return false;
          if (!d)
            return failTensor(name, "a dimension of 'shape' is not a "
                                    "non-negative 64-bit integer");
          tensor.shape.push_back(int64_t(*d));
          return true;
        });
      }
      if (key == "data_offsets") {
        if (hasOffsets)
          return failTensor(name, "'data_offsets' appears twice");
        hasOffsets = true;
        if (!peek('['))
          return failTensor(name, "'data_offsets' is not an array");
        int count = 0;
        if (!parseArray([&]() {
              std::optional<uint64_t> v;
              if (!parseNumber(v, std::numeric_limits<uint64_t>::max()))
                return false;
              if (!v)
                return failTensor(name, "'data_offsets' are not "
                                        "non-negative 64-bit integers");
              if (count == 0)
                tensor.begin = *v;
              else
                tensor.end = *v;
              if (++count > 2)
                return failTensor(name, "'data_offsets' has more than two "
                                        "integers");
              return true;
            }))
          return false;
        if (count != 2)
          return failTensor(name, "'data_offsets' has fewer than two "
                                  "integers");
        return true;
      }
      return failTensor(name, "unknown key '" + key + "'");
    });
    if (!ok)
      return false;
    if (!hasDType || !hasShape || !hasOffsets)
      return failTensor(name, std::string("missing '") +
                                  (!hasDType   ? "dtype"
                                   : !hasShape ? "shape"
                                               : "data_offsets") +
                                  "'");
    return true;
  }

  bool parseMetadata(Header &header) {
    if (!peek('{')) {
      semantic = "'__metadata__' is not an object";
      return false;
    }
    std::set<std::string> keys;
    return parseObject([&](const std::string &key) {
      if (!peek('"')) {
        semantic = "metadata '" + key + "' is not a string";
        return false;
      }
      std::string value;
      if (!parseString(value))
        return false;
      if (!keys.insert(key).second) {
        semantic = "metadata '" + key + "' appears twice";
        return false;
      }
      header.metadata.emplace_back(key, std::move(value));
      return true;
    });
  }

  bool parseRoot(Header &header) {
    if (!peek('{'))
      return failWith("the header is not a JSON object");
    bool hasMetadata = false;
    std::set<std::string> names;
    bool ok = parseObject([&](const std::string &key) {
      if (key == "__metadata__") {
        if (hasMetadata) {
          semantic = "'__metadata__' appears twice";
          return false;
        }
        hasMetadata = true;
        return parseMetadata(header);
      }
      // layoutHeader() cannot write an empty name back: a file read by
      // the runtime is one it could also have written.
      if (key.empty()) {
        semantic = "a tensor has an empty name";
        return false;
      }
      if (!names.insert(key).second) {
        semantic = "tensor '" + key + "' appears twice";
        return false;
      }
      TensorInfo tensor;
      if (!parseTensor(key, tensor))
        return false;
      header.tensors.push_back(std::move(tensor));
      return true;
    });
    if (!ok)
      return false;
    skipSpace();
    if (pos != text.size())
      return failWith("unexpected text after the header object");
    return true;
  }

  std::string_view text;
  size_t pos = 0;
  /// The syntax error, reported with its position.
  std::string message;
  /// A well-formed header that breaks the format's rules.
  std::string semantic;
};

/// Whether `text` is valid UTF-8 (no overlong forms, no surrogates).
bool isValidUTF8(std::string_view text) {
  size_t i = 0, n = text.size();
  while (i < n) {
    unsigned char c = text[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t extra;
    uint32_t code;
    if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
      code = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      code = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      code = c & 0x07;
    } else {
      return false;
    }
    if (n - i <= extra)
      return false;
    for (size_t k = 1; k <= extra; ++k) {
      unsigned char d = text[i + k];
      if ((d & 0xC0) != 0x80)
        return false;
      code = (code << 6) | (d & 0x3F);
    }
    if ((extra == 2 && (code < 0x800 || (code >= 0xD800 && code <= 0xDFFF))) ||
        (extra == 3 && (code < 0x10000 || code > 0x10FFFF)))
      return false;
    i += extra + 1;
  }
  return true;
}

/// Appends `text` as a JSON string.
void appendJSONString(std::string &out, std::string_view text) {
  out += '"';
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      static const char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
  out += '"';
}

//===----------------------------------------------------------------------===//
// Sizes and boxes
//===----------------------------------------------------------------------===//

/// The bytes of a tensor of `shape` and `type`, or std::nullopt when a
/// dimension is negative or the size overflows.
std::optional<uint64_t> getByteSize(const std::vector<int64_t> &shape,
                                    DType type) {
  uint64_t n = getDTypeSize(type);
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, uint64_t(d), &n))
      return std::nullopt;
  }
  return n;
}

/// Checks that `tensor` is consistent in a file of `fileSize` bytes whose
/// data section starts at `dataStart`.
bool checkTensor(const TensorInfo &tensor, uint64_t dataStart,
                 uint64_t fileSize, std::string &error) {
  std::optional<uint64_t> bytes = getByteSize(tensor.shape, tensor.dtype);
  if (!bytes) {
    error = "tensor '" + tensor.name +
            "': a dimension is negative or its size overflows";
    return false;
  }
  if (tensor.begin > tensor.end) {
    error = "tensor '" + tensor.name + "': data_offsets [" +
            std::to_string(tensor.begin) + ", " + std::to_string(tensor.end) +
            "] end before they begin";
    return false;
  }
  if (tensor.end - tensor.begin != *bytes) {
    error = "tensor '" + tensor.name + "': its shape and dtype give " +
            std::to_string(*bytes) + " bytes but data_offsets hold " +
            std::to_string(tensor.end - tensor.begin);
    return false;
  }
  if (dataStart > fileSize || tensor.end > fileSize - dataStart) {
    error = "tensor '" + tensor.name + "': data_offsets end at " +
            std::to_string(tensor.end) + ", past the data section of " +
            std::to_string(dataStart > fileSize ? 0 : fileSize - dataStart) +
            " bytes";
    return false;
  }
  return true;
}

/// Checks a box against a tensor's shape and a buffer's strides.
bool checkBox(const TensorInfo &tensor, const std::vector<int64_t> &lo,
              const std::vector<int64_t> &sizes,
              const std::vector<int64_t> &strides, std::string &error) {
  size_t rank = tensor.shape.size();
  if (lo.size() != rank || sizes.size() != rank || strides.size() != rank) {
    error = "tensor '" + tensor.name + "' has rank " + std::to_string(rank) +
            " but the box or the strides do not";
    return false;
  }
  for (size_t d = 0; d < rank; ++d) {
    if (lo[d] < 0 || sizes[d] < 0 || lo[d] > tensor.shape[d] ||
        sizes[d] > tensor.shape[d] - lo[d]) {
      error = "the box [" + std::to_string(lo[d]) + ", +" +
              std::to_string(sizes[d]) + ") of dimension " + std::to_string(d) +
              " is outside tensor '" + tensor.name + "' (size " +
              std::to_string(tensor.shape[d]) + ")";
      return false;
    }
  }
  return true;
}

/// Calls `fn(tensorByte, bufferElement, count)` for each innermost row of
/// the box `lo` + `sizes` of a row-major tensor of `shape` with
/// `elementSize`-byte elements: `tensorByte` is the byte offset of the row
/// in the tensor's data, `bufferElement` the element offset of its first
/// element in a buffer with `strides`, and `count` its length. The box must
/// have been checked and must not be empty.
template <typename Fn>
void forEachRow(const std::vector<int64_t> &shape,
                const std::vector<int64_t> &lo,
                const std::vector<int64_t> &sizes,
                const std::vector<int64_t> &strides, uint64_t elementSize,
                Fn fn) {
  size_t rank = shape.size();
  if (rank == 0) {
    fn(uint64_t(0), int64_t(0), uint64_t(1));
    return;
  }
  // Row-major element strides of the tensor.
  std::vector<uint64_t> tensorStrides(rank, 1);
  for (size_t d = rank - 1; d > 0; --d)
    tensorStrides[d - 1] = tensorStrides[d] * uint64_t(shape[d]);
  std::vector<int64_t> index(rank - 1, 0);
  while (true) {
    uint64_t element = uint64_t(lo[rank - 1]);
    int64_t buffer = 0;
    for (size_t d = 0; d + 1 < rank; ++d) {
      element += uint64_t(lo[d] + index[d]) * tensorStrides[d];
      buffer += index[d] * strides[d];
    }
    fn(element * elementSize, buffer, uint64_t(sizes[rank - 1]));
    // The next row, last outer dimension fastest.
    size_t d = rank - 1;
    while (d > 0) {
      --d;
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
      if (d == 0)
        return;
    }
    if (rank == 1)
      return;
  }
}

bool isEmptyBox(const std::vector<int64_t> &sizes) {
  return std::any_of(sizes.begin(), sizes.end(),
                     [](int64_t s) { return s == 0; });
}

} // namespace

//===----------------------------------------------------------------------===//
// Types and headers
//===----------------------------------------------------------------------===//

namespace {
struct DTypeEntry {
  DType type;
  const char *name;
  size_t size;
};
constexpr DTypeEntry kDTypes[] = {
    {DType::BOOL, "BOOL", 1},       {DType::U8, "U8", 1},
    {DType::I8, "I8", 1},           {DType::F8_E5M2, "F8_E5M2", 1},
    {DType::F8_E4M3, "F8_E4M3", 1}, {DType::I16, "I16", 2},
    {DType::U16, "U16", 2},         {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},       {DType::I32, "I32", 4},
    {DType::U32, "U32", 4},         {DType::F32, "F32", 4},
    {DType::I64, "I64", 8},         {DType::U64, "U64", 8},
    {DType::F64, "F64", 8},
};
} // namespace

size_t tofu::safetensors::getDTypeSize(DType type) {
  for (const DTypeEntry &e : kDTypes)
    if (e.type == type)
      return e.size;
  return 0;
}

const char *tofu::safetensors::getDTypeName(DType type) {
  for (const DTypeEntry &e : kDTypes)
    if (e.type == type)
      return e.name;
  return "?";
}

std::optional<DType> tofu::safetensors::parseDType(std::string_view name) {
  for (const DTypeEntry &e : kDTypes)
    if (name == e.name)
      return e.type;
  return std::nullopt;
}

uint64_t TensorInfo::getNumElements() const {
  uint64_t n = 1;
  for (int64_t d : shape)
    n *= uint64_t(d);
  return n;
}

const TensorInfo *Header::find(std::string_view name) const {
  for (const TensorInfo &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

bool Header::verify(uint64_t fileSize, std::string &error) const {
  if (dataStart != 8 + jsonSize || dataStart > fileSize) {
    error = "the data section does not follow the header";
    return false;
  }
  std::set<std::string_view> names;
  for (const TensorInfo &t : tensors) {
    if (getDTypeSize(t.dtype) == 0) {
      error = "tensor '" + t.name + "' has an unknown dtype";
      return false;
    }
    if (t.name.empty()) {
      error = "a tensor has an empty name";
      return false;
    }
    if (!names.insert(t.name).second) {
      error = "tensor '" + t.name + "' appears twice";
      return false;
    }
    if (!checkTensor(t, dataStart, fileSize, error))
      return false;
  }
  // Non-empty tensors sorted by where they begin must each begin after the
  // previous ones end.
  std::vector<const TensorInfo *> order;
  for (const TensorInfo &t : tensors)
    if (t.begin != t.end)
      order.push_back(&t);
  std::sort(
      order.begin(), order.end(), [](const TensorInfo *a, const TensorInfo *b) {
        return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
      });
  const TensorInfo *last = nullptr;
  for (const TensorInfo *t : order) {
    if (last && t->begin < last->end) {
      error = "tensors '" + last->name + "' and '" + t->name + "' overlap: [" +
              std::to_string(last->begin) + ", " + std::to_string(last->end) +
              ") and [" + std::to_string(t->begin) + ", " +
              std::to_string(t->end) + ")";
      return false;
    }
    if (!last || t->end > last->end)
      last = t;
  }
  return true;
}

void Header::dump(std::ostream &os) const {
  os << "safetensors header: " << jsonSize << " bytes of JSON, data at "
     << dataStart << "\n";
  for (const TensorInfo &t : tensors) {
    os << "  " << t.name << ": " << getDTypeName(t.dtype) << " [";
    for (size_t i = 0; i < t.shape.size(); ++i)
      os << (i ? ", " : "") << t.shape[i];
    os << "] bytes [" << t.begin << ", " << t.end << ")\n";
  }
  for (const auto &[key, value] : metadata)
    os << "  metadata " << key << " = " << value << "\n";
}

void Header::dump() const { dump(std::cerr); }

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

bool tofu::safetensors::parseHeader(const uint8_t *data, size_t size,
                                    Header &header, std::string &error) {
  header = Header();
  if (size < 8) {
    error = "the file has " + std::to_string(size) +
            " bytes, fewer than the 8 of the header length";
    return false;
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | data[i];
  if (size > 8 && data[8] != '{') {
    error = "not a safetensors file: the 8-byte header length is not "
            "followed by a JSON header";
    return false;
  }
  if (n > size - 8) {
    error = "the header length " + std::to_string(n) +
            " is larger than the rest of the file (" +
            std::to_string(size - 8) + " bytes)";
    return false;
  }
  if (n > kMaxJSONSize) {
    error = "the header length " + std::to_string(n) +
            " is over the limit of " + std::to_string(kMaxJSONSize);
    return false;
  }
  header.jsonSize = n;
  header.dataStart = 8 + n;
  std::string_view text(reinterpret_cast<const char *>(data + 8), size_t(n));
  if (!isValidUTF8(text)) {
    error = "the JSON header is not valid UTF-8";
    return false;
  }
  HeaderParser parser(text);
  if (!parser.parse(header, error)) {
    header = Header();
    return false;
  }
  if (!header.verify(size, error)) {
    header = Header();
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Reading tiles
//===----------------------------------------------------------------------===//

bool tofu::safetensors::readTile(const uint8_t *file, size_t fileSize,
                                 const Header &header, const TensorInfo &tensor,
                                 const std::vector<int64_t> &lo,
                                 const std::vector<int64_t> &sizes, void *dst,
                                 const std::vector<int64_t> &dstStrides,
                                 std::string &error) {
  // Checked again, so that a header built by hand cannot read out of the
  // file.
  if (header.dataStart < 8 ||
      !checkTensor(tensor, header.dataStart, fileSize, error) ||
      !checkBox(tensor, lo, sizes, dstStrides, error))
    return false;
  if (isEmptyBox(sizes))
    return true;
  uint64_t es = getDTypeSize(tensor.dtype);
  const uint8_t *base = file + header.dataStart + tensor.begin;
  auto *out = static_cast<uint8_t *>(dst);
  bool contiguous = dstStrides.empty() || dstStrides.back() == 1;
  int64_t inner = dstStrides.empty() ? 0 : dstStrides.back();
  forEachRow(tensor.shape, lo, sizes, dstStrides, es,
             [&](uint64_t byte, int64_t element, uint64_t count) {
               uint8_t *to = out + element * int64_t(es);
               if (contiguous) {
                 std::memcpy(to, base + byte, count * es);
                 return;
               }
               for (uint64_t i = 0; i < count; ++i)
                 std::memcpy(to + int64_t(i) * inner * int64_t(es),
                             base + byte + i * es, es);
             });
  return true;
}

//===----------------------------------------------------------------------===//
// Mapping
//===----------------------------------------------------------------------===//

std::unique_ptr<MappedFile> MappedFile::open(const std::string &path,
                                             std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return nullptr;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    error = "cannot stat '" + path + "': " + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  size_t length = size_t(st.st_size);
  if (length == 0) {
    ::close(fd);
    static const uint8_t empty = 0;
    return std::unique_ptr<MappedFile>(new MappedFile(&empty, 0, nullptr));
  }
  void *mapping = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, 0);
  int mapErrno = errno;
  ::close(fd);
  if (mapping == MAP_FAILED) {
    error = "cannot map '" + path + "': " + std::strerror(mapErrno);
    return nullptr;
  }
  return std::unique_ptr<MappedFile>(
      new MappedFile(static_cast<const uint8_t *>(mapping), length, mapping));
}

MappedFile::~MappedFile() {
  if (mapping)
    ::munmap(mapping, length);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

bool tofu::safetensors::layoutHeader(
    const std::vector<TensorSpec> &tensors,
    const std::vector<std::pair<std::string, std::string>> &metadata,
    Layout &layout, std::string &error) {
  layout = Layout();
  std::set<std::string_view> names;
  for (const TensorSpec &t : tensors) {
    if (t.name.empty() || t.name == "__metadata__") {
      error = "invalid tensor name '" + t.name + "'";
      return false;
    }
    if (!names.insert(t.name).second) {
      error = "tensor '" + t.name + "' appears twice";
      return false;
    }
  }
  std::set<std::string_view> keys;
  for (const auto &entry : metadata) {
    if (!keys.insert(entry.first).second) {
      error = "metadata '" + entry.first + "' appears twice";
      return false;
    }
  }
  // Largest elements first: each tensor then starts at a multiple of its
  // element size.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return getDTypeSize(tensors[a].dtype) > getDTypeSize(tensors[b].dtype);
  });
  uint64_t offset = 0;
  std::string json = "{";
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    for (size_t i = 0; i < metadata.size(); ++i) {
      if (i)
        json += ',';
      appendJSONString(json, metadata[i].first);
      json += ':';
      appendJSONString(json, metadata[i].second);
    }
    json += '}';
  }
  for (size_t i : order) {
    const TensorSpec &spec = tensors[i];
    std::optional<uint64_t> bytes = getByteSize(spec.shape, spec.dtype);
    if (getDTypeSize(spec.dtype) == 0 || !bytes ||
        __builtin_add_overflow(offset, *bytes, &offset)) {
      error = "tensor '" + spec.name +
              "': a dimension is negative or its size overflows";
      return false;
    }
    TensorInfo info;
    info.name = spec.name;
    info.dtype = spec.dtype;
    info.shape = spec.shape;
    info.begin = offset - *bytes;
    info.end = offset;
    if (json.size() > 1)
      json += ',';
    appendJSONString(json, spec.name);
    json += ":{\"dtype\":\"";
    json += getDTypeName(spec.dtype);
    json += "\",\"shape\":[";
    for (size_t d = 0; d < spec.shape.size(); ++d) {
      if (d)
        json += ',';
      json += std::to_string(spec.shape[d]);
    }
    json += "],\"data_offsets\":[" + std::to_string(info.begin) + "," +
            std::to_string(info.end) + "]}";
    layout.header.tensors.push_back(std::move(info));
  }
  json += '}';
  // Spaces after the object so that the data section starts at a multiple
  // of 8.
  json.append((8 - json.size() % 8) % 8, ' ');
  if (json.size() > kMaxJSONSize) {
    error = "the header would have " + std::to_string(json.size()) +
            " bytes, over the limit of " + std::to_string(kMaxJSONSize);
    return false;
  }
  uint64_t n = json.size();
  layout.prefix.resize(8);
  for (int i = 0; i < 8; ++i)
    layout.prefix[i] = char((n >> (8 * i)) & 0xFF);
  layout.prefix += json;
  layout.header.jsonSize = n;
  layout.header.dataStart = 8 + n;
  layout.header.metadata = metadata;
  if (__builtin_add_overflow(layout.header.dataStart, offset,
                             &layout.fileSize)) {
    error = "the file size overflows";
    return false;
  }
  return true;
}

namespace {
/// pwrite()s all of `bytes` at `offset`.
bool writeAt(int fd, const void *bytes, uint64_t count, uint64_t offset,
             std::string &error) {
  const char *p = static_cast<const char *>(bytes);
  while (count > 0) {
    ssize_t written = ::pwrite(fd, p, count, off_t(offset));
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0) {
      error = std::string("write failed: ") +
              (written < 0 ? std::strerror(errno) : "no progress");
      return false;
    }
    p += written;
    count -= uint64_t(written);
    offset += uint64_t(written);
  }
  return true;
}
} // namespace

bool tofu::safetensors::writeTile(int fd, const Layout &layout, size_t index,
                                  const std::vector<int64_t> &lo,
                                  const std::vector<int64_t> &sizes,
                                  const void *src,
                                  const std::vector<int64_t> &srcStrides,
                                  std::string &error) {
  return writeTile(
      [fd](const void *bytes, uint64_t count, uint64_t offset,
           std::string &error) {
        return writeAt(fd, bytes, count, offset, error);
      },
      layout, index, lo, sizes, src, srcStrides, error);
}

bool tofu::safetensors::writeTile(const WriteAt &writeAt, const Layout &layout,
                                  size_t index, const std::vector<int64_t> &lo,
                                  const std::vector<int64_t> &sizes,
                                  const void *src,
                                  const std::vector<int64_t> &srcStrides,
                                  std::string &error) {
  if (index >= layout.header.tensors.size()) {
    error = "no tensor " + std::to_string(index) + " in the layout";
    return false;
  }
  const TensorInfo &tensor = layout.header.tensors[index];
  if (!checkTensor(tensor, layout.header.dataStart, layout.fileSize, error) ||
      !checkBox(tensor, lo, sizes, srcStrides, error))
    return false;
  if (isEmptyBox(sizes))
    return true;
  uint64_t es = getDTypeSize(tensor.dtype);
  uint64_t base = layout.getFileOffset(index);
  const auto *in = static_cast<const uint8_t *>(src);
  bool contiguous = srcStrides.empty() || srcStrides.back() == 1;
  int64_t inner = srcStrides.empty() ? 0 : srcStrides.back();
  std::vector<uint8_t> row;
  bool ok = true;
  forEachRow(tensor.shape, lo, sizes, srcStrides, es,
             [&](uint64_t byte, int64_t element, uint64_t count) {
               if (!ok)
                 return;
               const uint8_t *from = in + element * int64_t(es);
               if (!contiguous) {
                 row.resize(count * es);
                 for (uint64_t i = 0; i < count; ++i)
                   std::memcpy(row.data() + i * es,
                               from + int64_t(i) * inner * int64_t(es), es);
                 from = row.data();
               }
               ok = writeAt(from, count * es, base + byte, error);
             });
  return ok;
}

bool tofu::safetensors::writeFile(
    const std::string &path, const std::vector<TensorData> &tensors,
    const std::vector<std::pair<std::string, std::string>> &metadata,
    std::string &error) {
  std::vector<TensorSpec> specs;
  for (const TensorData &t : tensors)
    specs.push_back(t.spec);
  Layout layout;
  if (!layoutHeader(specs, metadata, layout, error))
    return false;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot create '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool ok = writeAt(fd, layout.prefix.data(), layout.prefix.size(), 0, error);
  for (size_t i = 0; ok && i < layout.header.tensors.size(); ++i) {
    const TensorInfo &info = layout.header.tensors[i];
    auto it =
        std::find_if(tensors.begin(), tensors.end(), [&](const TensorData &t) {
          return t.spec.name == info.name;
        });
    uint64_t bytes = info.end - info.begin;
    if (bytes == 0)
      continue;
    if (!it->data) {
      error = "tensor '" + info.name + "' has no data";
      ok = false;
      break;
    }
    ok = writeAt(fd, it->data, bytes, layout.getFileOffset(i), error);
  }
  if (ok && ::ftruncate(fd, off_t(layout.fileSize)) != 0) {
    error = "cannot size '" + path + "': " + std::strerror(errno);
    ok = false;
  }
  if (::close(fd) != 0 && ok) {
    error = "cannot close '" + path + "': " + std::strerror(errno);
    ok = false;
  }
  if (!ok)
    error = "'" + path + "': " + error;
  return ok;
}
