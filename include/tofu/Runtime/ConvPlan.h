//===- ConvPlan.h - Strided convolutions as cuDNN calls ---------*- C++ -*-===//
//
// What the tofu_gpu_conv2d_* entry points check before they call cuDNN
// (cudnnConvolutionForward, BackwardData, BackwardFilter): the extents, the
// strides of the image and output tensors (any positive ones, as cuDNN's
// strided tensor descriptors take them) and a packed filter (cuDNN's filter
// descriptors have no strides). Also the convolutions computed on the host
// with cuDNN's semantics, the reference against which the lowering is
// tested without a GPU. Plain C++, shared by the CUDA runtime and its host
// stand-in.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CONVPLAN_H
#define TOFU_RUNTIME_CONVPLAN_H

#include "tofu/Runtime/TofuCudaRuntime.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tofu {
namespace gpu {

/// The tensor a convolution entry point writes: Y (forward), X (data
/// gradient) or W (filter gradient). The values are the ABI's.
enum class ConvKind { Forward = 0, BackwardData = 1, BackwardFilter = 2 };

/// A 2-D convolution with dilation 1 and symmetric zero padding, in
/// `groups` groups of c / groups channels and f / groups filters each:
///   Y[n, f, oh, ow] = sum_{c, kh, kw} X[n, g(f) * c / groups + c,
///                                       oh * sh + kh - ph, ow * sw + kw - pw]
///                                     * W[f, c, kh, kw]
/// (X read as zero outside its extents, g(f) the group of filter f) with
/// every tensor given by the address of its first element and its strides
/// in elements, in the order of its dimensions.
struct ConvProblem {
  intptr_t n = 0, c = 0, h = 0, w = 0, f = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  /// 1; c = f = groups for a depthwise convolution.
  intptr_t groups = 1;
  intptr_t strideH = 1, strideW = 1;
  /// Zeros added on both sides of the image's rows and columns.
  intptr_t padH = 0, padW = 0;
  intptr_t x = 0, xStrides[4] = {0, 0, 0, 0};
  intptr_t filter = 0, wStrides[4] = {0, 0, 0, 0};
  intptr_t y = 0, yStrides[4] = {0, 0, 0, 0};
  /// 0 (overwrite the written tensor) or 1 (accumulate into it).
  float beta = 0.0f;

  void getXSizes(intptr_t sizes[4]) const {
    sizes[0] = n, sizes[1] = c, sizes[2] = h, sizes[3] = w;
  }
  void getWSizes(intptr_t sizes[4]) const {
    sizes[0] = f, sizes[1] = getGroupChannels(), sizes[2] = kh, sizes[3] = kw;
  }
  void getYSizes(intptr_t sizes[4]) const {
    sizes[0] = n, sizes[1] = f, sizes[2] = oh, sizes[3] = ow;
  }
  /// The image channels that one filter reads.
  intptr_t getGroupChannels() const { return groups > 0 ? c / groups : c; }
};

/// A problem without its addresses, and its kind: what the runtimes'
/// caches of oneDNN primitives and cuDNN algorithms are keyed by.
using ConvKey = std::array<intptr_t, 28>;

inline ConvKey getConvKey(ConvKind kind, const ConvProblem &p) {
  ConvKey key = {
      intptr_t(kind), p.groups, p.n,  p.c,       p.h,       p.w,    p.f,   p.kh,
      p.kw,           p.oh,     p.ow, p.strideH, p.strideW, p.padH, p.padW};
  std::copy(p.xStrides, p.xStrides + 4, key.begin() + 15);
  std::copy(p.wStrides, p.wStrides + 4, key.begin() + 19);
  std::copy(p.yStrides, p.yStrides + 4, key.begin() + 23);
  key[27] = p.beta != 0.0f;
  return key;
}

/// The problem of one call of a tofu_gpu_conv2d_* entry point.
inline ConvProblem getConvProblem(TOFU_CONV2D_PARAMS) {
  ConvProblem p;
  p.n = n, p.c = c, p.h = h, p.w = w, p.f = f, p.groups = groups;
  p.kh = kh, p.kw = kw;
  p.oh = oh, p.ow = ow, p.strideH = strideH, p.strideW = strideW;
  p.padH = padH, p.padW = padW;
  p.x = x, p.xStrides[0] = xN, p.xStrides[1] = xC, p.xStrides[2] = xH;
  p.xStrides[3] = xW;
  p.filter = filter, p.wStrides[0] = wF, p.wStrides[1] = wC;
  p.wStrides[2] = wH, p.wStrides[3] = wW;
  p.y = y, p.yStrides[0] = yN, p.yStrides[1] = yF, p.yStrides[2] = yH;
  p.yStrides[3] = yW;
  p.beta = beta;
  return p;
}

/// Whether the output extent `out` follows from the input extent `in`, the
/// kernel extent, the stride and the padding on each side as cuDNN
/// requires: out = (in + 2 * pad - kernel) / stride + 1, rounded down, with
/// in + 2 * pad >= kernel and 0 <= pad < kernel.
inline bool isConsistentExtent(int64_t in, int64_t kernel, int64_t out,
                               int64_t stride, int64_t pad = 0) {
  return stride >= 1 && kernel >= 1 && pad >= 0 && pad < kernel &&
         in + 2 * pad >= kernel && out == (in + 2 * pad - kernel) / stride + 1;
}

/// Gives each dimension of extent 1 the stride of a packed layout (cuDNN
/// wants positive strides; the stride of such a dimension is never used).
inline void normalizeUnitStrides(const intptr_t sizes[4], intptr_t strides[4]) {
  intptr_t packed = 1;
  for (int d = 3; d >= 0; --d) {
    if (sizes[d] == 1)
      strides[d] = packed;
    packed = strides[d] * sizes[d];
  }
}

/// Checks `p` and normalizes the strides of unit dimensions. Returns an
/// empty string when cuDNN can compute it, or what is wrong.
inline std::string planConv(ConvProblem &p) {
  if (p.beta != 0.0f && p.beta != 1.0f)
    return "beta must be 0 or 1";
  intptr_t extents[] = {p.n,  p.c,  p.h,  p.w,       p.f,      p.kh,
                        p.kw, p.oh, p.ow, p.strideH, p.strideW};
  for (intptr_t v : extents)
    if (v < 1 || v > INT_MAX)
      return "an extent or stride is not in [1, INT_MAX]";
  if (p.groups < 1 || p.c % p.groups != 0 || p.f % p.groups != 0)
    return "the groups do not divide the channels and the filters";
  if (p.padH < 0 || p.padH >= p.kh || p.padW < 0 || p.padW >= p.kw)
    return "a padding is negative or not smaller than the kernel";
  if (!isConsistentExtent(p.h, p.kh, p.oh, p.strideH, p.padH) ||
      !isConsistentExtent(p.w, p.kw, p.ow, p.strideW, p.padW))
    return "the output extent does not follow from the input extent, the "
           "kernel, the stride and the padding";
  intptr_t xs[4], ws[4], ys[4];
  p.getXSizes(xs);
  p.getWSizes(ws);
  p.getYSizes(ys);
  normalizeUnitStrides(xs, p.xStrides);
  normalizeUnitStrides(ws, p.wStrides);
  normalizeUnitStrides(ys, p.yStrides);
  for (int d = 0; d < 4; ++d)
    if (p.xStrides[d] < 1 || p.xStrides[d] > INT_MAX || p.yStrides[d] < 1 ||
        p.yStrides[d] > INT_MAX)
      return "a stride of the image or the output is not in [1, INT_MAX]";
  intptr_t packed = 1;
  for (int d = 3; d >= 0; --d) {
    if (p.wStrides[d] != packed)
      return "the filter is not packed in (F, C / groups, KH, KW) order";
    packed *= ws[d];
  }
  return "";
}

/// Computes the convolution `kind` of a planned problem on the host, as
/// cuDNN defines it with alpha = 1: the written tensor becomes the sum of
/// the products plus beta times its old value (every element of it, also
/// those that no product reaches). Products with a padding element (outside
/// the image) are zero and skipped.
inline void runConvOnHost(ConvKind kind, const ConvProblem &p) {
  auto *x = reinterpret_cast<float *>(p.x);
  auto *w = reinterpret_cast<float *>(p.filter);
  auto *y = reinterpret_cast<float *>(p.y);
  if (p.beta == 0.0f) {
    float *base = kind == ConvKind::Forward        ? y
                  : kind == ConvKind::BackwardData ? x
                                                   : w;
    const intptr_t *strides = kind == ConvKind::Forward        ? p.yStrides
                              : kind == ConvKind::BackwardData ? p.xStrides
                                                               : p.wStrides;
    intptr_t sizes[4];
    if (kind == ConvKind::Forward)
      p.getYSizes(sizes);
    else if (kind == ConvKind::BackwardData)
      p.getXSizes(sizes);
    else
      p.getWSizes(sizes);
    for (intptr_t i0 = 0; i0 < sizes[0]; ++i0)
      for (intptr_t i1 = 0; i1 < sizes[1]; ++i1)
        for (intptr_t i2 = 0; i2 < sizes[2]; ++i2)
          for (intptr_t i3 = 0; i3 < sizes[3]; ++i3)
            base[i0 * strides[0] + i1 * strides[1] + i2 * strides[2] +
                 i3 * strides[3]] = 0.0f;
  }
  const intptr_t *xs = p.xStrides, *ws = p.wStrides, *ys = p.yStrides;
  intptr_t channels = p.getGroupChannels(), filters = p.f / p.groups;
  for (intptr_t b = 0; b < p.n; ++b)
    for (intptr_t f = 0; f < p.f; ++f)
      for (intptr_t oh = 0; oh < p.oh; ++oh)
        for (intptr_t ow = 0; ow < p.ow; ++ow)
          for (intptr_t c = 0; c < channels; ++c)
            for (intptr_t kh = 0; kh < p.kh; ++kh)
              for (intptr_t kw = 0; kw < p.kw; ++kw) {
                intptr_t ih = oh * p.strideH + kh - p.padH;
                intptr_t iw = ow * p.strideW + kw - p.padW;
                if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w)
                  continue;
                intptr_t ic = f / filters * channels + c;
                float &xv = x[b * xs[0] + ic * xs[1] + ih * xs[2] + iw * xs[3]];
                float &wv = w[f * ws[0] + c * ws[1] + kh * ws[2] + kw * ws[3]];
                float &yv = y[b * ys[0] + f * ys[1] + oh * ys[2] + ow * ys[3]];
                if (kind == ConvKind::Forward)
                  yv += xv * wv;
                else if (kind == ConvKind::BackwardData)
                  xv += wv * yv;
                else
                  wv += xv * yv;
              }
}

/// A 1x1 window with stride s > 1 and no padding reads every s-th row and
/// column of the image: the same convolution as a 1x1 window with stride 1
/// over the subsampled view (the image's strides times s, its extents the
/// output's). Rewrites `p` so for the calls that read the image (forward,
/// filter gradient), whose libraries run unit strides on a faster path;
/// the data gradient writes every element of the image, and is left alone.
/// Only where the strides tile the image (oh * sh <= h, and for the
/// columns): otherwise the view's last row would span past the image's
/// extent, which oneDNN's check of strides rejects as overlapping (an
/// image of 31 rows with stride 2). Returns whether `p` changed.
inline bool subsampleUnitWindow(ConvKind kind, ConvProblem &p) {
  if (kind == ConvKind::BackwardData || p.kh != 1 || p.kw != 1 || p.padH != 0 ||
      p.padW != 0 || (p.strideH == 1 && p.strideW == 1) ||
      p.oh * p.strideH > p.h || p.ow * p.strideW > p.w)
    return false;
  p.xStrides[2] *= p.strideH;
  p.xStrides[3] *= p.strideW;
  p.h = p.oh, p.w = p.ow;
  p.strideH = p.strideW = 1;
  return true;
}

/// The profile's name of a convolution call: the runtime entry point and
/// the problem's batch, channels, image, filters, window, stride, pad,
/// groups and, when it accumulates, beta.
inline std::string describeConv(const char *entry, const ConvProblem &p) {
  char text[224];
  int length = std::snprintf(
      text, sizeof(text), "%s n=%ld c=%ld %ldx%ld f=%ld %ldx%ld/%ld pad %ld",
      entry, long(p.n), long(p.c), long(p.h), long(p.w), long(p.f), long(p.kh),
      long(p.kw), long(p.strideH), long(p.padH));
  if (p.groups != 1 && length > 0 && size_t(length) < sizeof(text))
    length += std::snprintf(text + length, sizeof(text) - length, " groups=%ld",
                            long(p.groups));
  if (p.beta != 0.0f && length > 0 && size_t(length) < sizeof(text))
    std::snprintf(text + length, sizeof(text) - length, " beta=1");
  return text;
}

} // namespace gpu
} // namespace tofu

/// Defines the three tofu_gpu_conv2d_* entry points of a runtime as calls
/// of `run(const char *entry, tofu::gpu::ConvKind, tofu::gpu::ConvProblem)`.
#define TOFU_GPU_DEFINE_CONV2D_ENTRY_POINTS(run)                               \
  extern "C" void tofu_gpu_conv2d_forward(TOFU_CONV2D_PARAMS) {            \
    run(__func__, tofu::gpu::ConvKind::Forward,                                \
        tofu::gpu::getConvProblem(TOFU_CONV2D_ARGS));                      \
  }                                                                            \
  extern "C" void tofu_gpu_conv2d_backward_data(TOFU_CONV2D_PARAMS) {      \
    run(__func__, tofu::gpu::ConvKind::BackwardData,                           \
        tofu::gpu::getConvProblem(TOFU_CONV2D_ARGS));                      \
  }                                                                            \
  extern "C" void tofu_gpu_conv2d_backward_filter(TOFU_CONV2D_PARAMS) {    \
    run(__func__, tofu::gpu::ConvKind::BackwardFilter,                         \
        tofu::gpu::getConvProblem(TOFU_CONV2D_ARGS));                      \
  }

#endif // TOFU_RUNTIME_CONVPLAN_H
