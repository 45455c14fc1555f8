//===- MinSum.cpp - Exact minimisation of sums of small tables ------------===//

#include "tofu/Partition/MinSum.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <set>

using namespace tofu;

unsigned MinSumProblem::addVariable(unsigned domain) {
  assert(domain > 0 && "a variable needs at least one value");
  domains.push_back(domain);
  unary.emplace_back(domain, 0.0);
  return domains.size() - 1;
}

void MinSumProblem::addUnary(unsigned v, const std::vector<double> &table) {
  assert(table.size() == domains[v]);
  for (unsigned i = 0; i < domains[v]; ++i)
    unary[v][i] += table[i];
}

void MinSumProblem::addPairwise(unsigned a, unsigned b,
                                std::vector<double> table) {
  assert(a != b && table.size() == (size_t)domains[a] * domains[b]);
  pairwise.push_back({a, b, std::move(table)});
}

double MinSumProblem::evaluate(const std::vector<unsigned> &x) const {
  double total = 0;
  for (size_t v = 0; v < domains.size(); ++v)
    total += unary[v][x[v]];
  for (const Pairwise &p : pairwise)
    total += p.table[(size_t)x[p.a] * domains[p.b] + x[p.b]];
  return total;
}

namespace {

/// A table over a scope of variables, row-major (last variable fastest).
struct Factor {
  std::vector<unsigned> vars;
  std::vector<unsigned> dims;
  std::vector<double> table;

  size_t find(unsigned v) const {
    return std::find(vars.begin(), vars.end(), v) - vars.begin();
  }
};

constexpr uint64_t kHuge = std::numeric_limits<uint64_t>::max() / 4;

uint64_t saturatingMul(uint64_t a, uint64_t b) {
  if (a && b > kHuge / a)
    return kHuge;
  return a * b;
}

/// Sums `factors` over `scope` (with the given dims).
Factor combine(const std::vector<const Factor *> &factors,
               const std::vector<unsigned> &scope,
               const std::vector<unsigned> &dims) {
  Factor out{scope, dims, {}};
  size_t size = 1;
  for (unsigned d : dims)
    size *= d;
  out.table.assign(size, 0.0);
  size_t n = scope.size();
  // strides[f][p]: the stride of scope position p in factor f (0 if absent).
  std::vector<std::vector<size_t>> strides(factors.size(),
                                           std::vector<size_t>(n, 0));
  for (size_t f = 0; f < factors.size(); ++f) {
    const Factor &fa = *factors[f];
    size_t stride = 1;
    for (size_t j = fa.vars.size(); j-- > 0;) {
      size_t p =
          std::find(scope.begin(), scope.end(), fa.vars[j]) - scope.begin();
      assert(p < n && "factor variable outside the scope");
      strides[f][p] = stride;
      stride *= fa.dims[j];
    }
  }
  std::vector<unsigned> digit(n, 0);
  std::vector<size_t> index(factors.size(), 0);
  for (size_t e = 0; e < size; ++e) {
    double sum = 0;
    for (size_t f = 0; f < factors.size(); ++f)
      sum += factors[f]->table[index[f]];
    out.table[e] = sum;
    // Advance the odometer (last position fastest).
    for (size_t p = n; p-- > 0;) {
      if (++digit[p] < dims[p]) {
        for (size_t f = 0; f < factors.size(); ++f)
          index[f] += strides[f][p];
        break;
      }
      for (size_t f = 0; f < factors.size(); ++f)
        index[f] -= strides[f][p] * (dims[p] - 1);
      digit[p] = 0;
    }
  }
  return out;
}

/// A factor over `f`'s scope without position `p`, each entry combining the
/// entries of `f` along `p` with `reduce(accumulated, x, value)`.
template <typename Reduce>
Factor dropPosition(const Factor &f, size_t p, double init, Reduce reduce) {
  Factor out;
  size_t inner = 1, outer = 1;
  for (size_t j = 0; j < f.vars.size(); ++j) {
    if (j == p)
      continue;
    out.vars.push_back(f.vars[j]);
    out.dims.push_back(f.dims[j]);
    (j < p ? outer : inner) *= f.dims[j];
  }
  unsigned d = f.dims[p];
  out.table.assign(outer * inner, init);
  for (size_t o = 0; o < outer; ++o)
    for (unsigned x = 0; x < d; ++x)
      for (size_t i = 0; i < inner; ++i) {
        double &acc = out.table[o * inner + i];
        acc = reduce(acc, x, f.table[(o * d + x) * inner + i]);
      }
  return out;
}

/// Minimises the variable at scope position `p` out of `f`.
Factor minimizeOut(const Factor &f, size_t p) {
  return dropPosition(
      f, p, std::numeric_limits<double>::infinity(),
      [](double acc, unsigned, double v) { return std::min(acc, v); });
}

/// Restricts `f` to variable position `p` having value `x`.
Factor restrict(const Factor &f, size_t p, unsigned x) {
  return dropPosition(f, p, 0.0, [x](double acc, unsigned value, double v) {
    return value == x ? v : acc;
  });
}

class Eliminator {
public:
  Eliminator(const MinSumProblem &p, uint64_t maxTable, bool giveUp)
      : problem(p), maxTable(maxTable), giveUp(giveUp), n(p.domains.size()),
        factorsOf(n),
        eliminated(n, false), assignment(n, 0), combined(n) {}

  MinSumSolution run();

private:
  unsigned addFactor(Factor f);
  void removeFactor(unsigned id);
  std::set<unsigned> neighbours(unsigned v) const;
  uint64_t tableSize(unsigned v) const;
  void eliminate(unsigned v);
  void fixGreedily(unsigned v);
  void fix(unsigned v, unsigned x);

  const MinSumProblem &problem;
  uint64_t maxTable;
  bool giveUp;
  size_t n;
  std::vector<Factor> factors;
  std::vector<bool> alive;
  std::vector<std::set<unsigned>> factorsOf;
  std::vector<bool> eliminated;
  std::vector<unsigned> assignment;
  /// Per eliminated variable: the summed table it was minimised out of.
  std::vector<Factor> combined;
  /// Variables in the order they left the problem, and whether by fixing.
  std::vector<std::pair<unsigned, bool>> order;
  MinSumSolution solution;
};

unsigned Eliminator::addFactor(Factor f) {
  unsigned id = factors.size();
  for (unsigned v : f.vars)
    factorsOf[v].insert(id);
  factors.push_back(std::move(f));
  alive.push_back(true);
  return id;
}

void Eliminator::removeFactor(unsigned id) {
  for (unsigned v : factors[id].vars)
    factorsOf[v].erase(id);
  alive[id] = false;
  factors[id].table.clear();
  factors[id].table.shrink_to_fit();
}

std::set<unsigned> Eliminator::neighbours(unsigned v) const {
  std::set<unsigned> out;
  for (unsigned f : factorsOf[v])
    for (unsigned u : factors[f].vars)
      if (u != v)
        out.insert(u);
  return out;
}

uint64_t Eliminator::tableSize(unsigned v) const {
  uint64_t size = problem.domains[v];
  for (unsigned u : neighbours(v))
    size = saturatingMul(size, problem.domains[u]);
  return size;
}

void Eliminator::eliminate(unsigned v) {
  std::set<unsigned> nb = neighbours(v);
  std::vector<unsigned> scope{v};
  scope.insert(scope.end(), nb.begin(), nb.end());
  std::vector<unsigned> dims;
  for (unsigned u : scope)
    dims.push_back(problem.domains[u]);
  std::vector<const Factor *> parts;
  std::vector<unsigned> ids(factorsOf[v].begin(), factorsOf[v].end());
  for (unsigned f : ids)
    parts.push_back(&factors[f]);
  Factor sum = combine(parts, scope, dims);
  for (unsigned f : ids)
    removeFactor(f);
  addFactor(minimizeOut(sum, 0));
  combined[v] = std::move(sum);
  eliminated[v] = true;
  order.push_back({v, false});
}

void Eliminator::fix(unsigned v, unsigned x) {
  std::vector<unsigned> ids(factorsOf[v].begin(), factorsOf[v].end());
  for (unsigned f : ids) {
    Factor r = restrict(factors[f], factors[f].find(v), x);
    removeFactor(f);
    addFactor(std::move(r));
  }
  assignment[v] = x;
  eliminated[v] = true;
  order.push_back({v, true});
}

void Eliminator::fixGreedily(unsigned v) {
  // Each value's cost, with every other variable at its best value for
  // each table separately: an optimistic estimate.
  unsigned d = problem.domains[v];
  std::vector<double> estimate(d, 0.0);
  for (unsigned f : factorsOf[v]) {
    const Factor &fa = factors[f];
    size_t p = fa.find(v);
    for (unsigned x = 0; x < d; ++x) {
      Factor r = restrict(fa, p, x);
      estimate[x] += *std::min_element(r.table.begin(), r.table.end());
    }
  }
  unsigned best =
      std::min_element(estimate.begin(), estimate.end()) - estimate.begin();
  fix(v, best);
  solution.exact = false;
}

MinSumSolution Eliminator::run() {
  for (unsigned v = 0; v < n; ++v)
    addFactor({{v}, {problem.domains[v]}, problem.unary[v]});
  for (const MinSumProblem::Pairwise &p : problem.pairwise)
    addFactor(
        {{p.a, p.b}, {problem.domains[p.a], problem.domains[p.b]}, p.table});
  // Variables with a single value are fixed at once: they never widen a
  // table.
  for (unsigned v = 0; v < n; ++v)
    if (problem.domains[v] == 1)
      fix(v, 0);

  // Min-size elimination order, kept in a set ordered by table size.
  std::vector<uint64_t> score(n, 0);
  std::set<std::pair<uint64_t, unsigned>> queue;
  for (unsigned v = 0; v < n; ++v)
    if (!eliminated[v]) {
      score[v] = tableSize(v);
      queue.insert({score[v], v});
    }
  auto refresh = [&](const std::set<unsigned> &vars) {
    for (unsigned u : vars) {
      if (eliminated[u])
        continue;
      queue.erase({score[u], u});
      score[u] = tableSize(u);
      queue.insert({score[u], u});
    }
  };
  while (!queue.empty()) {
    auto [size, v] = *queue.begin();
    if (size <= maxTable) {
      queue.erase(queue.begin());
      std::set<unsigned> nb = neighbours(v);
      eliminate(v);
      refresh(nb);
      continue;
    }
    if (giveUp) {
      solution.exact = false;
      solution.assignment.clear();
      solution.cost = std::numeric_limits<double>::infinity();
      return solution;
    }
    // Every table would be too large: fix the most connected variable.
    unsigned pick = v;
    size_t most = 0;
    for (auto &[s, u] : queue) {
      size_t degree = neighbours(u).size();
      if (degree > most) {
        most = degree;
        pick = u;
      }
    }
    queue.erase({score[pick], pick});
    std::set<unsigned> nb = neighbours(pick);
    fixGreedily(pick);
    refresh(nb);
  }

  // Back-substitution in reverse order of elimination.
  for (size_t i = order.size(); i-- > 0;) {
    auto [v, wasFixed] = order[i];
    if (wasFixed)
      continue;
    const Factor &f = combined[v];
    size_t inner = 1;
    size_t offset = 0;
    for (size_t j = f.vars.size(); j-- > 1;) {
      offset += assignment[f.vars[j]] * inner;
      inner *= f.dims[j];
    }
    unsigned best = 0;
    double bestCost = std::numeric_limits<double>::infinity();
    for (unsigned x = 0; x < f.dims[0]; ++x) {
      double c = f.table[x * inner + offset];
      if (c < bestCost) {
        bestCost = c;
        best = x;
      }
    }
    assignment[v] = best;
  }
  solution.assignment = assignment;
  solution.cost = problem.evaluate(assignment);
  return solution;
}

} // namespace

MinSumSolution tofu::solveMinSum(const MinSumProblem &problem,
                                 uint64_t maxTableSize, bool giveUp) {
  return Eliminator(problem, std::max<uint64_t>(maxTableSize, 1), giveUp)
      .run();
}

bool tofu::fitsMinSum(const MinSumProblem &problem, uint64_t maxTableSize) {
  size_t n = problem.domains.size();
  // Variables with one value are fixed first and never widen a table, as in
  // Eliminator::run.
  std::vector<bool> gone(n, false);
  for (size_t v = 0; v < n; ++v)
    gone[v] = problem.domains[v] == 1;
  std::vector<std::set<unsigned>> adj(n);
  for (const MinSumProblem::Pairwise &p : problem.pairwise)
    if (!gone[p.a] && !gone[p.b]) {
      adj[p.a].insert(p.b);
      adj[p.b].insert(p.a);
    }
  auto size = [&](unsigned v) {
    uint64_t s = problem.domains[v];
    for (unsigned u : adj[v])
      s = saturatingMul(s, problem.domains[u]);
    return s;
  };
  std::vector<uint64_t> score(n, 0);
  std::set<std::pair<uint64_t, unsigned>> queue;
  for (unsigned v = 0; v < n; ++v)
    if (!gone[v]) {
      score[v] = size(v);
      queue.insert({score[v], v});
    }
  while (!queue.empty()) {
    auto [s, v] = *queue.begin();
    if (s > std::max<uint64_t>(maxTableSize, 1))
      return false;
    queue.erase(queue.begin());
    gone[v] = true;
    std::vector<unsigned> nb(adj[v].begin(), adj[v].end());
    for (unsigned a : nb) {
      adj[a].erase(v);
      for (unsigned b : nb)
        if (a != b)
          adj[a].insert(b);
    }
    adj[v].clear();
    for (unsigned u : nb) {
      queue.erase({score[u], u});
      score[u] = size(u);
      queue.insert({score[u], u});
    }
  }
  return true;
}

std::optional<MinSumSolution>
tofu::bruteForceMinSum(const MinSumProblem &problem, uint64_t maxAssignments) {
  uint64_t total = 1;
  for (unsigned d : problem.domains)
    total = saturatingMul(total, d);
  if (total > maxAssignments)
    return std::nullopt;
  size_t n = problem.domains.size();
  std::vector<unsigned> x(n, 0);
  MinSumSolution best;
  best.cost = std::numeric_limits<double>::infinity();
  for (uint64_t e = 0; e < total; ++e) {
    double c = problem.evaluate(x);
    if (c < best.cost) {
      best.cost = c;
      best.assignment = x;
    }
    for (size_t p = n; p-- > 0;) {
      if (++x[p] < problem.domains[p])
        break;
      x[p] = 0;
    }
  }
  return best;
}
