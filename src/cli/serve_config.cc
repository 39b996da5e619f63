#include "cli/serve_config.h"

#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "engine/lock_types.h"

namespace leasehold::cli {

namespace json = boost::json;
using std::chrono::milliseconds;

namespace {

// docs/configuration.md states the same, column by column.
constexpr ConfigOption kOptions[] = {
    {.key = "listen",
     .type = "string",
     .default_text = "127.0.0.1:7070",
     .choices = "ADDRESS:PORT"},
    {.key = "data", .type = "string", .default_text = "./leasehold-data"},
    {.key = "store",
     .type = "string",
     .default_text = "none",
     .choices = "postgresql://…, memory"},
    {.key = "store_schema", .type = "string", .default_text = "leasehold"},
    {.key = "clock",
     .type = "string",
     .default_text = "real",
     .choices = "real, manual"},
    {.key = "synchronous",
     .type = "string",
     .default_text = "FULL",
     .choices = "FULL, NORMAL"},
    {.key = "outage_reads",
     .type = "boolean",
     .default_text = "true on PostgreSQL, else false",
     .choices = "true, false"},
    {.key = "io_threads",
     .type = "integer",
     .default_text = "2",
     .min = 1,
     .max = kMaxIoThreads},
    {.key = "max_connections",
     .type = "integer",
     .unit = "connections",
     .default_text = "1024",
     .min = 1,
     .max = kNoMaximum},
    {.key = "request_timeout_ms",
     .type = "integer",
     .unit = "ms",
     .default_text = "30000",
     .min = 1,
     .max = kNoMaximum},
    {.key = "http_body_limit",
     .type = "integer",
     .unit = "bytes",
     .default_text = "1048576",
     .min = 1,
     .max = kNoMaximum},
    {.key = "max_body_bytes",
     .type = "integer",
     .unit = "bytes",
     .default_text = "1048576",
     .min = 1,
     .max = kNoMaximum},
    {.key = "default_session_ttl_ms",
     .type = "integer",
     .unit = "ms",
     .default_text = "30000",
     .min = 1,
     .max = kNoMaximum},
    {.key = "max_session_ttl_ms",
     .type = "integer",
     .unit = "ms",
     .default_text = "86400000",
     .min = 1,
     .max = kNoMaximum},
    {.key = "store_stall_ms",
     .type = "integer",
     .unit = "ms",
     .default_text = "10000",
     .min = 1,
     .max = kNoMaximum},
    {.key = "max_checkout_ttl_ms",
     .type = "integer",
     .unit = "ms",
     .default_text = "604800000",
     .min = 1,
     .max = kNoMaximum},
    {.key = "tokens", .type = "list", .default_text = "none", .live = true},
    {.key = "tls", .type = "object", .default_text = "none", .live = true},
    {.key = "tls.cert", .type = "string", .default_text = "none", .live = true},
    {.key = "tls.key", .type = "string", .default_text = "none", .live = true},
    {.key = "tls.client_ca",
     .type = "string",
     .default_text = "none",
     .live = true},
    {.key = "tls.require_client_certificate",
     .type = "boolean",
     .default_text = "false",
     .choices = "true, false",
     .live = true},
    {.key = "allow_plaintext",
     .type = "boolean",
     .default_text = "false",
     .choices = "true, false"},
    {.key = "namespaces",
     .type = "object",
     .default_text = "none",
     .live = true},
    {.key = "namespaces.NS.require_token",
     .type = "boolean",
     .default_text = "false",
     .choices = "true, false",
     .live = true},
    {.key = "namespaces.NS.outbox_max_attempts",
     .type = "integer",
     .default_text = "10",
     .min = 1,
     .max = 1'000'000,
     .live = true},
    {.key = "namespaces.NS.max_transaction_ms",
     .type = "integer",
     .unit = "ms",
     .default_text = "0",
     .min = 0,
     .max = kLongestTransactionLimitMs,
     .live = true},
    {.key = "namespaces.NS.lock_delay_ms",
     .type = "integer",
     .unit = "ms",
     .default_text = "0",
     .min = 0,
     .max = kLongestLockDelayMs,
     .live = true},
    {.key = "namespaces.NS.max_hold_ms",
     .type = "integer",
     .unit = "ms",
     .default_text = "0",
     .min = 0,
     .max = kLongestHoldLimitMs,
     .live = true},
    {.key = "namespaces.NS.locks",
     .type = "string",
     .default_text = "durable",
     .choices = "durable, memory"},
};

}  // namespace

std::span<const ConfigOption> ConfigOptions() { return kOptions; }

const ConfigOption* FindConfigOption(std::string_view key) {
  for (const ConfigOption& o : kOptions) {
    if (o.key == key) return &o;
  }
  return nullptr;
}

std::string RangeText(const ConfigOption& o) {
  if (o.type != "integer") return std::string(o.choices);
  if (o.max == kNoMaximum) return ">= " + std::to_string(o.min);
  return std::to_string(o.min) + ".." + std::to_string(o.max);
}

Status ParseListen(const std::string& listen, ServeConfig& c) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return Status(StatusCode::kBadRequest,
                  "--listen must be ADDRESS:PORT, e.g. 127.0.0.1:7070");
  }
  c.address = listen.substr(0, colon);
  if (c.address.size() > 2 && c.address.front() == '[') {
    c.address = c.address.substr(1, c.address.size() - 2);
  }
  const std::string port = listen.substr(colon + 1);
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535) {
    return Status(StatusCode::kBadRequest, "--listen port must be 0..65535");
  }
  c.port = static_cast<std::uint16_t>(p);
  return Status::Ok();
}

bool IsLoopback(const std::string& address) {
  return address == "127.0.0.1" || address == "::1" || address == "localhost" ||
         address.starts_with("127.");
}

Status CheckManualClock(const ServeConfig& c) {
  if (c.clock == "real") return Status::Ok();
  if (c.clock != "manual") {
    return Status(
        StatusCode::kBadRequest,
        "--clock must be \"real\" or \"manual\", not \"" + c.clock + "\"");
  }
  if (c.store != kMemoryStore) {
    return Status(StatusCode::kBadRequest,
                  "--clock manual needs --store memory: leases written by a "
                  "manual clock must not outlive the process in a durable "
                  "store");
  }
  if (c.api.auth.enabled()) {
    return Status(StatusCode::kForbidden,
                  "refusing --clock manual with tokens: anyone who can reach "
                  "POST /v1/testing/clock can expire every lease; it is for "
                  "tests, on loopback, without authentication");
  }
  if (!IsLoopback(c.address)) {
    return Status(StatusCode::kForbidden,
                  "refusing --clock manual on " + c.address +
                      ": anyone who can reach POST /v1/testing/clock can "
                      "expire every lease; listen on 127.0.0.1 or ::1");
  }
  return Status::Ok();
}

namespace {

// "tokens": [{"token", "principal", "namespaces": [...], "role"}].
Result<std::vector<server::TokenGrant>> ReadTokens(const json::value& v) {
  auto bad = [](const std::string& why) {
    return Error(StatusCode::kBadRequest,
                 "config: tokens: " + why +
                     "; expected [{\"token\": \"...\", \"principal\": "
                     "\"...\", \"namespaces\": [\"...\" or \"*\"], "
                     "\"role\": \"read|write|admin\"}]");
  };
  if (!v.is_array()) return bad("not a list");
  std::vector<server::TokenGrant> grants;
  for (const json::value& entry : v.as_array()) {
    const json::object* o = entry.if_object();
    if (o == nullptr) return bad("an entry is not an object");
    server::TokenGrant g;
    for (const auto& [k, field] : *o) {
      if (k == "token" && field.is_string()) {
        g.token = field.as_string();
      } else if (k == "subject" && field.is_string()) {
        g.subject = field.as_string();
        if (g.subject.empty()) return bad("a subject is empty");
      } else if (k == "principal" && field.is_string()) {
        g.principal = field.as_string();
      } else if (k == "role" && field.is_string()) {
        auto role = server::ParseRole(field.as_string());
        if (!role) return bad(role.error().message());
        g.role = *role;
      } else if (k == "namespaces" && field.is_array()) {
        for (const json::value& ns : field.as_array()) {
          if (!ns.is_string()) return bad("namespaces must be strings");
          g.namespaces.emplace_back(ns.as_string());
        }
      } else {
        return bad("key \"" + std::string(k) +
                   "\" is unknown or has the wrong type");
      }
    }
    if (!o->contains("role")) return bad("every token needs a role");
    if (!o->contains("token") && !o->contains("subject")) {
      return bad("every entry needs a \"token\" or a certificate \"subject\"");
    }
    grants.push_back(std::move(g));
  }
  return grants;
}

// Refuses a value of the wrong type, out of range or not among the
// option's choices; `where` starts the message.
Status CheckValue(const ConfigOption& o, const json::value& v,
                  const std::string& where) {
  const std::string name =
      "\"" + std::string(o.key.substr(o.key.rfind('.') + 1)) + "\"";
  bool typed = false;
  if (o.type == "string") typed = v.is_string();
  if (o.type == "integer") typed = v.is_int64();
  if (o.type == "boolean") typed = v.is_bool();
  if (o.type == "list") typed = v.is_array();
  if (o.type == "object") typed = v.is_object();
  if (!typed) {
    return Status(StatusCode::kBadRequest,
                  where + name + " must be " +
                      (o.type == "integer" ? "an " : "a ") +
                      std::string(o.type));
  }
  if (v.is_int64() && (v.as_int64() < o.min || v.as_int64() > o.max)) {
    return Status(StatusCode::kBadRequest,
                  where + name + " must be " + RangeText(o) +
                      (o.unit.empty() ? "" : " (" + std::string(o.unit) + ")") +
                      ", not " + std::to_string(v.as_int64()));
  }
  if (v.is_string() && o.type == "string" && o.key.starts_with("namespaces.")) {
    // A namespace's string options take only their listed choices.
    const std::string_view text = v.as_string();
    bool listed = false;
    for (std::string_view rest = o.choices; !rest.empty();) {
      const std::size_t comma = rest.find(", ");
      listed = listed || rest.substr(0, comma) == text;
      rest = comma == std::string_view::npos ? "" : rest.substr(comma + 2);
    }
    if (!listed) {
      return Status(StatusCode::kBadRequest,
                    where + name + " must be one of " + std::string(o.choices) +
                        ", not \"" + std::string(text) + "\"");
    }
  }
  return Status::Ok();
}

// "tls": {"cert", "key", "client_ca", "require_client_certificate"}.
Result<server::TlsFiles> ReadTls(const json::value& v) {
  const std::string where = "config: tls: ";
  server::TlsFiles files;
  for (const auto& [name, option] : v.as_object()) {
    const ConfigOption* known =
        name.contains('.') ? nullptr
                           : FindConfigOption("tls." + std::string(name));
    if (known == nullptr) {
      return Error(StatusCode::kBadRequest,
                   where + "\"" + std::string(name) +
                       "\" is unknown; tls takes cert, key, client_ca and "
                       "require_client_certificate");
    }
    if (Status st = CheckValue(*known, option, where); !st.ok()) {
      return std::unexpected(st);
    }
    if (name == "cert") files.cert = option.as_string();
    if (name == "key") files.key = option.as_string();
    if (name == "client_ca") files.client_ca = option.as_string();
    if (name == "require_client_certificate") {
      files.require_client_certificate = option.as_bool();
    }
  }
  return files;
}

// One entry of "namespaces": {"NS": {option: value, ...}}.
Result<NamespaceOptions> ReadNamespace(std::string_view ns,
                                       const json::value& opts) {
  // A namespace no request can name would never apply: refused as every
  // endpoint refuses it.
  if (Status st = ValidateName(ns, "namespace"); !st.ok()) {
    return Error(
        StatusCode::kBadRequest,
        "config: namespaces: \"" + std::string(ns) + "\": " + st.message());
  }
  const std::string where = "config: namespaces." + std::string(ns) + ": ";
  if (!opts.is_object()) {
    return Error(StatusCode::kBadRequest,
                 where +
                     "must be an object of options, e.g. "
                     "{\"lock_delay_ms\": 5000}");
  }
  NamespaceOptions o;
  for (const auto& [name, option] : opts.as_object()) {
    const ConfigOption* known =
        name.contains('.')
            ? nullptr
            : FindConfigOption("namespaces.NS." + std::string(name));
    if (known == nullptr) {
      return Error(StatusCode::kBadRequest,
                   where + "\"" + std::string(name) +
                       "\" is unknown; a namespace takes require_token, "
                       "outbox_max_attempts, max_transaction_ms, locks "
                       "(\"durable\"|\"memory\"), lock_delay_ms and "
                       "max_hold_ms");
    }
    if (Status st = CheckValue(*known, option, where); !st.ok()) {
      return std::unexpected(st);
    }
    const std::int64_t n = option.is_int64() ? option.as_int64() : 0;
    if (name == "require_token") {
      o.require_token = option.as_bool();
    } else if (name == "outbox_max_attempts") {
      o.outbox_max_attempts = static_cast<std::uint32_t>(n);
    } else if (name == "max_transaction_ms") {
      o.max_transaction = milliseconds(n);
    } else if (name == "lock_delay_ms") {
      o.lock_delay = milliseconds(n);
    } else if (name == "max_hold_ms") {
      o.max_hold = milliseconds(n);
    } else if (name == "locks") {
      o.locks = option.as_string() == "memory" ? LockDurability::kMemory
                                               : LockDurability::kDurable;
    }
  }
  return o;
}

}  // namespace

Status ReadServeConfig(const std::string& path, ServeConfig& c,
                       std::string& listen, std::string& data,
                       bool& data_given) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kBadRequest, "cannot read config " + path);
  std::stringstream text;
  text << in.rdbuf();
  return ParseServeConfig(text.str(), path, c, listen, data, data_given);
}

Status ParseServeConfig(std::string_view text, const std::string& path,
                        ServeConfig& c, std::string& listen, std::string& data,
                        bool& data_given) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) {
    return Status(StatusCode::kBadJson,
                  "config " + path + " is not a JSON object");
  }
  for (const auto& [key, value] : v.as_object()) {
    // A namespace's options are keys of "namespaces", never of the top.
    const ConfigOption* o = key.contains('.') ? nullptr : FindConfigOption(key);
    if (o == nullptr) {
      return Status(StatusCode::kBadRequest,
                    "config " + path + ": key \"" + std::string(key) +
                        "\" is unknown (docs/configuration.md lists the keys)");
    }
    if (Status st = CheckValue(*o, value, "config " + path + ": "); !st.ok()) {
      return st;
    }
    const std::int64_t n = value.is_int64() ? value.as_int64() : 0;
    if (key == "listen") {
      listen = value.as_string();
    } else if (key == "data") {
      data = value.as_string();
      data_given = true;
    } else if (key == "store") {
      c.store = value.as_string();
    } else if (key == "clock") {
      c.clock = value.as_string();
    } else if (key == "store_schema") {
      c.store_schema = value.as_string();
    } else if (key == "synchronous") {
      c.synchronous = value.as_string();
      c.synchronous_given = true;
    } else if (key == "outage_reads") {
      c.outage_reads = value.as_bool();
    } else if (key == "default_session_ttl_ms") {
      c.api.default_session_ttl = milliseconds(n);
    } else if (key == "max_session_ttl_ms") {
      c.api.max_session_ttl = milliseconds(n);
    } else if (key == "max_checkout_ttl_ms") {
      c.api.max_checkout_ttl = milliseconds(n);
    } else if (key == "store_stall_ms") {
      c.api.store_stall = milliseconds(n);
    } else if (key == "request_timeout_ms") {
      c.http.request_timeout = milliseconds(n);
    } else if (key == "max_body_bytes") {
      c.max_body_bytes = static_cast<std::size_t>(n);
    } else if (key == "http_body_limit") {
      c.http.body_limit = static_cast<std::size_t>(n);
    } else if (key == "io_threads") {
      c.io_threads = static_cast<int>(n);
    } else if (key == "max_connections") {
      c.http.max_connections = static_cast<std::size_t>(n);
    } else if (key == "tokens") {
      auto grants = ReadTokens(value);
      if (!grants) return grants.error();
      auto auth = server::Authenticator::Create(std::move(*grants));
      if (!auth) {
        return Status(StatusCode::kBadRequest,
                      "config: tokens: " + auth.error().message());
      }
      c.api.auth = std::move(*auth);
    } else if (key == "tls") {
      auto files = ReadTls(value);
      if (!files) return files.error();
      c.tls = std::move(*files);
    } else if (key == "allow_plaintext") {
      c.allow_plaintext = value.as_bool();
    } else if (key == "namespaces") {
      for (const auto& [ns, opts] : value.as_object()) {
        auto options = ReadNamespace(ns, opts);
        if (!options) return options.error();
        c.namespaces.emplace_back(std::string(ns), *options);
      }
    }
  }
  return Status::Ok();
}

}  // namespace leasehold::cli
