#include "cli/serve_config.h"

#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "leasehold/types.h"

namespace leasehold::cli {

namespace json = boost::json;
using std::chrono::milliseconds;

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
    grants.push_back(std::move(g));
  }
  return grants;
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
    auto ms = [&](milliseconds& out) {
      if (!value.is_int64() || value.as_int64() <= 0) return false;
      out = milliseconds(value.as_int64());
      return true;
    };
    bool ok = true;
    if (key == "listen" && value.is_string()) {
      listen = value.as_string();
    } else if (key == "data" && value.is_string()) {
      data = value.as_string();
      data_given = true;
    } else if (key == "store" && value.is_string()) {
      c.store = value.as_string();
    } else if (key == "clock" && value.is_string()) {
      c.clock = value.as_string();
    } else if (key == "store_schema" && value.is_string()) {
      c.store_schema = value.as_string();
    } else if (key == "synchronous" && value.is_string()) {
      c.synchronous = value.as_string();
      c.synchronous_given = true;
    } else if (key == "default_session_ttl_ms") {
      ok = ms(c.api.default_session_ttl);
    } else if (key == "max_session_ttl_ms") {
      ok = ms(c.api.max_session_ttl);
    } else if (key == "max_checkout_ttl_ms") {
      ok = ms(c.api.max_checkout_ttl);
    } else if (key == "request_timeout_ms") {
      ok = ms(c.http.request_timeout);
    } else if (key == "max_body_bytes" && value.is_int64() &&
               value.as_int64() > 0) {
      c.max_body_bytes = static_cast<std::size_t>(value.as_int64());
    } else if (key == "http_body_limit" && value.is_int64() &&
               value.as_int64() > 0) {
      c.http.body_limit = static_cast<std::size_t>(value.as_int64());
    } else if (key == "io_threads" && value.is_int64() &&
               value.as_int64() >= 1 && value.as_int64() <= kMaxIoThreads) {
      c.io_threads = static_cast<int>(value.as_int64());
    } else if (key == "max_connections" && value.is_int64() &&
               value.as_int64() > 0) {
      c.http.max_connections = static_cast<std::size_t>(value.as_int64());
    } else if (key == "tokens") {
      auto grants = ReadTokens(value);
      if (!grants) return grants.error();
      auto auth = server::Authenticator::Create(std::move(*grants));
      if (!auth) {
        return Status(StatusCode::kBadRequest,
                      "config: tokens: " + auth.error().message());
      }
      c.api.auth = std::move(*auth);
    } else if (key == "namespaces" && value.is_object()) {
      for (const auto& [ns, opts] : value.as_object()) {
        // A namespace no request can name would never apply: refused as
        // every endpoint refuses it.
        if (Status st = ValidateName(ns, "namespace"); !st.ok()) {
          return Status(StatusCode::kBadRequest, "config: namespaces: \"" +
                                                     std::string(ns) +
                                                     "\": " + st.message());
        }
        NamespaceOptions o;
        const Status bad(StatusCode::kBadRequest,
                         "config: namespaces." + std::string(ns) +
                             " must be {\"require_token\": true|false, "
                             "\"outbox_max_attempts\": n >= 1, "
                             "\"max_transaction_ms\": n >= 0, "
                             "\"locks\": \"durable\"|\"memory\", "
                             "\"lock_delay_ms\": 0 <= n <= 3600000}");
        if (!opts.is_object()) return bad;
        for (const auto& [name, option] : opts.as_object()) {
          if (name == "require_token" && option.is_bool()) {
            o.require_token = option.as_bool();
          } else if (name == "outbox_max_attempts" && option.is_int64() &&
                     option.as_int64() >= 1 && option.as_int64() <= 1'000'000) {
            o.outbox_max_attempts =
                static_cast<std::uint32_t>(option.as_int64());
          } else if (name == "max_transaction_ms" && option.is_int64() &&
                     option.as_int64() >= 0 &&
                     option.as_int64() <= kLongestTransactionLimitMs) {
            o.max_transaction = std::chrono::milliseconds(option.as_int64());
          } else if (name == "lock_delay_ms" && option.is_int64() &&
                     option.as_int64() >= 0 &&
                     option.as_int64() <= kLongestLockDelayMs) {
            o.lock_delay = std::chrono::milliseconds(option.as_int64());
          } else if (name == "locks" && option.is_string() &&
                     (option.as_string() == "durable" ||
                      option.as_string() == "memory")) {
            o.locks = option.as_string() == "memory" ? LockDurability::kMemory
                                                     : LockDurability::kDurable;
          } else {
            return bad;
          }
        }
        c.namespaces.emplace_back(std::string(ns), o);
      }
    } else {
      ok = false;
    }
    if (!ok) {
      return Status(StatusCode::kBadRequest,
                    "config " + path + ": key \"" + std::string(key) +
                        "\" is unknown or has the wrong type");
    }
  }
  return Status::Ok();
}

}  // namespace leasehold::cli
