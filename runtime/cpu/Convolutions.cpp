//===- Convolutions.cpp - f32 convolutions through oneDNN -----------------===//
//
// The tofu_cpu_conv2d_* entry points (include/tofu/Runtime/TofuRuntime.h):
// the convolutions that convert-tofu-to-cpu emits, with the ABI and the
// checks of the GPU backend's (ConvPlan.h), computed by oneDNN's
// convolution primitives on the image, filter and output in place (oneDNN
// memory descriptors take their strides). Each distinct problem creates its
// primitive once and reuses it in every later step; a call that accumulates
// (beta = 1) computes into a scratch tensor and adds it.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/ConvPlan.h"
#include "tofu/Runtime/TofuRuntime.h"

#include "RuntimeSupport.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

using tofu::gpu::ConvKind;
using tofu::gpu::ConvProblem;
using namespace tofu::runtime;

/// The OpenMP runtime that oneDNN loads (weak: a oneDNN built on another
/// threading runtime leaves it null).
extern "C" void omp_set_num_threads(int) __attribute__((weak));

namespace {

/// Stops the job naming the oneDNN call that failed.
void check(dnnl_status_t status, const char *what) {
  if (status != dnnl_success)
    fatal((std::string("oneDNN: ") + what + " failed (status " +
           std::to_string(int(status)) + ")")
              .c_str());
}

struct Engine {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  Engine() {
    // oneDNN runs on OpenMP threads: as many as TOFU_NUM_THREADS.
    if (omp_set_num_threads)
      omp_set_num_threads(getLibraryThreads());
    check(dnnl_engine_create(&engine, dnnl_cpu, 0), "dnnl_engine_create");
    check(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags),
          "dnnl_stream_create");
  }
};

Engine &getEngine() {
  static Engine e;
  return e;
}

/// One problem's primitive and the memory objects of its three tensors,
/// whose data handles each call sets.
struct Convolution {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_t x = nullptr, w = nullptr, y = nullptr;
  /// The written tensor's scratch copy for beta = 1, packed.
  dnnl_memory_t scratch = nullptr;
  std::vector<float> scratchData;
};

dnnl_memory_desc_t describe(const intptr_t sizes[4],
                            const intptr_t strides[4]) {
  dnnl_dims_t dims, steps;
  for (int d = 0; d < 4; ++d)
    dims[d] = sizes[d], steps[d] = strides[d];
  dnnl_memory_desc_t md;
  check(dnnl_memory_desc_init_by_strides(&md, 4, dims, dnnl_f32, steps),
        "dnnl_memory_desc_init_by_strides");
  return md;
}

dnnl_memory_desc_t describePacked(const intptr_t sizes[4]) {
  intptr_t strides[4];
  intptr_t packed = 1;
  for (int d = 3; d >= 0; --d) {
    strides[d] = packed;
    packed *= sizes[d];
  }
  return describe(sizes, strides);
}

/// The padding after the last row (column) that makes oneDNN's output
/// extent, (in - kernel + before + after) / stride + 1 rounded down, equal
/// `out` = (in + 2 before - kernel) / stride + 1 (cuDNN's): the rows that
/// the last window reaches past the image, none when it stays inside.
intptr_t getPaddingAfter(intptr_t in, intptr_t kernel, intptr_t out,
                         intptr_t stride, intptr_t before) {
  return std::max<intptr_t>(0, (out - 1) * stride + kernel - in - before);
}

std::unique_ptr<Convolution> create(ConvKind kind, const ConvProblem &p) {
  Engine &e = getEngine();
  intptr_t xs[4], ws[4], ys[4];
  p.getXSizes(xs);
  p.getWSizes(ws);
  p.getYSizes(ys);
  dnnl_memory_desc_t xMd = describe(xs, p.xStrides),
                     wMd = describe(ws, p.wStrides),
                     yMd = describe(ys, p.yStrides);
  // The scratch tensor replaces the written one when accumulating.
  dnnl_memory_desc_t written = kind == ConvKind::Forward ? yMd
                               : kind == ConvKind::BackwardData
                                   ? xMd
                                   : wMd;
  if (p.beta != 0.0f)
    written = describePacked(kind == ConvKind::Forward        ? ys
                             : kind == ConvKind::BackwardData ? xs
                                                              : ws);
  dnnl_dims_t strides = {p.strideH, p.strideW};
  dnnl_dims_t before = {p.padH, p.padW};
  dnnl_dims_t after = {
      getPaddingAfter(p.h, p.kh, p.oh, p.strideH, p.padH),
      getPaddingAfter(p.w, p.kw, p.ow, p.strideW, p.padW)};
  // The forward descriptor, also the hint of the backward ones.
  dnnl_convolution_desc_t forward;
  check(dnnl_convolution_forward_desc_init(
            &forward, dnnl_forward_training, dnnl_convolution_direct, &xMd,
            &wMd, nullptr, kind == ConvKind::Forward ? &written : &yMd,
            strides, before, after),
        "dnnl_convolution_forward_desc_init");
  dnnl_primitive_desc_t forwardPd = nullptr, pd = nullptr;
  check(dnnl_primitive_desc_create(&forwardPd, &forward, nullptr, e.engine,
                                   nullptr),
        "dnnl_primitive_desc_create (forward)");
  if (kind == ConvKind::Forward) {
    pd = forwardPd;
    forwardPd = nullptr;
  } else if (kind == ConvKind::BackwardData) {
    dnnl_convolution_desc_t backward;
    check(dnnl_convolution_backward_data_desc_init(
              &backward, dnnl_convolution_direct, &written, &wMd, &yMd,
              strides, before, after),
          "dnnl_convolution_backward_data_desc_init");
    check(dnnl_primitive_desc_create(&pd, &backward, nullptr, e.engine,
                                     forwardPd),
          "dnnl_primitive_desc_create (backward data)");
  } else {
    dnnl_convolution_desc_t backward;
    check(dnnl_convolution_backward_weights_desc_init(
              &backward, dnnl_convolution_direct, &xMd, &written, nullptr,
              &yMd, strides, before, after),
          "dnnl_convolution_backward_weights_desc_init");
    check(dnnl_primitive_desc_create(&pd, &backward, nullptr, e.engine,
                                     forwardPd),
          "dnnl_primitive_desc_create (backward weights)");
  }
  auto c = std::make_unique<Convolution>();
  check(dnnl_primitive_create(&c->primitive, pd), "dnnl_primitive_create");
  check(dnnl_primitive_desc_destroy(pd), "dnnl_primitive_desc_destroy");
  if (forwardPd)
    check(dnnl_primitive_desc_destroy(forwardPd),
          "dnnl_primitive_desc_destroy");
  check(dnnl_memory_create(&c->x, &xMd, e.engine, DNNL_MEMORY_NONE),
        "dnnl_memory_create");
  check(dnnl_memory_create(&c->w, &wMd, e.engine, DNNL_MEMORY_NONE),
        "dnnl_memory_create");
  check(dnnl_memory_create(&c->y, &yMd, e.engine, DNNL_MEMORY_NONE),
        "dnnl_memory_create");
  if (p.beta != 0.0f) {
    c->scratchData.resize(dnnl_memory_desc_get_size(&written) /
                          sizeof(float));
    check(dnnl_memory_create(&c->scratch, &written, e.engine,
                             c->scratchData.data()),
          "dnnl_memory_create");
  }
  return c;
}

/// Adds the packed `scratch` into the strided tensor `to` of `sizes`.
void accumulate(const float *scratch, float *to, const intptr_t sizes[4],
                const intptr_t strides[4]) {
  for (intptr_t i0 = 0, k = 0; i0 < sizes[0]; ++i0)
    for (intptr_t i1 = 0; i1 < sizes[1]; ++i1)
      for (intptr_t i2 = 0; i2 < sizes[2]; ++i2)
        for (intptr_t i3 = 0; i3 < sizes[3]; ++i3, ++k)
          to[i0 * strides[0] + i1 * strides[1] + i2 * strides[2] +
             i3 * strides[3]] += scratch[k];
}

void runConv(const char *entry, ConvKind kind, ConvProblem p) {
  std::string error = tofu::gpu::planConv(p);
  if (!error.empty())
    fatal((std::string(entry) + ": " + error).c_str());
  // The problem, strides and beta included, is the key.
  using Key = std::array<intptr_t, 27>;
  Key key = {intptr_t(kind), p.n,           p.c,
             p.h,            p.w,           p.f,
             p.kh,           p.kw,          p.oh,
             p.ow,           p.strideH,     p.strideW,
             p.padH,         p.padW,        p.xStrides[0],
             p.xStrides[1],  p.xStrides[2], p.xStrides[3],
             p.wStrides[0],  p.wStrides[1], p.wStrides[2],
             p.wStrides[3],  p.yStrides[0], p.yStrides[1],
             p.yStrides[2],  p.yStrides[3], intptr_t(p.beta != 0.0f)};
  static std::map<Key, std::unique_ptr<Convolution>> cache;
  std::unique_ptr<Convolution> &c = cache[key];
  if (!c)
    c = create(kind, p);
  check(dnnl_memory_set_data_handle(c->x, reinterpret_cast<void *>(p.x)),
        "dnnl_memory_set_data_handle");
  check(dnnl_memory_set_data_handle(c->w, reinterpret_cast<void *>(p.filter)),
        "dnnl_memory_set_data_handle");
  check(dnnl_memory_set_data_handle(c->y, reinterpret_cast<void *>(p.y)),
        "dnnl_memory_set_data_handle");
  bool scratch = p.beta != 0.0f;
  dnnl_memory_t x = c->x, w = c->w, y = c->y;
  if (scratch)
    (kind == ConvKind::Forward        ? y
     : kind == ConvKind::BackwardData ? x
                                      : w) = c->scratch;
  dnnl_exec_arg_t args[3];
  if (kind == ConvKind::Forward)
    args[0] = {DNNL_ARG_SRC, x}, args[1] = {DNNL_ARG_WEIGHTS, w},
    args[2] = {DNNL_ARG_DST, y};
  else if (kind == ConvKind::BackwardData)
    args[0] = {DNNL_ARG_DIFF_SRC, x}, args[1] = {DNNL_ARG_WEIGHTS, w},
    args[2] = {DNNL_ARG_DIFF_DST, y};
  else
    args[0] = {DNNL_ARG_SRC, x}, args[1] = {DNNL_ARG_DIFF_WEIGHTS, w},
    args[2] = {DNNL_ARG_DIFF_DST, y};
  Engine &e = getEngine();
  check(dnnl_primitive_execute(c->primitive, e.stream, 3, args),
        "dnnl_primitive_execute");
  check(dnnl_stream_wait(e.stream), "dnnl_stream_wait");
  if (!scratch)
    return;
  intptr_t sizes[4];
  const intptr_t *strides;
  float *to;
  if (kind == ConvKind::Forward) {
    p.getYSizes(sizes);
    strides = p.yStrides, to = reinterpret_cast<float *>(p.y);
  } else if (kind == ConvKind::BackwardData) {
    p.getXSizes(sizes);
    strides = p.xStrides, to = reinterpret_cast<float *>(p.x);
  } else {
    p.getWSizes(sizes);
    strides = p.wStrides, to = reinterpret_cast<float *>(p.filter);
  }
  accumulate(c->scratchData.data(), to, sizes, strides);
}

} // namespace

extern "C" {

void tofu_cpu_conv2d_forward(TOFU_CPU_CONV2D_PARAMS) {
  runConv(__func__, ConvKind::Forward,
          tofu::gpu::getConvProblem(TOFU_GPU_CONV2D_ARGS));
}
void tofu_cpu_conv2d_backward_data(TOFU_CPU_CONV2D_PARAMS) {
  runConv(__func__, ConvKind::BackwardData,
          tofu::gpu::getConvProblem(TOFU_GPU_CONV2D_ARGS));
}
void tofu_cpu_conv2d_backward_filter(TOFU_CPU_CONV2D_PARAMS) {
  runConv(__func__, ConvKind::BackwardFilter,
          tofu::gpu::getConvProblem(TOFU_GPU_CONV2D_ARGS));
}

} // extern "C"
