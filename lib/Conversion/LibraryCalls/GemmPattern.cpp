//===- GemmPattern.cpp - Matrix products from loop structure --------------===//
//
// Implements the MLIR-free rule of GemmPattern.h: every loop is classified
// by the operands it indexes and its iterator type.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/GemmPattern.h"

using namespace tofu::gemm;

std::optional<GemmPattern>
tofu::gemm::matchGemmPattern(unsigned numLoops,
                             const std::vector<bool> &parallel,
                             const std::vector<std::vector<unsigned>> &loops) {
  if (loops.size() != 3 || parallel.size() != numLoops)
    return std::nullopt;
  // indexes[i][l]: operand i is indexed by loop l.
  std::vector<std::vector<bool>> indexes(3, std::vector<bool>(numLoops));
  for (unsigned i = 0; i < 3; ++i)
    for (unsigned l : loops[i]) {
      if (l >= numLoops || indexes[i][l])
        return std::nullopt;
      indexes[i][l] = true;
    }
  GemmPattern match;
  std::optional<unsigned> m, n, k;
  for (unsigned l = 0; l < numLoops; ++l) {
    bool a = indexes[0][l], b = indexes[1][l], c = indexes[2][l];
    if (a && b && c && parallel[l])
      match.batchLoops.push_back(l);
    else if (a && !b && c && parallel[l] && !m)
      m = l;
    else if (!a && b && c && parallel[l] && !n)
      n = l;
    else if (a && b && !c && !parallel[l] && !k)
      k = l;
    else
      return std::nullopt;
  }
  if (!m || !n || !k)
    return std::nullopt;
  match.mLoop = *m;
  match.nLoop = *n;
  match.kLoop = *k;
  return match;
}
