#include "cli/serve_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cli/serve_reload.h"

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

TEST(ServeConfigTest, ReadsTlsFilesAndSubjectEntries) {
  auto p =
      Parse(R"({"tls":{"cert":"/c.pem","key":"/k.pem","client_ca":"/ca.pem",)"
            R"("require_client_certificate":true},"allow_plaintext":true,)"
            R"("tokens":[{"subject":"worker.billing","principal":"billing",)"
            R"("namespaces":["billing"],"role":"write"}]})");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ASSERT_TRUE(p.config.tls.has_value());
  EXPECT_EQ(p.config.tls->cert, "/c.pem");
  EXPECT_EQ(p.config.tls->key, "/k.pem");
  EXPECT_EQ(p.config.tls->client_ca, "/ca.pem");
  EXPECT_TRUE(p.config.tls->require_client_certificate);
  EXPECT_TRUE(p.config.allow_plaintext);
  EXPECT_TRUE(p.config.api.auth.HasSubjects());
  EXPECT_FALSE(Parse("{}").config.tls.has_value());
  for (const char* bad :
       {R"({"tls":{"certificate":"/c.pem"}})", R"({"tls":{"cert":1}})",
        R"({"tls":"/c.pem"})",
        R"({"tls":{"require_client_certificate":"yes"}})",
        R"({"tokens":[{"principal":"p","namespaces":["*"],"role":"read"}]})",
        R"({"tokens":[{"subject":"","principal":"p","namespaces":["*"],)"
        R"("role":"read"}]})"}) {
    EXPECT_EQ(Parse(bad).status.code(), StatusCode::kBadRequest) << bad;
  }
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

TEST(ServeConfigTest, ReadsAHoldLimitWithinItsRange) {
  auto p = Parse(R"({"namespaces":{"app":{"max_hold_ms":60000}}})");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ASSERT_EQ(p.config.namespaces.size(), 1u);
  EXPECT_EQ(p.config.namespaces[0].second.max_hold,
            std::chrono::milliseconds(60000));
  for (const char* bad : {"-1", "2592000001", "0.5", "\"1m\"", "true"}) {
    auto refused = Parse(
        std::string(R"({"namespaces":{"app":{"max_hold_ms":)") + bad + "}}}");
    EXPECT_EQ(refused.status.code(), StatusCode::kBadRequest) << bad;
    EXPECT_NE(refused.status.message().find("max_hold_ms"), std::string::npos);
  }
}

TEST(ServeConfigTest, OutageReadsAreUnsetUnlessGivenAndOnlyABoolean) {
  EXPECT_FALSE(Parse("{}").config.outage_reads.has_value());
  auto on = Parse(R"({"outage_reads":true})");
  ASSERT_TRUE(on.status.ok()) << on.status.message();
  EXPECT_EQ(on.config.outage_reads, true);
  EXPECT_EQ(Parse(R"({"outage_reads":false})").config.outage_reads, false);
  for (const char* bad : {"1", "\"on\"", "null"}) {
    auto refused = Parse(std::string(R"({"outage_reads":)") + bad + "}");
    EXPECT_EQ(refused.status.code(), StatusCode::kBadRequest) << bad;
    EXPECT_NE(refused.status.message().find("outage_reads"), std::string::npos);
  }
  const Status changed =
      CheckLiveChange(on.config, Parse(R"({"outage_reads":false})").config);
  EXPECT_NE(changed.message().find("outage_reads"), std::string::npos)
      << "a reload cannot change it: " << changed.message();
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

namespace leasehold::cli {
namespace {

// The rows of docs/configuration.md's "Config file keys" table: each cell
// trimmed, backticks dropped.
std::vector<std::vector<std::string>> DocumentedKeys() {
  std::ifstream in(std::string(LEASEHOLD_SOURCE_DIR) +
                   "/docs/configuration.md");
  EXPECT_TRUE(in) << "docs/configuration.md";
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.starts_with("## ")) in_section = line == "## Config file keys";
    if (!in_section || !line.starts_with("| `")) continue;
    std::vector<std::string> cells;
    std::string cell;
    for (char ch : line.substr(1)) {
      if (ch == '|') {
        const auto b = cell.find_first_not_of(' ');
        const auto e = cell.find_last_not_of(' ');
        cells.push_back(b == std::string::npos ? ""
                                               : cell.substr(b, e - b + 1));
        cell.clear();
      } else if (ch != '`') {
        cell += ch;
      }
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

TEST(ConfigReferenceTest, TheDocsListEveryKeyAsTheParserTakesIt) {
  const auto rows = DocumentedKeys();
  ASSERT_EQ(rows.size(), ConfigOptions().size())
      << "docs/configuration.md and ConfigOptions() list different keys";
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 6u) << row[0];
    const ConfigOption* o = FindConfigOption(row[0]);
    ASSERT_NE(o, nullptr) << row[0] << " is documented but not in the code";
    EXPECT_EQ(row[1], o->type) << row[0];
    EXPECT_EQ(row[2], o->unit) << row[0];
    EXPECT_EQ(row[3], o->default_text) << row[0];
    EXPECT_EQ(row[4], RangeText(*o)) << row[0];
    EXPECT_EQ(row[5], o->live ? "live" : "restart") << row[0];
  }
}

// Each integer key takes its range's ends and refuses just past them.
TEST(ConfigReferenceTest, IntegerRangesAreTheParsers) {
  for (const ConfigOption& o : ConfigOptions()) {
    if (o.type != "integer") continue;
    const bool in_ns = o.key.starts_with("namespaces.NS.");
    const std::string name(in_ns ? o.key.substr(14) : o.key);
    auto text = [&](std::int64_t v) {
      const std::string kv = "\"" + name + "\":" + std::to_string(v);
      return in_ns ? R"({"namespaces":{"app":{)" + kv + "}}}" : "{" + kv + "}";
    };
    EXPECT_TRUE(Parse(text(o.min)).status.ok()) << o.key;
    EXPECT_FALSE(Parse(text(o.min - 1)).status.ok()) << o.key;
    if (o.max != kNoMaximum) {
      EXPECT_TRUE(Parse(text(o.max)).status.ok()) << o.key;
      auto past = Parse(text(o.max + 1));
      EXPECT_EQ(past.status.code(), StatusCode::kBadRequest) << o.key;
      EXPECT_NE(past.status.message().find(RangeText(o)), std::string::npos)
          << past.status.message();
    }
  }
}

ServeConfig Configured(std::string_view text) {
  auto p = Parse(text);
  EXPECT_TRUE(p.status.ok()) << p.status.message();
  return p.config;
}

TEST(ServeReloadTest, LiveOptionsChangeAndTheRestNeedARestart) {
  const ServeConfig running = Configured(
      R"({"namespaces":{"app":{"lock_delay_ms":0},"fast":{"locks":"memory"}}})");
  EXPECT_TRUE(
      CheckLiveChange(running, Configured(R"({"namespaces":{"app":{)"
                                          R"("lock_delay_ms":5000},)"
                                          R"("fast":{"locks":"memory"}}})"))
          .ok());
  // "fast" dropped: back to durable locks, which cannot change live.
  const Status dropped = CheckLiveChange(
      running, Configured(R"({"io_threads":4,"namespaces":{"app":{}}})"));
  EXPECT_EQ(dropped.code(), StatusCode::kBadRequest);
  EXPECT_NE(dropped.message().find("io_threads, namespaces.fast.locks "
                                   "(memory → durable) need a restart"),
            std::string::npos)
      << dropped.message();

  const auto changes = NamespaceChanges(running, Configured(R"({})"));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].second.lock_delay, std::chrono::milliseconds(0));
}

// Every top-level number that a reload does not apply is refused when it
// changes, by name: none is taken silently and then ignored.
TEST(ServeReloadTest, EveryRestartOnlyNumberIsRefusedByName) {
  const ServeConfig running = Configured("{}");
  for (const ConfigOption& o : ConfigOptions()) {
    if (o.type != "integer" || o.live || o.key.starts_with("namespaces.")) {
      continue;
    }
    const std::int64_t standard = std::stoll(std::string(o.default_text));
    const std::int64_t other = standard == o.min ? o.min + 1 : o.min;
    const Status refused = CheckLiveChange(
        running, Configured("{\"" + std::string(o.key) +
                            "\":" + std::to_string(other) + "}"));
    EXPECT_EQ(refused.code(), StatusCode::kBadRequest) << o.key;
    EXPECT_NE(refused.message().find(std::string(o.key)), std::string::npos)
        << o.key << ": " << refused.message();
  }
}

}  // namespace
}  // namespace leasehold::cli
