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
// CHECK-NOT: llvm.extractvalue
// CHECK: llvm.call @step(%[[BUF]], %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, f32, i64, !llvm.struct<(f32, f32)>) -> ()
// CHECK-NEXT: %[[Q:.*]] = llvm.getelementptr %[[BUF]][0, 2, 1]
// CHECK-NEXT: llvm.load %[[Q]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[P:.*]] = llvm.getelementptr %[[BUF]][0, 1]
// CHECK-NEXT: %[[L:.*]] = llvm.load %[[P]] : !llvm.ptr -> i64
// CHECK-NEXT: llvm.return %[[L]] : i64
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
// CHECK-LABEL: llvm.func @caller
// CHECK: %[[BUF:.*]] = llvm.alloca
// CHECK: llvm.call @partial(%[[BUF]], %{{.*}}, %{{.*}}) :
// CHECK-NEXT: %[[P:.*]] = llvm.getelementptr %[[BUF]][0, 0]
// CHECK-NEXT: %[[L:.*]] = llvm.load %[[P]] : !llvm.ptr -> f32
// CHECK-NEXT: llvm.return %[[L]] : f32
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
// would have to shift), a function of another calling convention than C's
// (called as C) and a call of another one (of a C function).
// CHECK-LABEL: llvm.func private @attributed
// CHECK-SAME: -> !llvm.struct<(f32, f32, f32)>
// CHECK-LABEL: llvm.func internal fastcc @fast
// CHECK-SAME: -> !llvm.struct<(f32, f32, f32)>
// CHECK-LABEL: llvm.func internal @calledFast
// CHECK-SAME: -> !llvm.struct<(f32, f32, f32)>
llvm.func private @attributed(%s: !s) -> !s {
  llvm.return %s : !s
}
llvm.func internal fastcc @fast(%s: !s) -> !s {
  llvm.return %s : !s
}
llvm.func internal @calledFast(%s: !s) -> !s {
  llvm.return %s : !s
}
llvm.func @calls(%s: !s) -> f32 {
  %r = llvm.call @attributed(%s) {arg_attrs = [{llvm.noundef}]} : (!s) -> !s
  %q = llvm.call @fast(%s) : (!s) -> !s
  %p = llvm.call fastcc @calledFast(%s) : (!s) -> !s
  %0 = llvm.extractvalue %r[0] : !s
  %1 = llvm.extractvalue %q[0] : !s
  %2 = llvm.extractvalue %p[0] : !s
  %3 = llvm.fadd %0, %1 : f32
  %4 = llvm.fadd %3, %2 : f32
  llvm.return %4 : f32
}

// -----

!s = !llvm.struct<(f32, f32, f32)>

// Two returns: a member that no insertion writes into an undefined start
// is not stored. A call in a loop writes into one alloca of the entry
// block and loads right after it, for an extraction in another block.
// CHECK-LABEL: llvm.func internal @branches
// CHECK-SAME: (%[[OUT:.*]]: !llvm.ptr {llvm.noalias}, %[[C:.*]]: i1, %[[A:.*]]: f32)
// CHECK: ^bb1:
// CHECK-NEXT: %[[P0:.*]] = llvm.getelementptr %[[OUT]][0, 0]
// CHECK-NEXT: llvm.store %[[A]], %[[P0]]
// CHECK-NEXT: llvm.return
// CHECK: ^bb2:
// CHECK-NEXT: %[[P1:.*]] = llvm.getelementptr %[[OUT]][0, 1]
// CHECK-NEXT: llvm.store %[[A]], %[[P1]]
// CHECK-NEXT: %[[P2:.*]] = llvm.getelementptr %[[OUT]][0, 2]
// CHECK-NEXT: llvm.store %[[A]], %[[P2]]
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func @loop
// CHECK: %[[BUF:.*]] = llvm.alloca
// CHECK-NEXT: llvm.br ^bb1
// CHECK: ^bb1:
// CHECK-NEXT: llvm.call @branches(%[[BUF]], %{{.*}}, %{{.*}})
// CHECK-NEXT: %[[P:.*]] = llvm.getelementptr %[[BUF]][0, 1]
// CHECK-NEXT: %[[L:.*]] = llvm.load %[[P]] : !llvm.ptr -> f32
// CHECK-NEXT: llvm.cond_br
// CHECK: ^bb2:
// CHECK-NEXT: llvm.return %[[L]] : f32
llvm.func internal @branches(%c: i1, %a: f32) -> !s {
  %u = llvm.mlir.undef : !s
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  %0 = llvm.insertvalue %a, %u[0] : !s
  llvm.return %0 : !s
^bb2:
  %1 = llvm.insertvalue %a, %u[1] : !s
  %2 = llvm.insertvalue %a, %1[2] : !s
  llvm.return %2 : !s
}
llvm.func @loop(%c: i1, %a: f32) -> f32 {
  llvm.br ^bb1
^bb1:
  %r = llvm.call @branches(%c, %a) : (i1, f32) -> !s
  %0 = llvm.extractvalue %r[1] : !s
  llvm.cond_br %c, ^bb1, ^bb2
^bb2:
  llvm.return %0 : f32
}

// -----

!s = !llvm.struct<(f32, f32, f32)>

// The returned argument is no longer returned and the function writes
// memory; a call in a func.func allocates there. Kept: a function whose
// address is taken, one whose passed-through attributes say it reads no
// memory, and one returning a packed struct.
// CHECK-LABEL: llvm.func internal @returned
// CHECK-SAME: (%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.struct<(f32, f32, f32)>) {
// CHECK-NOT: memory_effects
// CHECK-LABEL: func.func @host
// CHECK-NEXT: llvm.mlir.constant(1 : i64)
// CHECK-NEXT: llvm.alloca
// CHECK-LABEL: llvm.func internal @addressTaken
// CHECK-SAME: -> !llvm.struct<(f32, f32, f32)>
// CHECK-LABEL: llvm.func internal @readsNothing
// CHECK-SAME: -> !llvm.struct<(f32, f32, f32)>
// CHECK-LABEL: llvm.func internal @packed
// CHECK-SAME: -> !llvm.struct<packed (i8, i64, f32)>
llvm.func internal @returned(%s: !s {llvm.returned}) -> !s
    attributes {memory_effects = #llvm.memory_effects<other = none, argMem = none, inaccessibleMem = none, errnoMem = none, targetMem0 = none, targetMem1 = none>} {
  llvm.return %s : !s
}
func.func @host(%s: !s) -> f32 {
  %r = llvm.call @returned(%s) : (!s) -> !s
  %0 = llvm.extractvalue %r[0] : !s
  return %0 : f32
}
llvm.func internal @addressTaken(%s: !s) -> !s {
  llvm.return %s : !s
}
llvm.func internal @readsNothing(%s: !s) -> !s attributes {passthrough = ["readnone"]} {
  llvm.return %s : !s
}
llvm.func internal @packed(%s: !llvm.struct<packed (i8, i64, f32)>) -> !llvm.struct<packed (i8, i64, f32)> {
  llvm.return %s : !llvm.struct<packed (i8, i64, f32)>
}
llvm.func @users(%s: !s, %t: !llvm.struct<packed (i8, i64, f32)>) -> !llvm.ptr {
  %r = llvm.call @addressTaken(%s) : (!s) -> !s
  %q = llvm.call @readsNothing(%s) : (!s) -> !s
  %p = llvm.call @packed(%t) : (!llvm.struct<packed (i8, i64, f32)>) -> !llvm.struct<packed (i8, i64, f32)>
  %f = llvm.mlir.addressof @addressTaken : !llvm.ptr
  llvm.return %f : !llvm.ptr
}
