// The settings of `leasehold serve` and its --config file: a JSON object,
// every key optional, unknown keys refused (ConfigOptions() below and
// docs/configuration.md name the keys).
// `serve` (serve.cc) weighs them against its command line; the config
// fuzzer (fuzz/config_fuzz.cc) feeds ParseServeConfig any text.
#ifndef LEASEHOLD_CLI_SERVE_CONFIG_H_
#define LEASEHOLD_CLI_SERVE_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/records.h"
#include "server/api.h"
#include "server/http_server.h"

namespace leasehold::cli {

inline constexpr int kDefaultIoThreads = 2;
inline constexpr int kMaxIoThreads = 64;
// One week: a longer limit is surely a typo for "no limit" (0).
inline constexpr std::int64_t kLongestTransactionLimitMs =
    7LL * 24 * 3600 * 1000;
// One hour: a lock-delay protects against a holder's pause, not an outage;
// longer would keep a lost holder's locks out of reach for too long.
inline constexpr std::int64_t kLongestLockDelayMs = 3600LL * 1000;
// Thirty days: a hold limit catches a holder that hung; a longer one is
// surely a typo for "no limit" (0).
inline constexpr std::int64_t kLongestHoldLimitMs = 30LL * 24 * 3600 * 1000;

struct ServeConfig {
  std::string address = "127.0.0.1";
  std::uint16_t port = 7070;
  std::string data;
  std::string synchronous = "FULL";
  bool synchronous_given = false;
  // A PostgreSQL URL: PostgresStore instead of SQLite; "memory": nothing
  // on disk (MemoryStore), for tests.
  std::string store;
  // "real", or "manual": time moves only by POST /v1/testing/clock
  // (docs/testing.md); only with the memory store, on loopback, without
  // tokens (CheckManualClock).
  std::string clock = "real";
  std::string store_schema = "leasehold";
  // Reads during a store outage from the last acknowledged state
  // (ServiceOptions::outage_reads); unset: on PostgreSQL only.
  std::optional<bool> outage_reads;
  server::ApiOptions api;
  server::HttpOptions http;
  std::size_t max_body_bytes = 1 << 20;
  int io_threads = kDefaultIoThreads;  // threads running HTTP and the engine
  std::vector<std::pair<std::string, NamespaceOptions>> namespaces;
  // "tls" (or serve --tls-*): HTTPS only, with these files; loaded into
  // http.tls by serve.
  std::optional<server::TlsFiles> tls;
  // Beyond loopback, tokens travel in cleartext without TLS: refused
  // unless this says a TLS-terminating proxy in front carries them.
  bool allow_plaintext = false;
};

// One key of the --config file, with what docs/configuration.md says of
// it (a test holds the two equal). The parser looks every key up here:
// a key not listed is refused, and an integer outside min..max too.
struct ConfigOption {
  std::string_view key = "";   // "io_threads"; "namespaces.NS.lock_delay_ms"
  std::string_view type = "";  // "string", "integer", "boolean", "list"...
  std::string_view unit = "";  // "ms", "bytes", "" (none)
  std::string_view default_text = "";
  // Integers: the range the parser allows. Others: the values it takes
  // ("" when any value of the type).
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::string_view choices = "";
  // Whether a reload (SIGHUP, POST /v1/admin/reload) applies a change; a
  // change to one that does not is refused: it needs a restart.
  bool live = false;
};
inline constexpr std::int64_t kNoMaximum =
    std::numeric_limits<std::int64_t>::max();

// Every config key, in the order docs/configuration.md lists them.
std::span<const ConfigOption> ConfigOptions();
// The option named `key` ("namespaces.NS.x" for a namespace's); null when
// none is.
const ConfigOption* FindConfigOption(std::string_view key);
// Its range as the reference states it: "1..64", ">= 1", or its choices.
std::string RangeText(const ConfigOption& o);

// Sets c.address and c.port from "ADDRESS:PORT" ("[::1]:7070" for IPv6);
// kBadRequest, saying the expected form, for anything else.
Status ParseListen(const std::string& listen, ServeConfig& c);

// Whether `address` is this machine's loopback (serving beyond it needs
// tokens, and TLS or allow_plaintext).
bool IsLoopback(const std::string& address);

inline constexpr std::string_view kMemoryStore = "memory";

// OK for the real clock. For the manual one, kBadRequest unless the store
// is the memory store (a manual clock writing leases into a durable store
// would leave them there, wrong, for the real clock to find), and
// kForbidden when the server has tokens or listens beyond loopback: a
// clock anyone can move would let them expire anyone's leases.
Status CheckManualClock(const ServeConfig& c);

// Reads the config file's text (`path` names it in messages) into `c`.
// Its "listen" and "data" go to `listen` and `data` (`data_given` set), for
// the caller to weigh against the command line. kBadJson when the text is
// not a JSON object; kBadRequest naming the key that is unknown, of the
// wrong type or out of range. `c` may be partly set on a failure.
Status ParseServeConfig(std::string_view text, const std::string& path,
                        ServeConfig& c, std::string& listen, std::string& data,
                        bool& data_given);

// ParseServeConfig of the file at `path`; kBadRequest when it cannot be
// read.
Status ReadServeConfig(const std::string& path, ServeConfig& c,
                       std::string& listen, std::string& data,
                       bool& data_given);

}  // namespace leasehold::cli

#endif  // LEASEHOLD_CLI_SERVE_CONFIG_H_
