// RUN: tofu-opt %s --tdl-attach -split-input-file -verify-diagnostics -allow-unregistered-dialect

// Tests that an operation nobody describes is reported.

func.func @unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'foo.bar' op cannot be described in TDL: no TDL description is known for this operation}}
  %0 = "foo.bar"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a non-affine access in a user description is reported with the
// offending expression.

func.func @non_affine(%x: tensor<16xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{cannot be described in TDL: invalid TDL description: non-affine access 'i * j' in 'a[i * j]': the product of two index expressions is not affine}}
  %0 = "foo.outer"(%x) {tdl.desc = "(i, j) = a[i * j]"} : (tensor<16xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Tests that a description whose shapes disagree with the operation is a
// shape mismatch.

func.func @shape_mismatch(%a: tensor<8x6xf32>, %b: tensor<5x4xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'foo.mm' op TDL description does not fit the operation: shape mismatch: index variable 'k' has extent 6 from input 'A' dimension 1 but 5 from input 'B' dimension 0}}
  %0 = "foo.mm"(%a, %b) {tdl.desc = #tdl.desc<(i, j) = sum(k) A[i, k] * B[k, j]>} : (tensor<8x6xf32>, tensor<5x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Tests that a rank mismatch between description and operand is reported.

func.func @rank_mismatch(%a: tensor<8x6xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{shape mismatch: input 'a' has rank 2 (8x6) but is accessed as 'a[i]'}}
  %0 = "foo.f"(%a) {tdl.desc = #tdl.desc<(i) = a[i]>} : (tensor<8x6xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that the number of inputs must match the operands.

func.func @arity(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{the description has 1 inputs but the operation has 2}}
  %0 = "foo.g"(%a, %b) {tdl.desc = #tdl.desc<(i) = a[i]>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that dynamic shapes are reported.

func.func @dynamic(%a: tensor<?x6xf32>, %b: tensor<6x4xf32>, %c: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error@+1 {{'linalg.matmul' op cannot be described in TDL: the operation has dynamic shapes}}
  %0 = linalg.matmul ins(%a, %b : tensor<?x6xf32>, tensor<6x4xf32>) outs(%c : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Tests that a body reading a tensor it builds itself is reported.

#id = affine_map<(d0) -> (d0)>
func.func @extract_local(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error@+1 {{'linalg.generic' op cannot be described in TDL: the body reads a tensor that it computes itself (tensor.extract)}}
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c0 = arith.constant 0 : index
    // expected-error@+1 {{'tensor.from_elements' op cannot be described in TDL: no TDL description is known for this operation}}
    %t = tensor.from_elements %x : tensor<1xf32>
    %v = tensor.extract %t[%c0] : tensor<1xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a captured tensor used other than through tensor.extract is
// reported.

#id = affine_map<(d0) -> (d0)>
func.func @capture_dim(%a: tensor<4xf32>, %table: tensor<10xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error@+1 {{'linalg.generic' op cannot be described in TDL: the body uses a captured tensor other than through tensor.extract}}
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %table, %c0 : tensor<10xf32>
    %i = arith.index_cast %n : index to i64
    %f = arith.sitofp %i : i64 to f32
    %y = arith.addf %x, %f : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a gather from a captured tensor of dynamic shape is reported.

#id = affine_map<(d0) -> (d0)>
func.func @capture_dynamic(%idx: tensor<4xindex>, %table: tensor<?xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error@+1 {{'linalg.generic' op cannot be described in TDL: the body reads a captured tensor of dynamic shape}}
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%idx : tensor<4xindex>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: index, %o: f32):
    %v = tensor.extract %table[%i] : tensor<?xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that an unrecognised reduction combiner is reported.

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @combiner(%a: tensor<4x6xf32>, %r: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{result 0 has reduction loops but its combiner is not an add, mul, max or min of the accumulator}}
  %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x6xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.subf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a body that ignores the accumulator over a reduction loop longer
// than one (its value at the last iteration) is reported.

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @last_iteration(%a: tensor<4x6xf32>, %r: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{result 0 has reduction loops but its combiner is not an add, mul, max or min of the accumulator}}
  %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x6xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = math.exp %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a library operation without a required attribute is reported.

func.func @missing_attribute(%x: tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error@+1 {{'mxnet.Pooling' op cannot be described in TDL: operation 'mxnet.Pooling' has no integer attribute 'kernel' and the parameter has no default}}
  %0 = "mxnet.Pooling"(%x) {stride = 2 : i64} : (tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Tests that a tdl.desc of the wrong attribute kind is reported.

func.func @wrong_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'tdl.desc' must be a #tdl.desc attribute or a string}}
  %0 = "foo.h"(%x) {tdl.desc = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that the number of outputs must match the results.

func.func @results(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  // expected-error@+1 {{the description has 1 outputs but the operation has 2}}
  %0:2 = "foo.two"(%a) {tdl.desc = #tdl.desc<(i) = a[i]>} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that a reduction whose extent the shapes do not determine is
// reported.

func.func @extent(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{cannot infer the extent of index variable 'k' from the shapes}}
  %0 = "foo.win"(%a) {tdl.desc = #tdl.desc<(i) = sum(k) a[i - k]>} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that an access entirely outside its input is an error: it would read
// nothing, so every fetch would look free.

func.func @out_of_bounds(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{'foo.shift' op TDL description does not fit the operation: access 'a[i - 100, j + 1000]' is entirely outside input 'a': its index in dimension 0 ranges over [-100, -93] but the dimension has size 8}}
  %0 = "foo.shift"(%a) {tdl.desc = #tdl.desc<(a) -> (i, j) = a[i - 100, j + 1000]>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Tests that an access coefficient whose indices overflow 64 bits is an error
// rather than a wrapped (and free) access.

func.func @huge_coefficient(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{'foo.stride' op TDL description does not fit the operation: access 'a[i * 4611686018427387904, j]' to input 'a' reaches indices in dimension 0 beyond what the cost model can represent (64-bit integers)}}
  %0 = "foo.stride"(%a) {tdl.desc = #tdl.desc<(a) -> (i, j) = a[i * 4611686018427387904, j]>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Tests that an opaque index inside an index expression is reported.

func.func @opaque_index_in_expression(%ids: tensor<4xi64>, %t: tensor<10x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{cannot be described in TDL: invalid TDL description: an opaque index must be a whole index, not part of an expression, found 'opaque'}}
  %0 = "test.gather"(%ids, %t) {tdl.desc = "(ids, t) -> (b, h) = t[1 + opaque(ids[b]), h]"} : (tensor<4xi64>, tensor<10x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that a gather description whose arguments read an input with the
// wrong rank is checked against the shapes.

func.func @gather_rank(%ids: tensor<4xi64>, %t: tensor<10x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{TDL description does not fit the operation: shape mismatch: input 'ids' has rank 1 (4) but is accessed as 'ids[b, h]'}}
  %0 = "test.gather"(%ids, %t) {tdl.desc = "(ids, t) -> (b, h) = t[opaque(ids[b, h]), h]"} : (tensor<4xi64>, tensor<10x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
