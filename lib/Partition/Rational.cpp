//===- Rational.cpp - Exact rational numbers ------------------------------===//
//
// Normalized int64 fractions for the symbolic interval analysis.
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/Rational.h"

#include <cstdlib>
#include <numeric>

using namespace tofu;

Rational::Rational(int64_t n, int64_t d) : num(n), den(d) {
  if (den == 0) {
    // Division by zero is a programming error in the analysis; keep a
    // well-defined value rather than trapping.
    num = 0;
    den = 1;
    return;
  }
  if (den < 0) {
    num = -num;
    den = -den;
  }
  int64_t g = std::gcd(num < 0 ? -num : num, den);
  if (g > 1) {
    num /= g;
    den /= g;
  }
}

int64_t Rational::floor() const {
  if (num >= 0)
    return num / den;
  return -((-num + den - 1) / den);
}

int64_t Rational::ceil() const { return -Rational(-num, den).floor(); }

Rational Rational::operator+(const Rational &o) const {
  return Rational(num * o.den + o.num * den, den * o.den);
}

Rational Rational::operator-(const Rational &o) const { return *this + (-o); }

Rational Rational::operator*(const Rational &o) const {
  return Rational(num * o.num, den * o.den);
}

Rational Rational::operator/(const Rational &o) const {
  return Rational(num * o.den, den * o.num);
}

bool Rational::operator<(const Rational &o) const {
  return num * o.den < o.num * den;
}

std::string Rational::str() const {
  if (den == 1)
    return std::to_string(num);
  return std::to_string(num) + "/" + std::to_string(den);
}
