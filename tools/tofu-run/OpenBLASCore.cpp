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

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

/// The core OpenBLAS chooses on this host: the library loaded in a child
/// process, whose choice dies with it. Empty if it cannot be loaded, or if
/// the child does not answer within a few seconds.
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
    // A crash in the library ends the child quietly (not through the
    // parent's crash handlers), and it starts one thread, not one per core.
    for (int sig : {SIGSEGV, SIGILL, SIGBUS, SIGABRT, SIGFPE})
      ::signal(sig, SIG_DFL);
    if (int null = ::open("/dev/null", O_WRONLY); null >= 0)
      ::dup2(null, 2);
    ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
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
  constexpr int kTimeoutMs = 5000;
  for (;;) {
    pollfd wait = {fds[0], POLLIN, 0};
    int ready = ::poll(&wait, 1, kTimeoutMs);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0) {
      ::kill(pid, SIGKILL);
      core.clear();
      break;
    }
    ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    core.append(buffer, n);
  }
  ::close(fds[0]);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
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
  // A library built without run-time kernel selection ignores the
  // variable: say nothing unless it now runs the chosen kernels.
  if (probeCore() != chosen) {
    ::unsetenv("OPENBLAS_CORETYPE");
    return "";
  }
  return std::string("OpenBLAS chose its ") + core +
         " kernels for this CPU, which it does not know; using " + chosen +
         " (OPENBLAS_CORETYPE=" + chosen + "; set it to choose)";
#else
  return "";
#endif
}
