// The environment parsing of the HAL (sizes, flags) and the emulator (core lists).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "../../hal/drivers/emu/emu_config.h"
#include "../../hal/loader/hal_error.h"
#include "neuron_hal/settings.h"

using nhal::emu::parse_core_list;

namespace {
bool parse_bytes(const std::string& text, uint64_t* out) { return nhal::parse_size(text, out); }
}  // namespace

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
  EXPECT_FALSE(parse_bytes("1.5.3G", &v));
  EXPECT_FALSE(parse_bytes("1.G", &v));
  EXPECT_FALSE(parse_bytes(".5G", &v));
  EXPECT_FALSE(parse_bytes("-1G", &v));
  EXPECT_FALSE(parse_bytes("1GG", &v));
}

TEST(HalSettings, FlagsAcceptTheTableWordsInAnyCaseAndRefuseTheRest) {
  int v = -1;
  for (const char* on : {"1", "true", "YES", "On", " on "}) {
    setenv("NHAL_TEST_FLAG", on, 1);
    ASSERT_EQ(nhal_env_flag("NHAL_TEST_FLAG", 0, &v), NHAL_STATUS_OK) << on;
    EXPECT_EQ(v, 1) << on;
  }
  for (const char* off : {"0", "false", "No", "OFF"}) {
    setenv("NHAL_TEST_FLAG", off, 1);
    ASSERT_EQ(nhal_env_flag("NHAL_TEST_FLAG", 1, &v), NHAL_STATUS_OK) << off;
    EXPECT_EQ(v, 0) << off;
  }
  setenv("NHAL_TEST_FLAG", "", 1);
  ASSERT_EQ(nhal_env_flag("NHAL_TEST_FLAG", 1, &v), NHAL_STATUS_OK);
  EXPECT_EQ(v, 1);
  for (const char* bad : {"2", "enabled", "tru", "-1"}) {
    setenv("NHAL_TEST_FLAG", bad, 1);
    EXPECT_EQ(nhal_env_flag("NHAL_TEST_FLAG", 0, &v), NHAL_STATUS_INVALID_ARGUMENT) << bad;
    EXPECT_NE(std::string(nhal_last_error_message()).find("NHAL_TEST_FLAG='"), std::string::npos);
  }
  unsetenv("NHAL_TEST_FLAG");
  ASSERT_EQ(nhal_env_flag("NHAL_TEST_FLAG", 1, &v), NHAL_STATUS_OK);
  EXPECT_EQ(v, 1);
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
