// RUN: tofu-opt %s --tdl-attach="allow-opaque" -verify-diagnostics -allow-unregistered-dialect | FileCheck %s

// Tests that with allow-opaque an indescribable operation gets a remark and an
// opaque whole-tensor description, while described operations are unchanged.

// CHECK-LABEL: func.func @fallback
func.func @fallback(%x: tensor<4x6xf32>, %s: f32) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  // expected-remark@+2 {{described as opaque, so it will not be partitioned: no TDL description is known for this operation}}
  // CHECK: "foo.bar"{{.*}}tdl.desc = #tdl.desc<(in0, in1) -> (o0, o1) = opaque(in0[:, :], in1)>
  %0 = "foo.bar"(%x, %s) : (tensor<4x6xf32>, f32) -> tensor<4x6xf32>
  // CHECK: math.exp {{.*}}tdl.desc = #tdl.desc<(in0) -> (d0, d1) = exp(in0[d0, d1])>
  %1 = math.exp %0 : tensor<4x6xf32>
  return %0, %1 : tensor<4x6xf32>, tensor<4x6xf32>
}
