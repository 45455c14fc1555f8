//===- ByteSizeTest.cpp - Sizes in bytes for tofu-search's device-memory --===//

#include "tofu/PlanIO/PlanIO.h"

#include "gtest/gtest.h"

using namespace tofu;

namespace {

TEST(ByteSizeTest, UnitsAndSpaces) {
  std::string error;
  EXPECT_EQ(parseByteSize("1024", error), 1024.0);
  EXPECT_EQ(parseByteSize("80GB", error), 80e9);
  EXPECT_EQ(parseByteSize("16 GiB", error), 16.0 * (1 << 30));
  EXPECT_EQ(parseByteSize("1.5MB", error), 1.5e6);
  EXPECT_EQ(parseByteSize("2KiB", error), 2048.0);
  EXPECT_EQ(parseByteSize("3TB", error), 3e12);
  EXPECT_EQ(parseByteSize("0B", error), 0.0);
  EXPECT_TRUE(error.empty());
}

TEST(ByteSizeTest, Rejects) {
  for (const char *text : {"", "GB", "lots", "-1GB", "80 gb", "80GBs",
                           "nan", "inf", "1e999"}) {
    std::string error;
    EXPECT_FALSE(parseByteSize(text, error)) << text;
    EXPECT_NE(error.find("is not a size in bytes"), std::string::npos)
        << text;
  }
}

} // namespace
