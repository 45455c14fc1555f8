//===- Passes.h - Partitioned-program passes --------------------*- C++ -*-===//
//
// tofu-partition (SPMD generation) and tofu-train-driver.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_DIALECT_TOFU_TRANSFORMS_PASSES_H
#define TOFU_DIALECT_TOFU_TRANSFORMS_PASSES_H

#include "tofu/Dialect/Tofu/IR/Tofu.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tofu {

#define GEN_PASS_DECL
#include "tofu/Dialect/Tofu/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tofu/Dialect/Tofu/Transforms/Passes.h.inc"

} // namespace tofu

#endif // TOFU_DIALECT_TOFU_TRANSFORMS_PASSES_H
