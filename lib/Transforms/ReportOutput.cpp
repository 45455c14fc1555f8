//===- ReportOutput.cpp - Where a pass writes its report ------------------===//

#include "tofu/Transforms/ReportOutput.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

LogicalResult tofu::writeReport(Operation *anchor, StringRef pass,
                                StringRef output, StringRef text) {
  if (output == "-") {
    llvm::errs() << text;
    return success();
  }
  std::error_code ec;
  llvm::raw_fd_ostream file(output, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return anchor->emitError(pass)
           << ": cannot write '" << output << "': " << ec.message();
  file << text;
  return success();
}
