#include "cli/serve_reload.h"

#include <algorithm>

namespace leasehold::cli {
namespace {

// A namespace's options as `c` configures them (the defaults if not).
NamespaceOptions OptionsOf(const ServeConfig& c, const std::string& ns) {
  auto it = std::ranges::find(c.namespaces, ns,
                              [](const auto& kept) { return kept.first; });
  return it == c.namespaces.end() ? NamespaceOptions{} : it->second;
}

std::string_view LocksName(LockDurability d) {
  return d == LockDurability::kMemory ? "memory" : "durable";
}

}  // namespace

Status CheckLiveChange(const ServeConfig& running, const ServeConfig& next) {
  std::vector<std::string> changed;
  auto differs = [&](bool d, std::string what) {
    if (d) changed.push_back(std::move(what));
  };
  differs(running.address != next.address || running.port != next.port,
          "listen");
  differs(running.data != next.data, "data");
  differs(running.store != next.store, "store");
  differs(running.store_schema != next.store_schema, "store_schema");
  differs(running.clock != next.clock, "clock");
  differs(running.synchronous != next.synchronous, "synchronous");
  differs(running.outage_reads != next.outage_reads, "outage_reads");
  differs(running.io_threads != next.io_threads, "io_threads");
  differs(running.tls.has_value() != next.tls.has_value(),
          next.tls ? "tls (turned on)" : "tls (turned off)");
  differs(running.allow_plaintext != next.allow_plaintext, "allow_plaintext");
  differs(running.http.max_connections != next.http.max_connections,
          "max_connections");
  differs(running.http.request_timeout != next.http.request_timeout,
          "request_timeout_ms");
  differs(running.http.body_limit != next.http.body_limit, "http_body_limit");
  differs(running.max_body_bytes != next.max_body_bytes, "max_body_bytes");
  differs(running.api.default_session_ttl != next.api.default_session_ttl,
          "default_session_ttl_ms");
  differs(running.api.max_session_ttl != next.api.max_session_ttl,
          "max_session_ttl_ms");
  differs(running.api.max_checkout_ttl != next.api.max_checkout_ttl,
          "max_checkout_ttl_ms");
  differs(running.api.store_stall != next.api.store_stall, "store_stall_ms");
  // Locks already granted are journaled, or not, by the namespace's
  // choice: switching would lose them, or leave journal rows for a
  // namespace that no longer replays them.
  for (const auto& [ns, options] : NamespaceChanges(running, next)) {
    const LockDurability was = OptionsOf(running, ns).locks;
    differs(was != options.locks,
            "namespaces." + ns + ".locks (" + std::string(LocksName(was)) +
                " → " + std::string(LocksName(options.locks)) + ")");
  }
  if (changed.empty()) return Status::Ok();
  std::string list;
  for (const std::string& what : changed) {
    list += (list.empty() ? "" : ", ") + what;
  }
  return Status(StatusCode::kBadRequest,
                "config refused, nothing changed: " + list +
                    (changed.size() == 1 ? " needs" : " need") +
                    " a restart (a reload applies tokens and namespace "
                    "options except locks; docs/configuration.md)");
}

std::vector<std::pair<std::string, NamespaceOptions>> NamespaceChanges(
    const ServeConfig& running, const ServeConfig& next) {
  auto out = next.namespaces;
  for (const auto& [ns, options] : running.namespaces) {
    if (std::ranges::find(out, ns, [](const auto& kept) {
          return kept.first;
        }) == out.end()) {
      out.emplace_back(ns, NamespaceOptions{});
    }
  }
  return out;
}

}  // namespace leasehold::cli
