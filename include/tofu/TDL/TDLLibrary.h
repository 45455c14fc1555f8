//===- TDLLibrary.h - Libraries of TDL descriptions by op name --*- C++ -*-===//
//
// A `.tdl` library describes operators by name, including operators of
// dialects that are not registered (framework ops such as mxnet.Convolution):
//
//   # A comment.
//   op mxnet.FullyConnected {
//     (data, weight) -> (b, o) = sum(i) data[b, i] * weight[o, i]
//   }
//   op mxnet.Pooling<kernel, stride = 1> {
//     (data) -> (b, c, y, x) = max(ky, kx)
//         data[b, c, y * $stride + ky, x * $stride + kx]
//   }
//
// Parameters in angle brackets are integer attributes of the operation; a
// `$name` in the body is replaced by the attribute's value, or by the
// default when the operation has no such attribute. `$in<k>_<d>` and
// `$out<k>_<d>` are the sizes of dimension d of operand or result k.
//
// Framework operators are rank-polymorphic: a pack `i...` expands to as many
// variables `i0, i1, ...` as result 0 has dimensions beyond the other
// variables of the first output, so `(x) -> (i...) = relu(x[i...])` fits
// every rank.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TDL_TDLLIBRARY_H
#define TOFU_TDL_TDLLIBRARY_H

#include "tofu/TDL/TDL.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tofu {
namespace tdl {

/// One `op NAME<params> { desc }` entry.
struct LibraryEntry {
  std::string opName;
  /// Parameter names with their optional default values.
  std::vector<std::pair<std::string, std::optional<int64_t>>> params;
  /// The description text, with `$param` placeholders.
  std::string body;
  /// 1-based line of the entry in its file.
  unsigned line = 0;
};

/// Looks up an integer attribute of the operation being described.
using ParamLookup = std::function<std::optional<int64_t>(const std::string &)>;

/// What instantiating an entry knows of the operation it describes.
struct OpContext {
  ParamLookup attribute;
  std::vector<std::vector<int64_t>> operandShapes;
  std::vector<std::vector<int64_t>> resultShapes;
};

/// A set of library entries, keyed by operation name.
class Library {
public:
  /// Parses library text and checks every entry's description. Errors are
  /// reported as "LINE:COL: message" with 1-based positions.
  static std::optional<Library> parse(const std::string &text,
                                      std::string &error);

  /// Adds the entries of `other`; later entries replace earlier ones.
  void merge(const Library &other);

  const LibraryEntry *lookup(const std::string &opName) const;
  size_t size() const { return entries.size(); }
  std::vector<std::string> getOpNames() const;

  /// Substitutes parameters, shapes and packs, then parses the
  /// description.
  static std::optional<OpDesc> instantiate(const LibraryEntry &entry,
                                           const OpContext &context,
                                           std::string &error);

private:
  std::map<std::string, LibraryEntry> entries;
};

} // namespace tdl
} // namespace tofu

#endif // TOFU_TDL_TDLLIBRARY_H
