//===- OpenBLASCore.cpp - OpenBLAS's kernels for CPUs it does not know ----===//
//
// OpenBLAS built for several CPUs (Debian's) picks its kernels once, when it
// loads, from the CPU's family and model. A CPU newer than the library (an
// Intel Xeon of model 207 with OpenBLAS 0.3.21) falls back to the Prescott
// kernels, SSE3 only: a 1024^3 SGEMM then runs at 18 GFLOP/s instead of 108
// on the same core. tofu-run loads the CPU runtime, and OpenBLAS with it,
// after main starts, so it can ask first: a child process loads OpenBLAS and
// reports the core it chose; on a fallback to Prescott where the CPU has
// AVX-512 (or AVX2 and FMA), OPENBLAS_CORETYPE names the kernels the CPU can
// run (SkylakeX, or Haswell) before the runtime loads. A user's
// OPENBLAS_CORETYPE is left as it is.
//
//===----------------------------------------------------------------------===//

#include "OpenBLASCore.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

/// The core OpenBLAS chooses on this host: the library loaded in a child
/// process, whose choice dies with it. Empty if it cannot be loaded.
std::string probeCore() {
  int fds[2];
  if (::pipe(fds) != 0)
    return "";
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return "";
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (void *lib = ::dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL))
      if (auto name = reinterpret_cast<char *(*)()>(
              ::dlsym(lib, "openblas_get_corename")))
        if (const char *core = name())
          (void)!::write(fds[1], core, std::strlen(core));
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string core;
  char buffer[64];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof(buffer))) > 0;)
    core.append(buffer, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return core;
}

} // namespace

std::string tofu::selectOpenBLASCore() {
#if defined(__x86_64__)
  if (std::getenv("OPENBLAS_CORETYPE"))
    return "";
  std::string core = probeCore();
  if (core != "Prescott")
    return "";
  __builtin_cpu_init();
  const char *chosen = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    chosen = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    chosen = "Haswell";
  if (!chosen)
    return "";
  ::setenv("OPENBLAS_CORETYPE", chosen, /*overwrite=*/0);
  return std::string("OpenBLAS chose its ") + core +
         " kernels for this CPU, which it does not know; using " + chosen +
         " (OPENBLAS_CORETYPE=" + chosen + "; set it to choose)";
#else
  return "";
#endif
}
