//===- Interval.cpp - Symbolic interval arithmetic ------------------------===//
//
// Implements the affine interval domain of Tofu's TDL analysis (paper
// equation (1), Figure 4), with sound handling of negative coefficients and
// integer division.
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/Interval.h"

#include <algorithm>

#include <cassert>

using namespace tofu;

SymbolicInterval SymbolicInterval::constant(unsigned numSymbols, Rational c) {
  SymbolicInterval r(numSymbols);
  r.lowerConst = c;
  r.upperConst = c;
  return r;
}

SymbolicInterval SymbolicInterval::constantRange(unsigned numSymbols,
                                                 Rational lo, Rational hi) {
  SymbolicInterval r(numSymbols);
  r.lowerConst = lo;
  r.upperConst = hi;
  return r;
}

SymbolicInterval SymbolicInterval::variable(unsigned numSymbols, unsigned var) {
  return share(numSymbols, var, 0, 1);
}

SymbolicInterval SymbolicInterval::share(unsigned numSymbols, unsigned var,
                                         unsigned worker, unsigned parts) {
  assert(var < numSymbols && parts > 0 && worker < parts);
  SymbolicInterval r(numSymbols);
  r.lower[var] = Rational(worker, parts);
  r.upper[var] = Rational(worker + 1, parts);
  r.upperConst = Rational(-1);
  return r;
}

bool SymbolicInterval::isSymbolFree() const {
  for (unsigned i = 0, e = lower.size(); i < e; ++i)
    if (!lower[i].isZero() || !upper[i].isZero())
      return false;
  return true;
}

bool SymbolicInterval::isValid() const {
  auto valid = [](const Rational &r) { return r.isValid(); };
  return lowerConst.isValid() && upperConst.isValid() &&
         std::all_of(lower.begin(), lower.end(), valid) &&
         std::all_of(upper.begin(), upper.end(), valid);
}

bool SymbolicInterval::isConstant() const {
  return isSymbolFree() && lowerConst == upperConst;
}

SymbolicInterval SymbolicInterval::operator+(const SymbolicInterval &o) const {
  assert(o.getNumSymbols() == getNumSymbols());
  SymbolicInterval r(getNumSymbols());
  for (unsigned i = 0, e = lower.size(); i < e; ++i) {
    r.lower[i] = lower[i] + o.lower[i];
    r.upper[i] = upper[i] + o.upper[i];
  }
  r.lowerConst = lowerConst + o.lowerConst;
  r.upperConst = upperConst + o.upperConst;
  return r;
}

SymbolicInterval SymbolicInterval::operator-(const SymbolicInterval &o) const {
  return *this + o * Rational(-1);
}

SymbolicInterval SymbolicInterval::operator+(Rational k) const {
  SymbolicInterval r = *this;
  r.lowerConst = r.lowerConst + k;
  r.upperConst = r.upperConst + k;
  return r;
}

SymbolicInterval SymbolicInterval::operator*(Rational k) const {
  SymbolicInterval r(getNumSymbols());
  bool swap = k < Rational(0);
  for (unsigned i = 0, e = lower.size(); i < e; ++i) {
    r.lower[i] = (swap ? upper[i] : lower[i]) * k;
    r.upper[i] = (swap ? lower[i] : upper[i]) * k;
  }
  r.lowerConst = (swap ? upperConst : lowerConst) * k;
  r.upperConst = (swap ? lowerConst : upperConst) * k;
  return r;
}

SymbolicInterval SymbolicInterval::divide(Rational k) const {
  return *this * (Rational(1) / k);
}

SymbolicInterval SymbolicInterval::floorDiv(int64_t k) const {
  assert(k > 0);
  if (isSymbolFree()) {
    SymbolicInterval r = *this;
    r.lowerConst = Rational((lowerConst / Rational(k)).floor());
    r.upperConst = Rational((upperConst / Rational(k)).floor());
    return r;
  }
  // floor(v / k) lies in [v/k - (k-1)/k, v/k].
  SymbolicInterval r = divide(Rational(k));
  r.lowerConst = r.lowerConst - Rational(k - 1, k);
  return r;
}

SymbolicInterval SymbolicInterval::ceilDiv(int64_t k) const {
  assert(k > 0);
  if (isSymbolFree()) {
    SymbolicInterval r = *this;
    r.lowerConst = Rational((lowerConst / Rational(k)).ceil());
    r.upperConst = Rational((upperConst / Rational(k)).ceil());
    return r;
  }
  // ceil(v / k) lies in [v/k, v/k + (k-1)/k].
  SymbolicInterval r = divide(Rational(k));
  r.upperConst = r.upperConst + Rational(k - 1, k);
  return r;
}

SymbolicInterval SymbolicInterval::mod(int64_t k) const {
  assert(k > 0);
  if (isConstant() && lowerConst.isInteger()) {
    int64_t v = lowerConst.getNumerator() % k;
    if (v < 0)
      v += k;
    return constant(getNumSymbols(), Rational(v));
  }
  SymbolicInterval r(getNumSymbols());
  r.upperConst = Rational(k - 1);
  return r;
}

std::optional<SymbolicInterval>
SymbolicInterval::product(const SymbolicInterval &a,
                          const SymbolicInterval &b) {
  if (b.isConstant())
    return a * b.lowerConst;
  if (a.isConstant())
    return b * a.lowerConst;
  return std::nullopt;
}

bool SymbolicInterval::operator==(const SymbolicInterval &o) const {
  return lower == o.lower && upper == o.upper && lowerConst == o.lowerConst &&
         upperConst == o.upperConst;
}

std::pair<int64_t, int64_t>
SymbolicInterval::evaluate(const std::vector<int64_t> &extents) const {
  assert(extents.size() == getNumSymbols());
  Rational lo = lowerConst, hi = upperConst;
  for (unsigned i = 0, e = lower.size(); i < e; ++i) {
    lo = lo + lower[i] * Rational(extents[i]);
    hi = hi + upper[i] * Rational(extents[i]);
  }
  return {lo.ceil(), hi.floor()};
}

static std::string printAffine(const std::vector<Rational> &coeffs, Rational c,
                               const std::vector<std::string> &names) {
  std::string s;
  auto append = [&](Rational v, const std::string &sym) {
    if (v.isZero())
      return;
    bool neg = v < Rational(0);
    Rational a = neg ? -v : v;
    if (s.empty())
      s += neg ? "-" : "";
    else
      s += neg ? " - " : " + ";
    if (sym.empty()) {
      s += a.str();
      return;
    }
    if (a == Rational(1))
      s += sym;
    else if (a.getNumerator() == 1)
      s += sym + "/" + std::to_string(a.getDenominator());
    else
      s += a.str() + "*" + sym;
  };
  for (unsigned i = 0, e = coeffs.size(); i < e; ++i)
    append(coeffs[i], i < names.size() ? names[i] : "N" + std::to_string(i));
  append(c, "");
  return s.empty() ? "0" : s;
}

std::string SymbolicInterval::str(const std::vector<std::string> &names) const {
  return "[" + printAffine(lower, lowerConst, names) + ", " +
         printAffine(upper, upperConst, names) + "]";
}
