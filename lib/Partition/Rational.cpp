//===- Rational.cpp - Exact rational numbers ------------------------------===//
//
// Normalized int64 fractions for the symbolic interval analysis.
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/Rational.h"

#include <cstdlib>
#include <limits>
#include <numeric>

using namespace tofu;

namespace {
/// Intermediate results of the checked operations: products of two int64_t
/// values fit in 127 bits.
using Wide = __int128;
} // namespace

/// The reduced fraction n/d, or the invalid value when d is zero or the
/// reduced parts do not fit in int64_t (INT64_MIN is excluded so that
/// negation stays exact).
static Rational normalize(Wide n, Wide d) {
  if (d == 0)
    return Rational::invalid();
  if (d < 0) {
    n = -n;
    d = -d;
  }
  Wide a = n < 0 ? -n : n, b = d;
  while (b != 0) {
    Wide t = a % b;
    a = b;
    b = t;
  }
  if (a > 1) {
    n /= a;
    d /= a;
  }
  const Wide max = std::numeric_limits<int64_t>::max();
  if (n > max || n < -max || d > max)
    return Rational::invalid();
  return Rational(int64_t(n), int64_t(d));
}

Rational::Rational(int64_t n) : num(n), den(1) {
  if (n == std::numeric_limits<int64_t>::min())
    *this = invalid();
}

Rational::Rational(int64_t n, int64_t d) : num(0), den(0) {
  if (d == 0 || n == std::numeric_limits<int64_t>::min() ||
      d == std::numeric_limits<int64_t>::min())
    return; // Invalid.
  if (d < 0) {
    n = -n;
    d = -d;
  }
  int64_t g = std::gcd(n < 0 ? -n : n, d);
  num = g > 1 ? n / g : n;
  den = g > 1 ? d / g : d;
}

Rational Rational::invalid() {
  Rational r;
  r.num = 0;
  r.den = 0;
  return r;
}

int64_t Rational::floor() const {
  if (!isValid())
    return 0;
  if (num >= 0)
    return num / den;
  return -((-num + den - 1) / den);
}

int64_t Rational::ceil() const {
  if (!isValid())
    return 0;
  return -Rational(-num, den).floor();
}

Rational Rational::operator-() const {
  return isValid() ? Rational(-num, den) : invalid();
}

Rational Rational::operator+(const Rational &o) const {
  if (!isValid() || !o.isValid())
    return invalid();
  return normalize(Wide(num) * o.den + Wide(o.num) * den, Wide(den) * o.den);
}

Rational Rational::operator-(const Rational &o) const { return *this + (-o); }

Rational Rational::operator*(const Rational &o) const {
  if (!isValid() || !o.isValid())
    return invalid();
  return normalize(Wide(num) * o.num, Wide(den) * o.den);
}

Rational Rational::operator/(const Rational &o) const {
  if (!isValid() || !o.isValid())
    return invalid();
  return normalize(Wide(num) * o.den, Wide(den) * o.num);
}

bool Rational::operator<(const Rational &o) const {
  if (!isValid() || !o.isValid())
    return false;
  return Wide(num) * o.den < Wide(o.num) * den;
}

std::string Rational::str() const {
  if (!isValid())
    return "invalid";
  if (den == 1)
    return std::to_string(num);
  return std::to_string(num) + "/" + std::to_string(den);
}
