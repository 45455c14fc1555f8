//===- SafeTensorsTest.cpp - safetensors reading and writing --------------===//
//
// Round trips through files, tile reads and writes of 1-D to 3-D boxes, the
// layout of new files, and one test per way a file can be corrupt: each must
// give an error and never read out of bounds (the sanitizer build checks
// the latter).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/SafeTensors.h"

#include "gtest/gtest.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

using namespace tofu::safetensors;

namespace {

/// A file with the header `json` (unpadded) and `dataBytes` bytes of data
/// 0, 1, 2, ...
std::vector<uint8_t> makeFile(const std::string &json, size_t dataBytes) {
  std::vector<uint8_t> file(8);
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i)
    file[i] = uint8_t(n >> (8 * i));
  file.insert(file.end(), json.begin(), json.end());
  for (size_t i = 0; i < dataBytes; ++i)
    file.push_back(uint8_t(i));
  return file;
}

/// Parses `file` and returns the error ("" when it parses).
std::string parseError(const std::vector<uint8_t> &file) {
  Header header;
  std::string error;
  bool ok = parseHeader(file.data(), file.size(), header, error);
  if (ok) {
    EXPECT_TRUE(error.empty());
    return "";
  }
  EXPECT_FALSE(error.empty());
  EXPECT_TRUE(header.tensors.empty());
  return error;
}

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() /
          ("tofu-safetensors-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

TEST(SafeTensorsTest, ParsesAValidHeader) {
  std::vector<uint8_t> file = makeFile(
      R"({"__metadata__":{"format":"pt","k\"ey":"v\u00e9"},)"
      R"("a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"( "b" : { "shape" : [], "data_offsets" : [24, 32], "dtype" : "F64" },)"
      R"("empty":{"dtype":"I32","shape":[0,4],"data_offsets":[32,32]}}   )",
      32);
  Header header;
  std::string error;
  ASSERT_TRUE(parseHeader(file.data(), file.size(), header, error)) << error;
  ASSERT_EQ(header.tensors.size(), 3u);
  EXPECT_EQ(header.tensors[0].name, "a");
  EXPECT_EQ(header.tensors[0].dtype, DType::F32);
  EXPECT_EQ(header.tensors[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(header.tensors[1].dtype, DType::F64);
  EXPECT_TRUE(header.tensors[1].shape.empty());
  EXPECT_EQ(header.tensors[1].begin, 24u);
  EXPECT_EQ(header.tensors[2].getNumElements(), 0u);
  ASSERT_EQ(header.metadata.size(), 2u);
  EXPECT_EQ(header.metadata[1].first, "k\"ey");
  EXPECT_EQ(header.metadata[1].second, "v\xc3\xa9");
  EXPECT_EQ(header.dataStart, file.size() - 32);
  EXPECT_NE(header.find("b"), nullptr);
  EXPECT_EQ(header.find("c"), nullptr);
  EXPECT_TRUE(header.verify(file.size(), error)) << error;
  std::ostringstream os;
  header.dump(os);
  EXPECT_NE(os.str().find("a: F32 [2, 3] bytes [0, 24)"), std::string::npos);
}

TEST(SafeTensorsTest, EveryDTypeRoundTrips) {
  for (DType t :
       {DType::BOOL, DType::U8, DType::I8, DType::F8_E5M2, DType::F8_E4M3,
        DType::I16, DType::U16, DType::F16, DType::BF16, DType::I32, DType::U32,
        DType::F32, DType::I64, DType::U64, DType::F64}) {
    std::optional<DType> back = parseDType(getDTypeName(t));
    ASSERT_TRUE(back.has_value()) << getDTypeName(t);
    EXPECT_EQ(*back, t);
    EXPECT_GT(getDTypeSize(t), 0u);
  }
  EXPECT_FALSE(parseDType("F128").has_value());
  EXPECT_FALSE(parseDType("f32").has_value());
}

//===----------------------------------------------------------------------===//
// Corrupt files
//===----------------------------------------------------------------------===//

const char *kValid =
    R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
    R"("b":{"dtype":"I64","shape":[1],"data_offsets":[16,24]}})";

TEST(SafeTensorsTest, ValidBaselineOfTheCorruptions) {
  EXPECT_EQ(parseError(makeFile(kValid, 24)), "");
}

TEST(SafeTensorsTest, RejectsATruncatedFile) {
  std::vector<uint8_t> file = makeFile(kValid, 24);
  // Every proper prefix: too short for the length, for the header, or for
  // the data.
  for (size_t n = 0; n < file.size(); ++n) {
    std::vector<uint8_t> prefix(file.begin(), file.begin() + n);
    EXPECT_NE(parseError(prefix), "") << "prefix of " << n << " bytes";
  }
  EXPECT_NE(parseError({}).find("fewer than the 8"), std::string::npos);
}

TEST(SafeTensorsTest, RejectsAHeaderLengthLargerThanTheFile) {
  std::vector<uint8_t> file = makeFile(kValid, 24);
  file[7] = 0x80; // 2^63 + n
  EXPECT_NE(parseError(file).find("larger than the rest of the file"),
            std::string::npos);
  std::vector<uint8_t> all(8, 0xFF);
  EXPECT_NE(parseError(all).find("larger than the rest of the file"),
            std::string::npos);
}

TEST(SafeTensorsTest, RejectsBadJSON) {
  for (
      const char *json :
      {"",
       "{",
       "}",
       "[]",
       "{\"a\"}",
       "{\"a\":}",
       "{\"a\":{},}",
       R"({"a":{"dtype":"F32","shape":[1,],"data_offsets":[0,4]}})",
       R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}} x)",
       R"({"a":{"dtype":"F32" "shape":[1],"data_offsets":[0,4]}})",
       R"({"a":{"dtype":"F32","shape":[01],"data_offsets":[0,4]}})",
       R"({"a":{"dtype":"F\q32","shape":[1],"data_offsets":[0,4]}})",
       R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]})",
       R"({"\ud800":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
       "{\"a\xff\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
       "{\"a\x01\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
       R"({"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]})",
       R"({"a":"F32"})",
       R"({"a":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})",
       R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})",
       R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
       R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})",
       R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})",
       R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})",
       R"({"a":{"dtype":"F32","shape":[1]}})",
       R"({"a":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
       R"({"__metadata__":{"k":1}})",
       R"({"__metadata__":[]})",
       R"({"__metadata__":{"k":"a","k":"b"}})",
       R"({"__metadata__":{},"__metadata__":{}})"}) {
    std::vector<uint8_t> file = makeFile(json, 8);
    EXPECT_NE(parseError(file), "") << json;
  }
}

TEST(SafeTensorsTest, RejectsOffsetsPastTheEnd) {
  std::string error = parseError(makeFile(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 8));
  EXPECT_NE(error.find("past the data section"), std::string::npos) << error;
  // An end that would overflow dataStart + end.
  error = parseError(makeFile(
      R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[18446744073709551615,18446744073709551615]}})",
      8));
  EXPECT_NE(error.find("past the data section"), std::string::npos) << error;
  error = parseError(makeFile(
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[18446744073709551616,1]}})",
      8));
  EXPECT_NE(error, "");
  error = parseError(
      makeFile(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[5,4]}})", 8));
  EXPECT_NE(error.find("end before they begin"), std::string::npos) << error;
}

TEST(SafeTensorsTest, RejectsOverlappingTensors) {
  std::string error = parseError(
      makeFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
               R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
               16));
  EXPECT_NE(error.find("overlap"), std::string::npos) << error;
  // One inside another, listed last.
  error = parseError(
      makeFile(R"({"b":{"dtype":"U8","shape":[2],"data_offsets":[3,5]},)"
               R"("a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
               R"("c":{"dtype":"U8","shape":[2],"data_offsets":[8,10]}})",
               16));
  EXPECT_NE(error.find("overlap"), std::string::npos) << error;
  // Same range twice.
  error = parseError(
      makeFile(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
               R"("b":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})",
               8));
  EXPECT_NE(error.find("overlap"), std::string::npos) << error;
  // Touching ranges, gaps and empty tensors anywhere are fine.
  EXPECT_EQ(parseError(makeFile(
                R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                R"("e":{"dtype":"U8","shape":[0],"data_offsets":[2,2]},)"
                R"("b":{"dtype":"U8","shape":[2],"data_offsets":[6,8]},)"
                R"("c":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}})",
                8)),
            "");
}

TEST(SafeTensorsTest, RejectsASizeThatDoesNotMatchTheShape) {
  std::string error = parseError(makeFile(
      R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 24));
  EXPECT_NE(error.find("give 24 bytes but data_offsets hold 20"),
            std::string::npos)
      << error;
  // Element counts that overflow 64 bits.
  error = parseError(makeFile(
      R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}})",
      8));
  EXPECT_NE(error.find("overflows"), std::string::npos) << error;
  error = parseError(makeFile(
      R"({"a":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}})",
      8));
  EXPECT_NE(error.find("overflows"), std::string::npos) << error;
  error = parseError(makeFile(
      R"({"a":{"dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,0]}})",
      8));
  EXPECT_NE(error.find("not a non-negative 64-bit integer"), std::string::npos)
      << error;
}

TEST(SafeTensorsTest, RejectsAnUnknownDType) {
  std::string error = parseError(
      makeFile(R"({"a":{"dtype":"F31","shape":[1],"data_offsets":[0,4]}})", 8));
  EXPECT_NE(error.find("unknown dtype 'F31'"), std::string::npos) << error;
}

TEST(SafeTensorsTest, RejectsDuplicateNames) {
  std::string error = parseError(
      makeFile(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
               R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
               8));
  EXPECT_NE(error.find("'a' appears twice"), std::string::npos) << error;
  // Equal after unescaping.
  error = parseError(
      makeFile(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
               R"("\u0061":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
               8));
  EXPECT_NE(error.find("'a' appears twice"), std::string::npos) << error;
  // An empty name, which layoutHeader() would not write.
  error = parseError(
      makeFile(R"({"":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 8));
  EXPECT_NE(error.find("empty name"), std::string::npos) << error;
}

//===----------------------------------------------------------------------===//
// Writing and reading
//===----------------------------------------------------------------------===//

TEST(SafeTensorsTest, WriteFileRoundTrips) {
  std::vector<float> a(2 * 3);
  std::iota(a.begin(), a.end(), 0.5f);
  std::vector<double> b = {1e-300, -2.5, 3.25};
  std::vector<int32_t> c = {-7};
  std::vector<int64_t> d = {int64_t(1) << 40, -1};
  std::string path = tempPath("roundtrip.safetensors");
  std::string error;
  ASSERT_TRUE(writeFile(path,
                        {{{"a", DType::F32, {2, 3}}, a.data()},
                         {{"c", DType::I32, {}}, c.data()},
                         {{"b", DType::F64, {3}}, b.data()},
                         {{"none", DType::F32, {0, 5}}, nullptr},
                         {{"d", DType::I64, {2}}, d.data()}},
                        {{"step", "3"}, {"note", "quote\" and \\"}}, error))
      << error;
  std::unique_ptr<MappedFile> file = MappedFile::open(path, error);
  ASSERT_TRUE(file) << error;
  EXPECT_EQ(file->size() % 4, 0u);
  Header header;
  ASSERT_TRUE(parseHeader(file->data(), file->size(), header, error)) << error;
  EXPECT_EQ(header.dataStart % 8, 0u);
  ASSERT_EQ(header.tensors.size(), 5u);
  // Largest elements first, each aligned to its element size, no gaps.
  EXPECT_EQ(header.tensors[0].name, "b");
  EXPECT_EQ(header.tensors[1].name, "d");
  EXPECT_EQ(header.tensors[2].name, "a");
  EXPECT_EQ(header.tensors[3].name, "c");
  uint64_t offset = 0;
  for (const TensorInfo &t : header.tensors) {
    EXPECT_EQ(t.begin, offset) << t.name;
    EXPECT_EQ(t.begin % getDTypeSize(t.dtype), 0u) << t.name;
    offset = t.end;
  }
  EXPECT_EQ(header.dataStart + offset, file->size());
  ASSERT_EQ(header.metadata.size(), 2u);
  EXPECT_EQ(header.metadata[1].second, "quote\" and \\");

  std::vector<float> a2(6);
  ASSERT_TRUE(readTile(file->data(), file->size(), header, *header.find("a"),
                       {0, 0}, {2, 3}, a2.data(), {3, 1}, error))
      << error;
  EXPECT_EQ(a2, a);
  std::vector<double> b2(3);
  ASSERT_TRUE(readTile(file->data(), file->size(), header, *header.find("b"),
                       {0}, {3}, b2.data(), {1}, error));
  EXPECT_EQ(b2, b);
  int32_t c2 = 0;
  ASSERT_TRUE(readTile(file->data(), file->size(), header, *header.find("c"),
                       {}, {}, &c2, {}, error));
  EXPECT_EQ(c2, -7);
  std::vector<int64_t> d2(2);
  ASSERT_TRUE(readTile(file->data(), file->size(), header, *header.find("d"),
                       {0}, {2}, d2.data(), {1}, error));
  EXPECT_EQ(d2, d);
  ASSERT_TRUE(readTile(file->data(), file->size(), header, *header.find("none"),
                       {0, 1}, {0, 4}, nullptr, {5, 1}, error));
  file.reset();
  std::filesystem::remove(path);
}

TEST(SafeTensorsTest, LayoutRejectsBadSpecs) {
  Layout layout;
  std::string error;
  EXPECT_FALSE(layoutHeader({{"a", DType::F32, {1}}, {"a", DType::F32, {1}}},
                            {}, layout, error));
  EXPECT_NE(error.find("appears twice"), std::string::npos);
  EXPECT_FALSE(layoutHeader({{"", DType::F32, {1}}}, {}, layout, error));
  EXPECT_FALSE(
      layoutHeader({{"__metadata__", DType::F32, {1}}}, {}, layout, error));
  EXPECT_FALSE(layoutHeader({{"a", DType::F32, {-1}}}, {}, layout, error));
  EXPECT_FALSE(layoutHeader({{"a", DType::F64, {int64_t(1) << 62, 4}}}, {},
                            layout, error));
  EXPECT_FALSE(layoutHeader({{"a", DType::F32, {1}}}, {{"k", "1"}, {"k", "2"}},
                            layout, error));
  EXPECT_TRUE(layoutHeader({}, {}, layout, error)) << error;
  EXPECT_EQ(layout.fileSize, 16u);
}

/// A 3-D tensor 4x5x6 of F32 with value 100 i + 10 j + k, written tile by
/// tile through a layout as separate processes would, then read back in
/// boxes.
class TileTest : public ::testing::Test {
protected:
  void SetUp() override {
    path = tempPath("tiles.safetensors");
    std::string error;
    ASSERT_TRUE(layoutHeader({{"v", DType::I16, {7}},
                              {"t", DType::F32, {4, 5, 6}},
                              {"m", DType::F64, {3, 4}}},
                             {{"format", "pt"}}, layout, error))
        << error;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t(layout.fileSize)), 0);
    ASSERT_EQ(::pwrite(fd, layout.prefix.data(), layout.prefix.size(), 0),
              ssize_t(layout.prefix.size()));
    size_t t = 0;
    while (layout.header.tensors[t].name != "t")
      ++t;
    // Four tiles: halves of dimension 0 times halves of dimension 2, each
    // from a buffer in column-major order (strides {1, 2, 10}).
    for (int64_t i0 : {0, 2})
      for (int64_t k0 : {0, 3}) {
        std::vector<float> tile(2 * 5 * 3);
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 5; ++j)
            for (int64_t k = 0; k < 3; ++k)
              tile[i + 2 * j + 10 * k] = value(i0 + i, j, k0 + k);
        ASSERT_TRUE(writeTile(fd, layout, t, {i0, 0, k0}, {2, 5, 3},
                              tile.data(), {1, 2, 10}, error))
            << error;
      }
    size_t m = 0;
    while (layout.header.tensors[m].name != "m")
      ++m;
    std::vector<double> mv(12);
    std::iota(mv.begin(), mv.end(), 0.0);
    ASSERT_TRUE(
        writeTile(fd, layout, m, {0, 0}, {3, 4}, mv.data(), {4, 1}, error));
    ASSERT_EQ(::close(fd), 0);
    file = MappedFile::open(path, error);
    ASSERT_TRUE(file) << error;
    ASSERT_TRUE(parseHeader(file->data(), file->size(), header, error))
        << error;
  }
  void TearDown() override {
    file.reset();
    std::filesystem::remove(path);
  }
  static float value(int64_t i, int64_t j, int64_t k) {
    return float(100 * i + 10 * j + k);
  }

  std::string path;
  Layout layout;
  std::unique_ptr<MappedFile> file;
  Header header;
};

TEST_F(TileTest, TheFileReadsBackAsLaidOut) {
  EXPECT_EQ(file->size(), layout.fileSize);
  EXPECT_EQ(header.dataStart, layout.header.dataStart);
  ASSERT_EQ(header.tensors.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(header.tensors[i].name, layout.header.tensors[i].name);
    EXPECT_EQ(header.tensors[i].begin, layout.header.tensors[i].begin);
  }
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(file->data()),
                        layout.prefix.size()),
            layout.prefix);
}

TEST_F(TileTest, Reads1DBoxes) {
  std::string error;
  const TensorInfo &m = *header.find("m");
  // A 1-D view: row 1, columns 1..3 of m, into a strided buffer.
  std::vector<double> out(6, -1);
  ASSERT_TRUE(readTile(file->data(), file->size(), header, m, {1, 1}, {1, 3},
                       out.data(), {0, 2}, error))
      << error;
  EXPECT_EQ(out, (std::vector<double>{5, -1, 6, -1, 7, -1}));
}

TEST_F(TileTest, Reads2DBoxes) {
  std::string error;
  const TensorInfo &m = *header.find("m");
  std::vector<double> out(4);
  ASSERT_TRUE(readTile(file->data(), file->size(), header, m, {1, 2}, {2, 2},
                       out.data(), {2, 1}, error))
      << error;
  EXPECT_EQ(out, (std::vector<double>{6, 7, 10, 11}));
  // Transposed into the buffer.
  ASSERT_TRUE(readTile(file->data(), file->size(), header, m, {1, 2}, {2, 2},
                       out.data(), {1, 2}, error));
  EXPECT_EQ(out, (std::vector<double>{6, 10, 7, 11}));
}

TEST_F(TileTest, Reads3DBoxes) {
  std::string error;
  const TensorInfo &t = *header.find("t");
  // Every box of a few sizes and positions, row-major.
  for (int64_t s0 : {1, 3})
    for (int64_t s1 : {2, 5})
      for (int64_t s2 : {1, 4})
        for (int64_t l0 = 0; l0 + s0 <= 4; l0 += 1)
          for (int64_t l1 = 0; l1 + s1 <= 5; l1 += 3)
            for (int64_t l2 = 0; l2 + s2 <= 6; l2 += 2) {
              std::vector<float> out(s0 * s1 * s2, -1);
              ASSERT_TRUE(readTile(file->data(), file->size(), header, t,
                                   {l0, l1, l2}, {s0, s1, s2}, out.data(),
                                   {s1 * s2, s2, 1}, error))
                  << error;
              for (int64_t i = 0; i < s0; ++i)
                for (int64_t j = 0; j < s1; ++j)
                  for (int64_t k = 0; k < s2; ++k)
                    ASSERT_EQ(out[(i * s1 + j) * s2 + k],
                              value(l0 + i, l1 + j, l2 + k));
            }
}

TEST_F(TileTest, RejectsBoxesOutsideTheTensor) {
  std::string error;
  const TensorInfo &t = *header.find("t");
  float out[64];
  EXPECT_FALSE(readTile(file->data(), file->size(), header, t, {3, 0, 0},
                        {2, 1, 1}, out, {1, 1, 1}, error));
  EXPECT_NE(error.find("outside tensor 't'"), std::string::npos) << error;
  EXPECT_FALSE(readTile(file->data(), file->size(), header, t, {-1, 0, 0},
                        {1, 1, 1}, out, {1, 1, 1}, error));
  EXPECT_FALSE(readTile(file->data(), file->size(), header, t, {0, 0}, {1, 1},
                        out, {1, 1}, error));
  EXPECT_NE(error.find("rank 3"), std::string::npos) << error;
  EXPECT_FALSE(readTile(file->data(), file->size(), header, t,
                        {0, 0, INT64_MAX}, {1, 1, 2}, out, {1, 1, 1}, error));
  // A tensor that does not fit the file it is read from.
  TensorInfo forged = t;
  forged.shape[0] += 1;
  forged.end = forged.begin + 5 * 5 * 6 * 4;
  EXPECT_FALSE(readTile(file->data(), header.dataStart + t.end - 1, header, t,
                        {0, 0, 0}, {1, 1, 1}, out, {1, 1, 1}, error));
  EXPECT_FALSE(readTile(file->data(), file->size(), header, forged, {4, 0, 0},
                        {1, 1, 1}, out, {1, 1, 1}, error));
}

TEST(SafeTensorsTest, MappedFileReportsMissingFiles) {
  std::string error;
  EXPECT_FALSE(MappedFile::open(tempPath("does-not-exist"), error));
  EXPECT_NE(error.find("cannot open"), std::string::npos);
  std::string empty = tempPath("empty");
  std::ofstream(empty).close();
  std::unique_ptr<MappedFile> file = MappedFile::open(empty, error);
  ASSERT_TRUE(file);
  EXPECT_EQ(file->size(), 0u);
  Header header;
  EXPECT_FALSE(parseHeader(file->data(), file->size(), header, error));
  std::filesystem::remove(empty);
}

} // namespace
