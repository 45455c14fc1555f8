//===- TDLParser.cpp - Parser for the TDL text form -----------------------===//
//
// A recursive-descent parser for TDL descriptions. The grammar is:
//
//   desc    ::= [ '(' names ')' '->' ] output (';' output)*
//   output  ::= [name] '(' names ')' '=' expr
//   reduce  ::= reducer '(' rvar (',' rvar)* ')' expr
//   rvar    ::= name [':' integer]
//   expr    ::= term (('+' | '-') term)*
//   term    ::= unary (('*' | '/') unary)*
//   unary   ::= '-' unary | primary
//   primary ::= number | '(' expr ')' | name '[' [index (',' index)*] ']'
//             | name '(' [expr (',' expr)*] ')' | name | reduce
//   index   ::= ':' | 'opaque' '(' [expr (',' expr)*] ')' | iexpr
//   iexpr   ::= iterm (('+' | '-') iterm)*
//   iterm   ::= iunary (('*' | 'floordiv' | 'ceildiv' | 'mod') iunary)*
//   iunary  ::= '-' iunary | integer | name | '(' iexpr ')'
//
// A reducer (sum, max, min, prod) followed by a parenthesised list of names
// and then the start of a primary introduces a reduction, which extends as
// far right as possible; otherwise `max(a, b)` is the element-wise function.
// A reduction over a whole output body is the output's reduction; one nested
// in an expression (`bias[co] + sum(ci) ...`) is a Reduce node.
//
// Nesting is bounded by kMaxNestingDepth, both the recursion of the parser
// (parentheses, calls, unary minus) and the height of the tree it builds
// (long operator chains such as `i + 0 + 0 + ...` are left-deep trees), so
// that every recursive pass over a parsed description has bounded depth.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/TDL.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

using namespace tofu;
using namespace tofu::tdl;

namespace {

struct Token {
  enum Kind { Eof, Ident, Integer, Float, Punct, Error } kind = Eof;
  std::string text;
  size_t pos = 0;
};

class Lexer {
public:
  explicit Lexer(const std::string &text) : text(text) {}

  Token next() {
    while (pos < text.size() && std::isspace((unsigned char)text[pos]))
      ++pos;
    Token t;
    t.pos = pos;
    if (pos >= text.size())
      return t;
    char c = text[pos];
    if (std::isalpha((unsigned char)c) || c == '_') {
      size_t start = pos;
      while (pos < text.size() && (std::isalnum((unsigned char)text[pos]) ||
                                   text[pos] == '_' || text[pos] == '.'))
        ++pos;
      t.kind = Token::Ident;
      t.text = text.substr(start, pos - start);
      return t;
    }
    if (std::isdigit((unsigned char)c)) {
      size_t start = pos;
      bool isFloat = false;
      while (pos < text.size() && std::isdigit((unsigned char)text[pos]))
        ++pos;
      if (pos < text.size() && text[pos] == '.') {
        isFloat = true;
        ++pos;
        while (pos < text.size() && std::isdigit((unsigned char)text[pos]))
          ++pos;
      }
      if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
        size_t save = pos++;
        if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
          ++pos;
        if (pos < text.size() && std::isdigit((unsigned char)text[pos])) {
          isFloat = true;
          while (pos < text.size() && std::isdigit((unsigned char)text[pos]))
            ++pos;
        } else {
          pos = save;
        }
      }
      t.kind = isFloat ? Token::Float : Token::Integer;
      t.text = text.substr(start, pos - start);
      return t;
    }
    if (c == '-' && pos + 1 < text.size() && text[pos + 1] == '>') {
      pos += 2;
      t.kind = Token::Punct;
      t.text = "->";
      return t;
    }
    if (std::string("()[],:;=+-*/").find(c) != std::string::npos) {
      ++pos;
      t.kind = Token::Punct;
      t.text = std::string(1, c);
      return t;
    }
    t.kind = Token::Error;
    t.text = std::string(1, c);
    ++pos;
    return t;
  }

private:
  const std::string &text;
  size_t pos = 0;
};

class Parser {
public:
  explicit Parser(const std::string &text) {
    Lexer lexer(text);
    for (;;) {
      tokens.push_back(lexer.next());
      if (tokens.back().kind == Token::Eof)
        break;
    }
  }

  std::optional<OpDesc> parseDesc(ParseError &error);

private:
  const Token &peek(size_t ahead = 0) const {
    return tokens[std::min(idx + ahead, tokens.size() - 1)];
  }
  Token consume() {
    Token t = peek();
    if (idx < tokens.size() - 1)
      ++idx;
    return t;
  }
  bool isPunct(const char *p, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Punct && peek(ahead).text == p;
  }
  bool consumeIf(const char *p) {
    if (!isPunct(p))
      return false;
    consume();
    return true;
  }
  bool fail(const std::string &msg) {
    if (!failed) {
      failed = true;
      err.position = peek().pos;
      const Token &t = peek();
      std::string found =
          t.kind == Token::Eof ? "end of input" : "'" + t.text + "'";
      err.message = msg + ", found " + found;
    }
    return false;
  }
  bool expect(const char *p) {
    if (consumeIf(p))
      return true;
    return fail(std::string("expected '") + p + "'");
  }

  bool parseNameList(std::vector<std::string> &names);
  bool parseOutput(OutputDesc &out);
  bool parseExpr(Expr &e);
  bool parseTerm(Expr &e);
  bool parseUnary(Expr &e);
  bool parsePrimary(Expr &e);
  bool parseReduction(Expr &e);
  bool parseIndex(IndexExpr &e);
  bool parseIExpr(IndexExpr &e);
  bool parseITerm(IndexExpr &e);
  bool parseIUnary(IndexExpr &e);

  /// Enters one level of parser recursion; fails past the limit.
  bool enter() {
    if (++depth <= kMaxNestingDepth)
      return true;
    return failDepth();
  }
  /// Records that the node just parsed has `h` levels; fails past the limit.
  bool setHeight(size_t h) {
    height = h;
    if (h <= kMaxNestingDepth)
      return true;
    return failDepth();
  }
  bool failDepth() {
    return fail("nesting deeper than " + std::to_string(kMaxNestingDepth) +
                " levels");
  }

  /// Restores the recursion depth when a parse function returns.
  struct DepthGuard {
    explicit DepthGuard(size_t &depth) : depth(depth), saved(depth) {}
    ~DepthGuard() { depth = saved; }
    size_t &depth;
    size_t saved;
  };

  std::vector<Token> tokens;
  std::map<std::string, int64_t> extents;
  size_t idx = 0;
  /// Current recursion depth of the parse functions.
  size_t depth = 0;
  /// Height of the tree that the last successful parse function built.
  size_t height = 0;
  bool failed = false;
  ParseError err;
};

} // namespace

static std::optional<Reducer> symbolizeReducer(const std::string &s) {
  if (s == "sum")
    return Reducer::Sum;
  if (s == "max")
    return Reducer::Max;
  if (s == "min")
    return Reducer::Min;
  if (s == "prod")
    return Reducer::Prod;
  return std::nullopt;
}

/// The value of a decimal integer token, or std::nullopt if it does not fit
/// in an int64_t.
static std::optional<int64_t> parseInteger(const std::string &text) {
  errno = 0;
  long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE)
    return std::nullopt;
  return v;
}

static bool isIndexKeyword(const std::string &s) {
  return s == "floordiv" || s == "ceildiv" || s == "mod";
}

bool Parser::parseNameList(std::vector<std::string> &names) {
  if (!expect("("))
    return false;
  if (consumeIf(")"))
    return true;
  do {
    if (peek().kind != Token::Ident)
      return fail("expected a name");
    names.push_back(consume().text);
  } while (consumeIf(","));
  return expect(")");
}

bool Parser::parseOutput(OutputDesc &out) {
  if (peek().kind == Token::Ident)
    out.name = consume().text;
  if (!parseNameList(out.vars) || !expect("="))
    return false;
  if (!parseExpr(out.body))
    return false;
  // A reduction over the whole body is the output's reduction.
  if (out.body.kind == Expr::Kind::Reduce) {
    out.reducer = out.body.reducer;
    out.reductionVars = std::move(out.body.reductionVars);
    Expr inner = std::move(out.body.operands[0]);
    out.body = std::move(inner);
  }
  return true;
}

bool Parser::parseReduction(Expr &e) {
  // `sum(a, b) <expr>`, when the names are followed by the start of a
  // primary; otherwise this is a call such as `max(x[i], 0.0)`.
  if (!(peek().kind == Token::Ident && symbolizeReducer(peek().text) &&
        isPunct("(", 1)))
    return false;
  size_t save = idx;
  Reducer r = *symbolizeReducer(consume().text);
  consume();
  std::vector<std::string> vars;
  for (;;) {
    if (peek().kind != Token::Ident || isPunct("[", 1) || isPunct("(", 1)) {
      idx = save;
      return false;
    }
    vars.push_back(consume().text);
    if (isPunct(":") && peek(1).kind == Token::Integer) {
      consume();
      std::optional<int64_t> extent = parseInteger(peek().text);
      if (!extent) {
        // A reduction header after all; the failure is recorded.
        fail("integer does not fit in 64 bits");
        return true;
      }
      consume();
      extents[vars.back()] = *extent;
    }
    if (consumeIf(")"))
      break;
    if (!consumeIf(",")) {
      idx = save;
      return false;
    }
  }
  const Token &t = peek();
  bool startsPrimary = t.kind == Token::Ident || t.kind == Token::Integer ||
                       t.kind == Token::Float ||
                       (t.kind == Token::Punct && t.text == "(");
  if (!startsPrimary) {
    idx = save;
    return false;
  }
  e.kind = Expr::Kind::Reduce;
  e.reducer = r;
  e.reductionVars = std::move(vars);
  e.operands.emplace_back();
  // A nested reduction extends as far to the right as possible. It is a
  // reduction either way; a failure in its body is recorded in `failed`.
  if (parseExpr(e.operands.back()))
    setHeight(height + 1);
  return true;
}

bool Parser::parseExpr(Expr &e) {
  DepthGuard guard(depth);
  if (!enter() || !parseTerm(e))
    return false;
  size_t h = height;
  while (isPunct("+") || isPunct("-")) {
    Expr bin;
    bin.kind = Expr::Kind::Binary;
    bin.name = consume().text;
    Expr rhs;
    if (!parseTerm(rhs))
      return false;
    // Moved one by one: an initializer list would copy the whole chain.
    bin.operands.push_back(std::move(e));
    bin.operands.push_back(std::move(rhs));
    e = std::move(bin);
    if (!setHeight(h = std::max(h, height) + 1))
      return false;
  }
  height = h;
  return true;
}

bool Parser::parseTerm(Expr &e) {
  if (!parseUnary(e))
    return false;
  size_t h = height;
  while (isPunct("*") || isPunct("/")) {
    Expr bin;
    bin.kind = Expr::Kind::Binary;
    bin.name = consume().text;
    Expr rhs;
    if (!parseUnary(rhs))
      return false;
    // Moved one by one: an initializer list would copy the whole chain.
    bin.operands.push_back(std::move(e));
    bin.operands.push_back(std::move(rhs));
    e = std::move(bin);
    if (!setHeight(h = std::max(h, height) + 1))
      return false;
  }
  height = h;
  return true;
}

bool Parser::parseUnary(Expr &e) {
  if (consumeIf("-")) {
    DepthGuard guard(depth);
    e.kind = Expr::Kind::Neg;
    Expr operand;
    if (!enter() || !parseUnary(operand))
      return false;
    e.operands.push_back(std::move(operand));
    return setHeight(height + 1);
  }
  return parsePrimary(e);
}

bool Parser::parsePrimary(Expr &e) {
  const Token &t = peek();
  if (t.kind == Token::Integer || t.kind == Token::Float) {
    e.kind = Expr::Kind::Number;
    e.name = consume().text;
    return setHeight(1);
  }
  if (consumeIf("(")) {
    if (!parseExpr(e))
      return false;
    return expect(")");
  }
  if (t.kind != Token::Ident)
    return fail("expected an expression");
  if (parseReduction(e))
    return !failed;
  e.name = consume().text;
  if (consumeIf("[")) {
    e.kind = Expr::Kind::Access;
    size_t h = 0;
    if (!consumeIf("]")) {
      do {
        // `opaque(args)`: an index read from values; its arguments become
        // operands of the access.
        if (peek().kind == Token::Ident && peek().text == "opaque" &&
            isPunct("(", 1)) {
          DepthGuard guard(depth);
          if (!enter())
            return false;
          consume();
          consume();
          int64_t numArgs = 0;
          if (!consumeIf(")")) {
            do {
              Expr arg;
              if (!parseExpr(arg))
                return false;
              e.operands.push_back(std::move(arg));
              ++numArgs;
              h = std::max(h, height + 1);
            } while (consumeIf(","));
            if (!expect(")"))
              return false;
          }
          e.indices.push_back(IndexExpr::makeOpaque(numArgs));
          h = std::max<size_t>(h, 1);
          continue;
        }
        IndexExpr idxExpr;
        if (!parseIndex(idxExpr))
          return false;
        e.indices.push_back(std::move(idxExpr));
        h = std::max(h, height);
      } while (consumeIf(","));
      if (!expect("]"))
        return false;
    }
    return setHeight(h + 1);
  }
  if (consumeIf("(")) {
    e.kind = Expr::Kind::Call;
    if (e.name == "opaque") {
      e.kind = Expr::Kind::Opaque;
      e.name.clear();
    }
    size_t h = 0;
    if (!consumeIf(")")) {
      do {
        Expr arg;
        if (!parseExpr(arg))
          return false;
        e.operands.push_back(std::move(arg));
        h = std::max(h, height);
      } while (consumeIf(","));
      if (!expect(")"))
        return false;
    }
    return setHeight(h + 1);
  }
  e.kind = Expr::Kind::Index;
  return setHeight(1);
}

bool Parser::parseIndex(IndexExpr &e) {
  if (consumeIf(":")) {
    e = IndexExpr::makeSlice();
    return setHeight(1);
  }
  return parseIExpr(e);
}

bool Parser::parseIExpr(IndexExpr &e) {
  DepthGuard guard(depth);
  if (!enter() || !parseITerm(e))
    return false;
  size_t h = height;
  while (isPunct("+") || isPunct("-")) {
    auto kind =
        consume().text == "+" ? IndexExpr::Kind::Add : IndexExpr::Kind::Sub;
    IndexExpr rhs;
    if (!parseITerm(rhs))
      return false;
    e = IndexExpr::makeBinary(kind, std::move(e), std::move(rhs));
    if (!setHeight(h = std::max(h, height) + 1))
      return false;
  }
  height = h;
  return true;
}

bool Parser::parseITerm(IndexExpr &e) {
  if (!parseIUnary(e))
    return false;
  size_t h = height;
  for (;;) {
    IndexExpr::Kind kind;
    if (isPunct("*")) {
      kind = IndexExpr::Kind::Mul;
    } else if (peek().kind == Token::Ident && isIndexKeyword(peek().text)) {
      const std::string &k = peek().text;
      kind = k == "floordiv"  ? IndexExpr::Kind::FloorDiv
             : k == "ceildiv" ? IndexExpr::Kind::CeilDiv
                              : IndexExpr::Kind::Mod;
    } else if (isPunct("/")) {
      return fail("use 'floordiv' or 'ceildiv' for division in an index");
    } else {
      height = h;
      return true;
    }
    consume();
    IndexExpr rhs;
    if (!parseIUnary(rhs))
      return false;
    e = IndexExpr::makeBinary(kind, std::move(e), std::move(rhs));
    if (!setHeight(h = std::max(h, height) + 1))
      return false;
  }
}

bool Parser::parseIUnary(IndexExpr &e) {
  if (consumeIf("-")) {
    DepthGuard guard(depth);
    IndexExpr operand;
    if (!enter() || !parseIUnary(operand))
      return false;
    e = IndexExpr::makeBinary(IndexExpr::Kind::Sub, IndexExpr::makeConst(0),
                              std::move(operand));
    return setHeight(height + 1);
  }
  if (peek().kind == Token::Integer) {
    std::optional<int64_t> value = parseInteger(peek().text);
    if (!value)
      return fail("integer does not fit in 64 bits");
    consume();
    e = IndexExpr::makeConst(*value);
    return setHeight(1);
  }
  if (consumeIf("(")) {
    if (!parseIExpr(e))
      return false;
    return expect(")");
  }
  if (peek().kind == Token::Ident && peek().text == "opaque" && isPunct("(", 1))
    return fail("an opaque index must be a whole index, not part of an "
                "expression");
  if (peek().kind == Token::Ident && !isIndexKeyword(peek().text)) {
    e = IndexExpr::makeVar(consume().text);
    return setHeight(1);
  }
  return fail("expected an index expression");
}

/// Accesses without brackets: a bare name that is an input is a rank-0
/// access, not an index value.
static void resolveScalarInputs(Expr &e,
                                const std::vector<std::string> &inputs) {
  if (e.kind == Expr::Kind::Index &&
      std::find(inputs.begin(), inputs.end(), e.name) != inputs.end())
    e.kind = Expr::Kind::Access;
  for (Expr &o : e.operands)
    resolveScalarInputs(o, inputs);
}

static void collectAccessed(const Expr &e, std::vector<std::string> &names) {
  if (e.kind == Expr::Kind::Access &&
      std::find(names.begin(), names.end(), e.name) == names.end())
    names.push_back(e.name);
  for (const Expr &o : e.operands)
    collectAccessed(o, names);
}

static void collectBareNames(const Expr &e, std::vector<std::string> &names) {
  if (e.kind == Expr::Kind::Index && !e.name.empty())
    names.push_back(e.name);
  for (const Expr &o : e.operands)
    collectBareNames(o, names);
}

std::optional<OpDesc> Parser::parseDesc(ParseError &error) {
  OpDesc desc;
  bool hasInputs = false;
  // `(names) ->` prefix.
  if (isPunct("(")) {
    size_t save = idx;
    std::vector<std::string> names;
    if (parseNameList(names) && isPunct("->")) {
      consume();
      desc.inputs = std::move(names);
      hasInputs = true;
    } else {
      idx = save;
      failed = false;
    }
  }
  do {
    OutputDesc out;
    if (!parseOutput(out)) {
      error = err;
      return std::nullopt;
    }
    desc.outputs.push_back(std::move(out));
  } while (consumeIf(";"));
  if (peek().kind != Token::Eof) {
    fail(peek().kind == Token::Error ? "unexpected character"
                                     : "expected ';' or end of description");
    error = err;
    return std::nullopt;
  }

  desc.declaredExtents = extents;
  if (!hasInputs) {
    // Inputs are the accessed tensors and the bare names that are not index
    // variables (rank-0 inputs), in order of first occurrence.
    std::vector<std::string> loopVars = desc.getLoopVars(), scalars;
    for (const OutputDesc &o : desc.outputs) {
      std::vector<std::string> bare;
      collectBareNames(o.body, bare);
      for (const std::string &n : bare)
        if (std::find(loopVars.begin(), loopVars.end(), n) == loopVars.end())
          scalars.push_back(n);
    }
    for (OutputDesc &o : desc.outputs) {
      resolveScalarInputs(o.body, scalars);
      collectAccessed(o.body, desc.inputs);
    }
  } else {
    for (OutputDesc &o : desc.outputs)
      resolveScalarInputs(o.body, desc.inputs);
  }

  if (auto msg = desc.verify()) {
    error.position = 0;
    error.message = *msg;
    return std::nullopt;
  }
  return desc;
}

std::optional<OpDesc> tdl::parse(const std::string &text, ParseError &error) {
  Parser parser(text);
  return parser.parseDesc(error);
}
