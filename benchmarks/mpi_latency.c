/* The latency of the small collectives of a partitioned step, alone:
 *
 *   mpicc -O2 benchmarks/mpi_latency.c -o /tmp/mpi_latency
 *   mpiexec -n 2 /tmp/mpi_latency
 *
 * prints, on rank 0, the microseconds per MPI_Allgather of 1 KB per rank
 * and per MPI_Allreduce of one float, averaged over 20,000 calls (after as
 * many unmeasured ones). docs/benchmarks.md compares them with the time
 * the LSTM's 2-rank step spends in its collectives.
 */
#include <mpi.h>
#include <stdio.h>

enum { kCalls = 20000, kFloats = 256 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static float mine[kFloats], all[kFloats * 64];
  if (size > 64) {
    if (rank == 0)
      fprintf(stderr, "at most 64 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int round = 0; round < 2; ++round) {
    double start = MPI_Wtime();
    for (int i = 0; i < kCalls; ++i)
      MPI_Allgather(mine, kFloats, MPI_FLOAT, all, kFloats, MPI_FLOAT,
                    MPI_COMM_WORLD);
    double gather = MPI_Wtime() - start;
    start = MPI_Wtime();
    for (int i = 0; i < kCalls; ++i)
      MPI_Allreduce(MPI_IN_PLACE, all, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double reduce = MPI_Wtime() - start;
    if (rank == 0 && round == 1)
      printf("%d ranks: all_gather of 1 KB %.2f us, all_reduce of a float "
             "%.2f us\n",
             size, 1e6 * gather / kCalls, 1e6 * reduce / kCalls);
  }
  MPI_Finalize();
  return 0;
}
