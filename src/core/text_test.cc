#include "core/text.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace cgov {
namespace {

TEST(SafeText, ValidTextPassesUnchanged) {
  for (const char* s : {"", "python train.py", "naïve café", "日本語", "emoji 🚀", "tab-free"}) {
    EXPECT_TRUE(IsSafeText(s)) << s;
    EXPECT_EQ(SafeText(s), s);
  }
}

TEST(SafeText, InvalidBytesAndControlsAreEscaped) {
  EXPECT_EQ(SafeText("arg\xff"), "arg\\xff");
  EXPECT_EQ(SafeText("\x1b[2Jboom"), "\\x1b[2Jboom") << "no terminal escape survives";
  EXPECT_EQ(SafeText("a\nb\tc\x7f"), "a\\x0ab\\x09c\\x7f");
  EXPECT_EQ(SafeText("\xc2\x9b"
                     "31m"),
            "\\xc2\\x9b31m")
      << "C1 CSI";
  EXPECT_EQ(SafeText("\xc0\xaf"), "\\xc0\\xaf") << "overlong '/'";
  EXPECT_EQ(SafeText("\xed\xa0\x80"), "\\xed\\xa0\\x80") << "a surrogate";
  EXPECT_EQ(SafeText("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80") << "above U+10FFFF";
  EXPECT_EQ(SafeText("\xe6\x97"), "\\xe6\\x97") << "truncated at the end";
  EXPECT_EQ(SafeText(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_FALSE(IsSafeText("arg\xff"));
}

TEST(SafeText, EveryByteStringBecomesValidJson) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const std::string safe = SafeText(all + all.substr(128) + "\xe2\x82");
  EXPECT_TRUE(IsSafeText(safe)) << "idempotent";
  EXPECT_EQ(SafeText(safe), safe);
  EXPECT_NO_THROW((void)nlohmann::json(safe).dump());
}

}  // namespace
}  // namespace cgov
