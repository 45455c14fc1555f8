//===- nccl.h - The NCCL calls of the GPU collectives, for host tests -----===//
//
// Declares the NCCL types and calls that runtime/cuda/Collectives.cpp uses,
// so that it compiles against MockDevice.cpp, which emulates them over MPI.
// Not NVIDIA's header.
//
//===----------------------------------------------------------------------===//

#pragma once
#include <cuda.h>
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef struct CUstream_st *cudaStream_t;
typedef enum { ncclSuccess = 0, ncclInvalidUsage = 5 } ncclResult_t;
typedef enum {
  ncclInt8 = 0,
  ncclInt32 = 2,
  ncclInt64 = 4,
  ncclFloat32 = 7,
  ncclFloat64 = 8
} ncclDataType_t;
typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3
} ncclRedOp_t;
typedef struct {
  char internal[128];
} ncclUniqueId;
typedef struct ncclComm *ncclComm_t;
typedef struct ncclConfig_v {
  int dummy;
} ncclConfig_t;
const char *ncclGetErrorString(ncclResult_t);
ncclResult_t ncclGetUniqueId(ncclUniqueId *);
ncclResult_t ncclCommInitRank(ncclComm_t *, int, ncclUniqueId, int);
ncclResult_t ncclCommSplit(ncclComm_t, int, int, ncclComm_t *, ncclConfig_t *);
ncclResult_t ncclCommCount(const ncclComm_t, int *);
ncclResult_t ncclCommUserRank(const ncclComm_t, int *);
ncclResult_t ncclAllGather(const void *, void *, size_t, ncclDataType_t,
                           ncclComm_t, cudaStream_t);
ncclResult_t ncclReduceScatter(const void *, void *, size_t, ncclDataType_t,
                               ncclRedOp_t, ncclComm_t, cudaStream_t);
ncclResult_t ncclAllReduce(const void *, void *, size_t, ncclDataType_t,
                           ncclRedOp_t, ncclComm_t, cudaStream_t);
ncclResult_t ncclSend(const void *, size_t, ncclDataType_t, int, ncclComm_t,
                      cudaStream_t);
ncclResult_t ncclRecv(void *, size_t, ncclDataType_t, int, ncclComm_t,
                      cudaStream_t);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
#ifdef __cplusplus
}
#endif
