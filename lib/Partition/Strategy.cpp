//===- Strategy.cpp - Partition-n-reduce strategy discovery ---------------===//
//
// Shape inference over TDL descriptions and the two cases of Tofu's strategy
// discovery (section 4.2), evaluated with the symbolic interval analysis.
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/Strategy.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

using namespace tofu;
using namespace tofu::tdl;

int LoopSpace::lookup(const std::string &name) const {
  auto it = std::find(vars.begin(), vars.end(), name);
  return it == vars.end() ? -1 : int(it - vars.begin());
}

namespace {
/// One access `t[...]` in an output body.
struct Access {
  unsigned input;
  const Expr *expr;
};
} // namespace

static void collectAccesses(const Expr &e, const OpDesc &desc,
                            std::vector<Access> &out) {
  if (e.kind == Expr::Kind::Access) {
    auto it = std::find(desc.inputs.begin(), desc.inputs.end(), e.name);
    out.push_back({unsigned(it - desc.inputs.begin()), &e});
  }
  for (const Expr &o : e.operands)
    collectAccesses(o, desc, out);
}

static void collectUsedVars(const Expr &e, std::set<std::string> &used) {
  if (e.kind == Expr::Kind::Index)
    used.insert(e.name);
  for (const IndexExpr &i : e.indices) {
    std::vector<std::string> vars;
    i.collectVars(vars);
    used.insert(vars.begin(), vars.end());
  }
  for (const Expr &o : e.operands)
    collectUsedVars(o, used);
}

/// Output variables that an opaque function produces as a whole: those that
/// its arguments do not mention.
static void collectOpaqueVars(const Expr &e, const OutputDesc &out,
                              std::set<std::string> &opaque) {
  if (e.kind == Expr::Kind::Opaque) {
    std::set<std::string> used;
    collectUsedVars(e, used);
    for (const std::string &v : out.vars)
      if (!used.count(v))
        opaque.insert(v);
    return;
  }
  for (const Expr &o : e.operands)
    collectOpaqueVars(o, out, opaque);
}

/// An affine form sum(coeff * var) + constant, when the expression is one.
struct LinearForm {
  std::map<std::string, int64_t> coeffs;
  int64_t constant = 0;
};

static std::optional<LinearForm> linearize(const IndexExpr &e) {
  LinearForm f;
  switch (e.kind) {
  case IndexExpr::Kind::Var:
    f.coeffs[e.var] = 1;
    return f;
  case IndexExpr::Kind::Const:
    f.constant = e.value;
    return f;
  case IndexExpr::Kind::Add:
  case IndexExpr::Kind::Sub: {
    auto l = linearize(e.operands[0]), r = linearize(e.operands[1]);
    if (!l || !r)
      return std::nullopt;
    auto combine = [&](int64_t a, int64_t b) {
      return e.kind == IndexExpr::Kind::Add ? llvm::checkedAdd(a, b)
                                            : llvm::checkedSub(a, b);
    };
    for (auto &[v, c] : r->coeffs) {
      std::optional<int64_t> sum = combine(l->coeffs[v], c);
      if (!sum)
        return std::nullopt; // Overflow: not a form the model represents.
      l->coeffs[v] = *sum;
    }
    std::optional<int64_t> constant = combine(l->constant, r->constant);
    if (!constant)
      return std::nullopt;
    l->constant = *constant;
    return l;
  }
  case IndexExpr::Kind::Mul: {
    auto l = linearize(e.operands[0]), r = linearize(e.operands[1]);
    if (!l || !r)
      return std::nullopt;
    if (!l->coeffs.empty())
      std::swap(l, r);
    if (!l->coeffs.empty())
      return std::nullopt;
    for (auto &[v, c] : r->coeffs) {
      std::optional<int64_t> product = llvm::checkedMul(c, l->constant);
      if (!product)
        return std::nullopt;
      c = *product;
    }
    std::optional<int64_t> constant = llvm::checkedMul(r->constant, l->constant);
    if (!constant)
      return std::nullopt;
    r->constant = *constant;
    return r;
  }
  default:
    return std::nullopt;
  }
}

static std::string shapeStr(const Shape &s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "x" : "") + std::to_string(s[i]);
  return r.empty() ? "scalar" : r;
}

bool tofu::checkAccessBounds(const OpDesc &desc, const OpShapes &shapes,
                             const LoopSpace &space, std::string &error) {
  std::vector<Access> accesses;
  for (const OutputDesc &out : desc.outputs)
    collectAccesses(out.body, desc, accesses);
  unsigned n = space.vars.size();
  std::vector<SymbolicInterval> env;
  for (unsigned v = 0; v < n; ++v) {
    if (space.extents[v] <= 0)
      return true; // An empty loop space reads nothing.
    env.push_back(SymbolicInterval::constantRange(
        n, Rational(0), Rational(space.extents[v] - 1)));
  }
  for (const Access &a : accesses) {
    const Shape &shape = shapes.inputs[a.input];
    for (size_t d = 0; d < shape.size(); ++d) {
      std::string unused;
      std::optional<SymbolicInterval> range =
          evaluateIndex(a.expr->indices[d], space, env, shape[d], unused);
      if (!range)
        continue; // Not affine: strategy discovery reports it.
      if (!range->isValid()) {
        error = "access '" + printExpr(*a.expr) + "' to input '" +
                desc.inputs[a.input] + "' reaches indices in dimension " +
                std::to_string(d) +
                " beyond what the cost model can represent (64-bit integers)";
        return false;
      }
      auto [lo, hi] = range->evaluate(space.extents);
      if (shape[d] > 0 && (hi < 0 || lo > shape[d] - 1)) {
        error = "access '" + printExpr(*a.expr) + "' is entirely outside " +
                "input '" + desc.inputs[a.input] + "': its index in " +
                "dimension " + std::to_string(d) + " ranges over [" +
                std::to_string(lo) + ", " + std::to_string(hi) +
                "] but the dimension has size " + std::to_string(shape[d]);
        return false;
      }
    }
  }
  return true;
}

std::optional<LoopSpace> tofu::inferLoopSpace(const OpDesc &desc,
                                              const OpShapes &shapes,
                                              std::string &error) {
  if (shapes.inputs.size() != desc.inputs.size()) {
    error = "the description has " + std::to_string(desc.inputs.size()) +
            " inputs but the operation has " +
            std::to_string(shapes.inputs.size());
    return std::nullopt;
  }
  if (shapes.outputs.size() != desc.outputs.size()) {
    error = "the description has " + std::to_string(desc.outputs.size()) +
            " outputs but the operation has " +
            std::to_string(shapes.outputs.size());
    return std::nullopt;
  }
  LoopSpace space;
  space.vars = desc.getLoopVars();
  space.extents.assign(space.vars.size(), -1);
  space.opaque.assign(space.vars.size(), false);
  std::vector<std::string> origin(space.vars.size());

  auto define = [&](const std::string &var, int64_t extent,
                    const std::string &where) {
    int i = space.lookup(var);
    if (space.extents[i] < 0) {
      space.extents[i] = extent;
      origin[i] = where;
      return true;
    }
    if (space.extents[i] == extent)
      return true;
    error = "shape mismatch: index variable '" + var + "' has extent " +
            std::to_string(space.extents[i]) + " from " + origin[i] + " but " +
            std::to_string(extent) + " from " + where;
    return false;
  };

  for (const auto &[var, extent] : desc.declaredExtents)
    if (space.lookup(var) >= 0)
      define(var, extent, "its declaration");
  for (size_t o = 0; o < desc.outputs.size(); ++o) {
    const OutputDesc &out = desc.outputs[o];
    const Shape &shape = shapes.outputs[o];
    if (out.vars.size() != shape.size()) {
      error = "shape mismatch: output " + std::to_string(o) + " has rank " +
              std::to_string(shape.size()) + " (" + shapeStr(shape) +
              ") but the description gives it " +
              std::to_string(out.vars.size()) + " index variables";
      return std::nullopt;
    }
    for (size_t d = 0; d < shape.size(); ++d)
      if (!define(out.vars[d], shape[d],
                  "output " + std::to_string(o) + " dimension " +
                      std::to_string(d)))
        return std::nullopt;
    std::set<std::string> opaque;
    collectOpaqueVars(out.body, out, opaque);
    for (const std::string &v : opaque)
      space.opaque[space.lookup(v)] = true;
  }

  std::vector<Access> accesses;
  for (const OutputDesc &out : desc.outputs)
    collectAccesses(out.body, desc, accesses);
  for (const Access &a : accesses) {
    const Shape &shape = shapes.inputs[a.input];
    if (a.expr->indices.size() != shape.size()) {
      error = "shape mismatch: input '" + desc.inputs[a.input] + "' has rank " +
              std::to_string(shape.size()) + " (" + shapeStr(shape) +
              ") but is accessed as '" + printExpr(*a.expr) + "'";
      return std::nullopt;
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      const IndexExpr &i = a.expr->indices[d];
      if (i.isVar() && !define(i.var, shape[d],
                               "input '" + desc.inputs[a.input] +
                                   "' dimension " + std::to_string(d)))
        return std::nullopt;
    }
  }

  // Solve the remaining extents from accesses in which they are the only
  // unknown: the largest index reached is the last element.
  for (bool progress = true; progress;) {
    progress = false;
    for (const Access &a : accesses) {
      const Shape &shape = shapes.inputs[a.input];
      for (size_t d = 0; d < shape.size(); ++d) {
        auto form = linearize(a.expr->indices[d]);
        if (!form)
          continue;
        std::string unknown;
        int64_t unknownCoeff = 0, reach = form->constant;
        bool solvable = true;
        for (auto &[v, c] : form->coeffs) {
          if (c == 0)
            continue;
          int64_t ext = space.extents[space.lookup(v)];
          if (ext >= 0) {
            std::optional<int64_t> far =
                c > 0 ? llvm::checkedMulAdd(c, ext - 1, reach) : reach;
            if (!far) {
              solvable = false;
              break;
            }
            reach = *far;
            continue;
          }
          if (!unknown.empty() || c < 0)
            solvable = false;
          unknown = v;
          unknownCoeff = c;
        }
        if (!solvable || unknown.empty())
          continue;
        std::optional<int64_t> room = llvm::checkedSub(shape[d] - 1, reach);
        if (!room || *room < 0 || *room % unknownCoeff != 0) {
          error = "shape mismatch: input '" + desc.inputs[a.input] +
                  "' dimension " + std::to_string(d) + " of size " +
                  std::to_string(shape[d]) +
                  " is not reachable by a whole extent of '" + unknown +
                  "' in '" + printExpr(*a.expr) + "'";
          return std::nullopt;
        }
        define(unknown, *room / unknownCoeff + 1,
               "input '" + desc.inputs[a.input] + "' dimension " +
                   std::to_string(d));
        progress = true;
      }
    }
  }
  for (size_t i = 0; i < space.vars.size(); ++i) {
    if (space.extents[i] < 0) {
      error = "cannot infer the extent of index variable '" + space.vars[i] +
              "' from the shapes";
      return std::nullopt;
    }
  }
  return space;
}

std::optional<SymbolicInterval>
tofu::evaluateIndex(const IndexExpr &e, const LoopSpace &space,
                    const std::vector<SymbolicInterval> &env,
                    int64_t sliceExtent, std::string &error) {
  unsigned n = space.vars.size();
  switch (e.kind) {
  case IndexExpr::Kind::Var:
    return env[space.lookup(e.var)];
  case IndexExpr::Kind::Const:
    return SymbolicInterval::constant(n, Rational(e.value));
  case IndexExpr::Kind::Slice:
  case IndexExpr::Kind::Opaque:
    // Any position of the dimension: a gather reads the whole of it.
    return SymbolicInterval::constantRange(n, Rational(0),
                                           Rational(sliceExtent - 1));
  default:
    break;
  }
  auto l = evaluateIndex(e.operands[0], space, env, sliceExtent, error);
  if (!l)
    return std::nullopt;
  auto r = evaluateIndex(e.operands[1], space, env, sliceExtent, error);
  if (!r)
    return std::nullopt;
  auto constantDivisor = [&]() -> std::optional<int64_t> {
    if (!r->isConstant() || !r->getLowerConstant().isInteger() ||
        r->getLowerConstant().getNumerator() <= 0) {
      error = "non-affine access '" + printIndexExpr(e) +
              "': the divisor must be a positive constant";
      return std::nullopt;
    }
    return r->getLowerConstant().getNumerator();
  };
  switch (e.kind) {
  case IndexExpr::Kind::Add:
    return *l + *r;
  case IndexExpr::Kind::Sub:
    return *l - *r;
  case IndexExpr::Kind::Mul: {
    auto p = SymbolicInterval::product(*l, *r);
    if (!p)
      error = "non-affine access '" + printIndexExpr(e) +
              "': the product of two intervals is not affine";
    return p;
  }
  case IndexExpr::Kind::FloorDiv:
    if (auto k = constantDivisor())
      return l->floorDiv(*k);
    return std::nullopt;
  case IndexExpr::Kind::CeilDiv:
    if (auto k = constantDivisor())
      return l->ceilDiv(*k);
    return std::nullopt;
  case IndexExpr::Kind::Mod:
    if (auto k = constantDivisor())
      return l->mod(*k);
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

bool InputRequirement::hasHalo() const {
  return std::any_of(halo.begin(), halo.end(), [](int64_t h) { return h > 0; });
}

/// The regions of one input read by every worker when `var` is cut.
static std::optional<InputRequirement>
analyzeInput(unsigned input, const std::vector<Access> &accesses,
             const Shape &shape, const LoopSpace &space, unsigned var,
             unsigned k, std::string &error) {
  unsigned n = space.vars.size();
  unsigned rank = shape.size();
  InputRequirement req;
  Box empty;
  empty.lo.assign(rank, 0);
  empty.hi.assign(rank, -1);
  req.regions.assign(k, empty);
  for (unsigned w = 0; w < k; ++w) {
    // The symbolic pass follows the paper (shares of N/k); the concrete pass
    // binds every variable to its exact integer range, which also covers
    // extents that do not divide by k.
    // Interval arithmetic forgets correlations (a variable used twice, a
    // remainder); for such accesses the concrete range is then found by
    // enumerating the worker's points, when there are at most 2^16.
    std::vector<SymbolicInterval> env, concreteEnv;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (unsigned v = 0; v < n; ++v) {
      env.push_back(v == var ? SymbolicInterval::share(n, v, w, k)
                             : SymbolicInterval::variable(n, v));
      auto [lo, hi] =
          v == var ? getChunk(space.extents[v], k, w)
                   : std::make_pair<int64_t, int64_t>(0, space.extents[v] - 1);
      concreteEnv.push_back(
          SymbolicInterval::constantRange(n, Rational(lo), Rational(hi)));
      ranges.push_back({lo, hi});
    }
    for (const Access &a : accesses) {
      if (a.input != input)
        continue;
      req.read = true;
      Box box;
      std::vector<SymbolicInterval> symbolic;
      for (unsigned d = 0; d < rank; ++d) {
        const IndexExpr &idx = a.expr->indices[d];
        auto iv = evaluateIndex(idx, space, env, shape[d], error);
        auto civ = evaluateIndex(idx, space, concreteEnv, shape[d], error);
        if (!iv || !civ)
          return std::nullopt;
        if (!iv->isValid() || !civ->isValid()) {
          error = "access '" + printExpr(*a.expr) +
                  "' reaches indices beyond what the cost model can "
                  "represent (64-bit integers)";
          return std::nullopt;
        }
        auto [lo, hi] = civ->evaluate(space.extents);
        if (!isIntervalExact(idx))
          if (auto exact = enumerateIndexRange(idx, space, ranges, 1u << 16))
            std::tie(lo, hi) = *exact;
        box.lo.push_back(std::max<int64_t>(lo, 0));
        box.hi.push_back(std::min<int64_t>(hi, shape[d] - 1));
        symbolic.push_back(*iv);
      }
      if (w == 0)
        req.symbolic.push_back(symbolic);
      if (box.volume() == 0)
        continue;
      Box &region = req.regions[w];
      region = region.volume() == 0 ? box : region.hull(box);
    }
  }

  // The dimension along which workers read different regions.
  std::vector<unsigned> differing;
  for (unsigned d = 0; d < rank; ++d)
    for (unsigned w = 1; w < k; ++w)
      if (req.regions[w].lo[d] != req.regions[0].lo[d] ||
          req.regions[w].hi[d] != req.regions[0].hi[d]) {
        differing.push_back(d);
        break;
      }
  req.cutDim = differing.empty()       ? -1
               : differing.size() == 1 ? differing[0]
                                       : -2;
  req.halo.assign(rank, 0);
  if (req.cutDim >= 0) {
    unsigned d = req.cutDim;
    for (unsigned w = 0; w < k; ++w) {
      if (req.regions[w].volume() == 0)
        continue;
      auto [lo, hi] = getChunk(shape[d], k, w);
      int64_t extra = (req.regions[w].hi[d] - req.regions[w].lo[d]) - (hi - lo);
      req.halo[d] = std::max(req.halo[d], extra);
    }
  }
  for (unsigned d = 0; d < rank; ++d)
    req.fetch.push_back(getGatherCost(shape, Tiling::cut(d), req.regions, k));
  req.fetch.push_back(
      getGatherCost(shape, Tiling::replicate(), req.regions, k));
  req.fetch.push_back(getGatherCost(shape, Tiling::partial(), req.regions, k));
  if (!req.read)
    std::fill(req.fetch.begin(), req.fetch.end(), 0);
  return req;
}

/// Collects the operands of a chain of `op` (a binary operator).
static void collectTerms(const Expr &e, const char *op,
                         std::vector<const Expr *> &terms) {
  if (e.kind == Expr::Kind::Binary && e.name == op) {
    collectTerms(e.operands[0], op, terms);
    collectTerms(e.operands[1], op, terms);
    return;
  }
  terms.push_back(&e);
}

/// The reduction variables of a reduction that the body combines with other
/// terms using the reduction's own combiner: `init[i] + sum(k) ...`,
/// `x * prod(k) ...`, `max(init[i], max(k) ...)`. Cutting one gives partial
/// values that the reducer combines, and the other terms are combined in
/// once (or, for max and min, by every worker), so it is still a
/// partition-n-reduce strategy. This is how a DPS init or a bias follows a
/// reduction.
static std::vector<std::string>
getEpilogueReductionVars(const OutputDesc &out) {
  std::vector<std::string> vars;
  if (out.reducer != Reducer::None)
    return vars;
  const Expr &b = out.body;
  auto take = [&](const std::vector<const Expr *> &terms, Reducer r) {
    if (terms.size() < 2)
      return;
    for (const Expr *t : terms)
      if (t->kind == Expr::Kind::Reduce && t->reducer == r)
        vars.insert(vars.end(), t->reductionVars.begin(),
                    t->reductionVars.end());
  };
  std::vector<const Expr *> terms;
  if (b.kind == Expr::Kind::Binary && (b.name == "+" || b.name == "*")) {
    collectTerms(b, b.name.c_str(), terms);
    take(terms, b.name == "+" ? Reducer::Sum : Reducer::Prod);
  } else if (b.kind == Expr::Kind::Call &&
             (b.name == "max" || b.name == "min")) {
    for (const Expr &o : b.operands)
      terms.push_back(&o);
    take(terms, b.name == "max" ? Reducer::Max : Reducer::Min);
  }
  return vars;
}

static bool contains(const std::vector<std::string> &v, const std::string &x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::optional<StrategySet> tofu::discoverStrategies(const OpDesc &desc,
                                                    const OpShapes &shapes,
                                                    unsigned k,
                                                    std::string &error) {
  if (k < 2) {
    error = "a split step needs at least 2 workers";
    return std::nullopt;
  }
  auto space = inferLoopSpace(desc, shapes, error);
  if (!space)
    return std::nullopt;
  StrategySet set;
  set.space = *space;
  std::vector<Access> accesses;
  for (const OutputDesc &out : desc.outputs)
    collectAccesses(out.body, desc, accesses);

  for (unsigned v = 0; v < space->vars.size(); ++v) {
    const std::string &name = space->vars[v];
    bool nestedOnly = false;
    for (const OutputDesc &out : desc.outputs) {
      if (contains(out.getNestedReductionVars(), name) &&
          !contains(getEpilogueReductionVars(out), name))
        nestedOnly = true;
    }
    if (nestedOnly) {
      set.rejected.push_back(
          {v, "reduced inside an expression: the rest of the expression "
              "would have to follow the reduction"});
      continue;
    }
    if (space->opaque[v]) {
      set.rejected.push_back({v, "produced whole by an opaque function"});
      continue;
    }
    if (space->extents[v] < (int64_t)k) {
      set.rejected.push_back({v, "extent " + std::to_string(space->extents[v]) +
                                     " is smaller than " + std::to_string(k)});
      continue;
    }
    Strategy s;
    s.var = v;
    s.uneven = space->extents[v] % k != 0;
    for (unsigned i = 0; i < desc.inputs.size(); ++i) {
      auto req =
          analyzeInput(i, accesses, shapes.inputs[i], *space, v, k, error);
      if (!req)
        return std::nullopt;
      s.inputs.push_back(std::move(*req));
    }
    for (const OutputDesc &out : desc.outputs) {
      auto it = std::find(out.vars.begin(), out.vars.end(), name);
      if (it != out.vars.end()) {
        s.outputs.push_back(Tiling::cut(it - out.vars.begin()));
      } else if (contains(out.reductionVars, name) ||
                 contains(getEpilogueReductionVars(out), name)) {
        s.outputs.push_back(Tiling::partial());
        s.reducesOutput = true;
      } else {
        s.outputs.push_back(Tiling::replicate());
      }
    }
    set.strategies.push_back(std::move(s));
  }
  return set;
}

std::vector<const Expr *> tofu::getInputAccesses(const OpDesc &desc,
                                                 unsigned input) {
  std::vector<Access> accesses;
  for (const OutputDesc &out : desc.outputs)
    collectAccesses(out.body, desc, accesses);
  std::vector<const Expr *> mine;
  for (const Access &a : accesses)
    if (a.input == input)
      mine.push_back(a.expr);
  return mine;
}

std::optional<std::pair<int64_t, int64_t>>
tofu::getIndexRange(const IndexExpr &idx, const LoopSpace &space,
                    int64_t extent,
                    const std::vector<std::pair<int64_t, int64_t>> &ranges,
                    std::string &error) {
  // The common indices need no interval arithmetic.
  if (int v = idx.isVar() ? space.lookup(idx.var) : -1; v >= 0)
    return std::pair{std::max<int64_t>(ranges[v].first, 0),
                     std::min<int64_t>(ranges[v].second, extent - 1)};
  if (idx.isWhole())
    return std::pair<int64_t, int64_t>{0, extent - 1};
  unsigned n = space.vars.size();
  std::vector<SymbolicInterval> env;
  for (unsigned v = 0; v < n; ++v)
    env.push_back(SymbolicInterval::constantRange(
        n, Rational(ranges[v].first), Rational(ranges[v].second)));
  auto iv = evaluateIndex(idx, space, env, extent, error);
  if (!iv)
    return std::nullopt;
  if (!iv->isValid()) {
    error = "index '" + printIndexExpr(idx) +
            "' reaches indices beyond 64-bit integers";
    return std::nullopt;
  }
  auto [lo, hi] = iv->evaluate(space.extents);
  if (!isIntervalExact(idx))
    if (auto exact = enumerateIndexRange(idx, space, ranges, 1u << 16))
      std::tie(lo, hi) = *exact;
  return std::pair{std::max<int64_t>(lo, 0), std::min<int64_t>(hi, extent - 1)};
}

std::optional<Box>
tofu::getReadRegion(const OpDesc &desc, const LoopSpace &space, unsigned input,
                    const Shape &shape,
                    const std::vector<std::pair<int64_t, int64_t>> &ranges,
                    bool &read, std::string &error) {
  Box region;
  region.lo.assign(shape.size(), 0);
  region.hi.assign(shape.size(), -1);
  read = false;
  for (const Expr *access : getInputAccesses(desc, input)) {
    Box box;
    for (unsigned d = 0; d < shape.size(); ++d) {
      auto range =
          getIndexRange(access->indices[d], space, shape[d], ranges, error);
      if (!range)
        return std::nullopt;
      box.lo.push_back(range->first);
      box.hi.push_back(range->second);
    }
    if (box.volume() == 0)
      continue;
    region = read ? region.hull(box) : box;
    read = true;
  }
  return region;
}
