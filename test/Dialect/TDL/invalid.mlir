// RUN: tofu-opt %s -split-input-file -verify-diagnostics

// Tests that a non-affine access is rejected with the offending expression.

// expected-error@+1 {{invalid TDL description: non-affine access 'i * j' in 'a[i * j]': the product of two index expressions is not affine}}
func.func @non_affine() attributes {d = #tdl.desc<(i, j) = a[i * j]>} {
  return
}

// -----

// Tests that a division of two index variables is rejected.

// expected-error@+1 {{non-affine access 'i floordiv j' in 'a[i floordiv j]': the divisor must be a constant}}
func.func @divisor() attributes {d = #tdl.desc<(i, j) = a[i floordiv j]>} {
  return
}

// -----

// Tests that syntax errors name what was expected.

// expected-error@+1 {{invalid TDL description: expected an expression, found end of input}}
func.func @syntax() attributes {d = #tdl.desc<(i) = a[i] +>} {
  return
}

// -----

// Tests that an index variable must be bound.

// expected-error@+1 {{unknown index variable 'k' in 'a[k]'}}
func.func @unbound() attributes {d = #tdl.desc<(i) = a[k]>} {
  return
}

// -----

// Tests that an input accessed with two ranks is rejected.

// expected-error@+1 {{input 'a' is accessed with 2 indices in 'a[i, i]' but with 1 elsewhere}}
func.func @ranks() attributes {d = #tdl.desc<(i) = a[i] + a[i, i]>} {
  return
}

// -----

// Tests that unknown tdl attributes are rejected.

// expected-error@+1 {{unknown tdl attribute}}
func.func @unknown() attributes {d = #tdl.what<x>} {
  return
}

// -----

// Tests that an index constant beyond 64 bits is rejected, not clamped.

// expected-error@+1 {{invalid TDL description: integer does not fit in 64 bits, found '99999999999999999999'}}
func.func @big_constant() attributes {d = #tdl.desc<(i) = a[i + 99999999999999999999]>} {
  return
}

// -----

// Tests that a declared reduction extent beyond 64 bits is rejected.

// expected-error@+1 {{invalid TDL description: integer does not fit in 64 bits, found '99999999999999999999'}}
func.func @big_extent() attributes {d = #tdl.desc<(i) = sum(k : 99999999999999999999) a[i + k]>} {
  return
}

// -----

// Tests that a constant divisor whose value overflows is rejected.

// expected-error@+1 {{the divisor in 'i floordiv (4611686018427387904 * 4)' in 'a[i floordiv (4611686018427387904 * 4)]' does not fit in 64 bits}}
func.func @divisor_overflow() attributes {d = #tdl.desc<(i) = a[i floordiv (4611686018427387904 * 4)]>} {
  return
}

