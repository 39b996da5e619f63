#include <gtest/gtest.h>

#include <string>

#include "engine/lock_types.h"

namespace leasehold {
namespace {

TEST(Names, AcceptsOneTo255Characters) {
  EXPECT_TRUE(ValidateName("a", "resource").ok());
  EXPECT_TRUE(ValidateName(std::string(255, 'x'), "resource").ok());
  EXPECT_TRUE(ValidateName("invoice:481", "resource").ok());
}

TEST(Names, CountsCharactersNotBytes) {
  std::string euro255;
  for (int i = 0; i < 255; ++i) euro255 += "\xE2\x82\xAC";  // U+20AC, 3 bytes
  EXPECT_TRUE(ValidateName(euro255, "resource").ok());
  EXPECT_EQ(ValidateName(euro255 + "a", "resource").code(),
            StatusCode::kNameTooLong);
}

TEST(Names, RefusesEmptyAndTooLong) {
  EXPECT_EQ(ValidateName("", "resource").code(), StatusCode::kNameEmpty);
  Status st = ValidateName(std::string(256, 'x'), "resource");
  EXPECT_EQ(st.code(), StatusCode::kNameTooLong);
  EXPECT_NE(st.message().find("256"), std::string::npos) << st.message();
}

TEST(Names, RefusesInvalidUtf8) {
  for (const char* bad :
       {"\xFF", "a\x80", "\xC0\xAF" /* overlong '/' */,
        "\xED\xA0\x80" /* surrogate */, "\xF4\x90\x80\x80" /* above U+10FFFF */,
        "\xE2\x82" /* truncated */}) {
    EXPECT_EQ(ValidateName(bad, "resource").code(), StatusCode::kBadRequest)
        << bad;
  }
  EXPECT_TRUE(ValidateName("\xF0\x9F\x94\x92", "resource").ok());  // lock emoji
}

TEST(Names, CaseAndTrailingSpacesMatter) {
  // Names are bytes: validation never normalises them.
  EXPECT_TRUE(ValidateName("Invoice ", "resource").ok());
}

TEST(Names, EscapeInvalidUtf8KeepsValidTextAndEscapesTheRest) {
  EXPECT_EQ(EscapeInvalidUtf8("plain"), "plain");
  EXPECT_EQ(EscapeInvalidUtf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(EscapeInvalidUtf8("a\xff\xfe"), "a\\xff\\xfe");
  // A truncated sequence, a surrogate and an overlong form are not UTF-8.
  EXPECT_EQ(EscapeInvalidUtf8("\xe2\x82"), "\\xe2\\x82");
  EXPECT_EQ(EscapeInvalidUtf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(EscapeInvalidUtf8("\xc0\xaf!"), "\\xc0\\xaf!");
  for (const std::string bytes : {"\xff", "ok\x80", "\xf5\x80\x80\x80"}) {
    EXPECT_TRUE(IsValidUtf8(EscapeInvalidUtf8(bytes))) << bytes;
  }
}

}  // namespace
}  // namespace leasehold
