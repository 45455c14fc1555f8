# -*- Python -*-
# Configuration of the lit test suite of Tofu-MLIR.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TOFU"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".tdl", ".test", ".py"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tofu_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%tofu_src", config.tofu_src_root))
config.substitutions.append(("%tofu_bin", config.tofu_tools_dir))
config.substitutions.append(("%tofu_lib_dir",
                             os.path.join(config.tofu_obj_root, "lib")))
config.substitutions.append(("%llvm_lib_dir", config.llvm_lib_dir))
config.substitutions.append(("%python", "python3"))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "ASAN_OPTIONS", "UBSAN_OPTIONS",
                                     "LSAN_OPTIONS", "ASAN_SYMBOLIZER_PATH"])

# In a sanitizer build (TOFU_ENABLE_SANITIZERS) the project's binaries are
# instrumented with AddressSanitizer and UndefinedBehaviorSanitizer, and the
# MPI tests run instrumented too:
#  - mlir-runner is not instrumented, so `%difftest` has mpiexec preload the
#    shared ASan runtime into it before it loads libtofu_runtime_cpu.so;
#  - MPICH's UCX transport patches the code of mmap and munmap when it loads
#    (UCX_MEM_MMAP_HOOK_MODE), which crashes on ASan's interceptors of the
#    same functions. Nothing here registers memory with UCX, so the hooks are
#    not needed;
#  - hwloc's PCI plugin leaks in MPI_Init and is unloaded before exit, so
#    LeakSanitizer reports a leak that it cannot attribute. MPICH needs no
#    PCI topology on one host;
#  - MPI_Abort, the runtime's way out of a fatal error, skips MPI_Finalize,
#    so LeakSanitizer reports what UCX allocated in MPI_Init
#    (test/lsan.supp).
# A test that still cannot run instrumented is marked `UNSUPPORTED: asan`.
if config.tofu_sanitizers:
    config.available_features.add("asan")
    config.environment["UCX_MEM_MMAP_HOOK_MODE"] = "none"
    config.environment["HWLOC_COMPONENTS"] = "-pci"
    lsan = config.environment.get("LSAN_OPTIONS", "")
    config.environment["LSAN_OPTIONS"] = ":".join(
        filter(None, [lsan, "suppressions=" +
                      os.path.join(config.tofu_src_root, "test", "lsan.supp")]))
llvm_config.use_default_substitutions()

# Every test compiles what it runs: tofu-run's compile cache (on by default,
# in the user's cache directory) is off here, and
# test/Integration/CPU/compile-cache.test turns it on where it tests it.
config.environment["TOFU_COMPILE_CACHE"] = "off"

tool_dirs = [config.tofu_tools_dir, config.llvm_tools_dir]
tools = ["tofu-opt", "tofu-tdl-coverage", "tofu-run", "tofu-safetensors"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PYTHONPATH",
                             os.path.join(config.tofu_src_root, "python"),
                             append_path=True)

# Lowering of linalg-on-tensors to LLVM and execution of `main` on the CPU.
config.substitutions.append((
    "%run_cpu",
    "mlir-opt --one-shot-bufferize=bufferize-function-boundaries "
    "--buffer-deallocation-pipeline --convert-linalg-to-loops "
    "--expand-strided-metadata --lower-affine --convert-scf-to-cf "
    "--convert-math-to-llvm --convert-math-to-libm --convert-to-llvm "
    "--reconcile-unrealized-casts | mlir-runner -e main "
    "-entry-point-result=void -shared-libs=%s,%s" % (
        os.path.join(config.llvm_lib_dir, "libmlir_runner_utils.so"),
        os.path.join(config.llvm_lib_dir, "libmlir_c_runner_utils.so"))))

# Partitioned programs under MPI: `%difftest` runs python -m tofu.difftest
# with this build's tools and runtime. Tests that need it require `mpi`.
runtime_lib = os.path.join(config.tofu_obj_root, "lib",
                           "libtofu_runtime_cpu.so")
if os.path.exists(runtime_lib) and shutil.which("mpiexec"):
    config.available_features.add("mpi")
# `rsvg`: librsvg's rsvg-convert renders SVG pictures to PNG.
if shutil.which("rsvg-convert"):
    config.available_features.add("rsvg")
config.substitutions.append((
    "%difftest",
    "python3 -m tofu.difftest --tofu-opt %s --mlir-runner %s --runtime %s "
    "--runner-libs %s,%s%s" % (
        os.path.join(config.tofu_tools_dir, "tofu-opt"),
        os.path.join(config.llvm_tools_dir, "mlir-runner"), runtime_lib,
        os.path.join(config.llvm_lib_dir, "libmlir_runner_utils.so"),
        os.path.join(config.llvm_lib_dir, "libmlir_c_runner_utils.so"),
        " --runner-preload " + config.tofu_asan_runtime
        if config.tofu_sanitizers else "")))

# PyTorch twins of the zoo (python/tofu/twins.py) and the safetensors
# checks against PyTorch run under an interpreter that has torch: Debian's
# /usr/bin/python3 (python3-torch) unless TOFU_TORCH_PYTHON names another
# (python3 on PATH may be a build that cannot see Debian's packages).
# `torch`: it imports torch; tests that compare against PyTorch require it
# and show as UNSUPPORTED elsewhere.
torch_python = os.environ.get("TOFU_TORCH_PYTHON", "/usr/bin/python3")


def _torch_is_usable():
    import subprocess
    if not os.path.exists(torch_python):
        return False
    try:
        probe = subprocess.run([torch_python, "-c", "import numpy, torch"],
                               capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


if _torch_is_usable():
    config.available_features.add("torch")
config.substitutions.append(("%torch_python", torch_python))

# The GPU path. `cuda-toolkit`: the CUDA runtime was built (CUDA found), so
# lowered steps can be linked against it. `cuda`: a GPU is usable
# (`nvidia-smi -L` lists one); execution tests require it and show as
# UNSUPPORTED elsewhere.
cuda_runtime_lib = os.path.join(config.tofu_obj_root, "lib",
                                "libtofu_runtime_cuda.so")
gpu_reference_lib = os.path.join(config.tofu_obj_root, "lib",
                                 "libtofu_runtime_gpu_reference.so")
if os.path.exists(cuda_runtime_lib):
    config.available_features.add("cuda-toolkit")


def _gpu_is_usable():
    import subprocess
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        listed = subprocess.run([smi, "-L"], capture_output=True, text=True,
                                timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return listed.returncode == 0 and "GPU" in listed.stdout


if os.path.exists(cuda_runtime_lib) and _gpu_is_usable():
    config.available_features.add("cuda")
config.substitutions.append(("%cuda_runtime_lib", cuda_runtime_lib))

# Serializing kernels (gpu-module-to-binary) finds ptxas and libdevice
# through CUDA_HOME (or CUDA_ROOT / CUDA_PATH).
llvm_config.with_system_environment(["CUDA_HOME", "CUDA_ROOT", "CUDA_PATH"])
if not any(v in config.environment for v in ("CUDA_HOME", "CUDA_ROOT",
                                             "CUDA_PATH")):
    if os.path.isdir("/usr/local/cuda"):
        config.environment["CUDA_HOME"] = "/usr/local/cuda"
config.substitutions.append(("%gpu_reference_lib", gpu_reference_lib))
config.substitutions.append(("%cuda_lib_dir", "/usr/local/cuda/lib64"))

# mlir-runner loading one of the project's runtime libraries: in a sanitizer
# build the library is instrumented and the runner is not, so the shared
# ASan runtime is preloaded, as `%difftest` does under mpiexec.
# `tofu difftest` (the launcher) takes the same preload from the environment.
if config.tofu_sanitizers:
    config.environment["TOFU_RUNNER_PRELOAD"] = config.tofu_asan_runtime
project_lib_runner = ("env LD_PRELOAD=%s mlir-runner" %
                      config.tofu_asan_runtime
                      if config.tofu_sanitizers else "mlir-runner")

# A bufferized program with its deallocations and library calls (in the
# order of tofu-gpu-pipeline), executed on the CPU with the host stand-in
# of the GEMM entry point.
config.substitutions.append((
    "%run_bufferized_on_cpu",
    "mlir-opt --convert-linalg-to-loops "
    "--expand-strided-metadata --lower-affine --convert-scf-to-cf "
    "--convert-math-to-llvm --convert-math-to-libm --convert-to-llvm "
    "--reconcile-unrealized-casts | %s -e main "
    "-entry-point-result=void -shared-libs=%s,%s,%s" % (
        project_lib_runner,
        os.path.join(config.llvm_lib_dir, "libmlir_runner_utils.so"),
        os.path.join(config.llvm_lib_dir, "libmlir_c_runner_utils.so"),
        gpu_reference_lib)))

# A module lowered by tofu-cpu-pipeline (library calls into the CPU
# runtime, allocations through its hooks), run on the CPU.
config.substitutions.append((
    "%run_lowered_cpu",
    "%s -e main -entry-point-result=void -shared-libs=%s,%s,%s" % (
        project_lib_runner, runtime_lib,
        os.path.join(config.llvm_lib_dir, "libmlir_runner_utils.so"),
        os.path.join(config.llvm_lib_dir, "libmlir_c_runner_utils.so"))))

# A module lowered by tofu-gpu-pipeline, run on the GPU (tests that use it
# require `cuda`).
config.substitutions.append(("%llvm_lib_dir", config.llvm_lib_dir))
config.substitutions.append((
    "%run_gpu",
    "%s -e main -entry-point-result=void -shared-libs=%s,%s,%s" % (
        project_lib_runner,
        os.path.join(config.llvm_lib_dir, "libmlir_runner_utils.so"),
        os.path.join(config.llvm_lib_dir, "libmlir_c_runner_utils.so"),
        cuda_runtime_lib)))
