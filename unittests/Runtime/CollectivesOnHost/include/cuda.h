//===- cuda.h - The driver calls of the GPU collectives, for host tests ---===//
//
// Declares the few CUDA driver types and calls that
// runtime/cuda/Collectives.cpp uses, so that it compiles against
// MockDevice.cpp, which runs them on the host. Not NVIDIA's header.
//
//===----------------------------------------------------------------------===//

#pragma once
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef int CUresult;
#define CUDA_SUCCESS 0
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef int CUdevice;
#define CU_EVENT_DISABLE_TIMING 2
CUresult cuGetErrorName(CUresult, const char **);
CUresult cuCtxGetDevice(CUdevice *);
CUresult cuModuleLoadData(CUmodule *, const void *);
CUresult cuModuleGetFunction(CUfunction *, CUmodule, const char *);
CUresult cuMemcpyHtoDAsync(CUdeviceptr, const void *, size_t, CUstream);
CUresult cuEventCreate(CUevent *, unsigned);
CUresult cuEventRecord(CUevent, CUstream);
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned);
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, CUstream, void **,
                        void **);
#ifdef __cplusplus
}
#endif
