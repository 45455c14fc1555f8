//===- Rational.h - Exact rational numbers for interval analysis -*- C++
//-*-===//
//
// A small exact rational type used by the symbolic interval analysis. The
// analysis divides coefficients by split factors and floordiv/ceildiv
// divisors, so floating point would make regions drift by one element.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_RATIONAL_H
#define TOFU_PARTITION_RATIONAL_H

#include <cstdint>
#include <string>

namespace tofu {

/// An exact rational number num/den with den > 0 and gcd(num, den) == 1.
///
/// Arithmetic is checked: a result whose reduced numerator or denominator
/// does not fit in int64_t (or a division by zero) is the invalid value,
/// which every later operation propagates. Code that builds rationals from
/// user input tests isValid() on the final result instead of every step.
class Rational {
public:
  Rational(int64_t num = 0);
  Rational(int64_t num, int64_t den);

  /// The invalid value that overflowing operations produce.
  static Rational invalid();

  bool isValid() const { return den != 0; }
  int64_t getNumerator() const { return num; }
  int64_t getDenominator() const { return den; }
  bool isZero() const { return isValid() && num == 0; }
  bool isInteger() const { return den == 1; }

  /// Largest integer <= this (0 for the invalid value).
  int64_t floor() const;
  /// Smallest integer >= this (0 for the invalid value).
  int64_t ceil() const;

  Rational operator+(const Rational &o) const;
  Rational operator-(const Rational &o) const;
  Rational operator*(const Rational &o) const;
  Rational operator/(const Rational &o) const;
  Rational operator-() const;
  bool operator==(const Rational &o) const {
    return num == o.num && den == o.den;
  }
  bool operator!=(const Rational &o) const { return !(*this == o); }
  bool operator<(const Rational &o) const;

  /// Prints "3", "-1/2".
  std::string str() const;

private:
  int64_t num, den;
};

} // namespace tofu

#endif // TOFU_PARTITION_RATIONAL_H
