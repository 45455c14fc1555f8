//===- ReportOutput.h - Where a pass writes its report ----------*- C++ -*-===//
//
// The passes that print a report (tofu-search, tofu-partition, the CPU and
// GPU library-call reports) take its destination as an option: '-' for
// stderr, or a file.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TRANSFORMS_REPORTOUTPUT_H
#define TOFU_TRANSFORMS_REPORTOUTPUT_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace tofu {

/// Writes a report's `text` to `output` ('-' for stderr); an error on
/// `anchor`, naming `pass`, when the file cannot be written.
mlir::LogicalResult writeReport(mlir::Operation *anchor, llvm::StringRef pass,
                                llvm::StringRef output, llvm::StringRef text);

} // namespace tofu

#endif // TOFU_TRANSFORMS_REPORTOUTPUT_H
