//===- Interval.h - Symbolic interval arithmetic ----------------*- C++ -*-===//
//
// Symbolic intervals as in Tofu (EuroSys'19) equation (1) and Figure 4: an
// interval is a pair of affine forms over the symbolic extents N_1..N_n of an
// operator's index variables,
//
//   [ sum_i l_i * N_i + cl , sum_i u_i * N_i + cu ].
//
// Two refinements over the paper's Figure 4 keep the analysis sound:
//   * the two bounds carry separate constants (cl, cu), so that an index
//     variable x in [0, N_x - 1] is exact;
//   * subtraction and multiplication by a negative constant swap the bounds
//     ([a, b] - [c, d] = [a - d, b - c]), which Figure 4 leaves implicit.
// floordiv/ceildiv by a constant widen the bounds by (k - 1) / k so that the
// concrete bounds obtained by rounding inwards are still sound; mod by a
// constant k gives [0, k - 1]. Products and comparisons of two non-constant
// intervals are not affine and are reported as errors.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_INTERVAL_H
#define TOFU_PARTITION_INTERVAL_H

#include "tofu/Partition/Rational.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tofu {

/// An interval whose bounds are affine in the symbolic extents N_i.
class SymbolicInterval {
public:
  /// The empty-coefficient interval [c, c] over `numSymbols` symbols.
  static SymbolicInterval constant(unsigned numSymbols, Rational c);
  /// The symbol-free interval [lo, hi].
  static SymbolicInterval constantRange(unsigned numSymbols, Rational lo,
                                        Rational hi);
  /// The full range of index variable `var`: [0, N_var - 1].
  static SymbolicInterval variable(unsigned numSymbols, unsigned var);
  /// The share of `var` owned by worker `worker` of `parts`:
  /// [worker/parts * N_var, (worker+1)/parts * N_var - 1].
  static SymbolicInterval share(unsigned numSymbols, unsigned var,
                                unsigned worker, unsigned parts);

  unsigned getNumSymbols() const { return lower.size(); }
  const std::vector<Rational> &getLowerCoeffs() const { return lower; }
  const std::vector<Rational> &getUpperCoeffs() const { return upper; }
  Rational getLowerConstant() const { return lowerConst; }
  Rational getUpperConstant() const { return upperConst; }

  /// False if an operation overflowed (see Rational): the interval then
  /// means nothing.
  bool isValid() const;
  /// True if both bounds are the same constant.
  bool isConstant() const;
  /// True if the bounds do not depend on any symbol.
  bool isSymbolFree() const;

  SymbolicInterval operator+(const SymbolicInterval &o) const;
  SymbolicInterval operator-(const SymbolicInterval &o) const;
  SymbolicInterval operator+(Rational k) const;
  SymbolicInterval operator-(Rational k) const { return *this + (-k); }
  SymbolicInterval operator*(Rational k) const;
  /// Real division by a non-zero constant (Figure 4's I / k).
  SymbolicInterval divide(Rational k) const;
  /// Integer floor division by a positive constant.
  SymbolicInterval floorDiv(int64_t k) const;
  /// Integer ceiling division by a positive constant.
  SymbolicInterval ceilDiv(int64_t k) const;
  /// Remainder by a positive constant: [0, k - 1], or exact when this interval
  /// is a single constant.
  SymbolicInterval mod(int64_t k) const;

  /// Product of two intervals. Succeeds only when one side is a constant;
  /// otherwise returns std::nullopt (the product is not affine).
  static std::optional<SymbolicInterval> product(const SymbolicInterval &a,
                                                 const SymbolicInterval &b);

  bool operator==(const SymbolicInterval &o) const;

  /// Concrete integer bounds for the given extents, rounding inwards:
  /// [ceil(lower), floor(upper)].
  std::pair<int64_t, int64_t>
  evaluate(const std::vector<int64_t> &extents) const;

  /// Prints "[N0/2, N0 + N1 - 2]" using the given symbol names (N0, N1, ...
  /// when empty).
  std::string str(const std::vector<std::string> &names = {}) const;

private:
  explicit SymbolicInterval(unsigned numSymbols)
      : lower(numSymbols), upper(numSymbols) {}

  std::vector<Rational> lower, upper;
  Rational lowerConst, upperConst;
};

} // namespace tofu

#endif // TOFU_PARTITION_INTERVAL_H
