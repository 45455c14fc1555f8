//===- NodeCollectives.h - Collectives through shared memory --*- C++ -*-===//
//
// The MPI ranks of a communicator that all run on one node exchange their
// small tiles through a shared-memory window (MPI_Win_allocate_shared)
// instead of MPI messages. Each member copies its input into its own slot
// of the window and announces it; every member then assembles its result
// from the members' slots with the plans of the in-process workers
// (Workers.h: planAllGather, planAllToAll, planReduction), the same copies
// and the same member-order reductions. A collective of a few KB then
// costs two copies and a handful of cache-line handoffs, where MPI's costs
// a few microseconds of protocol (the LSTM's 2-rank step makes 320 of them).
//
// Each member's slot holds two buffers, used alternately: the member
// writes collective n's input into buffer n % 2 only once every member
// has finished reading collective n - 2's from it, so a fast member never
// overwrites what a slow one still reads, and a collective needs no
// second rendezvous.
//
// TOFU_CPU_SHM_BYTES sets a buffer's size (default 1 MiB, less where
// /dev/shm has less than 16 segments' worth free); an input that does not
// fit, or every input when it is 0, goes through MPI. Every
// member of a collective has an input of the same size and reads the same
// variable (mpiexec passes the environment to every rank), so all members
// take the same path.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CPU_NODECOLLECTIVES_H
#define TOFU_RUNTIME_CPU_NODECOLLECTIVES_H

#include "RuntimeSupport.h"

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace tofu {
namespace runtime {
namespace node {

class Segment;

/// The shared segment of `comm`, made collectively over its members; null
/// on every member when they do not all share one node, when the group has
/// one member, or when TOFU_CPU_SHM_BYTES is 0.
Segment *createSegment(MPI_Comm comm);
/// Frees a segment (collectively over its communicator); null is ignored.
void freeSegment(Segment *segment);

// Each collective returns false, having done nothing, when `segment` is
// null or `in` does not fit a buffer; the caller then uses MPI. The shapes
// are checked by the caller.

/// Member m's input lands at m * in.sizes[dim] along `dim` of `out`.
bool allGather(Segment *segment, const View &in, const View &out, int64_t dim);
/// Chunk `me` of member m's input along `splitDim` lands at position m
/// along `concatDim` of `out`.
bool allToAll(Segment *segment, const View &in, const View &out,
              int64_t splitDim, int64_t concatDim);
/// `out` is the reduction (TOFU_SUM …, in member order) of the box of its
/// shape at `lo` in every member's input: an all-reduce with `lo` zero, a
/// reduce-scatter with `lo` at the caller's chunk.
bool reduce(Segment *segment, const View &in, const View &out,
            const std::vector<int64_t> &lo, int64_t kind, int64_t type);

} // namespace node
} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_CPU_NODECOLLECTIVES_H
