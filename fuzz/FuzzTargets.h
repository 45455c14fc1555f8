//===- FuzzTargets.h - The checks of the fuzz targets -----------*- C++ -*-===//
//
// What each fuzz target does with one input. The libFuzzer targets in this
// directory call these, and so does the FuzzRegressionTest unit test, which
// feeds them the inputs kept in fuzz/regressions/ so that every input that
// once failed is checked by the ordinary test suite too. A failed check
// aborts, as libFuzzer expects.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_FUZZ_FUZZTARGETS_H
#define TOFU_FUZZ_FUZZTARGETS_H

#include "tofu/PlanIO/PlanIO.h"
#include "tofu/Runtime/SafeTensors.h"
#include "tofu/TDL/TDL.h"
#include "tofu/TDL/TDLLibrary.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tofu {
namespace fuzz {

inline std::shared_ptr<const tdl::OpDesc> parseOrDie(const char *text) {
  tdl::ParseError error;
  std::optional<tdl::OpDesc> desc = tdl::parse(text, error);
  if (!desc) {
    std::fprintf(stderr, "invalid description '%s': %s\n", text,
                 error.message.c_str());
    std::abort();
  }
  return std::make_shared<const tdl::OpDesc>(std::move(*desc));
}

/// y = relu(x * w1 + b) * w2, with x 8x16, w1 16x8, b 8 and w2 8x4.
inline Graph makeFuzzGraph() {
  Graph g;
  auto tensor = [&](const char *name, Shape shape, TensorRole role) {
    TensorNode t;
    t.name = name;
    t.shape = std::move(shape);
    t.role = role;
    g.tensors.push_back(std::move(t));
    return (int)g.tensors.size() - 1;
  };
  auto op = [&](const char *name, const char *desc, std::vector<int> inputs,
                const char *out, Shape outShape) {
    int t = tensor(out, outShape, TensorRole::Activation);
    g.tensors[t].producer = g.ops.size();
    OpNode node;
    node.name = name;
    node.desc = parseOrDie(desc);
    node.inputs = inputs;
    node.outputs = {t};
    for (int i : inputs)
      node.shapes.inputs.push_back(g.tensors[i].shape);
    node.shapes.outputs.push_back(outShape);
    g.ops.push_back(std::move(node));
    return t;
  };
  int x = tensor("%x", {8, 16}, TensorRole::Input);
  int w1 = tensor("%w1", {16, 8}, TensorRole::Weight);
  int b = tensor("%b", {8}, TensorRole::Weight);
  int w2 = tensor("%w2", {8, 4}, TensorRole::Weight);
  int h = op("linalg.matmul", "(i, j) = sum(k) A[i, k] * B[k, j]", {x, w1},
             "%h", {8, 8});
  int hb = op("linalg.add", "(i, j) = A[i, j] + b[j]", {h, b}, "%hb", {8, 8});
  int r = op("linalg.relu", "(i, j) = max(A[i, j], 0.0)", {hb}, "%r", {8, 8});
  op("linalg.matmul", "(i, j) = sum(k) A[i, k] * B[k, j]", {r, w2}, "%y",
     {8, 4});
  std::string error = g.finalize();
  if (!error.empty()) {
    std::fprintf(stderr, "invalid fuzz graph: %s\n", error.c_str());
    std::abort();
  }
  return g;
}

/// Parses a TDL description. One that parses must print to text that parses
/// back to the same description; one that does not must say why.
inline void checkTDLParse(const std::string &text) {
  tdl::ParseError error;
  std::optional<tdl::OpDesc> desc = tdl::parse(text, error);
  if (!desc) {
    if (error.message.empty() || error.position > text.size()) {
      std::fprintf(stderr, "parse failed without a valid error\n");
      std::abort();
    }
    return;
  }
  (void)desc->getLoopVars();
  (void)desc->isElementwise();
  std::string printed = desc->str();
  tdl::ParseError again;
  std::optional<tdl::OpDesc> reparsed = tdl::parse(printed, again);
  if (!reparsed || !(*reparsed == *desc)) {
    std::fprintf(stderr, "the printed form '%s' does not parse back: %s\n",
                 printed.c_str(),
                 reparsed ? "different" : again.message.c_str());
    std::abort();
  }
}

/// Parses a .tdl library and instantiates each of its entries with shapes
/// of ranks 0 to 4.
inline void checkTDLLibrary(const std::string &text) {
  std::string error;
  std::optional<tdl::Library> lib = tdl::Library::parse(text, error);
  if (!lib) {
    if (error.empty()) {
      std::fprintf(stderr, "library parse failed without an error\n");
      std::abort();
    }
    return;
  }
  for (const std::string &name : lib->getOpNames()) {
    const tdl::LibraryEntry *entry = lib->lookup(name);
    if (!entry)
      std::abort();
    for (int64_t rank = 0; rank <= 4; ++rank) {
      tdl::OpContext context;
      context.attribute = [rank](const std::string &) {
        return std::optional<int64_t>(rank);
      };
      std::vector<int64_t> shape(rank, 4);
      context.operandShapes = {shape, shape, shape};
      context.resultShapes = {shape};
      std::string instError;
      if (auto desc = tdl::Library::instantiate(*entry, context, instError))
        (void)desc->str();
      else if (instError.empty())
        std::abort();
    }
  }
}

/// Imports a plan for makeFuzzGraph(). A plan that imports must export,
/// report and draw, and its export must import again.
inline void checkPlanJSON(const std::string &text) {
  static const Graph graph = makeFuzzGraph();
  std::string error;
  std::optional<Plan> plan = readPlanJSON(graph, text, error);
  if (!plan) {
    if (error.empty()) {
      std::fprintf(stderr, "plan import failed without an error\n");
      std::abort();
    }
    return;
  }
  std::string json = writePlanJSON(graph, *plan);
  (void)formatPlanReport(graph, *plan);
  (void)drawPlanSVG(graph, *plan);
  std::string again;
  if (!readPlanJSON(graph, json, again)) {
    std::fprintf(stderr, "an exported plan does not import: %s\n",
                 again.c_str());
    std::abort();
  }
}

/// Parses a safetensors file. One that does not parse must say why. One
/// that parses must verify, read every tensor whole (equal to its bytes in
/// the file) and in boxes, and lay out again to a header that parses back
/// to the same tensors and metadata.
inline void checkSafeTensors(const std::string &text) {
  namespace st = safetensors;
  // An exactly sized copy, so that AddressSanitizer sees any read past it.
  std::vector<uint8_t> bytesOfFile(text.begin(), text.end());
  const uint8_t *data = bytesOfFile.data();
  st::Header header;
  std::string error;
  if (!st::parseHeader(data, text.size(), header, error)) {
    if (error.empty()) {
      std::fprintf(stderr, "safetensors parse failed without an error\n");
      std::abort();
    }
    return;
  }
  if (!header.verify(text.size(), error)) {
    std::fprintf(stderr, "a parsed header does not verify: %s\n",
                 error.c_str());
    std::abort();
  }
  std::vector<st::TensorSpec> specs;
  for (const st::TensorInfo &t : header.tensors) {
    specs.push_back({t.name, t.dtype, t.shape});
    size_t rank = t.shape.size();
    uint64_t bytes = t.end - t.begin;
    std::vector<int64_t> zeros(rank, 0), strides(rank, 1);
    if (bytes == 0) {
      if (!st::readTile(data, text.size(), header, t, zeros, t.shape, nullptr,
                        zeros, error)) {
        std::fprintf(stderr, "empty tensor '%s' does not read: %s\n",
                     t.name.c_str(), error.c_str());
        std::abort();
      }
      continue;
    }
    for (size_t d = rank; d-- > 1;)
      strides[d - 1] = strides[d] * t.shape[d];
    std::vector<uint8_t> whole(bytes + 1);
    if (!st::readTile(data, text.size(), header, t, zeros, t.shape,
                      whole.data(), strides, error) ||
        std::memcmp(whole.data(), data + header.dataStart + t.begin, bytes)) {
      std::fprintf(stderr, "tensor '%s' does not read whole: %s\n",
                   t.name.c_str(), error.c_str());
      std::abort();
    }
    // The upper half of every dimension, into a reversed (negative
    // stride) buffer, compared element by element with the whole tensor.
    std::vector<int64_t> lo(rank), sizes(rank), boxStrides(rank);
    uint64_t count = 1;
    for (size_t d = rank; d-- > 0;) {
      lo[d] = t.shape[d] / 2;
      sizes[d] = t.shape[d] - lo[d];
      boxStrides[d] = -int64_t(count);
      count *= uint64_t(sizes[d]);
    }
    size_t es = st::getDTypeSize(t.dtype);
    std::vector<uint8_t> box(count * es);
    if (!st::readTile(data, text.size(), header, t, lo, sizes,
                      box.data() + (count - 1) * es, boxStrides, error)) {
      std::fprintf(stderr, "tensor '%s': a box does not read: %s\n",
                   t.name.c_str(), error.c_str());
      std::abort();
    }
    std::vector<int64_t> index(rank, 0);
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t at = 0;
      for (size_t d = 0; d < rank; ++d)
        at += uint64_t(lo[d] + index[d]) * uint64_t(strides[d]);
      if (std::memcmp(box.data() + (count - 1 - i) * es, whole.data() + at * es,
                      es)) {
        std::fprintf(stderr, "tensor '%s': a box reads other values\n",
                     t.name.c_str());
        std::abort();
      }
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < sizes[d])
          break;
        index[d] = 0;
      }
    }
    // A box past the end must be refused.
    std::vector<int64_t> past = zeros;
    if (rank > 0) {
      past[0] = t.shape[0];
      std::vector<int64_t> one(rank, 1);
      if (st::readTile(data, text.size(), header, t, past, one, box.data(),
                       strides, error)) {
        std::fprintf(stderr, "tensor '%s': a box past the end reads\n",
                     t.name.c_str());
        std::abort();
      }
    }
  }
  st::Layout layout;
  if (!st::layoutHeader(specs, header.metadata, layout, error)) {
    std::fprintf(stderr, "a parsed header does not lay out: %s\n",
                 error.c_str());
    std::abort();
  }
  std::string file = layout.prefix;
  file.resize(layout.fileSize, '\0');
  st::Header again;
  if (!st::parseHeader(reinterpret_cast<const uint8_t *>(file.data()),
                       file.size(), again, error) ||
      again.tensors.size() != header.tensors.size() ||
      again.metadata != header.metadata || again.dataStart % 8 != 0) {
    std::fprintf(stderr, "a laid-out header does not parse back: %s\n",
                 error.c_str());
    std::abort();
  }
  for (const st::TensorInfo &t : header.tensors) {
    const st::TensorInfo *u = again.find(t.name);
    if (!u || u->dtype != t.dtype || u->shape != t.shape ||
        u->end - u->begin != t.end - t.begin ||
        u->begin % st::getDTypeSize(u->dtype) != 0) {
      std::fprintf(stderr, "tensor '%s' lays out differently\n",
                   t.name.c_str());
      std::abort();
    }
  }
}

} // namespace fuzz
} // namespace tofu

#endif // TOFU_FUZZ_FUZZTARGETS_H
