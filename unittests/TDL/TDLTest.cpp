//===- TDLTest.cpp - Tests of the TDL parser, printer and library ---------===//

#include "tofu/TDL/TDL.h"
#include "tofu/TDL/TDLLibrary.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::tdl;

namespace {

OpDesc mustParse(const std::string &text) {
  ParseError err;
  auto desc = parse(text, err);
  EXPECT_TRUE(desc.has_value()) << err.message << " at " << err.position;
  return desc ? *desc : OpDesc();
}

std::string parseError(const std::string &text) {
  ParseError err;
  auto desc = parse(text, err);
  EXPECT_FALSE(desc.has_value()) << text;
  return err.message;
}

TEST(TDLTest, Conv1dRoundTrips) {
  OpDesc d = mustParse(
      "(b, co, x) = sum(ci, dx) data[b, ci, x + dx] * filters[ci, co, dx]");
  EXPECT_EQ(d.inputs, (std::vector<std::string>{"data", "filters"}));
  ASSERT_EQ(d.outputs.size(), 1u);
  EXPECT_EQ(d.outputs[0].reducer, Reducer::Sum);
  EXPECT_EQ(d.outputs[0].reductionVars, (std::vector<std::string>{"ci", "dx"}));
  std::string text = d.str();
  EXPECT_EQ(text, "(data, filters) -> (b, co, x) = sum(ci, dx) "
                  "data[b, ci, x + dx] * filters[ci, co, dx]");
  EXPECT_EQ(mustParse(text), d);
  EXPECT_EQ(d.getLoopVars(),
            (std::vector<std::string>{"b", "co", "x", "ci", "dx"}));
}

TEST(TDLTest, OpaqueAndSlices) {
  OpDesc d = mustParse("(m) -> (b, i, j) = opaque(m[b, :, :])");
  EXPECT_EQ(d.str(), "(m) -> (b, i, j) = opaque(m[b, :, :])");
  EXPECT_EQ(d.outputs[0].body.kind, Expr::Kind::Opaque);
}

TEST(TDLTest, GatherRoundTrips) {
  // An embedding lookup: the row index is read from `ids`.
  OpDesc d = mustParse("(b, s, h) = table[opaque(ids[b, s]), h]");
  EXPECT_EQ(d.inputs, (std::vector<std::string>{"table", "ids"}));
  const Expr &body = d.outputs[0].body;
  ASSERT_EQ(body.kind, Expr::Kind::Access);
  ASSERT_EQ(body.indices.size(), 2u);
  EXPECT_TRUE(body.indices[0].isOpaque());
  EXPECT_EQ(body.indices[0].value, 1);
  ASSERT_EQ(body.operands.size(), 1u);
  EXPECT_EQ(printExpr(body.operands[0]), "ids[b, s]");
  EXPECT_EQ(d.str(), "(table, ids) -> (b, s, h) = table[opaque(ids[b, s]), h]");
  EXPECT_EQ(mustParse(d.str()), d);
  EXPECT_FALSE(d.isElementwise());
  // Several arguments, several opaque indices, values of index variables
  // and scalar inputs.
  OpDesc two = mustParse("(ids, t, c) -> (i, j) = t[opaque(ids[i] * 2, c), "
                         "opaque(j), j] + 1.0");
  EXPECT_EQ(two.str(), "(ids, t, c) -> (i, j) = t[opaque(ids[i] * 2, c), "
                       "opaque(j), j] + 1.0");
  EXPECT_EQ(mustParse(two.str()), two);
  ASSERT_EQ(two.outputs[0].body.operands[0].operands.size(), 3u);
  EXPECT_EQ(two.outputs[0].body.operands[0].operands[1].kind,
            Expr::Kind::Access);
  // No arguments at all: any row.
  EXPECT_EQ(mustParse("(t) -> (h) = t[opaque(), h]").str(),
            "(t) -> (h) = t[opaque(), h]");
}

TEST(TDLTest, GatherErrors) {
  EXPECT_NE(parseError("(b, h) = t[opaque(ids[b]) + 1, h]")
                .find("expected ']'"),
            std::string::npos);
  EXPECT_NE(parseError("(b, h) = t[1 + opaque(ids[b]), h]")
                .find("an opaque index must be a whole index"),
            std::string::npos);
  EXPECT_NE(parseError("(b, h) = t[opaque(ids[q]), h]")
                .find("unknown index variable 'q' in 'ids[q]'"),
            std::string::npos);
  EXPECT_NE(parseError("(ids, t) -> (b, h) = t[opaque(u[b]), h]")
                .find("access to 'u', which is not an input"),
            std::string::npos);
  EXPECT_NE(parseError("(b, h) = t[opaque(ids[b]), h] + ids[b, h]")
                .find("accessed with 2 indices"),
            std::string::npos);
  // A hand-built access whose opaque index claims more arguments than the
  // access holds.
  OpDesc d = mustParse("(t) -> (h) = t[opaque(), h]");
  d.outputs[0].body.indices[0].value = 2;
  std::optional<std::string> err = d.verify();
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("take 2 arguments but the access holds 0"),
            std::string::npos);
}

TEST(TDLTest, PrecedenceAndParentheses) {
  OpDesc d = mustParse("(i) = (a[i] + b[i]) * -c[i] - (x[i] - y[i])");
  EXPECT_EQ(d.str(), "(a, b, c, x, y) -> (i) = (a[i] + b[i]) * -c[i] - "
                     "(x[i] - y[i])");
  OpDesc idx = mustParse("(i, j) = a[(i + 1) * 2, j floordiv 2 mod 3]");
  EXPECT_EQ(idx.str(), "(a) -> (i, j) = a[(i + 1) * 2, j floordiv 2 mod 3]");
  OpDesc neg = mustParse("(i) = sum(k) (-a[i, k])");
  EXPECT_EQ(neg.str(), "(a) -> (i) = sum(k) (-a[i, k])");
  EXPECT_EQ(mustParse(neg.str()), neg);
}

TEST(TDLTest, ReducerVersusElementwiseMax) {
  OpDesc relu = mustParse("(i) = max(x[i], 0.0)");
  EXPECT_EQ(relu.outputs[0].reducer, Reducer::None);
  EXPECT_EQ(relu.outputs[0].body.kind, Expr::Kind::Call);
  OpDesc pool = mustParse("(i) = max(k) x[i * 2 + k]");
  EXPECT_EQ(pool.outputs[0].reducer, Reducer::Max);
}

TEST(TDLTest, ScalarInputsAndIndexValues) {
  OpDesc fill = mustParse("(v) -> (i, j) = v");
  EXPECT_EQ(fill.outputs[0].body.kind, Expr::Kind::Access);
  OpDesc iota = mustParse("(i) = i * 2");
  EXPECT_TRUE(iota.inputs.empty());
  EXPECT_EQ(iota.outputs[0].body.operands[0].kind, Expr::Kind::Index);
  OpDesc scaled = mustParse("(i) = alpha * x[i]");
  EXPECT_EQ(scaled.inputs, (std::vector<std::string>{"alpha", "x"}));
}

TEST(TDLTest, NestedReduction) {
  OpDesc d = mustParse("(i) = bias[i] + sum(k) a[i, k] * w[k]");
  EXPECT_EQ(d.outputs[0].reducer, Reducer::None);
  EXPECT_EQ(d.outputs[0].body.operands[1].kind, Expr::Kind::Reduce);
  EXPECT_EQ(d.str(), "(bias, a, w) -> (i) = bias[i] + (sum(k) a[i, k] * w[k])");
  EXPECT_EQ(mustParse(d.str()), d);
  EXPECT_EQ(d.getNestedReductionVars(), (std::vector<std::string>{"k"}));
  EXPECT_FALSE(d.isElementwise());
  OpDesc whole = mustParse("(i) = (sum(k) a[i, k]) * 2");
  EXPECT_EQ(whole.str(), "(a) -> (i) = (sum(k) a[i, k]) * 2");
}

TEST(TDLTest, MultipleOutputs) {
  OpDesc d = mustParse(
      "(x) -> mean(c) = sum(b) x[b, c]; sq(c) = sum(b) x[b, c] * x[b, c]");
  ASSERT_EQ(d.outputs.size(), 2u);
  EXPECT_EQ(d.outputs[1].name, "sq");
  EXPECT_EQ(mustParse(d.str()), d);
  EXPECT_NE(parseError("(x) -> (c) = x[c]; (c) = x[c]").find("needs a name"),
            std::string::npos);
}

TEST(TDLTest, ElementwiseDetection) {
  EXPECT_TRUE(mustParse("(i, j) = a[i, j] + exp(b[i, j])").isElementwise());
  EXPECT_FALSE(mustParse("(i, j) = a[j, i]").isElementwise());
  EXPECT_FALSE(mustParse("(i) = sum(k) a[i, k]").isElementwise());
  EXPECT_FALSE(mustParse("(i, j) = a[i, 0]").isElementwise());
}

TEST(TDLTest, Errors) {
  EXPECT_NE(parseError("(i, j) = a[i * j]").find("non-affine access 'i * j'"),
            std::string::npos);
  EXPECT_NE(parseError("(i, j) = a[i floordiv j]").find("divisor"),
            std::string::npos);
  EXPECT_NE(parseError("(i) = a[k]").find("unknown index variable 'k'"),
            std::string::npos);
  EXPECT_NE(parseError("(i) = a[i] + a[i, i]").find("accessed with 2"),
            std::string::npos);
  EXPECT_NE(parseError("(i, i) = a[i]").find("duplicate output index"),
            std::string::npos);
  EXPECT_NE(parseError("(i) = sum(i) a[i]").find("reduction variable"),
            std::string::npos);
  EXPECT_NE(parseError("(a) -> (i) = b[i]").find("not an input"),
            std::string::npos);
  EXPECT_NE(parseError("(i) = a[i / 2]").find("floordiv"), std::string::npos);
  EXPECT_NE(parseError("(i) = a[i] @").find("unexpected character"),
            std::string::npos);
  EXPECT_NE(parseError("(i) = a[i").find("expected ']'"), std::string::npos);
  EXPECT_EQ(parseError("(i) = a[i + 99999999999999999999]"),
            "integer does not fit in 64 bits, found '99999999999999999999'");
  EXPECT_EQ(parseError("(i) = sum(k : 99999999999999999999) a[i + k]"),
            "integer does not fit in 64 bits, found '99999999999999999999'");
  EXPECT_NE(parseError("(i) = a[i floordiv (4611686018427387904 * 4)]")
                .find("does not fit in 64 bits"),
            std::string::npos);
  EXPECT_NE(parseError("(i) = a[i mod (-9223372036854775807 - 2)]")
                .find("does not fit in 64 bits"),
            std::string::npos);
  // The largest constants still parse.
  mustParse("(i) = a[i floordiv 9223372036854775807]");
  mustParse("(i) = a[i floordiv (9223372036854775807 - 1 + 1)]");
}

/// `n` copies of `s`.
std::string repeat(const std::string &s, size_t n) {
  std::string r;
  for (size_t i = 0; i < n; ++i)
    r += s;
  return r;
}

TEST(TDLTest, NestingUpToTheLimitIsAccepted) {
  // 1000 parentheses, calls, negations and a 1000-term chain all fit in
  // kMaxNestingDepth, and the printer handles them.
  for (const std::string &text :
       {"(i) = " + repeat("(", 1000) + "a[i]" + repeat(")", 1000),
        "(i) = " + repeat("exp(", 1000) + "a[i]" + repeat(")", 1000),
        "(i) = " + repeat("-", 1000) + "a[i]",
        "(i) = a[i]" + repeat(" + a[i]", 999),
        "(i) = a[i" + repeat(" + 0", 999) + "]",
        "(i) = a[" + repeat("(", 1000) + "i" + repeat(")", 1000) + "]"}) {
    OpDesc d = mustParse(text);
    EXPECT_EQ(mustParse(d.str()), d);
  }
}

TEST(TDLTest, NestingBeyondTheLimitIsAnError) {
  const std::string msg = "nesting deeper than 1024 levels";
  // Deep recursion of the parser.
  EXPECT_NE(
      parseError("(i) = " + repeat("(", 10000) + "a[i]" + repeat(")", 10000))
          .find(msg),
      std::string::npos);
  EXPECT_NE(
      parseError("(i) = " + repeat("exp(", 10000) + "a[i]" + repeat(")", 10000))
          .find(msg),
      std::string::npos);
  EXPECT_NE(parseError("(i) = " + repeat("-", 10000) + "a[i]").find(msg),
            std::string::npos);
  EXPECT_NE(parseError("(i) = a[" + repeat("(", 10000) + "i" +
                       repeat(")", 10000) + "]")
                .find(msg),
            std::string::npos);
  EXPECT_NE(parseError("(i) = a[" + repeat("-", 10000) + "i]").find(msg),
            std::string::npos);
  EXPECT_NE(parseError("(i) = " + repeat("sum(k) ", 2000) + "a[i]").find(msg),
            std::string::npos);
  // Deep trees from long operator chains, which the parser builds in a loop
  // but every later pass walks recursively.
  EXPECT_NE(parseError("(i) = a[i" + repeat(" + 0", 30000) + "]").find(msg),
            std::string::npos);
  EXPECT_NE(parseError("(i) = a[i]" + repeat(" * 1.0", 30000)).find(msg),
            std::string::npos);
  EXPECT_NE(parseError("(i) = a[i]" + repeat(" - a[i]", 30000)).find(msg),
            std::string::npos);
  // Just past the limit.
  EXPECT_NE(parseError("(i) = a[i]" + repeat(" + a[i]", 1023)).find(msg),
            std::string::npos);
  mustParse("(i) = a[i]" + repeat(" + a[i]", 1022));
}

TEST(TDLTest, VerifyRejectsDeepTreesBuiltInMemory) {
  // A tree built without the parser is checked by verify() before any
  // recursive pass runs over it.
  OpDesc d;
  d.inputs = {"a"};
  OutputDesc out;
  out.vars = {"i"};
  Expr e;
  e.kind = Expr::Kind::Access;
  e.name = "a";
  e.indices.push_back(IndexExpr::makeVar("i"));
  for (int i = 0; i < 5000; ++i) {
    Expr neg;
    neg.kind = Expr::Kind::Neg;
    neg.operands.push_back(std::move(e));
    e = std::move(neg);
  }
  out.body = std::move(e);
  d.outputs.push_back(std::move(out));
  std::optional<std::string> err = d.verify();
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(*err, "nesting deeper than 1024 levels");
}

TEST(TDLLibraryTest, ParsesAndInstantiates) {
  std::string error;
  auto lib = Library::parse(R"(
# Two entries.
op mxnet.FullyConnected {
  (data, weight) -> (b, o) = sum(i) data[b, i] * weight[o, i]
}
op mxnet.Pooling<stride = 2, kernel> {
  (data) -> (b, c, x) = max(k) data[b, c, x * $stride + k]  # window
}
)",
                            error);
  ASSERT_TRUE(lib.has_value()) << error;
  EXPECT_EQ(lib->size(), 2u);
  const LibraryEntry *pool = lib->lookup("mxnet.Pooling");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->line, 6u);
  OpContext none;
  auto desc = Library::instantiate(*pool, none, error);
  ASSERT_TRUE(desc.has_value()) << error;
  EXPECT_EQ(desc->str(), "(data) -> (b, c, x) = max(k) data[b, c, x * 2 + k]");
  OpContext strided;
  strided.attribute = [](const std::string &n) -> std::optional<int64_t> {
    return n == "stride" ? std::optional<int64_t>(3) : std::nullopt;
  };
  auto three = Library::instantiate(*pool, strided, error);
  ASSERT_TRUE(three.has_value()) << error;
  EXPECT_EQ(three->str(), "(data) -> (b, c, x) = max(k) data[b, c, x * 3 + k]");
}

TEST(TDLLibraryTest, PacksAndShapes) {
  std::string error;
  auto lib = Library::parse(R"(
op fw.relu { (x) -> (i...) = max(x[i...], 0.0) }
op fw.bias_add { (x, b) -> (i..., c) = x[i..., c] + b[c] }
op fw.flatten { (x) -> (n, f) = x[n, f floordiv $in0_2, f mod $in0_2] }
)",
                            error);
  ASSERT_TRUE(lib.has_value()) << error;
  OpContext ctx;
  ctx.operandShapes = {{2, 3, 4}, {4}};
  ctx.resultShapes = {{2, 3, 4}};
  auto relu = Library::instantiate(*lib->lookup("fw.relu"), ctx, error);
  ASSERT_TRUE(relu.has_value()) << error;
  EXPECT_EQ(relu->str(), "(x) -> (i0, i1, i2) = max(x[i0, i1, i2], 0.0)");
  auto bias = Library::instantiate(*lib->lookup("fw.bias_add"), ctx, error);
  ASSERT_TRUE(bias.has_value()) << error;
  EXPECT_EQ(bias->str(), "(x, b) -> (i0, i1, c) = x[i0, i1, c] + b[c]");
  OpContext vec;
  vec.operandShapes = {{4}, {4}};
  vec.resultShapes = {{4}};
  auto bias1 = Library::instantiate(*lib->lookup("fw.bias_add"), vec, error);
  ASSERT_TRUE(bias1.has_value()) << error;
  EXPECT_EQ(bias1->str(), "(x, b) -> (c) = x[c] + b[c]");
  OpContext flat;
  flat.operandShapes = {{2, 3, 4}};
  flat.resultShapes = {{2, 12}};
  auto f = Library::instantiate(*lib->lookup("fw.flatten"), flat, error);
  ASSERT_TRUE(f.has_value()) << error;
  EXPECT_EQ(f->str(), "(x) -> (n, f) = x[n, f floordiv 4, f mod 4]");
  OpContext small;
  small.operandShapes = {{2}};
  small.resultShapes = {{2}};
  EXPECT_FALSE(Library::instantiate(*lib->lookup("fw.flatten"), small, error));
  EXPECT_NE(error.find("'$in0_2' names a dimension"), std::string::npos);
}

TEST(TDLLibraryTest, ReportsErrorsWithPositions) {
  std::string error;
  EXPECT_FALSE(Library::parse("op a.b { (i) = x[i] \n", error));
  EXPECT_EQ(error, "1:8: unterminated description of 'a.b'");
  EXPECT_FALSE(Library::parse("\nfoo a.b {}", error));
  EXPECT_EQ(error, "2:1: expected 'op'");
  EXPECT_FALSE(Library::parse("op a.b { (i) = x[i * i] }", error));
  EXPECT_NE(error.find("invalid description of 'a.b': non-affine"),
            std::string::npos);
  EXPECT_FALSE(
      Library::parse("op a.b { (i) = x[i] } op a.b { (i) = x[i] }", error));
  EXPECT_NE(error.find("duplicate"), std::string::npos);
  EXPECT_FALSE(Library::parse("op a.b { (i) = x[i + $s] }", error));
  EXPECT_NE(error.find("'$s' is not a parameter"), std::string::npos);
  EXPECT_FALSE(Library::parse("op a.b<s = 99999999999999999999> { (i) = "
                              "x[i + $s] }",
                              error));
  EXPECT_EQ(error, "1:12: expected an integer default value");
}

} // namespace
