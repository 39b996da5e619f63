// ConnectionParams: where a PostgresStore connects, parsed once from a libpq
// URL (postgresql://user@host:port/db?…, several hosts allowed:
// postgresql://a:5432,b:5432/db?target_session_attrs=read-write) or a
// key=value string, with leasehold's defaults for what it leaves unset.
// Every (re)connection uses the same parameters, so after a failover libpq
// finds the new primary among the hosts itself.
#ifndef LEASEHOLD_STORE_POSTGRES_CONNECTION_PARAMS_H_
#define LEASEHOLD_STORE_POSTGRES_CONNECTION_PARAMS_H_

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "pg/connection.h"

namespace leasehold::postgres {

class ConnectionParams {
 public:
  // Fails with kBadRequest (libpq's reason) when `url` does not parse. The
  // defaults, each overridden by the URL: connect_timeout=5 (seconds),
  // keepalives after 10 s idle (every 5 s, 3 probes), tcp_user_timeout=20000
  // (ms), so that a vanished server is noticed in seconds rather than in
  // the kernel's hours; application_name=leasehold.
  static Result<ConnectionParams> Parse(const std::string& url);

  // A new connection, server notices silenced; kUnavailable with libpq's
  // message when no host accepts it.
  Result<pg::Connection> Connect() const;

  // "postgresql:host=… port=… dbname=… user=…" and the other settings
  // that say where, never the password.
  std::string Describe() const;

 private:
  std::vector<std::pair<std::string, std::string>> options_;
};

}  // namespace leasehold::postgres

#endif  // LEASEHOLD_STORE_POSTGRES_CONNECTION_PARAMS_H_
