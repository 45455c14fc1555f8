//===- TofuToMPI.h - Communication to the MPI runtime -----------*- C++ -*-===//

#ifndef TOFU_CONVERSION_TOFUTOMPI_TOFUTOMPI_H
#define TOFU_CONVERSION_TOFUTOMPI_TOFUTOMPI_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tofu {

#define GEN_PASS_DECL_CONVERTTOFUTOMPI
#include "tofu/Conversion/Passes.h.inc"

} // namespace tofu

#endif // TOFU_CONVERSION_TOFUTOMPI_TOFUTOMPI_H
