#include "cli/serve_config.h"

#include <gtest/gtest.h>

#include <string>

namespace leasehold::cli {
namespace {

struct Parsed {
  Status status;
  ServeConfig config;
  std::string listen;
};

Parsed Parse(std::string_view text) {
  Parsed p;
  std::string data;
  bool data_given = false;
  p.status =
      ParseServeConfig(text, "test.json", p.config, p.listen, data, data_given);
  return p;
}

TEST(ServeConfigTest, ReadsNamespaceOptions) {
  auto p =
      Parse(R"({"listen":"127.0.0.1:0","namespaces":{"app":{"locks":"memory",)"
            R"("max_transaction_ms":5000}}})");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(p.listen, "127.0.0.1:0");
  ASSERT_EQ(p.config.namespaces.size(), 1u);
  EXPECT_EQ(p.config.namespaces[0].first, "app");
  EXPECT_EQ(p.config.namespaces[0].second.locks, LockDurability::kMemory);
}

TEST(ServeConfigTest, ReadsALockDelayWithinItsRange) {
  auto p = Parse(R"({"namespaces":{"app":{"lock_delay_ms":15000}}})");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ASSERT_EQ(p.config.namespaces.size(), 1u);
  EXPECT_EQ(p.config.namespaces[0].second.lock_delay,
            std::chrono::milliseconds(15000));
  for (const char* bad : {"-1", "3600001", "1.5", "\"15s\""}) {
    auto refused = Parse(
        std::string(R"({"namespaces":{"app":{"lock_delay_ms":)") + bad + "}}}");
    EXPECT_EQ(refused.status.code(), StatusCode::kBadRequest) << bad;
    EXPECT_NE(refused.status.message().find("lock_delay_ms"),
              std::string::npos);
  }
}

TEST(ServeConfigTest, RefusesUnknownKeysAndText) {
  EXPECT_EQ(Parse(R"({"listne":"x"})").status.code(), StatusCode::kBadRequest);
  EXPECT_EQ(Parse("not json").status.code(), StatusCode::kBadJson);
}

// Found by fuzz/config_fuzz.cc: a namespace that no request can name (empty,
// longer than 255 characters) was accepted, and its options never applied.
TEST(ServeConfigTest, RefusesNamespacesThatAreNoNames) {
  auto empty = Parse(R"({"namespaces":{"":{"locks":"memory"}}})");
  EXPECT_EQ(empty.status.code(), StatusCode::kBadRequest);
  EXPECT_NE(empty.status.message().find("must not be empty"), std::string::npos)
      << empty.status.message();
  const std::string long_name(256, 'n');
  auto too_long =
      Parse(R"({"namespaces":{")" + long_name + R"(":{"locks":"memory"}}})");
  EXPECT_EQ(too_long.status.code(), StatusCode::kBadRequest);
  EXPECT_TRUE(Parse(R"({"namespaces":{")" + std::string(255, 'n') + R"(":{}}})")
                  .status.ok());
}

TEST(ServeConfigTest, TheManualClockOnlyInMemoryOnLoopbackWithoutTokens) {
  auto p = Parse(R"({"store":"memory","clock":"manual"})");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_TRUE(CheckManualClock(p.config).ok());
  for (const char* loopback : {"127.0.0.1", "::1", "localhost"}) {
    p.config.address = loopback;
    EXPECT_TRUE(CheckManualClock(p.config).ok()) << loopback;
  }
  for (const char* beyond : {"0.0.0.0", "::", "10.1.2.3", "example.com"}) {
    p.config.address = beyond;
    EXPECT_EQ(CheckManualClock(p.config).code(), StatusCode::kForbidden)
        << beyond;
  }
  auto sqlite = Parse(R"({"clock":"manual"})");
  EXPECT_EQ(CheckManualClock(sqlite.config).code(), StatusCode::kBadRequest);
  auto tokens =
      Parse(R"({"store":"memory","clock":"manual","tokens":[{"token":)"
            R"("0123456789abcdef0123","principal":"p","namespaces":["*"],)"
            R"("role":"admin"}]})");
  ASSERT_TRUE(tokens.status.ok()) << tokens.status.message();
  EXPECT_EQ(CheckManualClock(tokens.config).code(), StatusCode::kForbidden);
  auto typo = Parse(R"({"store":"memory","clock":"manaul"})");
  EXPECT_EQ(CheckManualClock(typo.config).code(), StatusCode::kBadRequest);
  auto real = Parse(R"({"clock":"real"})");
  EXPECT_TRUE(CheckManualClock(real.config).ok());
}

TEST(ServeConfigTest, ParseListenTakesAddressAndPort) {
  ServeConfig c;
  ASSERT_TRUE(ParseListen("[::1]:7070", c).ok());
  EXPECT_EQ(c.address, "::1");
  EXPECT_EQ(c.port, 7070);
  EXPECT_FALSE(ParseListen("127.0.0.1:70000", c).ok());
  EXPECT_FALSE(ParseListen("no-port", c).ok());
}

}  // namespace
}  // namespace leasehold::cli
