// The CPU runtime's cost per small collective, next to the MPI call it
// makes:
//
//   mpicxx -O2 -Iinclude benchmarks/runtime_collectives.cpp -Lbuild/lib \
//     -ltofu_runtime_cpu -Wl,-rpath,$PWD/build/lib -o /tmp/runtime_collectives
//   mpiexec -n 2 /tmp/runtime_collectives [ROWS [WORK [send]]]
//
// prints, on rank 0, the microseconds per tofu_all_gather of a ROWSx64 f32
// tile per rank (default 4: the LSTM's most frequent collective) and per
// MPI_Allgather of the same bytes, each averaged over 20,000 calls after as
// many unmeasured ones. On one rank (`mpiexec -n 1`, or alone) the MPI call
// has nothing to wait for, and the difference is the runtime's own cost.
// The runtime's call goes through shared memory when the tile fits its
// buffers (TOFU_CPU_SHM_BYTES=0: through MPI). With WORK > 0 each call
// follows WORK iterations of arithmetic, as a step's collectives follow
// its operators, and the line gives that work's time per call too. With
// `send` the MPI call gets the tile as its send buffer instead of running
// in place on a result that already holds it.

#include "tofu/Runtime/TofuRuntime.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

/// A ranked memref descriptor of rank R, as MLIR lays it out.
template <int R> struct Descriptor {
  void *allocated, *aligned;
  int64_t offset, sizes[R], strides[R];
};

} // namespace

/// WORK iterations of dependent floating-point arithmetic.
float work(int64_t iterations, float x) {
  for (int64_t i = 0; i < iterations; ++i)
    x = x * 0.999f + 0.001f;
  return x;
}

int main(int argc, char **argv) {
  int64_t rows = argc > 1 ? std::atoll(argv[1]) : 4;
  int64_t iterations = argc > 2 ? std::atoll(argv[2]) : 0;
  bool send = argc > 3 && std::string(argv[3]) == "send";
  tofu_init(0);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<float> tile(rows * 64, float(rank)), gathered(size * rows * 64);
  int64_t grid[1] = {size};
  Descriptor<2> in{tile.data(), tile.data(), 0, {rows, 64}, {64, 1}};
  Descriptor<2> out{
      gathered.data(), gathered.data(), 0, {rows * size, 64}, {64, 1}};
  Descriptor<1> gridDescriptor{grid, grid, 0, {1}, {1}};
  TofuUnrankedMemRef src{2, &in}, dst{2, &out}, gridRef{1, &gridDescriptor};
  constexpr int kCalls = 20000;
  volatile float sink = 0;
  for (int round = 0; round < 2; ++round) {
    double start = MPI_Wtime();
    for (int i = 0; i < kCalls; ++i)
      sink = work(iterations, sink);
    double alone = MPI_Wtime() - start;
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    for (int i = 0; i < kCalls; ++i) {
      sink = work(iterations, sink);
      _mlir_ciface_tofu_all_gather(&src, &dst, &gridRef, /*axes=*/1,
                                   /*dim=*/0, /*elementBytes=*/4);
    }
    double runtime = MPI_Wtime() - start;
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    for (int i = 0; i < kCalls; ++i) {
      sink = work(iterations, sink);
      int bytes = int(tile.size() * sizeof(float));
      if (send)
        MPI_Allgather(tile.data(), bytes, MPI_BYTE, gathered.data(), bytes,
                      MPI_BYTE, MPI_COMM_WORLD);
      else
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered.data(),
                      bytes, MPI_BYTE, MPI_COMM_WORLD);
    }
    double mpi = MPI_Wtime() - start;
    if (rank == 0 && round == 1)
      std::printf("%d ranks: work %.2f us, then tofu_all_gather of %lldx64 "
                  "f32: %.2f us, MPI_Allgather of %lld B: %.2f us\n",
                  size, 1e6 * alone / kCalls, (long long)rows,
                  1e6 * runtime / kCalls,
                  (long long)(tile.size() * sizeof(float)), 1e6 * mpi / kCalls);
  }
  tofu_finalize();
  return 0;
}
