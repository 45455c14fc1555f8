//===- TDL.h - The Tensor Description Language ------------------*- C++ -*-===//
//
// The abstract syntax of TDL (Tofu, EuroSys'19, section 4.1), its parser and
// its printer. A description defines every output element of an operator as
// a lambda over index variables:
//
//   (data, filters) -> (b, co, x) = sum(ci, dx) data[b, ci, x + dx] *
//   filters[ci, co, dx] (m) -> (b, i, j) = opaque(m[b, :, :]) (x) -> y(b, c) =
//   x[b, c] - mean[c]; mean(c) = sum(b) x[b, c]
//
// Accesses are affine in the index variables (constants, +, -, * by a
// constant, floordiv/ceildiv/mod by a constant), whole-dimension slices
// (`:`) or opaque indices read from other tensors (`opaque(ids[b, s])`, a
// gather). The body is arithmetic over accesses, constants, index values,
// scalar functions (`exp(...)`) and opaque functions (`opaque(...)`).
//
// This library has no MLIR dependency; the `#tdl.desc` attribute wraps it.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TDL_TDL_H
#define TOFU_TDL_TDL_H

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tofu {
namespace tdl {

/// The deepest nesting a description may have: the height of its expression
/// trees (an operator chain `a + b + c` nests as `(a + b) + c`) and the
/// nesting of parentheses, calls and unary minus in its text. Passes over
/// descriptions recurse over the trees, so this bound keeps their stack use
/// small; descriptions that exceed it are rejected by `parse` and `verify`.
constexpr size_t kMaxNestingDepth = 1024;

/// Reducers of section 4.1.
enum class Reducer { None, Sum, Max, Min, Prod };
const char *stringifyReducer(Reducer r);

/// An index expression inside an access `t[...]`.
struct IndexExpr {
  enum class Kind {
    Var,
    Const,
    Add,
    Sub,
    Mul,
    FloorDiv,
    CeilDiv,
    Mod,
    Slice,
    /// `opaque(args)`: an index computed from values (a gather). Like a
    /// slice it may be any position of its dimension. Its arguments are
    /// value expressions held by the enclosing access (Expr::operands).
    Opaque
  };
  Kind kind = Kind::Const;
  /// The variable name for Var.
  std::string var;
  /// The value for Const; the number of arguments for Opaque.
  int64_t value = 0;
  /// The operands of binary kinds.
  std::vector<IndexExpr> operands;

  static IndexExpr makeVar(std::string name);
  static IndexExpr makeConst(int64_t v);
  static IndexExpr makeSlice();
  static IndexExpr makeOpaque(int64_t numArgs);
  static IndexExpr makeBinary(Kind kind, IndexExpr lhs, IndexExpr rhs);

  bool isVar() const { return kind == Kind::Var; }
  bool isSlice() const { return kind == Kind::Slice; }
  bool isOpaque() const { return kind == Kind::Opaque; }
  /// True for the indices that may be any position of their dimension:
  /// slices and opaque indices.
  bool isWhole() const { return isSlice() || isOpaque(); }
  /// True if no variable occurs in this expression.
  bool isConstant() const;
  /// Collects the variables used, in order of first occurrence (not those of
  /// an opaque index's arguments, which the enclosing access holds).
  void collectVars(std::vector<std::string> &vars) const;
  bool operator==(const IndexExpr &o) const;
};

/// A value expression: the body of a lambda.
struct Expr {
  enum class Kind {
    Access, ///< tensor[idx, ...]
    Number, ///< a literal, kept as written
    Index,  ///< an index variable used as a value
    Binary, ///< lhs op rhs with op in + - * /
    Neg,    ///< -operand
    Call,   ///< fn(args): an element-wise scalar function
    Opaque, ///< opaque(args): a function that TDL does not look into
    Reduce, ///< a reduction nested in an expression: `b[i] + sum(k) e`
  };
  Kind kind = Kind::Number;
  /// Tensor name (Access), literal text (Number), variable (Index), function
  /// name (Call, Opaque: may be empty), operator character (Binary).
  std::string name;
  /// The reducer and reduction variables of a nested reduction (Reduce).
  Reducer reducer = Reducer::None;
  std::vector<std::string> reductionVars;
  /// Access indices.
  std::vector<IndexExpr> indices;
  /// Operands (Binary, Neg, Call, Opaque, Reduce). For an Access: the
  /// arguments of its opaque indices, in index order, so that every pass
  /// over the operands also sees the accesses a gather's indices read.
  std::vector<Expr> operands;

  bool operator==(const Expr &o) const;
};

/// One output tensor of a description.
struct OutputDesc {
  /// Name of the output; empty for the single-output form.
  std::string name;
  /// Output index variables, one per output dimension.
  std::vector<std::string> vars;
  Reducer reducer = Reducer::None;
  /// Reduction variables (empty when reducer is None).
  std::vector<std::string> reductionVars;
  Expr body;

  /// Reduction variables of reductions nested inside the body.
  std::vector<std::string> getNestedReductionVars() const;

  bool operator==(const OutputDesc &o) const;
};

/// A whole operator description.
struct OpDesc {
  /// Input tensor names, in operand order. Scalars are rank-0 inputs.
  std::vector<std::string> inputs;
  std::vector<OutputDesc> outputs;
  /// Extents declared in a reduction header, `max(ky : 3)`, for reduction
  /// variables whose extent the shapes do not determine (padded windows).
  std::map<std::string, int64_t> declaredExtents;

  /// Checks the well-formedness rules that the grammar alone does not:
  /// unique variable and input names, accesses only to declared inputs,
  /// reduction variables distinct from output variables, every variable
  /// bound, consistent access ranks, and nesting no deeper than
  /// kMaxNestingDepth. Returns an error message, or
  /// std::nullopt when the description is valid.
  std::optional<std::string> verify() const;

  /// Reduction variables of reductions nested inside an expression. Cutting
  /// one is not a partition-n-reduce strategy: the rest of the expression
  /// would have to be applied after the reduction.
  std::vector<std::string> getNestedReductionVars() const;

  /// Every index variable of the operator (the union over its outputs of
  /// output and reduction variables, nested reductions included), in order
  /// of first occurrence.
  std::vector<std::string> getLoopVars() const;

  /// True if every output has no reduction and every access of every input
  /// is the identity map of the output variables (section 5.1's test for
  /// element-wise operators).
  bool isElementwise() const;

  /// Prints the canonical text form, which `parse` reads back.
  std::string str() const;
  void dump() const;

  bool operator==(const OpDesc &o) const {
    return inputs == o.inputs && outputs == o.outputs &&
           declaredExtents == o.declaredExtents;
  }
};

/// A parse failure with a 0-based character position in the text.
struct ParseError {
  size_t position = 0;
  std::string message;
};

/// Parses a description. When the `(inputs) ->` prefix is omitted, inputs
/// are the accessed tensors in order of first occurrence. The result is
/// verified. On failure fills `error` and returns std::nullopt.
std::optional<OpDesc> parse(const std::string &text, ParseError &error);

/// Prints an index expression, e.g. "x + dx".
std::string printIndexExpr(const IndexExpr &e);
/// Prints a value expression.
std::string printExpr(const Expr &e);

} // namespace tdl
} // namespace tofu

#endif // TOFU_TDL_TDL_H
