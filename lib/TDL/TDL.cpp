//===- TDL.cpp - TDL descriptions: verification and printing --------------===//
//
// Structural helpers of the TDL abstract syntax: well-formedness checks,
// element-wise detection and the canonical printer.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/TDL.h"

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <set>

using namespace tofu;
using namespace tofu::tdl;

//===----------------------------------------------------------------------===//
// IndexExpr
//===----------------------------------------------------------------------===//

IndexExpr IndexExpr::makeVar(std::string name) {
  IndexExpr e;
  e.kind = Kind::Var;
  e.var = std::move(name);
  return e;
}

IndexExpr IndexExpr::makeConst(int64_t v) {
  IndexExpr e;
  e.kind = Kind::Const;
  e.value = v;
  return e;
}

IndexExpr IndexExpr::makeSlice() {
  IndexExpr e;
  e.kind = Kind::Slice;
  return e;
}

IndexExpr IndexExpr::makeOpaque(int64_t numArgs) {
  IndexExpr e;
  e.kind = Kind::Opaque;
  e.value = numArgs;
  return e;
}

IndexExpr IndexExpr::makeBinary(Kind kind, IndexExpr lhs, IndexExpr rhs) {
  IndexExpr e;
  e.kind = kind;
  e.operands.push_back(std::move(lhs));
  e.operands.push_back(std::move(rhs));
  return e;
}

bool IndexExpr::isConstant() const {
  if (kind == Kind::Var || kind == Kind::Slice || kind == Kind::Opaque)
    return false;
  return std::all_of(operands.begin(), operands.end(),
                     [](const IndexExpr &o) { return o.isConstant(); });
}

void IndexExpr::collectVars(std::vector<std::string> &vars) const {
  if (kind == Kind::Var &&
      std::find(vars.begin(), vars.end(), var) == vars.end())
    vars.push_back(var);
  for (const IndexExpr &o : operands)
    o.collectVars(vars);
}

bool IndexExpr::operator==(const IndexExpr &o) const {
  return kind == o.kind && var == o.var && value == o.value &&
         operands == o.operands;
}

bool Expr::operator==(const Expr &o) const {
  return kind == o.kind && name == o.name && indices == o.indices &&
         operands == o.operands && reducer == o.reducer &&
         reductionVars == o.reductionVars;
}

bool OutputDesc::operator==(const OutputDesc &o) const {
  return name == o.name && vars == o.vars && reducer == o.reducer &&
         reductionVars == o.reductionVars && body == o.body;
}

const char *tdl::stringifyReducer(Reducer r) {
  switch (r) {
  case Reducer::None:
    return "none";
  case Reducer::Sum:
    return "sum";
  case Reducer::Max:
    return "max";
  case Reducer::Min:
    return "min";
  case Reducer::Prod:
    return "prod";
  }
  return "none";
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

static int precedence(const IndexExpr &e) {
  switch (e.kind) {
  case IndexExpr::Kind::Add:
  case IndexExpr::Kind::Sub:
    return 1;
  case IndexExpr::Kind::Mul:
  case IndexExpr::Kind::FloorDiv:
  case IndexExpr::Kind::CeilDiv:
  case IndexExpr::Kind::Mod:
    return 2;
  default:
    return 3;
  }
}

static std::string printIndex(const IndexExpr &e, int minPrec) {
  std::string s;
  int prec = precedence(e);
  switch (e.kind) {
  case IndexExpr::Kind::Var:
    return e.var;
  case IndexExpr::Kind::Const:
    return std::to_string(e.value);
  case IndexExpr::Kind::Slice:
    return ":";
  case IndexExpr::Kind::Opaque:
    // The arguments live in the enclosing access; see printValue.
    return "opaque(...)";
  case IndexExpr::Kind::Sub:
    if (e.operands[0].kind == IndexExpr::Kind::Const &&
        e.operands[0].value == 0) {
      s = "-" + printIndex(e.operands[1], 3);
      prec = 3;
      break;
    }
    [[fallthrough]];
  default: {
    const char *op = e.kind == IndexExpr::Kind::Add        ? " + "
                     : e.kind == IndexExpr::Kind::Sub      ? " - "
                     : e.kind == IndexExpr::Kind::Mul      ? " * "
                     : e.kind == IndexExpr::Kind::FloorDiv ? " floordiv "
                     : e.kind == IndexExpr::Kind::CeilDiv  ? " ceildiv "
                                                           : " mod ";
    // Left-associative: the right operand needs a higher precedence.
    s = printIndex(e.operands[0], prec) + op +
        printIndex(e.operands[1], prec + 1);
  }
  }
  return prec < minPrec ? "(" + s + ")" : s;
}

std::string tdl::printIndexExpr(const IndexExpr &e) { return printIndex(e, 0); }

static std::string joinNames(const std::vector<std::string> &names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i ? ", " : "") + names[i];
  return s;
}

static int precedence(const Expr &e) {
  if (e.kind == Expr::Kind::Reduce)
    return 0;
  if (e.kind == Expr::Kind::Binary)
    return (e.name == "+" || e.name == "-") ? 1 : 2;
  if (e.kind == Expr::Kind::Neg)
    return 3;
  return 4;
}

static std::string
printReductionVars(const std::vector<std::string> &vars,
                   const std::map<std::string, int64_t> *extents) {
  std::string s;
  for (size_t i = 0; i < vars.size(); ++i) {
    s += (i ? ", " : "") + vars[i];
    if (extents && extents->count(vars[i]))
      s += " : " + std::to_string(extents->at(vars[i]));
  }
  return s;
}

static std::string
printValue(const Expr &e, int minPrec,
           const std::map<std::string, int64_t> *extents = nullptr) {
  std::string s;
  int prec = precedence(e);
  auto join = [extents](const std::vector<Expr> &ops) {
    std::string r;
    for (size_t i = 0; i < ops.size(); ++i)
      r += (i ? ", " : "") + printValue(ops[i], 0, extents);
    return r;
  };
  switch (e.kind) {
  case Expr::Kind::Access: {
    s = e.name;
    if (e.indices.empty())
      break;
    s += "[";
    size_t arg = 0;
    for (size_t i = 0; i < e.indices.size(); ++i) {
      const IndexExpr &idx = e.indices[i];
      s += i ? ", " : "";
      if (!idx.isOpaque()) {
        s += printIndexExpr(idx);
        continue;
      }
      // An opaque index prints the next `value` operands of the access.
      s += "opaque(";
      for (int64_t a = 0; a < idx.value && arg < e.operands.size(); ++a)
        s += (a ? ", " : "") + printValue(e.operands[arg++], 0, extents);
      s += ")";
    }
    s += "]";
    break;
  }
  case Expr::Kind::Number:
  case Expr::Kind::Index:
    s = e.name;
    break;
  case Expr::Kind::Binary:
    s = printValue(e.operands[0], prec, extents) + " " + e.name + " " +
        printValue(e.operands[1], prec + 1, extents);
    break;
  case Expr::Kind::Neg:
    s = "-" + printValue(e.operands[0], 3, extents);
    break;
  case Expr::Kind::Call:
    s = e.name + "(" + join(e.operands) + ")";
    break;
  case Expr::Kind::Opaque:
    s = "opaque(" + join(e.operands) + ")";
    break;
  case Expr::Kind::Reduce: {
    // A body that starts with '-' would read as a binary minus.
    std::string body = printValue(e.operands[0], 0, extents);
    if (body[0] == '-')
      body = "(" + body + ")";
    s = std::string(stringifyReducer(e.reducer)) + "(" +
        printReductionVars(e.reductionVars, extents) + ") " + body;
    break;
  }
  }
  return prec < minPrec ? "(" + s + ")" : s;
}

std::string tdl::printExpr(const Expr &e) { return printValue(e, 0); }

std::string OpDesc::str() const {
  std::string s = "(" + joinNames(inputs) + ") -> ";
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputDesc &o = outputs[i];
    if (i)
      s += "; ";
    s += o.name + "(" + joinNames(o.vars) + ") = ";
    if (o.reducer != Reducer::None)
      s += std::string(stringifyReducer(o.reducer)) + "(" +
           printReductionVars(o.reductionVars, &declaredExtents) + ") ";
    // A reduction body that starts with '-' would read as a binary minus.
    std::string body = printValue(
        o.body, o.body.kind == Expr::Kind::Reduce ? 4 : 0, &declaredExtents);
    if (o.reducer != Reducer::None && body[0] == '-')
      body = "(" + body + ")";
    s += body;
  }
  return s;
}

void OpDesc::dump() const { std::cerr << str() << "\n"; }

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

static void collectNestedReductionVars(const Expr &e,
                                       std::vector<std::string> &vars) {
  if (e.kind == Expr::Kind::Reduce)
    for (const std::string &v : e.reductionVars)
      if (std::find(vars.begin(), vars.end(), v) == vars.end())
        vars.push_back(v);
  for (const Expr &o : e.operands)
    collectNestedReductionVars(o, vars);
}

std::vector<std::string> OutputDesc::getNestedReductionVars() const {
  std::vector<std::string> vars;
  collectNestedReductionVars(body, vars);
  return vars;
}

std::vector<std::string> OpDesc::getNestedReductionVars() const {
  std::vector<std::string> vars;
  for (const OutputDesc &o : outputs)
    collectNestedReductionVars(o.body, vars);
  return vars;
}

std::vector<std::string> OpDesc::getLoopVars() const {
  std::vector<std::string> vars;
  auto add = [&](const std::string &v) {
    if (std::find(vars.begin(), vars.end(), v) == vars.end())
      vars.push_back(v);
  };
  for (const OutputDesc &o : outputs) {
    for (const std::string &v : o.vars)
      add(v);
    for (const std::string &v : o.reductionVars)
      add(v);
    for (const std::string &v : o.getNestedReductionVars())
      add(v);
  }
  return vars;
}

static void forEachAccess(const Expr &e,
                          const std::function<void(const Expr &)> &fn) {
  if (e.kind == Expr::Kind::Access)
    fn(e);
  for (const Expr &o : e.operands)
    forEachAccess(o, fn);
}

bool OpDesc::isElementwise() const {
  if (outputs.empty() || !getNestedReductionVars().empty())
    return false;
  const std::vector<std::string> &vars = outputs.front().vars;
  for (const OutputDesc &o : outputs) {
    if (o.reducer != Reducer::None || o.vars != vars)
      return false;
    bool identity = true;
    forEachAccess(o.body, [&](const Expr &a) {
      if (a.indices.size() != vars.size()) {
        identity = false;
        return;
      }
      for (size_t i = 0; i < vars.size(); ++i)
        if (!a.indices[i].isVar() || a.indices[i].var != vars[i])
          identity = false;
    });
    if (!identity)
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

/// The value of a variable-free index expression; std::nullopt if it is not
/// one, or (with `overflow` set) if it does not fit in 64 bits.
static std::optional<int64_t> evaluateConstant(const IndexExpr &e,
                                               bool &overflow) {
  if (e.kind == IndexExpr::Kind::Const)
    return e.value;
  if (e.operands.size() != 2)
    return std::nullopt;
  auto l = evaluateConstant(e.operands[0], overflow);
  auto r = evaluateConstant(e.operands[1], overflow);
  if (!l || !r)
    return std::nullopt;
  int64_t v;
  switch (e.kind) {
  case IndexExpr::Kind::Add:
    overflow |= __builtin_add_overflow(*l, *r, &v);
    break;
  case IndexExpr::Kind::Sub:
    overflow |= __builtin_sub_overflow(*l, *r, &v);
    break;
  case IndexExpr::Kind::Mul:
    overflow |= __builtin_mul_overflow(*l, *r, &v);
    break;
  case IndexExpr::Kind::FloorDiv:
  case IndexExpr::Kind::CeilDiv:
  case IndexExpr::Kind::Mod: {
    if (*r <= 0)
      return std::nullopt;
    // With a positive divisor none of these overflow.
    int64_t q = *l / *r, m = *l % *r;
    if (e.kind == IndexExpr::Kind::Mod)
      return m < 0 ? m + *r : m;
    if (e.kind == IndexExpr::Kind::FloorDiv)
      return m < 0 ? q - 1 : q;
    return m > 0 ? q + 1 : q;
  }
  default:
    return std::nullopt;
  }
  if (overflow)
    return std::nullopt;
  return v;
}

static std::optional<std::string>
verifyIndex(const IndexExpr &e, const std::set<std::string> &bound,
            const std::string &access) {
  switch (e.kind) {
  case IndexExpr::Kind::Var:
    if (!bound.count(e.var))
      return "unknown index variable '" + e.var + "' in '" + access + "'";
    return std::nullopt;
  case IndexExpr::Kind::Const:
  case IndexExpr::Kind::Slice:
    return std::nullopt;
  case IndexExpr::Kind::Opaque:
    if (e.value < 0)
      return "an opaque index has a negative number of arguments in '" +
             access + "'";
    return std::nullopt;
  default:
    break;
  }
  for (const IndexExpr &o : e.operands) {
    if (o.isSlice())
      return "a slice ':' must be a whole index in '" + access + "'";
    if (o.isOpaque())
      return "an opaque index must be a whole index in '" + access + "'";
    if (auto err = verifyIndex(o, bound, access))
      return err;
  }
  const IndexExpr &lhs = e.operands[0], &rhs = e.operands[1];
  if (e.kind == IndexExpr::Kind::Mul && !lhs.isConstant() && !rhs.isConstant())
    return "non-affine access '" + printIndexExpr(e) + "' in '" + access +
           "': the product of two index expressions is not affine";
  if (e.kind == IndexExpr::Kind::FloorDiv ||
      e.kind == IndexExpr::Kind::CeilDiv || e.kind == IndexExpr::Kind::Mod) {
    if (!rhs.isConstant())
      return "non-affine access '" + printIndexExpr(e) + "' in '" + access +
             "': the divisor must be a constant";
    bool overflow = false;
    std::optional<int64_t> divisor = evaluateConstant(rhs, overflow);
    if (overflow)
      return "the divisor in '" + printIndexExpr(e) + "' in '" + access +
             "' does not fit in 64 bits";
    if (!divisor || *divisor <= 0)
      return "the divisor in '" + printIndexExpr(e) + "' in '" + access +
             "' must be a positive constant";
  }
  return std::nullopt;
}

static std::optional<std::string>
verifyBody(const Expr &e, const std::set<std::string> &bound,
           const std::vector<std::string> &inputs,
           std::map<std::string, size_t> &ranks) {
  if (e.kind == Expr::Kind::Access) {
    std::string text = printExpr(e);
    if (std::find(inputs.begin(), inputs.end(), e.name) == inputs.end())
      return "access to '" + e.name + "', which is not an input";
    auto it = ranks.try_emplace(e.name, e.indices.size()).first;
    if (it->second != e.indices.size())
      return "input '" + e.name + "' is accessed with " +
             std::to_string(e.indices.size()) + " indices in '" + text +
             "' but with " + std::to_string(it->second) + " elsewhere";
    size_t args = 0;
    for (const IndexExpr &i : e.indices) {
      if (auto err = verifyIndex(i, bound, text))
        return err;
      if (i.isOpaque())
        args += i.value;
    }
    if (args != e.operands.size())
      return "the opaque indices of '" + text + "' take " +
             std::to_string(args) + " arguments but the access holds " +
             std::to_string(e.operands.size());
  }
  if (e.kind == Expr::Kind::Index && !bound.count(e.name))
    return "unknown name '" + e.name + "'";
  if (e.kind == Expr::Kind::Reduce) {
    std::set<std::string> inner = bound;
    for (const std::string &v : e.reductionVars)
      if (!inner.insert(v).second)
        return "reduction variable '" + v +
               "' is also an output index variable or repeated";
    return verifyBody(e.operands[0], inner, inputs, ranks);
  }
  for (const Expr &o : e.operands)
    if (auto err = verifyBody(o, bound, inputs, ranks))
      return err;
  return std::nullopt;
}

/// The height of an expression tree, index expressions included, computed
/// with a worklist so that it is safe on trees of any depth.
static size_t getHeight(const Expr &root) {
  size_t height = 0;
  std::vector<std::pair<const Expr *, size_t>> exprs{{&root, 1}};
  std::vector<std::pair<const IndexExpr *, size_t>> indices;
  while (!exprs.empty()) {
    auto [e, h] = exprs.back();
    exprs.pop_back();
    height = std::max(height, h);
    for (const Expr &o : e->operands)
      exprs.push_back({&o, h + 1});
    for (const IndexExpr &i : e->indices)
      indices.push_back({&i, h + 1});
  }
  while (!indices.empty()) {
    auto [e, h] = indices.back();
    indices.pop_back();
    height = std::max(height, h);
    for (const IndexExpr &o : e->operands)
      indices.push_back({&o, h + 1});
  }
  return height;
}

std::optional<std::string> OpDesc::verify() const {
  if (outputs.empty())
    return std::string("a description needs at least one output");
  // Checked first: every other check recurses over the trees.
  for (const OutputDesc &o : outputs)
    if (getHeight(o.body) > kMaxNestingDepth)
      return "nesting deeper than " + std::to_string(kMaxNestingDepth) +
             " levels";
  for (const auto &[var, extent] : declaredExtents)
    if (extent <= 0)
      return "the declared extent of '" + var + "' must be positive";
  std::set<std::string> inputSet;
  for (const std::string &in : inputs)
    if (!inputSet.insert(in).second)
      return "duplicate input name '" + in + "'";
  std::set<std::string> outputNames;
  std::map<std::string, size_t> ranks;
  for (const OutputDesc &o : outputs) {
    if (outputs.size() > 1 && o.name.empty())
      return std::string("every output of a multi-output description needs "
                         "a name");
    if (!o.name.empty() && !outputNames.insert(o.name).second)
      return "duplicate output name '" + o.name + "'";
    std::set<std::string> bound;
    for (const std::string &v : o.vars) {
      if (inputSet.count(v))
        return "index variable '" + v + "' has the name of an input";
      if (!bound.insert(v).second)
        return "duplicate output index variable '" + v + "'";
    }
    for (const std::string &v : o.reductionVars) {
      if (inputSet.count(v))
        return "index variable '" + v + "' has the name of an input";
      if (!bound.insert(v).second)
        return "reduction variable '" + v +
               "' is also an output index variable or repeated";
    }
    if (auto err = verifyBody(o.body, bound, inputs, ranks))
      return err;
  }
  return std::nullopt;
}
