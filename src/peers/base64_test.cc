#include "peers/base64.h"

#include <gtest/gtest.h>

namespace leasehold::peers {
namespace {

// RFC 4648 section 10's test vectors.
TEST(Base64, Rfc4648Vectors) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64("foobar"), "Zm9vYmFy");
}

TEST(Base64, HighBytes) { EXPECT_EQ(Base64("\xff\xfe"), "//4="); }

}  // namespace
}  // namespace leasehold::peers
