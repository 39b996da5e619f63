// Fuzz target config: the text of `leasehold serve --config FILE`, read by
// ParseServeConfig (src/cli/serve_config.h), then its "listen" by
// ParseListen, as serve does. A config that is accepted must hold only
// what serve can use: limits in range, namespaces that are names.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cli/serve_config.h"
#include "engine/lock_types.h"
#include "fuzz/fuzz_check.h"

namespace {

using leasehold::Status;
using leasehold::fuzz::Violated;
using namespace leasehold::cli;

void CheckAccepted(const ServeConfig& c) {
  if (c.io_threads < 1 || c.io_threads > kMaxIoThreads) {
    Violated("io_threads out of range", std::to_string(c.io_threads));
  }
  if (c.http.body_limit == 0 || c.max_body_bytes == 0 ||
      c.http.max_connections == 0) {
    Violated("a limit of 0 accepted", "");
  }
  for (auto d : {c.api.default_session_ttl, c.api.max_session_ttl,
                 c.api.max_checkout_ttl, c.http.request_timeout}) {
    if (d.count() <= 0) Violated("a duration of 0 or less accepted", "");
  }
  for (const auto& [ns, o] : c.namespaces) {
    if (Status st = leasehold::ValidateName(ns, "namespace"); !st.ok()) {
      Violated("a namespace that is no name accepted", st.message());
    }
    if (o.outbox_max_attempts < 1 || o.outbox_max_attempts > 1'000'000 ||
        o.max_transaction.count() < 0 ||
        o.max_transaction.count() > kLongestTransactionLimitMs) {
      Violated("namespace options out of range", ns);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ServeConfig c;
  std::string listen = "127.0.0.1:7070", where = "./leasehold-data";
  bool data_given = false;
  Status st = ParseServeConfig(text, "fuzz.json", c, listen, where, data_given);
  if (!st.ok()) {
    if (st.message().empty()) Violated("a refusal without a message", "");
    return 0;
  }
  CheckAccepted(c);
  if (ParseListen(listen, c).ok()) (void)IsLoopback(c.address);
  return 0;
}
