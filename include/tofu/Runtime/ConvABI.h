//===- ConvABI.h - The arguments of the convolution calls -------*- C -*-===//
//
// The parameter list that convert-tofu-to-cpu and convert-tofu-to-gpu pass
// to a runtime's convolution entry points (lib/Conversion/LibraryCalls),
// shared by the CPU and CUDA runtimes' headers. Plain C.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CONVABI_H
#define TOFU_RUNTIME_CONVABI_H

#include <stdint.h>

/// The parameters of every runtime's three convolution entry points
/// (tofu_cpu_conv2d_* on oneDNN, tofu_gpu_conv2d_* on cuDNN): a 2-D
/// convolution with dilation 1 and zero padding (ConvPlan.h) in `groups`
/// groups,
///   Y[n, f, oh, ow] = sum_{c, kh, kw} X[n, g * c / groups + c,
///                                       oh * strideH + kh - padH,
///                                       ow * strideW + kw - padW]
///                                     * W[f, c, kh, kw]
/// with g = f / (f / groups) the group of filter f, c < c / groups and X
/// zero outside its extents, on an image X (n x c x h x w), a filter W
/// (f x c / groups x kh x kw, packed) and an output Y (n x f x oh x ow),
/// each given by the address of its first element and its strides in
/// elements (any positive ones for X and Y). The padding is the same on
/// both sides of a dimension (cuDNN's) and smaller than the kernel. The
/// written tensor becomes the sum plus `beta` times its old value; `beta`
/// is 0 or 1. A 1-D convolution is the case h = kh = oh = 1, padH = 0; a
/// depthwise one the case groups = c = f; an ordinary one groups = 1.
#define TOFU_CONV2D_PARAMS                                                     \
  intptr_t n, intptr_t c, intptr_t h, intptr_t w, intptr_t f, intptr_t groups, \
      intptr_t kh, intptr_t kw, intptr_t oh, intptr_t ow, intptr_t strideH,    \
      intptr_t strideW, intptr_t padH, intptr_t padW, intptr_t x, intptr_t xN, \
      intptr_t xC, intptr_t xH, intptr_t xW, intptr_t filter, intptr_t wF,     \
      intptr_t wC, intptr_t wH, intptr_t wW, intptr_t y, intptr_t yN,          \
      intptr_t yF, intptr_t yH, intptr_t yW, float beta

/// The parameters of TOFU_CONV2D_PARAMS as arguments, for forwarding.
#define TOFU_CONV2D_ARGS                                                       \
  n, c, h, w, f, groups, kh, kw, oh, ow, strideH, strideW, padH, padW, x, xN,  \
      xC, xH, xW, filter, wF, wC, wH, wW, y, yN, yF, yH, yW, beta

#endif // TOFU_RUNTIME_CONVABI_H
