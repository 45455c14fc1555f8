//===- TDLLibrary.cpp - Libraries of TDL descriptions by op name ----------===//
//
// Parser for `.tdl` library files and parameter substitution.
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/TDLLibrary.h"

#include <algorithm>
#include <cctype>
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
    return std::strtoll(text.c_str() + start, nullptr, 10);
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
    if (!instantiate(
            entry,
            [](const std::string &) -> std::optional<int64_t> { return 1; },
            descError))
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

std::optional<OpDesc> Library::instantiate(const LibraryEntry &entry,
                                           const ParamLookup &lookup,
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
    auto it = std::find_if(entry.params.begin(), entry.params.end(),
                           [&](const auto &p) { return p.first == name; });
    if (it == entry.params.end()) {
      error = "'$" + name + "' is not a parameter of '" + entry.opName + "'";
      return std::nullopt;
    }
    std::optional<int64_t> value = lookup(name);
    if (!value)
      value = it->second;
    if (!value) {
      error = "operation '" + entry.opName +
              "' has no integer attribute '" + name +
              "' and the parameter has no default";
      return std::nullopt;
    }
    text += "(" + std::to_string(*value) + ")";
  }
  ParseError perr;
  auto desc = tdl::parse(text, perr);
  if (!desc) {
    error = perr.message;
    return std::nullopt;
  }
  return desc;
}
