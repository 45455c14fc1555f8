//===- GemmPattern.h - Matrix products from loop structure ------*- C++ -*-===//
//
// Recognises a (batched) matrix product C[b..](m, n) += A[b..](m, k) *
// B[b..](k, n) from which loops index each operand and which loops are
// reductions. Plain C++ without MLIR, so that the rule is unit tested on
// its own and shared by every backend: the linalg side (the
// multiply-accumulate body, element types) is in GemmMatcher.cpp, and the
// CPU (OpenBLAS) and GPU (cuBLAS) lowerings differ only in the call they
// emit for a match.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_CONVERSION_LIBRARYCALLS_GEMMPATTERN_H
#define TOFU_CONVERSION_LIBRARYCALLS_GEMMPATTERN_H

#include <optional>
#include <vector>

namespace tofu {
namespace gemm {

/// The loops of a matrix product: the batch loops (outermost first), M, N
/// and K, by their position in the loop nest. Input 0 is A (indexed by M),
/// input 1 is B (indexed by N).
struct GemmPattern {
  std::vector<unsigned> batchLoops;
  unsigned mLoop = 0, nLoop = 0, kLoop = 0;
};

/// Matches a loop nest of `numLoops` loops (`parallel[l]` false for a
/// reduction loop) whose three operands (A, B, then the output C) are
/// indexed by the loops `operandLoops[i]`, one loop per dimension, no loop
/// twice (a projected permutation). Every loop must be a batch loop (all
/// three operands, parallel), M (A and C, parallel), N (B and C, parallel)
/// or K (A and B, a reduction), with exactly one M, one N and one K.
/// Returns std::nullopt for anything else.
std::optional<GemmPattern>
matchGemmPattern(unsigned numLoops, const std::vector<bool> &parallel,
                 const std::vector<std::vector<unsigned>> &operandLoops);

/// A matrix product whose M, N and K may each be several loops: C[b..](m..,
/// n..) += A[b..](m.., k..) * B[b..](k.., n..), as an einsum such as
/// `bk,kgh->bgh` (the gates of an LSTM kept as their own dimension) and its
/// gradients write it. Each group lists its loops in the order in which the
/// operands hold them.
struct GroupedGemmPattern {
  std::vector<unsigned> batchLoops;
  std::vector<unsigned> mLoops, nLoops, kLoops;

  /// True when some group has more than one loop: the product must first
  /// be collapsed to one loop per group (tofu-collapse-contractions).
  bool isGrouped() const {
    return mLoops.size() > 1 || nLoops.size() > 1 || kLoops.size() > 1;
  }
};

/// matchGemmPattern with groups: every loop is a batch loop, or belongs to
/// the M group (A and C, parallel), the N group (B and C, parallel) or the
/// K group (A and B, a reduction), and no group is empty. Each operand that
/// holds a group's loops holds them as adjacent dimensions, in the same
/// order as the other operand that holds them, so that collapsing the
/// group's dimensions of each operand (row-major, contiguous) gives one
/// loop per group. Returns std::nullopt for anything else.
std::optional<GroupedGemmPattern>
matchGroupedGemmPattern(unsigned numLoops, const std::vector<bool> &parallel,
                        const std::vector<std::vector<unsigned>> &operandLoops);

} // namespace gemm
} // namespace tofu

#endif // TOFU_CONVERSION_LIBRARYCALLS_GEMMPATTERN_H
