//===- Convolutions.cpp - f32 convolutions through oneDNN -----------------===//
//
// The tofu_cpu_conv2d_* entry points (include/tofu/Runtime/TofuRuntime.h):
// the convolutions that convert-tofu-to-cpu emits, with the ABI and the
// checks of the GPU backend's (ConvPlan.h), computed by oneDNN's
// convolution primitives on the image, filter and output in place (oneDNN
// memory descriptors take their strides; where the primitive prefers one
// of oneDNN's blocked layouts, reorders copy into and out of it). Each
// distinct problem creates its primitive, reorders and buffers once and
// reuses them in every later step; a call that accumulates (beta = 1) adds
// its result to the written tensor in the reorder out of the primitive.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/ConvPlan.h"
#include "tofu/Runtime/TofuRuntime.h"

#include "Profile.h"
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

// The engine and the primitives live as long as the process: they are
// never destroyed, so that no static destructor at exit frees one before
// another that refers to it (and LeakSanitizer still finds them reachable).
// Each rank has its own: an in-process worker (Workers.h) sets its own
// OpenMP threads, and a stream or a primitive's memory is not shared
// between threads.
Engine &getEngine() { return getThreadObject<Engine>(); }

/// One tensor of a convolution: the caller's memory (its strides, the
/// data handle set at each call) and, when the primitive wants another
/// layout (oneDNN's blocked formats, which its fast kernels take) or the
/// call accumulates, the primitive's own memory and the reorder between
/// them.
struct Operand {
  dnnl_memory_t user = nullptr, inner = nullptr;
  /// user -> inner before the convolution (read tensors), or inner -> user
  /// after it (the written tensor, with a sum post-op when beta = 1).
  dnnl_primitive_t reorder = nullptr;
};

/// One problem's convolution primitive and its three tensors.
struct Convolution {
  dnnl_primitive_t primitive = nullptr;
  /// X, W and Y in the order of the ABI; `written` is the one computed.
  Operand operands[3];
  int written = 0;
  /// The execution argument of each operand for the primitive.
  int args[3] = {0, 0, 0};
};

/// A tensor's sizes and strides as oneDNN takes them: 4 dimensions, or 5
/// for a grouped filter (groups, filters and channels per group, KH, KW).
struct Shape {
  int rank = 4;
  intptr_t sizes[5] = {0, 0, 0, 0, 0}, strides[5] = {0, 0, 0, 0, 0};
};

Shape getShape(const intptr_t sizes[4], const intptr_t strides[4]) {
  Shape s;
  std::copy(sizes, sizes + 4, s.sizes);
  std::copy(strides, strides + 4, s.strides);
  return s;
}

/// The filter of a grouped problem: its filters dimension split into the
/// groups and the filters of a group.
Shape getGroupedFilterShape(const ConvProblem &p) {
  intptr_t sizes[4];
  p.getWSizes(sizes);
  intptr_t perGroup = p.f / p.groups;
  Shape s;
  s.rank = 5;
  intptr_t grouped[5] = {p.groups, perGroup, sizes[1], sizes[2], sizes[3]};
  intptr_t steps[5] = {p.wStrides[0] * perGroup, p.wStrides[0], p.wStrides[1],
                       p.wStrides[2], p.wStrides[3]};
  std::copy(grouped, grouped + 5, s.sizes);
  std::copy(steps, steps + 5, s.strides);
  return s;
}

dnnl_memory_desc_t describe(const Shape &s) {
  dnnl_dims_t dims, steps;
  for (int d = 0; d < s.rank; ++d)
    dims[d] = s.sizes[d], steps[d] = s.strides[d];
  dnnl_memory_desc_t md;
  if (dnnl_memory_desc_init_by_strides(&md, s.rank, dims, dnnl_f32, steps) !=
      dnnl_success) {
    std::string text = "oneDNN: dnnl_memory_desc_init_by_strides rejects "
                       "sizes";
    for (int d = 0; d < s.rank; ++d)
      text += (d ? "x" : " ") + std::to_string(s.sizes[d]);
    text += " with strides";
    for (int d = 0; d < s.rank; ++d)
      text += (d ? ", " : " ") + std::to_string(s.strides[d]);
    fatal(text.c_str());
  }
  return md;
}

/// A descriptor that lets the primitive choose the layout.
dnnl_memory_desc_t describeAny(const Shape &s) {
  dnnl_dims_t dims;
  for (int d = 0; d < s.rank; ++d)
    dims[d] = s.sizes[d];
  dnnl_memory_desc_t md;
  check(dnnl_memory_desc_init_by_tag(&md, s.rank, dims, dnnl_f32,
                                     dnnl_format_tag_any),
        "dnnl_memory_desc_init_by_tag");
  return md;
}

/// The padding after the last row (column) that makes oneDNN's output
/// extent, (in - kernel + before + after) / stride + 1 rounded down, equal
/// `out` = (in + 2 before - kernel) / stride + 1 (cuDNN's): the rows that
/// the last window reaches past the image, none when it stays inside.
intptr_t getPaddingAfter(intptr_t in, intptr_t kernel, intptr_t out,
                         intptr_t stride, intptr_t before) {
  return std::max<intptr_t>(0, (out - 1) * stride + kernel - in - before);
}

/// Sets up `o` for the caller's layout `user` and the primitive's `inner`.
void prepareOperand(Operand &o, const dnnl_memory_desc_t &user,
                    const dnnl_memory_desc_t &inner, bool written,
                    bool accumulate) {
  Engine &e = getEngine();
  check(dnnl_memory_create(&o.user, &user, e.engine, DNNL_MEMORY_NONE),
        "dnnl_memory_create");
  if (dnnl_memory_desc_equal(&user, &inner) && !(written && accumulate)) {
    o.inner = o.user;
    return;
  }
  check(dnnl_memory_create(&o.inner, &inner, e.engine, DNNL_MEMORY_ALLOCATE),
        "dnnl_memory_create");
  dnnl_primitive_attr_t attr = nullptr;
  if (written && accumulate) {
    // The reorder adds the result to the caller's tensor.
    dnnl_post_ops_t ops;
    check(dnnl_post_ops_create(&ops), "dnnl_post_ops_create");
    check(dnnl_post_ops_append_sum(ops, 1.0f), "dnnl_post_ops_append_sum");
    check(dnnl_primitive_attr_create(&attr), "dnnl_primitive_attr_create");
    check(dnnl_primitive_attr_set_post_ops(attr, ops),
          "dnnl_primitive_attr_set_post_ops");
    check(dnnl_post_ops_destroy(ops), "dnnl_post_ops_destroy");
  }
  dnnl_primitive_desc_t pd;
  const dnnl_memory_desc_t &from = written ? inner : user;
  const dnnl_memory_desc_t &to = written ? user : inner;
  check(dnnl_reorder_primitive_desc_create(&pd, &from, e.engine, &to,
                                           e.engine, attr),
        "dnnl_reorder_primitive_desc_create");
  check(dnnl_primitive_create(&o.reorder, pd), "dnnl_primitive_create");
  check(dnnl_primitive_desc_destroy(pd), "dnnl_primitive_desc_destroy");
  if (attr)
    check(dnnl_primitive_attr_destroy(attr), "dnnl_primitive_attr_destroy");
}

std::unique_ptr<Convolution> create(ConvKind kind, const ConvProblem &p) {
  Engine &e = getEngine();
  intptr_t sizes[3][4];
  p.getXSizes(sizes[0]);
  p.getWSizes(sizes[1]);
  p.getYSizes(sizes[2]);
  const intptr_t *strides[3] = {p.xStrides, p.wStrides, p.yStrides};
  Shape shapes[3];
  for (int i = 0; i < 3; ++i)
    shapes[i] = getShape(sizes[i], strides[i]);
  // oneDNN takes a grouped convolution's groups from its filter's leading
  // dimension.
  if (p.groups != 1)
    shapes[1] = getGroupedFilterShape(p);
  dnnl_memory_desc_t any[3];
  for (int i = 0; i < 3; ++i)
    any[i] = describeAny(shapes[i]);
  dnnl_dims_t steps = {p.strideH, p.strideW};
  dnnl_dims_t before = {p.padH, p.padW};
  dnnl_dims_t after = {
      getPaddingAfter(p.h, p.kh, p.oh, p.strideH, p.padH),
      getPaddingAfter(p.w, p.kw, p.ow, p.strideW, p.padW)};
  // The forward descriptor, also the hint of the backward ones.
  dnnl_convolution_desc_t forward;
  check(dnnl_convolution_forward_desc_init(
            &forward, dnnl_forward_training, dnnl_convolution_direct, &any[0],
            &any[1], nullptr, &any[2], steps, before, after),
        "dnnl_convolution_forward_desc_init");
  dnnl_primitive_desc_t forwardPd = nullptr, pd = nullptr;
  check(dnnl_primitive_desc_create(&forwardPd, &forward, nullptr, e.engine,
                                   nullptr),
        "dnnl_primitive_desc_create (forward)");
  // Per kind: the tensor written, and each tensor's execution argument
  // and the query of its layout, in the order X, W, Y.
  struct Roles {
    int written;
    int args[3];
    dnnl_query_t queries[3];
  };
  static const Roles kRoles[3] = {
      {2,
       {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
       {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md}},
      {0,
       {DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST},
       {dnnl_query_diff_src_md, dnnl_query_weights_md,
        dnnl_query_diff_dst_md}},
      {1,
       {DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST},
       {dnnl_query_src_md, dnnl_query_diff_weights_md,
        dnnl_query_diff_dst_md}}};
  const Roles &roles = kRoles[static_cast<int>(kind)];
  dnnl_convolution_desc_t backward;
  if (kind == ConvKind::BackwardData)
    check(dnnl_convolution_backward_data_desc_init(
              &backward, dnnl_convolution_direct, &any[0], &any[1], &any[2],
              steps, before, after),
          "dnnl_convolution_backward_data_desc_init");
  else if (kind == ConvKind::BackwardFilter)
    check(dnnl_convolution_backward_weights_desc_init(
              &backward, dnnl_convolution_direct, &any[0], &any[1], nullptr,
              &any[2], steps, before, after),
          "dnnl_convolution_backward_weights_desc_init");
  if (kind == ConvKind::Forward) {
    pd = forwardPd;
    forwardPd = nullptr;
  } else {
    check(dnnl_primitive_desc_create(&pd, &backward, nullptr, e.engine,
                                     forwardPd),
          "dnnl_primitive_desc_create (backward)");
  }
  auto c = std::make_unique<Convolution>();
  c->written = roles.written;
  std::copy(roles.args, roles.args + 3, c->args);
  const dnnl_query_t *queries = roles.queries;
  for (int i = 0; i < 3; ++i)
    prepareOperand(c->operands[i], describe(shapes[i]),
                   *dnnl_primitive_desc_query_md(pd, queries[i], 0),
                   i == c->written, p.beta != 0.0f);
  check(dnnl_primitive_create(&c->primitive, pd), "dnnl_primitive_create");
  check(dnnl_primitive_desc_destroy(pd), "dnnl_primitive_desc_destroy");
  if (forwardPd)
    check(dnnl_primitive_desc_destroy(forwardPd),
          "dnnl_primitive_desc_destroy");
  return c;
}

void runConv(const char *entry, ConvKind kind, ConvProblem p) {
  auto plan = [&] {
    std::string error = tofu::gpu::planConv(p);
    if (!error.empty())
      fatal((std::string(entry) + ": " + error).c_str());
  };
  plan();
  tofu::runtime::ProfiledCall call(tofu::gpu::OpClass::Dnnl, [&] {
    return tofu::gpu::describeConv(entry, p);
  });
  // A strided 1x1 window runs as a unit-stride one on the subsampled image,
  // which oneDNN computes on its faster 1x1 path (docs/cpu.md).
  if (tofu::gpu::subsampleUnitWindow(kind, p))
    plan();
  // The problem, strides and beta included, is the key.
  auto &cache = getThreadObject<
      std::map<tofu::gpu::ConvKey, std::unique_ptr<Convolution>>>();
  std::unique_ptr<Convolution> &c = cache[tofu::gpu::getConvKey(kind, p)];
  if (!c)
    c = create(kind, p);
  Engine &e = getEngine();
  intptr_t handles[3] = {p.x, p.filter, p.y};
  for (int i = 0; i < 3; ++i)
    check(dnnl_memory_set_data_handle(c->operands[i].user,
                                      reinterpret_cast<void *>(handles[i])),
          "dnnl_memory_set_data_handle");
  auto reorder = [&](const Operand &o, bool toUser) {
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, toUser ? o.inner : o.user},
                               {DNNL_ARG_TO, toUser ? o.user : o.inner}};
    check(dnnl_primitive_execute(o.reorder, e.stream, 2, args),
          "dnnl_primitive_execute (reorder)");
  };
  dnnl_exec_arg_t args[3];
  for (int i = 0; i < 3; ++i) {
    const Operand &o = c->operands[i];
    if (o.reorder && i != c->written)
      reorder(o, /*toUser=*/false);
    args[i] = {c->args[i], o.inner};
  }
  check(dnnl_primitive_execute(c->primitive, e.stream, 3, args),
        "dnnl_primitive_execute");
  const Operand &out = c->operands[c->written];
  if (out.reorder)
    reorder(out, /*toUser=*/true);
  check(dnnl_stream_wait(e.stream), "dnnl_stream_wait");
}

} // namespace

extern "C" {

void tofu_cpu_conv2d_forward(TOFU_CONV2D_PARAMS) {
  runConv(__func__, ConvKind::Forward,
          tofu::gpu::getConvProblem(TOFU_CONV2D_ARGS));
}
void tofu_cpu_conv2d_backward_data(TOFU_CONV2D_PARAMS) {
  runConv(__func__, ConvKind::BackwardData,
          tofu::gpu::getConvProblem(TOFU_CONV2D_ARGS));
}
void tofu_cpu_conv2d_backward_filter(TOFU_CONV2D_PARAMS) {
  runConv(__func__, ConvKind::BackwardFilter,
          tofu::gpu::getConvProblem(TOFU_CONV2D_ARGS));
}

} // extern "C"
