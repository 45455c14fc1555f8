//===- TDLLibrary.cpp - Libraries of TDL descriptions by op name ----------===//
//
// Parser for `.tdl` library files and parameter substitution.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/TDLLibrary.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

using namespace tofu;
using namespace tofu::tdl;

namespace {
/// A cursor over library text that tracks lines and columns.
class Cursor {
public:
  explicit Cursor(const std::string &text) : text(text) {}

  void skipSpaceAndComments() {
    while (pos < text.size()) {
      if (text[pos] == '#') {
        while (pos < text.size() && text[pos] != '\n')
          ++pos;
      } else if (std::isspace((unsigned char)text[pos])) {
        ++pos;
      } else {
        break;
      }
    }
  }
  bool atEnd() {
    skipSpaceAndComments();
    return pos >= text.size();
  }
  bool consume(char c) {
    skipSpaceAndComments();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  /// An identifier, possibly dotted (`mxnet.Convolution`).
  std::string word() {
    skipSpaceAndComments();
    size_t start = pos;
    while (pos < text.size() && (std::isalnum((unsigned char)text[pos]) ||
                                 text[pos] == '_' || text[pos] == '.'))
      ++pos;
    return text.substr(start, pos - start);
  }
  std::optional<int64_t> integer() {
    skipSpaceAndComments();
    size_t start = pos;
    if (pos < text.size() && text[pos] == '-')
      ++pos;
    while (pos < text.size() && std::isdigit((unsigned char)text[pos]))
      ++pos;
    if (pos == start || (pos == start + 1 && text[start] == '-')) {
      pos = start;
      return std::nullopt;
    }
    errno = 0;
    long long v = std::strtoll(text.c_str() + start, nullptr, 10);
    if (errno == ERANGE) {
      pos = start;
      return std::nullopt;
    }
    return v;
  }
  /// Everything up to the brace that closes an opened one. Comments are
  /// removed.
  std::optional<std::string> block() {
    std::string body;
    int depth = 1;
    while (pos < text.size()) {
      char c = text[pos];
      if (c == '#') {
        while (pos < text.size() && text[pos] != '\n')
          ++pos;
        continue;
      }
      ++pos;
      if (c == '{')
        ++depth;
      if (c == '}' && --depth == 0)
        return body;
      body += c;
    }
    return std::nullopt;
  }
  size_t position() {
    skipSpaceAndComments();
    return pos;
  }
  std::string where(size_t at) const {
    unsigned line = 1, col = 1;
    for (size_t i = 0; i < at && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return std::to_string(line) + ":" + std::to_string(col);
  }
  unsigned lineOf(size_t at) const {
    unsigned line = 1;
    for (size_t i = 0; i < at && i < text.size(); ++i)
      line += text[i] == '\n';
    return line;
  }

private:
  const std::string &text;
  size_t pos = 0;
};
} // namespace

std::optional<Library> Library::parse(const std::string &text,
                                      std::string &error) {
  Library lib;
  Cursor cur(text);
  auto fail = [&](size_t at, const std::string &msg) {
    error = cur.where(at) + ": " + msg;
    return std::nullopt;
  };
  while (!cur.atEnd()) {
    size_t start = cur.position();
    if (cur.word() != "op")
      return fail(start, "expected 'op'");
    LibraryEntry entry;
    entry.line = cur.lineOf(start);
    size_t at = cur.position();
    entry.opName = cur.word();
    if (entry.opName.empty())
      return fail(at, "expected an operation name after 'op'");
    if (cur.consume('<')) {
      do {
        at = cur.position();
        std::string name = cur.word();
        if (name.empty())
          return fail(at, "expected a parameter name");
        std::optional<int64_t> def;
        if (cur.consume('=')) {
          at = cur.position();
          def = cur.integer();
          if (!def)
            return fail(at, "expected an integer default value");
        }
        entry.params.emplace_back(name, def);
      } while (cur.consume(','));
      at = cur.position();
      if (!cur.consume('>'))
        return fail(at, "expected '>' after the parameters");
    }
    at = cur.position();
    if (!cur.consume('{'))
      return fail(at, "expected '{' to open the description of '" +
                          entry.opName + "'");
    size_t bodyStart = cur.position();
    auto body = cur.block();
    if (!body)
      return fail(at, "unterminated description of '" + entry.opName + "'");
    entry.body = *body;
    if (lib.entries.count(entry.opName))
      return fail(start, "duplicate description of '" + entry.opName + "'");
    // Check the description now, with every parameter set to its default
    // or to 1, so that a malformed library fails when it is loaded.
    std::string descError;
    OpContext check;
    check.attribute = [](const std::string &) -> std::optional<int64_t> {
      return 1;
    };
    if (!instantiate(entry, check, descError))
      return fail(bodyStart, "invalid description of '" + entry.opName +
                                 "': " + descError);
    lib.entries[entry.opName] = std::move(entry);
  }
  return lib;
}

void Library::merge(const Library &other) {
  for (const auto &[name, entry] : other.entries)
    entries[name] = entry;
}

const LibraryEntry *Library::lookup(const std::string &opName) const {
  auto it = entries.find(opName);
  return it == entries.end() ? nullptr : &it->second;
}

std::vector<std::string> Library::getOpNames() const {
  std::vector<std::string> names;
  for (const auto &kv : entries)
    names.push_back(kv.first);
  return names;
}

/// `$in<k>_<d>` / `$out<k>_<d>`: a dimension size, if `name` is one.
static std::optional<std::optional<int64_t>>
lookupShapeParam(const std::string &name, const OpContext &context) {
  const std::vector<std::vector<int64_t>> *shapes = nullptr;
  size_t pos = 0;
  if (name.rfind("in", 0) == 0) {
    shapes = &context.operandShapes;
    pos = 2;
  } else if (name.rfind("out", 0) == 0) {
    shapes = &context.resultShapes;
    pos = 3;
  } else {
    return std::nullopt;
  }
  size_t sep = name.find('_', pos);
  if (sep == std::string::npos || sep == pos || sep + 1 == name.size())
    return std::nullopt;
  for (size_t i = pos; i < name.size(); ++i)
    if (i != sep && !std::isdigit((unsigned char)name[i]))
      return std::nullopt;
  size_t k = std::strtoull(name.c_str() + pos, nullptr, 10);
  size_t d = std::strtoull(name.c_str() + sep + 1, nullptr, 10);
  if (k >= shapes->size() || d >= (*shapes)[k].size())
    return std::optional<int64_t>();
  return std::optional<int64_t>((*shapes)[k][d]);
}

/// Expands packs `i...` to `i0, ..., i{n-1}`, n = rank of result 0 minus the
/// other variables of the first output.
static std::optional<std::string> expandPacks(const std::string &text,
                                              const OpContext &context,
                                              const std::string &opName,
                                              std::string &error) {
  if (text.find("...") == std::string::npos)
    return text;
  // The first output's variable list: the first parenthesised group after
  // '->', or the first one when there is no input list.
  size_t arrow = text.find("->");
  size_t open = text.find('(', arrow == std::string::npos ? 0 : arrow);
  size_t close = text.find(')', open);
  if (open == std::string::npos || close == std::string::npos) {
    error = "cannot find the output variables of '" + opName + "'";
    return std::nullopt;
  }
  std::string vars = text.substr(open + 1, close - open - 1);
  int64_t fixed = 0, packs = 0;
  size_t start = 0;
  while (start <= vars.size()) {
    size_t comma = vars.find(',', start);
    std::string item = vars.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.find("...") != std::string::npos)
      ++packs;
    else if (item.find_first_not_of(" \t\n") != std::string::npos)
      ++fixed;
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  int64_t rank = context.resultShapes.empty()
                     ? fixed + packs
                     : (int64_t)context.resultShapes[0].size();
  int64_t n = rank - fixed;
  if (packs != 1 || n < 0) {
    error = packs != 1 ? "'" + opName +
                             "' needs exactly one pack in its "
                             "first output's variables"
                       : "result 0 of '" + opName + "' has rank " +
                             std::to_string(rank) +
                             " but the description "
                             "needs at least " +
                             std::to_string(fixed);
    return std::nullopt;
  }
  std::string out;
  for (size_t i = 0; i < text.size();) {
    size_t dots = text.find("...", i);
    if (dots == std::string::npos) {
      out += text.substr(i);
      break;
    }
    size_t nameStart = dots;
    while (nameStart > i && (std::isalnum((unsigned char)text[nameStart - 1]) ||
                             text[nameStart - 1] == '_'))
      --nameStart;
    std::string name = text.substr(nameStart, dots - nameStart);
    out += text.substr(i, nameStart - i);
    std::string expansion;
    for (int64_t j = 0; j < n; ++j)
      expansion += (j ? ", " : "") + name + std::to_string(j);
    // An empty pack also drops the comma that joined it to its neighbour.
    if (n == 0) {
      size_t next = text.find_first_not_of(" ", dots + 3);
      if (next != std::string::npos && text[next] == ',') {
        i = next + 1;
        continue;
      }
      size_t back = out.find_last_not_of(" ");
      if (back != std::string::npos && out[back] == ',')
        out.erase(back);
    }
    out += expansion;
    i = dots + 3;
  }
  return out;
}

std::optional<OpDesc> Library::instantiate(const LibraryEntry &entry,
                                           const OpContext &context,
                                           std::string &error) {
  std::string text;
  const std::string &body = entry.body;
  for (size_t i = 0; i < body.size();) {
    if (body[i] != '$') {
      text += body[i++];
      continue;
    }
    size_t j = ++i;
    while (j < body.size() &&
           (std::isalnum((unsigned char)body[j]) || body[j] == '_'))
      ++j;
    std::string name = body.substr(i, j - i);
    i = j;
    std::optional<int64_t> value;
    auto it = std::find_if(entry.params.begin(), entry.params.end(),
                           [&](const auto &p) { return p.first == name; });
    if (it != entry.params.end()) {
      value = context.attribute ? context.attribute(name) : std::nullopt;
      if (!value)
        value = it->second;
      if (!value) {
        error = "operation '" + entry.opName + "' has no integer attribute '" +
                name + "' and the parameter has no default";
        return std::nullopt;
      }
    } else if (auto shape = lookupShapeParam(name, context)) {
      // Without shapes (when a library is checked) sizes read as 1.
      value = *shape ? **shape : 1;
      if (!*shape && !context.operandShapes.empty()) {
        error = "'$" + name + "' names a dimension that '" + entry.opName +
                "' does not have";
        return std::nullopt;
      }
    } else {
      error = "'$" + name + "' is not a parameter of '" + entry.opName + "'";
      return std::nullopt;
    }
    text += *value < 0 ? "(" + std::to_string(*value) + ")"
                       : std::to_string(*value);
  }
  std::optional<std::string> expanded =
      expandPacks(text, context, entry.opName, error);
  if (!expanded)
    return std::nullopt;
  ParseError perr;
  auto desc = tdl::parse(*expanded, perr);
  if (!desc) {
    error = perr.message;
    return std::nullopt;
  }
  return desc;
}
