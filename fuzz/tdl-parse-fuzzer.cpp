//===- tdl-parse-fuzzer.cpp - Fuzzes the TDL description parser -----------===//
//
// See FuzzTargets.h for the checks.
//
//===----------------------------------------------------------------------===//

#include "FuzzTargets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tofu::fuzz::checkTDLParse(
      std::string(reinterpret_cast<const char *>(data), size));
  return 0;
}
