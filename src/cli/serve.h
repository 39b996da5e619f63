// `leasehold serve`: runs the server in the foreground until SIGTERM.
#ifndef LEASEHOLD_CLI_SERVE_H_
#define LEASEHOLD_CLI_SERVE_H_

#include <cstdint>
#include <string>

namespace leasehold::cli {

struct ServeFlags {
  std::string listen = "127.0.0.1:7070";
  bool listen_given = false;  // --listen was on the command line
  // The SQLite store's directory (the default), unless `store` is set.
  std::string data = "./leasehold-data";
  bool data_given = false;  // --data was on the command line
  // A PostgreSQL URL (postgresql://…): the PostgresStore instead of SQLite;
  // "memory": nothing on disk (for tests).
  std::string store;
  // "real" or "manual" (docs/testing.md); empty: the config's, else real.
  std::string clock;
  std::string store_schema = "leasehold";  // its PostgreSQL schema
  // With `store`, one of several nodes (docs/ha.md): the URL clients reach
  // this node by (empty: http://LISTEN with the bound port), its name
  // (empty: the host name), and the leader lease.
  std::string advertise;
  std::string node;
  std::int64_t leader_lease_ms = 5000;
  // With `store` on PostgreSQL: how long a round trip with the database may
  // go unanswered before the store gives its connection up and the write
  // answers 503 (PostgresStoreOptions::timeout).
  std::int64_t store_timeout_ms = 10000;
  // JSON file; empty: none. SIGHUP and POST /v1/admin/reload reread it
  // (serve_reload.h).
  std::string config;
  // TLS (docs/tls.md): each given flag wins over the config's "tls"
  // key of the same meaning.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  bool tls_require_client_certificate = false;
  // Plaintext beyond loopback, knowingly (behind a TLS-terminating proxy).
  bool allow_plaintext = false;
  std::string port_file;            // write the bound port here once serving
  std::string log_level = "info";   // debug, info, warn, error
  std::string log_format = "text";  // text, or json: one object a line
};

// Returns the exit code: 0 after a clean SIGTERM/SIGINT shutdown, 1 when the
// server cannot start (the reason goes to stderr).
int RunServe(const ServeFlags& flags);

}  // namespace leasehold::cli

#endif  // LEASEHOLD_CLI_SERVE_H_
