//===- Coarsening.cpp - Grouping the graph for the DP (Tofu §5.1) ---------===//

#include "tofu/Partition/Coarsening.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <set>

using namespace tofu;

namespace {

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(size_t n) : parent(n) {
    std::iota(parent.begin(), parent.end(), 0);
  }
  int find(int x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  }
  bool unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b)
      return false;
    parent[std::max(a, b)] = std::min(a, b);
    return true;
  }
};

std::string shapeKey(const Shape &s) {
  std::string r;
  for (int64_t d : s)
    r += std::to_string(d) + "x";
  return r;
}

class Coarsener {
public:
  Coarsener(const Graph &graph, const CoarsenOptions &options)
      : graph(graph), options(options), uf(graph.ops.size()) {}

  CoarseGraph run();

private:
  bool isForward(int o) const {
    const OpNode &op = graph.ops[o];
    return !op.backward && !op.gradientAccumulation && op.updateOf < 0;
  }
  /// Description identity plus shapes: equal keys mean identical strategy
  /// sets.
  std::string opKey(int o);
  /// The key under which an operator is tied to others in its node.
  std::string tieKey(int o);
  void mergeElementwise();
  void mergeTimeSteps();
  unsigned nodeFor(const std::string &key, CoarseNode::Kind kind);
  unsigned slotFor(unsigned node, const std::string &key, bool isOp);

  const Graph &graph;
  const CoarsenOptions &options;
  UnionFind uf;
  std::map<const tdl::OpDesc *, unsigned> descIds;
  CoarseGraph cg;
  std::map<std::string, unsigned> nodeIds;
  std::map<std::pair<unsigned, std::string>, unsigned> slotIds;
};

std::string Coarsener::opKey(int o) {
  const OpNode &op = graph.ops[o];
  auto [it, inserted] = descIds.try_emplace(op.desc.get(), descIds.size());
  std::string key = std::to_string(it->second) + ":";
  for (const Shape &s : op.shapes.inputs)
    key += shapeKey(s) + ",";
  for (const Shape &s : op.shapes.outputs)
    key += shapeKey(s) + ",";
  return key;
}

std::string Coarsener::tieKey(int o) {
  const OpNode &op = graph.ops[o];
  std::string phase = op.backward || op.gradientAccumulation ? "b" : "f";
  if (op.desc->isElementwise() && !op.shapes.outputs.empty())
    return phase + "ew:" + shapeKey(op.shapes.outputs.front());
  if (op.backward && op.forwardOf >= 0)
    return phase + opKey(op.forwardOf) + "/" + opKey(o);
  return phase + opKey(o);
}

void Coarsener::mergeElementwise() {
  for (size_t a = 0; a < graph.ops.size(); ++a) {
    const OpNode &op = graph.ops[a];
    if (!isForward(a) || !op.desc->isElementwise())
      continue;
    for (int t : op.outputs) {
      // Only chains: a value that forks (a residual connection) ends the
      // chain, or merging would tie whole stages of a network together.
      if (t < 0 || graph.users[t].size() != 1)
        continue;
      for (auto [b, j] : graph.users[t]) {
        const OpNode &user = graph.ops[b];
        if (isForward(b) && user.desc->isElementwise() &&
            user.shapes.outputs == op.shapes.outputs && uf.unite(a, b))
          ++cg.mergedElementwise;
      }
    }
  }
}

void Coarsener::mergeTimeSteps() {
  std::deque<std::pair<int, int>> work;
  std::set<std::pair<int, int>> seen;
  auto push = [&](int a, int b) {
    if (a == b || !isForward(a) || !isForward(b) || opKey(a) != opKey(b))
      return;
    if (seen.insert({std::min(a, b), std::max(a, b)}).second)
      work.push_back({a, b});
  };
  // Seeds: operators reading the same weight at the same position.
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    if (graph.tensors[t].role != TensorRole::Weight)
      continue;
    std::map<std::string, std::vector<int>> byPosition;
    for (auto [o, j] : graph.users[t])
      if (isForward(o))
        byPosition[std::to_string(j) + "@" + opKey(o)].push_back(o);
    for (auto &[key, ops] : byPosition)
      for (size_t i = 1; i < ops.size(); ++i)
        push(ops[0], ops[i]);
  }
  // Lock step: users at the same position with the same key, and producers
  // of the same input.
  auto uniqueUsers = [&](int t) {
    std::map<std::string, std::vector<int>> out;
    for (auto [o, j] : graph.users[t])
      if (isForward(o))
        out[std::to_string(j) + "@" + opKey(o)].push_back(o);
    return out;
  };
  while (!work.empty()) {
    auto [a, b] = work.front();
    work.pop_front();
    if (uf.unite(a, b))
      ++cg.mergedTimeSteps;
    const OpNode &x = graph.ops[a], &y = graph.ops[b];
    for (size_t r = 0; r < x.outputs.size(); ++r) {
      if (x.outputs[r] < 0 || y.outputs[r] < 0)
        continue;
      auto ux = uniqueUsers(x.outputs[r]), uy = uniqueUsers(y.outputs[r]);
      for (auto &[key, ops] : ux) {
        auto it = uy.find(key);
        if (ops.size() == 1 && it != uy.end() && it->second.size() == 1)
          push(ops[0], it->second[0]);
      }
    }
    for (size_t j = 0; j < x.inputs.size(); ++j) {
      if (x.inputs[j] < 0 || y.inputs[j] < 0 || x.inputs[j] == y.inputs[j])
        continue;
      int px = graph.tensors[x.inputs[j]].producer;
      int py = graph.tensors[y.inputs[j]].producer;
      if (px >= 0 && py >= 0)
        push(px, py);
    }
  }
}

unsigned Coarsener::nodeFor(const std::string &key, CoarseNode::Kind kind) {
  auto [it, inserted] = nodeIds.try_emplace(key, cg.nodes.size());
  if (inserted)
    cg.nodes.push_back({kind, {}});
  return it->second;
}

unsigned Coarsener::slotFor(unsigned node, const std::string &key, bool isOp) {
  auto [it, inserted] = slotIds.try_emplace({node, key}, cg.slots.size());
  if (inserted) {
    cg.slots.push_back({isOp, {}});
    cg.slotNode.push_back(node);
    cg.nodes[node].slots.push_back(it->second);
  }
  return it->second;
}

CoarseGraph Coarsener::run() {
  if (options.mergeElementwise)
    mergeElementwise();
  if (options.mergeTimeSteps)
    mergeTimeSteps();

  size_t numOps = graph.ops.size(), numTensors = graph.tensors.size();
  cg.opSlot.assign(numOps, 0);
  cg.tensorSlot.assign(numTensors, 0);
  std::vector<bool> tensorDone(numTensors, false);

  // The class of a forward tensor: its own index for arguments, or its
  // producer's class and tie key plus the result number.
  std::vector<std::string> tensorClass(numTensors);
  for (size_t t = 0; t < numTensors; ++t) {
    const TensorNode &tn = graph.tensors[t];
    if (tn.producer >= 0 && isForward(tn.producer)) {
      int p = tn.producer;
      size_t r = std::find(graph.ops[p].outputs.begin(),
                           graph.ops[p].outputs.end(), (int)t) -
                 graph.ops[p].outputs.begin();
      tensorClass[t] = "c" + std::to_string(uf.find(p)) + "/" + tieKey(p) +
                       "#" + std::to_string(r);
    } else {
      tensorClass[t] = "t" + std::to_string(t);
    }
  }

  auto placeTensor = [&](int t, unsigned node, const std::string &key) {
    unsigned s = slotFor(node, key, false);
    cg.slots[s].members.push_back(t);
    cg.tensorSlot[t] = s;
    tensorDone[t] = true;
  };

  // The backward operators of one forward operator are numbered per tie
  // key, so that two of them with equal shapes (the fills of two gradient
  // accumulators) keep slots of their own; the i-th of each key is tied
  // across merged time steps.
  std::map<std::pair<int, std::string>, unsigned> backwardSeen;
  // Operators, in program order so that node numbers follow the program.
  for (size_t o = 0; o < numOps; ++o) {
    const OpNode &op = graph.ops[o];
    unsigned node;
    std::string key = tieKey(o);
    if (isForward(o)) {
      node = nodeFor("op" + std::to_string(uf.find(o)), CoarseNode::Kind::Op);
    } else if (options.groupBackward && op.backward && op.forwardOf >= 0 &&
               !op.gradientAccumulation) {
      node = nodeFor("op" + std::to_string(uf.find(op.forwardOf)),
                     CoarseNode::Kind::Op);
      key += "#" + std::to_string(backwardSeen[{op.forwardOf, key}]++);
    } else if (options.groupBackward && op.gradientAccumulation &&
               !op.outputs.empty() && op.outputs[0] >= 0 &&
               graph.tensors[op.outputs[0]].gradientOf >= 0) {
      int of = graph.tensors[op.outputs[0]].gradientOf;
      node = nodeFor("tensor" + tensorClass[of], CoarseNode::Kind::Tensor);
      key = "accum:" + key;
    } else if (options.groupBackward && op.updateOf >= 0) {
      node = nodeFor("opt" + std::to_string(op.updateOf),
                     CoarseNode::Kind::Optimizer);
    } else {
      node = nodeFor("alone" + std::to_string(o), CoarseNode::Kind::Op);
      key = "self";
    }
    if (!options.mergeElementwise && !options.mergeTimeSteps &&
        !options.groupBackward)
      key = "op" + std::to_string(o);
    unsigned s = slotFor(node, key, true);
    cg.slots[s].members.push_back(o);
    cg.opSlot[o] = s;
  }

  // Tensors: forward tensors by class, gradients with their tensor, state
  // with its optimizer, everything else with its producer.
  for (size_t t = 0; t < numTensors; ++t) {
    const TensorNode &tn = graph.tensors[t];
    bool forward = tn.gradientOf < 0 &&
                   (tn.producer < 0 ? tn.stateOf < 0 : isForward(tn.producer));
    if (!options.groupBackward && !options.mergeTimeSteps &&
        !options.mergeElementwise) {
      placeTensor(
          t, nodeFor("tensor" + std::to_string(t), CoarseNode::Kind::Tensor),
          "self");
      continue;
    }
    if (forward) {
      placeTensor(t,
                  nodeFor("tensor" + tensorClass[t], CoarseNode::Kind::Tensor),
                  "value");
    } else if (options.groupBackward && tn.gradientOf >= 0) {
      placeTensor(t,
                  nodeFor("tensor" + tensorClass[tn.gradientOf],
                          CoarseNode::Kind::Tensor),
                  "grad:" + shapeKey(tn.shape));
    } else if (options.groupBackward && tn.producer < 0 && tn.stateOf >= 0) {
      placeTensor(t,
                  nodeFor("opt" + std::to_string(tn.stateOf),
                          CoarseNode::Kind::Optimizer),
                  "state:" + shapeKey(tn.shape));
    } else if (tn.producer >= 0) {
      unsigned ps = cg.opSlot[tn.producer];
      size_t r = std::find(graph.ops[tn.producer].outputs.begin(),
                           graph.ops[tn.producer].outputs.end(), (int)t) -
                 graph.ops[tn.producer].outputs.begin();
      placeTensor(t, cg.slotNode[ps],
                  "out" + std::to_string(ps) + "#" + std::to_string(r));
    } else {
      placeTensor(
          t, nodeFor("tensor" + std::to_string(t), CoarseNode::Kind::Tensor),
          "self");
    }
  }
  return cg;
}

} // namespace

CoarseGraph tofu::coarsen(const Graph &graph, const CoarsenOptions &options) {
  return Coarsener(graph, options).run();
}

std::string CoarseGraph::str(const Graph &graph) const {
  unsigned opNodes = 0;
  for (const CoarseNode &n : nodes)
    opNodes += n.kind == CoarseNode::Kind::Op;
  std::string out = "coarse graph: " + std::to_string(graph.ops.size()) +
                    " ops, " + std::to_string(graph.tensors.size()) +
                    " tensors -> " + std::to_string(nodes.size()) + " nodes (" +
                    std::to_string(opNodes) + " op groups), " +
                    std::to_string(slots.size()) + " slots; merged " +
                    std::to_string(mergedElementwise) + " element-wise, " +
                    std::to_string(mergedTimeSteps) + " time-step\n";
  for (size_t n = 0; n < nodes.size(); ++n) {
    const CoarseNode &node = nodes[n];
    const char *kind = node.kind == CoarseNode::Kind::Op       ? "ops"
                       : node.kind == CoarseNode::Kind::Tensor ? "tensors"
                                                               : "optimizer";
    out += "node " + std::to_string(n) + " " + kind + ":";
    for (unsigned s : node.slots) {
      const CoarseSlot &slot = slots[s];
      out += " {";
      if (slot.isOp) {
        std::map<std::string, unsigned> names;
        for (int o : slot.members)
          ++names[graph.ops[o].name];
        bool first = true;
        for (auto &[name, count] : names) {
          out += (first ? "" : " ") + name;
          if (count > 1)
            out += " x" + std::to_string(count);
          first = false;
        }
      } else {
        out += graph.tensors[slot.members.front()].name;
        if (slot.members.size() > 1)
          out += " x" + std::to_string(slot.members.size());
      }
      out += "}";
    }
    out += "\n";
  }
  return out;
}
