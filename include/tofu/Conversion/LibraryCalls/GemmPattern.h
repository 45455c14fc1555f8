//===- GemmPattern.h - Matrix products from loop structure ------*- C++ -*-===//
//
// Recognises a (batched) matrix product C[b..](m, n) += A[b..](m, k) *
// B[b..](k, n), where m, n and k may each be a group of loops, from which
// loops index each operand and which loops are reductions. Plain C++ without
// MLIR, so that the rule is unit tested on its own and shared by every backend:
// the linalg side (the multiply-accumulate body, element types) is in
// GemmMatcher.cpp, and the CPU (OpenBLAS) and GPU (cuBLAS) lowerings differ
// only in the call they emit for a match.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_CONVERSION_LIBRARYCALLS_GEMMPATTERN_H
#define TOFU_CONVERSION_LIBRARYCALLS_GEMMPATTERN_H

#include <optional>
#include <vector>

namespace tofu {
namespace gemm {

/// The loops of a matrix product C[b..](m.., n..) += A[b..](m.., k..) *
/// B[b..](k.., n..), by their position in the loop nest: the batch loops
/// (outermost first), the M, N and K groups, and the loops over which
/// products of the other loops are summed into one C (a reduction outside
/// K: one call per iteration, each adding into C). A group is usually one
/// loop; it is several in an einsum such as `bk,kgh->bgh` (the gates of an
/// LSTM kept as their own dimension) and its gradients, each listed in the
/// order in which the operands hold them. Input 0 is A (indexed by M),
/// input 1 is B (indexed by N).
struct GemmPattern {
  std::vector<unsigned> batchLoops;
  std::vector<unsigned> mLoops, nLoops, kLoops;
  std::vector<unsigned> accumulateLoops;
};

/// Matches a loop nest of `numLoops` loops (`parallel[l]` false for a
/// reduction loop) whose three operands (A, B, then the output C) are
/// indexed by the loops `operandLoops[i]`, one loop per dimension, no loop
/// twice (a projected permutation). Every loop must be a batch loop (all
/// three operands, parallel), or belong to the M group (A and C,
/// parallel), the N group (B and C, parallel) or the K group (A and B, a
/// reduction), and no group may be empty. Each operand that holds a
/// group's loops holds them as adjacent dimensions, in the same order as
/// the other operand that holds them, so that each group is one dimension
/// of a contiguous operand. Where that fails, a loop that is the
/// outermost dimension of C and of the one input that holds it becomes a
/// batch loop of the other input too (a batch stride of 0: the filter of a
/// 1x1 convolution, `nchw,fc->nfhw`, multiplies every image); a product
/// whose groups are already contiguous keeps its groups. Where that fails
/// too, a reduction loop that is the outermost dimension of both inputs
/// and not held by C becomes an accumulation loop (the filter gradient of
/// a 1x1 convolution, `nfhw,nchw->fc`, sums one product per image).
/// Returns std::nullopt for anything else.
std::optional<GemmPattern>
matchGemmPattern(unsigned numLoops, const std::vector<bool> &parallel,
                 const std::vector<std::vector<unsigned>> &operandLoops);

} // namespace gemm
} // namespace tofu

#endif // TOFU_CONVERSION_LIBRARYCALLS_GEMMPATTERN_H
