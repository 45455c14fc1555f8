// RUN: tofu-opt %s --tofu-llvm-results-in-memory=min-members=3 --split-input-file | FileCheck %s
// RUN: tofu-opt %s --tofu-llvm-results-in-memory=min-members=4 --split-input-file | FileCheck %s --check-prefix=SHORT

!s = !llvm.struct<(f32, i64, struct<(f32, f32)>)>

// The members inserted whole are stored from the inserted values and the
// chain of insertions goes; the call loads what it extracted. With
// min-members=4 the struct of 3 stays a result.
// CHECK-LABEL: llvm.func internal @step
// CHECK-SAME: (%[[OUT:.*]]: !llvm.ptr {llvm.noalias}, %[[A:.*]]: f32, %[[B:.*]]: i64, %[[C:.*]]: !llvm.struct<(f32, f32)>) {
// CHECK-NOT: llvm.insertvalue
// CHECK-NOT: llvm.mlir.undef
// CHECK: %[[P0:.*]] = llvm.getelementptr %[[OUT]][0, 0]
// CHECK-NEXT: llvm.store %[[A]], %[[P0]] : f32
// CHECK-NEXT: %[[P1:.*]] = llvm.getelementptr %[[OUT]][0, 1]
// CHECK-NEXT: llvm.store %[[B]], %[[P1]] : i64
// CHECK-NEXT: %[[P2:.*]] = llvm.getelementptr %[[OUT]][0, 2]
// CHECK-NEXT: llvm.store %[[C]], %[[P2]] : !llvm.struct<(f32, f32)>
// CHECK-NEXT: llvm.return{{$}}
// CHECK-LABEL: llvm.func @main
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64)
// CHECK: %[[BUF:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(f32, i64, struct<(f32, f32)>)>
// CHECK: llvm.call @step(%[[BUF]], %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, f32, i64, !llvm.struct<(f32, f32)>) -> ()
// CHECK-DAG: llvm.getelementptr %[[BUF]][0, 2, 1]
// CHECK-DAG: llvm.getelementptr %[[BUF]][0, 1]
// CHECK: llvm.load {{.*}} -> i64
// CHECK-NOT: llvm.extractvalue
// SHORT-LABEL: llvm.func internal @step
// SHORT-SAME: -> !llvm.struct
// SHORT: llvm.call @step({{.*}}) : (f32, i64, !llvm.struct<(f32, f32)>) -> !llvm.struct
llvm.func internal @step(%a: f32, %b: i64, %c: !llvm.struct<(f32, f32)>) -> !s {
  %u = llvm.mlir.undef : !s
  %0 = llvm.insertvalue %a, %u[0] : !s
  %1 = llvm.insertvalue %b, %0[1] : !s
  %2 = llvm.insertvalue %c, %1[2] : !s
  llvm.return %2 : !s
}
llvm.func @main(%x: f32, %y: i64, %z: !llvm.struct<(f32, f32)>) -> i64 {
  %r = llvm.call @step(%x, %y, %z) : (f32, i64, !llvm.struct<(f32, f32)>) -> !s
  %0 = llvm.extractvalue %r[2, 1] : !s
  %1 = llvm.extractvalue %r[1] : !s
  llvm.return %1 : i64
}

// -----

!s = !llvm.struct<(f32, i64, struct<(f32, f32)>)>

// A member written in part (the last insertion writes [2, 1]) is
// extracted from the returned struct; a member that no insertion writes
// is extracted from the struct that the chain starts from (an argument).
// CHECK-LABEL: llvm.func private @partial
// CHECK-SAME: (%[[OUT:.*]]: !llvm.ptr {llvm.noalias}, %[[A:.*]]: f32, %[[S:.*]]: !llvm.struct<(f32, i64, struct<(f32, f32)>)>)
// CHECK: %[[R:.*]] = llvm.insertvalue %[[A]], %{{.*}}[2, 1]
// CHECK: llvm.store %[[A]], %{{.*}} : f32
// CHECK: %[[M1:.*]] = llvm.extractvalue %[[S]][1]
// CHECK: llvm.store %[[M1]]
// CHECK: %[[M2:.*]] = llvm.extractvalue %[[R]][2]
// CHECK: llvm.store %[[M2]]
// CHECK: llvm.return{{$}}
llvm.func private @partial(%a: f32, %s: !s) -> !s {
  %0 = llvm.insertvalue %a, %s[0] : !s
  %1 = llvm.insertvalue %a, %0[2, 1] : !s
  llvm.return %1 : !s
}
llvm.func @caller(%a: f32, %s: !s) -> f32 {
  %r = llvm.call @partial(%a, %s) : (f32, !s) -> !s
  %0 = llvm.extractvalue %r[0] : !s
  llvm.return %0 : f32
}

// -----

!s = !llvm.struct<(f32, f32, f32)>

// Kept: a public function (its callers may be outside the module), and a
// private one whose result a call passes on whole.
// CHECK-LABEL: llvm.func @public
// CHECK-SAME: -> !llvm.struct<(f32, f32, f32)>
// CHECK-LABEL: llvm.func private @whole
// CHECK-SAME: -> !llvm.struct<(f32, f32, f32)>
// CHECK: llvm.call @whole(%{{.*}}) : (!llvm.struct<(f32, f32, f32)>) -> !llvm.struct<(f32, f32, f32)>
llvm.func @public(%s: !s) -> !s {
  llvm.return %s : !s
}
llvm.func private @whole(%s: !s) -> !s {
  llvm.return %s : !s
}
llvm.func @passes(%s: !s) -> !s {
  %r = llvm.call @whole(%s) : (!s) -> !s
  llvm.return %r : !s
}

// -----

!s = !llvm.struct<(f32, f32, f32)>

// Kept: a call with attributes of its arguments (which the new call
// would have to shift), and a function of another calling convention.
// CHECK-LABEL: llvm.func private @attributed
// CHECK-SAME: -> !llvm.struct<(f32, f32, f32)>
// CHECK-LABEL: llvm.func internal fastcc @fast
// CHECK-SAME: -> !llvm.struct<(f32, f32, f32)>
llvm.func private @attributed(%s: !s) -> !s {
  llvm.return %s : !s
}
llvm.func internal fastcc @fast(%s: !s) -> !s {
  llvm.return %s : !s
}
llvm.func @calls(%s: !s) -> f32 {
  %r = llvm.call @attributed(%s) {arg_attrs = [{llvm.noundef}]} : (!s) -> !s
  %q = llvm.call fastcc @fast(%s) : (!s) -> !s
  %0 = llvm.extractvalue %r[0] : !s
  %1 = llvm.extractvalue %q[0] : !s
  %2 = llvm.fadd %0, %1 : f32
  llvm.return %2 : f32
}
