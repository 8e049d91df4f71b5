// The emulator's environment parsing (sizes and core lists).
#include <gtest/gtest.h>

#include "../../hal/drivers/emu/emu_config.h"

using nhal::emu::parse_bytes;
using nhal::emu::parse_core_list;

TEST(EmuConfig, ParsesSizes) {
  uint64_t v = 0;
  EXPECT_TRUE(parse_bytes("1024", &v));
  EXPECT_EQ(v, 1024u);
  EXPECT_TRUE(parse_bytes("24G", &v));
  EXPECT_EQ(v, 24ull << 30);
  EXPECT_TRUE(parse_bytes("512M", &v));
  EXPECT_EQ(v, 512ull << 20);
  EXPECT_TRUE(parse_bytes("1.5GiB", &v));
  EXPECT_EQ(v, 3ull << 29);
  EXPECT_TRUE(parse_bytes("64k", &v));
  EXPECT_EQ(v, 64ull << 10);
  EXPECT_FALSE(parse_bytes("", &v));
  EXPECT_FALSE(parse_bytes("lots", &v));
  EXPECT_FALSE(parse_bytes("12X", &v));
  EXPECT_FALSE(parse_bytes("0", &v));
}

TEST(EmuConfig, ParsesCoreLists) {
  std::vector<int> v;
  EXPECT_TRUE(parse_core_list("0-1,3", &v));
  EXPECT_EQ(v, (std::vector<int>{0, 1, 3}));
  EXPECT_TRUE(parse_core_list("2", &v));
  EXPECT_EQ(v, (std::vector<int>{2}));
  EXPECT_TRUE(parse_core_list("3, 1", &v));
  EXPECT_EQ(v, (std::vector<int>{3, 1}));
  EXPECT_FALSE(parse_core_list("", &v));
  EXPECT_FALSE(parse_core_list("1-", &v));
  EXPECT_FALSE(parse_core_list("3-1", &v));
  EXPECT_FALSE(parse_core_list("a", &v));
  EXPECT_FALSE(parse_core_list("1,,2", &v));
}
