// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=4 report=none plan-out=none svg=none" -split-input-file -verify-diagnostics

// Tests that a tensor of 'index', whose size in bytes is unknown, is an error.

// expected-error@+1 {{tofu-search: argument 0 has element type 'index', whose size in bytes is unknown (expected integers, floats or complex numbers)}}
func.func @index(%a: tensor<4x4xindex>) -> tensor<4x4xindex> {
  %e = tensor.empty() : tensor<4x4xindex>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xindex>) outs(%e : tensor<4x4xindex>) {
  ^bb0(%x: index, %o: index):
    %s = arith.addi %x, %x : index
    linalg.yield %s : index
  } -> tensor<4x4xindex>
  return %c : tensor<4x4xindex>
}

// -----

// Tests that an 'index' tensor produced inside the function is reported on
// the operation that produces it.

func.func @index_result(%a: tensor<4xf32>) -> tensor<4xindex> {
  // expected-error@+1 {{tofu-search: result 0 of 'tensor.empty' has element type 'index', whose size in bytes is unknown}}
  %e = tensor.empty() : tensor<4xindex>
  %c = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xindex>) {
  ^bb0(%x: f32, %o: index):
    %i = arith.fptosi %x : f32 to i64
    %s = arith.index_cast %i : i64 to index
    linalg.yield %s : index
  } -> tensor<4xindex>
  return %c : tensor<4xindex>
}

// -----

// Tests that a tensor too large for the cost model (2^64 elements, whose
// element count overflows 64 bits) is an error instead of a negative byte
// count.

// expected-error@+1 {{tofu-search: argument 0: tensor of shape 4294967296x4294967296 with 4-byte elements is larger than the cost model can represent (at most 2^40 elements and 2^48 bytes)}}
func.func @huge(%a: tensor<4294967296x4294967296xf32>, %b: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  %e = tensor.empty() : tensor<4294967296x4294967296xf32>
  %c = linalg.matmul ins(%a, %b : tensor<4294967296x4294967296xf32>, tensor<4294967296x4294967296xf32>) outs(%e : tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32>
  return %c : tensor<4294967296x4294967296xf32>
}

// -----

// Tests that a function with more than one block is an error.

// expected-error@+1 {{tofu-search: functions with more than one block (control flow) are not supported}}
func.func @blocks(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %c = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  cf.br ^bb1(%c : tensor<4x4xf32>)
^bb1(%d: tensor<4x4xf32>):
  return %d : tensor<4x4xf32>
}
