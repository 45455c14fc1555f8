//===- safetensors-fuzzer.cpp - Fuzzes the safetensors reader -------------===//
//
// See FuzzTargets.h for the checks.
//
//===----------------------------------------------------------------------===//

#include "FuzzTargets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tofu::fuzz::checkSafeTensors(
      std::string(reinterpret_cast<const char *>(data), size));
  return 0;
}
