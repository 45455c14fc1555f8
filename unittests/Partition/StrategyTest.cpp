//===- StrategyTest.cpp - Tests of partition-n-reduce discovery -----------===//

#include "tofu/Partition/Strategy.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::tdl;

namespace {

StrategySet discover(const std::string &text, OpShapes shapes, unsigned k = 2) {
  ParseError perr;
  auto desc = parse(text, perr);
  EXPECT_TRUE(desc.has_value()) << perr.message;
  std::string error;
  auto set = discoverStrategies(*desc, shapes, k, error);
  EXPECT_TRUE(set.has_value()) << error;
  return set ? *set : StrategySet();
}

std::string discoverError(const std::string &text, OpShapes shapes) {
  ParseError perr;
  auto desc = parse(text, perr);
  EXPECT_TRUE(desc.has_value()) << perr.message;
  std::string error;
  EXPECT_FALSE(discoverStrategies(*desc, shapes, 2, error).has_value());
  return error;
}

const Strategy *find(const StrategySet &set, const std::string &var) {
  for (const Strategy &s : set.strategies)
    if (set.space.vars[s.var] == var)
      return &s;
  return nullptr;
}

TEST(StrategyTest, ShiftTwo) {
  // Section 4.2: B = lambda i: A[i + 2], i in [0, 9].
  StrategySet set = discover("(i) = A[i + 2]", {{{12}}, {{10}}});
  ASSERT_EQ(set.strategies.size(), 1u);
  const InputRequirement &a = set.strategies[0].inputs[0];
  EXPECT_EQ(a.regions[0].str(), "[2:6]");
  EXPECT_EQ(a.regions[1].str(), "[7:11]");
  ASSERT_EQ(a.symbolic.size(), 1u);
  EXPECT_EQ(a.symbolic[0][0].str({"N_i"}), "[2, N_i/2 + 1]");
  // A is cut as [0:5] [6:11]: worker 0 fetches nothing, worker 1 fetches 7
  // and... [7:11] is within [6:11], worker 0 fetches [6:6].
  EXPECT_EQ(a.fetch[0], 1);
}

TEST(StrategyTest, Conv1d) {
  // Figure 2: data 4x3x10, filters 3x8x3, out 4x8x8.
  StrategySet set = discover(
      "(b, co, x) = sum(ci, dx) data[b, ci, x + dx] * filters[ci, co, dx]",
      {{{4, 3, 10}, {3, 8, 3}}, {{4, 8, 8}}});
  EXPECT_EQ(set.space.extents, (std::vector<int64_t>{4, 8, 8, 3, 3}));
  ASSERT_EQ(set.strategies.size(), 5u);
  const Strategy *b = find(set, "b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->inputs[0].cutDim, 0);
  EXPECT_EQ(b->inputs[1].cutDim, -1);
  EXPECT_EQ(b->inputs[0].fetch[0], 0);         // data cut on b
  EXPECT_EQ(b->inputs[1].fetch[0], 3 * 8 * 3); // filters: half each
  EXPECT_EQ(b->outputs[0], Tiling::cut(0));
  const Strategy *x = find(set, "x");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->inputs[0].cutDim, 2);
  EXPECT_TRUE(x->inputs[0].hasHalo());
  EXPECT_EQ(x->inputs[0].halo[2],
            1); // each worker reads one element beyond its chunk
  EXPECT_EQ(x->inputs[0].regions[0].str(), "[0:3, 0:2, 0:5]");
  EXPECT_EQ(x->inputs[0].regions[1].str(), "[0:3, 0:2, 4:9]");
  const Strategy *ci = find(set, "ci");
  ASSERT_TRUE(ci);
  EXPECT_TRUE(ci->reducesOutput);
  EXPECT_TRUE(ci->uneven);
  EXPECT_EQ(ci->outputs[0], Tiling::partial());
  EXPECT_EQ(ci->inputs[0].cutDim, 1);
  EXPECT_EQ(ci->inputs[1].cutDim, 0);
  const Strategy *dx = find(set, "dx");
  ASSERT_TRUE(dx);
  EXPECT_EQ(dx->inputs[0].cutDim, 2);
  EXPECT_EQ(dx->inputs[1].cutDim, 2);
}

TEST(StrategyTest, MatmulHasThreeStrategies) {
  StrategySet set = discover("(i, j) = sum(k) A[i, k] * B[k, j]",
                             {{{8, 6}, {6, 4}}, {{8, 4}}});
  ASSERT_EQ(set.strategies.size(), 3u);
  const Strategy *k = find(set, "k");
  EXPECT_TRUE(k->reducesOutput);
  // Lemma 1: with A cut on rows, strategy j needs all of A on both workers.
  const Strategy *j = find(set, "j");
  EXPECT_EQ(j->inputs[0].fetch[0], 48);
  EXPECT_EQ(j->inputs[0].fetch[2], 0);
  EXPECT_EQ(j->inputs[1].fetch[1], 0);
  EXPECT_EQ(j->inputs[1].fetch[0], 12);
}

TEST(StrategyTest, BatchCholeskyOnlyBatch) {
  StrategySet set = discover("(m) -> (b, i, j) = opaque(m[b, :, :])",
                             {{{4, 5, 5}}, {{4, 5, 5}}});
  ASSERT_EQ(set.strategies.size(), 1u);
  EXPECT_EQ(set.space.vars[set.strategies[0].var], "b");
  EXPECT_EQ(set.rejected.size(), 2u);
  EXPECT_EQ(set.strategies[0].inputs[0].cutDim, 0);
}

TEST(StrategyTest, AnyWorkerCount) {
  StrategySet set = discover("(i, j) = sum(k) A[i, k] * B[k, j]",
                             {{{9, 6}, {6, 4}}, {{9, 4}}}, 3);
  const Strategy *i = find(set, "i");
  EXPECT_EQ(i->inputs[0].regions[2].str(), "[6:8, 0:5]");
  const Strategy *j = find(set, "j");
  EXPECT_TRUE(j->uneven);
  EXPECT_EQ(j->inputs[1].regions[0].str(), "[0:5, 0:0]");
  EXPECT_EQ(j->inputs[1].regions[1].str(), "[0:5, 1:1]");
  EXPECT_EQ(j->inputs[1].regions[2].str(), "[0:5, 2:3]");
}

TEST(StrategyTest, CollapsedAccessUsesFloorDivAndMod) {
  // collapse_shape 4x6 -> 24: out[i] = in[i floordiv 6, i mod 6].
  StrategySet set =
      discover("(i) = in[i floordiv 6, i mod 6]", {{{4, 6}}, {{24}}});
  const InputRequirement &in = set.strategies[0].inputs[0];
  EXPECT_EQ(in.regions[0].str(), "[0:1, 0:5]");
  EXPECT_EQ(in.regions[1].str(), "[2:3, 0:5]");
  EXPECT_EQ(in.cutDim, 0);
  EXPECT_EQ(in.fetch[0], 0);
}

TEST(StrategyTest, PoolingInfersWindow) {
  StrategySet set =
      discover("(b, x) = max(k) in[b, x * 2 + k]", {{{2, 9}}, {{2, 4}}});
  EXPECT_EQ(set.space.extents[set.space.lookup("k")], 3);
}

TEST(StrategyTest, BiasAfterASumIsStillReducible) {
  StrategySet set = discover("(x, w, bias) -> (b, o) = bias[o] + sum(i) "
                             "x[b, i] * w[o, i]",
                             {{{4, 6}, {8, 6}, {8}}, {{4, 8}}});
  ASSERT_EQ(set.strategies.size(), 3u);
  const Strategy *i = find(set, "i");
  ASSERT_TRUE(i);
  EXPECT_TRUE(i->reducesOutput);
  // A product after a sum is not: the reduction must come first.
  StrategySet scaled =
      discover("(x, s) -> (b) = s[b] * sum(i) x[b, i]", {{{4, 6}, {4}}, {{4}}});
  EXPECT_EQ(scaled.strategies.size(), 1u);
  EXPECT_EQ(scaled.rejected.size(), 1u);
}

TEST(StrategyTest, DeclaredExtentsForPaddedWindows) {
  // A 3-wide max-pool with padding 1 on both sides: the window extent cannot
  // be solved from the input size, so it is declared.
  StrategySet set = discover("(x) -> (b, y) = max(k : 3) x[b, y + k - 1]",
                             {{{2, 8}}, {{2, 8}}});
  EXPECT_EQ(set.space.extents[set.space.lookup("k")], 3);
  const Strategy *y = find(set, "y");
  EXPECT_EQ(y->inputs[0].regions[0].str(), "[0:1, 0:4]");
  EXPECT_EQ(y->inputs[0].regions[1].str(), "[0:1, 3:7]");
}

TEST(StrategyTest, GatherCutsTheTableOnlyAlongItsAffineDimension) {
  // out[b, s, h] = table[ids[b, s], h]: ids 2x8, table 100x16.
  StrategySet set =
      discover("(ids, table) -> (b, s, h) = table[opaque(ids[b, s]), h]",
               {{{2, 8}, {100, 16}}, {{2, 8, 16}}});
  EXPECT_EQ(set.space.vars, (std::vector<std::string>{"b", "s", "h"}));
  EXPECT_EQ(set.space.extents, (std::vector<int64_t>{2, 8, 16}));
  ASSERT_EQ(set.strategies.size(), 3u);
  // Cutting b or s reads the ids of the chunk and the whole table.
  for (const char *v : {"b", "s"}) {
    const Strategy *s = find(set, v);
    ASSERT_TRUE(s) << v;
    const InputRequirement &ids = s->inputs[0], &table = s->inputs[1];
    EXPECT_TRUE(ids.read);
    EXPECT_EQ(ids.cutDim, std::string(v) == "b" ? 0 : 1);
    EXPECT_EQ(table.cutDim, -1);
    EXPECT_EQ(table.regions[0].str(), "[0:99, 0:15]");
    EXPECT_EQ(table.regions[1].str(), "[0:99, 0:15]");
    // A replicated table costs nothing; a cut one must be gathered whole.
    EXPECT_EQ(table.fetch[2], 0);
    EXPECT_EQ(table.fetch[0], 1600);
    EXPECT_EQ(table.fetch[1], 1600);
    EXPECT_EQ(s->outputs[0].str(), std::string("cut(") +
                                       (std::string(v) == "b" ? "0" : "1") +
                                       ")");
  }
  // Cutting h cuts the table along h and reads all the ids.
  const Strategy *h = find(set, "h");
  ASSERT_TRUE(h);
  const InputRequirement &ids = h->inputs[0], &table = h->inputs[1];
  EXPECT_EQ(ids.cutDim, -1);
  EXPECT_EQ(table.cutDim, 1);
  EXPECT_EQ(table.regions[0].str(), "[0:99, 0:7]");
  EXPECT_EQ(table.regions[1].str(), "[0:99, 8:15]");
  EXPECT_FALSE(table.hasHalo());
  EXPECT_EQ(table.fetch[1], 0);
  EXPECT_EQ(table.fetch[0], 800);
  EXPECT_EQ(table.fetch[2], 0);
}

TEST(StrategyTest, GatherIndexIsNeverAnExtentSource) {
  // A variable used only inside an opaque index gets no extent from the
  // dimension the index selects.
  EXPECT_NE(discoverError("(ids, t) -> (b, h) = sum(v) t[opaque(ids[b], v), h]",
                          {{{4}, {10, 3}}, {{4, 3}}})
                .find("cannot infer the extent of index variable 'v'"),
            std::string::npos);
  // A gather whose ids are read through an affine window still finds it.
  StrategySet set =
      discover("(ids, t) -> (b, h) = t[opaque(ids[b + 1]), h]",
               {{{5}, {10, 4}}, {{4, 4}}});
  const Strategy *b = find(set, "b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->inputs[0].regions[0].str(), "[1:2]");
  EXPECT_EQ(b->inputs[0].regions[1].str(), "[3:4]");
  EXPECT_EQ(b->inputs[0].halo[0], 0);
}

TEST(StrategyTest, ShapeMismatches) {
  EXPECT_NE(discoverError("(i, j) = sum(k) A[i, k] * B[k, j]",
                          {{{8, 6}, {5, 4}}, {{8, 4}}})
                .find("index variable 'k' has extent 6"),
            std::string::npos);
  EXPECT_NE(discoverError("(i) = A[i]", {{{8, 2}}, {{8}}}).find("rank 2"),
            std::string::npos);
  EXPECT_NE(discoverError("(i) = A[i]", {{{8}, {8}}, {{8}}})
                .find("1 inputs but the operation has 2"),
            std::string::npos);
  EXPECT_NE(discoverError("(i) = sum(k) A[i - k]", {{{8}}, {{8}}})
                .find("cannot infer the extent of index variable 'k'"),
            std::string::npos);
}

TEST(TilingTest, ConversionCosts) {
  Shape s = {4, 6};
  EXPECT_EQ(getConversionCost(s, Tiling::cut(0), Tiling::cut(0), 2), 0);
  EXPECT_EQ(getConversionCost(s, Tiling::cut(0), Tiling::cut(1), 2), 12);
  EXPECT_EQ(getConversionCost(s, Tiling::cut(0), Tiling::replicate(), 2), 24);
  EXPECT_EQ(getConversionCost(s, Tiling::replicate(), Tiling::cut(1), 2), 0);
  EXPECT_EQ(getConversionCost(s, Tiling::partial(), Tiling::cut(1), 2), 24);
  EXPECT_EQ(getConversionCost(s, Tiling::partial(), Tiling::replicate(), 2),
            48);
  EXPECT_EQ(getConversionCost(s, Tiling::partial(), Tiling::cut(0), 4), 72);
}

} // namespace
