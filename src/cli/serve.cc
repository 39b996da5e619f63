#include "cli/serve.h"

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/signal_set.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "cli/serve_config.h"
#include "cli/serve_reload.h"
#include "cluster/cluster_node.h"
#include "common/log.h"
#include "common/manual_clock.h"
#include "common/real_clock.h"
#include "server/backup_scratch.h"
#include "server/frontend.h"
#include "service/engine_service.h"
#include "store/memory/memory_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"

namespace leasehold::cli {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

// One place for the data: SQLite (--data, the default), PostgreSQL
// (--store URL) or memory (--store memory), never two, and each backend
// with only its own settings.
Status CheckStoreChoice(const ServeConfig& c, bool data_given) {
  if (c.store.empty()) return Status::Ok();
  if (data_given) {
    return Status(StatusCode::kBadRequest,
                  "--data (SQLite) and --store (PostgreSQL or memory) both "
                  "say where the data lives: give one of them");
  }
  if (c.store != kMemoryStore && !IsPostgresUrl(c.store)) {
    return Status(StatusCode::kBadRequest,
                  "--store takes a PostgreSQL URL: postgresql://USER@HOST[:"
                  "PORT][,HOST2…]/DATABASE[?…], or \"memory\"");
  }
  if (c.synchronous_given) {
    return Status(StatusCode::kBadRequest,
                  "\"synchronous\" is the SQLite store's setting; with "
                  "--store, durability is PostgreSQL's synchronous_commit "
                  "(or none: memory)");
  }
  return Status::Ok();
}

// The command line's --tls-* over the config's "tls"; then the files are
// loaded and checked (a reload loads them again: a renewed certificate).
Status PrepareTls(const ServeFlags& flags, ServeConfig& c) {
  const bool flagged = !flags.tls_cert.empty() || !flags.tls_key.empty() ||
                       !flags.tls_client_ca.empty() ||
                       flags.tls_require_client_certificate;
  if (flagged && !c.tls) c.tls.emplace();
  if (!flags.tls_cert.empty()) c.tls->cert = flags.tls_cert;
  if (!flags.tls_key.empty()) c.tls->key = flags.tls_key;
  if (!flags.tls_client_ca.empty()) c.tls->client_ca = flags.tls_client_ca;
  if (flags.tls_require_client_certificate) {
    c.tls->require_client_certificate = true;
  }
  if (flags.allow_plaintext) c.allow_plaintext = true;
  if (c.tls) {
    auto loaded = server::ServerTls::Load(*c.tls);
    if (!loaded) return loaded.error();
    c.http.tls = std::move(*loaded);
  }
  if (c.api.auth.HasSubjects() && (!c.tls || c.tls->client_ca.empty())) {
    return Status(StatusCode::kBadRequest,
                  "a token entry names a certificate \"subject\", but no "
                  "client CA verifies client certificates: set "
                  "\"tls\": {\"client_ca\": …} (or --tls-client-ca)");
  }
  return Status::Ok();
}

Status Prepare(const ServeFlags& flags, ServeConfig& c) {
  std::string listen = flags.listen, data = flags.data;
  bool data_given = flags.data_given;
  c.store = flags.store;
  c.store_schema = flags.store_schema;
  if (!flags.clock.empty()) c.clock = flags.clock;
  if (!flags.config.empty()) {
    if (Status st = ReadServeConfig(flags.config, c, listen, data, data_given);
        !st.ok())
      return st;
    // The command line wins over the config file.
    if (flags.listen_given) listen = flags.listen;
    if (flags.data_given) data = flags.data;
    if (!flags.store.empty()) c.store = flags.store;
    if (!flags.clock.empty()) c.clock = flags.clock;
    if (flags.store_schema != ServeFlags().store_schema) {
      c.store_schema = flags.store_schema;
    }
  }
  if (Status st = CheckStoreChoice(c, data_given); !st.ok()) return st;
  if (Status st = ParseListen(listen, c); !st.ok()) return st;
  if (Status st = CheckManualClock(c); !st.ok()) return st;
  if (Status st = PrepareTls(flags, c); !st.ok()) return st;
  if (!IsLoopback(c.address) && !c.api.auth.enabled()) {
    return Status(StatusCode::kForbidden,
                  "refusing to listen on " + c.address +
                      " without authentication: beyond loopback, configure "
                      "\"tokens\" in the --config file");
  }
  if (!IsLoopback(c.address) && !c.tls && !c.allow_plaintext) {
    return Status(StatusCode::kForbidden,
                  "refusing to listen on " + c.address +
                      " without TLS: every token would cross the network in "
                      "cleartext. Give --tls-cert and --tls-key (or \"tls\" "
                      "in the config), or, behind a TLS-terminating proxy, "
                      "--allow-plaintext (\"allow_plaintext\": true)");
  }
  c.data = data;
  // A backup's scratch copy goes beside the database, on its disk.
  if (c.store.empty()) c.api.backup_dir = data;
  c.http.address = c.address;
  c.http.port = c.port;
  return Status::Ok();
}

// The store; on PostgreSQL, a leader's fenced by its `epoch`. In memory,
// every open (a recovery's too) shares `memory`.
Result<std::unique_ptr<Store>> OpenConfiguredStore(
    const ServeConfig& c, milliseconds store_timeout, std::uint64_t epoch = 0,
    const std::shared_ptr<MemoryStoreData>& memory = nullptr) {
  if (c.store == kMemoryStore) return OpenMemoryStore(memory);
  if (!c.store.empty()) {
    PostgresStoreOptions options{.schema = c.store_schema,
                                 .timeout = store_timeout};
    options.fence = PostgresStoreOptions::Fence{
        cluster::LeaderLease::EpochCheckSql(c.store_schema), epoch};
    return OpenPostgresStore(c.store, options);
  }
  std::error_code fs_error;
  std::filesystem::create_directories(c.data, fs_error);
  if (fs_error) {
    return Error(StatusCode::kUnavailable,
                 "cannot create " + c.data + ": " + fs_error.message());
  }
  return OpenSqliteStore(c.data + "/leasehold.db",
                         {.synchronous = c.synchronous});
}

// This machine's name, for a node that was given none.
std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
    return "leasehold";
  }
  return name;
}

// Where clients reach this node, unless --advertise says; also what the
// "serving" log line shows.
std::string DefaultAdvertise(const ServeConfig& c, std::uint16_t port) {
  const bool v6 = c.address.find(':') != std::string::npos;
  return std::string(c.tls ? "https://" : "http://") +
         (v6 ? "[" + c.address + "]" : c.address) + ":" + std::to_string(port);
}

// Why the server could not start; exit code 1.
int Refuse(const std::string& why) {
  log::Error("cannot serve: " + why);
  return 1;
}

// Rereads the --config file and applies it, whole or not at all
// (serve_reload.h); one reload at a time, from a SIGHUP or
// POST /v1/admin/reload. `running` holds what runs; only its live parts
// change.
class Reloader {
 public:
  Reloader(const ServeFlags& flags, ServeConfig& running,
           EngineService& service, server::Frontend& frontend)
      : flags_(flags),
        running_(running),
        service_(service),
        api_(frontend.api()),
        frontend_(frontend) {}

  Status Reload(std::string_view by) {
    std::lock_guard lock(mu_);
    const log::Fields about = {
        {"config", flags_.config.empty() ? "none" : flags_.config},
        {"by", std::string(by)}};
    // Without a config file, the TLS files are all there is to reread.
    if (flags_.config.empty() && !running_.tls) {
      log::Warn("config reload refused: no --config file", about);
      return Status(StatusCode::kBadRequest,
                    "this server was started without --config or TLS: there "
                    "is nothing to reload");
    }
    ServeConfig next;
    Status st = Prepare(flags_, next);
    if (st.ok()) st = CheckLiveChange(running_, next);
    if (!st.ok()) {
      log::Fields why = about;
      why.emplace_back("error", st.message());
      log::Warn("config reload refused; the running config stays", why);
      return st;
    }
    const auto changes = NamespaceChanges(running_, next);
    // Through the service, under its mutex, as every engine command.
    for (const auto& [ns, options] : changes) {
      service_.SetNamespaceOptions(ns, options);
    }
    api_.SetAuthenticator(next.api.auth);
    running_.api.auth = next.api.auth;
    running_.namespaces = next.namespaces;
    log::Fields done = about;
    done.emplace_back("tokens", std::to_string(next.api.auth.size()));
    done.emplace_back("namespaces", std::to_string(next.namespaces.size()));
    if (next.http.tls != nullptr) {
      frontend_.SetTls(next.http.tls);
      running_.tls = next.tls;
      done.emplace_back("certificate", next.http.tls->description());
    }
    log::Info("config reloaded", done);
    return Status::Ok();
  }

 private:
  const ServeFlags& flags_;
  ServeConfig& running_;
  EngineService& service_;
  server::Api& api_;
  server::Frontend& frontend_;
  std::mutex mu_;
};

// Rereads the config on each SIGHUP until the io_context stops.
void ReloadOnHangUp(asio::signal_set& hangup, Reloader& reloader) {
  hangup.async_wait(
      [&hangup, &reloader](const boost::system::error_code& ec, int) {
        if (ec) return;
        (void)reloader.Reload("SIGHUP");
        ReloadOnHangUp(hangup, reloader);
      });
}

}  // namespace

int RunServe(const ServeFlags& flags) {
  auto level = log::ParseLevel(flags.log_level);
  auto format = log::ParseFormat(flags.log_format);
  if (!level || !format) {
    log::Error(!level ? level.error().message() : format.error().message());
    return 1;
  }
  log::Configure(*level, *format);
  ServeConfig c;
  if (Status st = Prepare(flags, c); !st.ok()) return Refuse(st.message());
  // On PostgreSQL, one of several nodes (src/cluster).
  const bool clustered = !c.store.empty() && c.store != kMemoryStore;
  const bool manual_clock = c.clock == "manual";
  if (!clustered && (!flags.advertise.empty() || !flags.node.empty())) {
    return Refuse(
        "--advertise and --node name a node among several on PostgreSQL: "
        "they need --store postgresql://…");
  }
  // On PostgreSQL the first open checks the URL and migrates the schema;
  // the node then stands by, and opens the store fenced by its epoch once
  // it leads (ClusterNode).
  const auto memory = std::make_shared<MemoryStoreData>();
  const milliseconds store_timeout(flags.store_timeout_ms);
  auto store = clustered
                   ? OpenPostgresStore(c.store, {.schema = c.store_schema,
                                                 .timeout = store_timeout})
                   : OpenConfiguredStore(c, store_timeout, 0, memory);
  if (!store) return Refuse(store.error().message());
  // Only now, with the data file held, so that a second server refused on
  // it never deletes the running one's scratch copy.
  if (!c.api.backup_dir.empty()) {
    if (const int removed = server::RemoveBackupScratch(c.api.backup_dir);
        removed > 0) {
      log::Info(
          "removed backup scratch files left by a server that died "
          "mid-backup",
          {{"dir", c.api.backup_dir}, {"files", std::to_string(removed)}});
    }
  }
  const std::string where = (*store)->Describe();
  RealClock real_clock;
  ManualClock manual;
  const Clock& clock =
      manual_clock ? static_cast<const Clock&>(manual) : real_clock;
  asio::io_context io;
  // From here a SIGHUP no longer ends the process: it waits for the reload
  // handler, armed once serving.
  asio::signal_set hangup(io, SIGHUP);
  EngineOptions engine_options;
  engine_options.max_body_bytes = c.max_body_bytes;
  // On by default where outages are routine (a database restarted, failed
  // over, out of reach), off where one costs more memory than it is worth
  // (SQLite: a full or failing disk).
  const ServiceOptions service_options{.outage_reads =
                                           c.outage_reads.value_or(clustered)};
  std::unique_ptr<EngineService> service;
  if (clustered) {
    store->reset();
    service = EngineService::OpenWithoutStore(
        io, engine_options, clock,
        Status(StatusCode::kUnavailable, "this node does not lead"),
        service_options);
  } else {
    auto opened = EngineService::Open(io, std::move(*store), engine_options,
                                      clock, service_options);
    if (!opened) return Refuse(opened.error().message());
    service = std::move(*opened);
  }
  if (manual_clock) service->UseManualClock(manual);
  std::unique_ptr<cluster::ClusterNode> node;  // set once serving
  // The same, for the service's threads, which may run before it is set.
  std::atomic<cluster::ClusterNode*> node_for_recovery{nullptr};
  // A failed store (a full disk, an I/O error, a lost database) is opened
  // again and reloaded, as a restart would, without one (EngineService);
  // on PostgreSQL only while this node still leads, fenced by its epoch.
  service->EnableRecovery(
      {.reopen = [&c, &node_for_recovery, clustered, store_timeout,
                  memory]() -> Result<std::unique_ptr<Store>> {
         if (!clustered)
           return OpenConfiguredStore(c, store_timeout, 0, memory);
         cluster::ClusterNode* n = node_for_recovery.load();
         if (n == nullptr) {
           return Error(StatusCode::kUnavailable, "not leading yet");
         }
         return n->ReopenStore();
       },
       .on_failure =
           [&node_for_recovery] {
             if (auto* n = node_for_recovery.load()) n->StoreFailed();
           }});
  server::Frontend frontend(io, *service, c.api, c.http);
  server::Api& api = frontend.api();
  server::EventHub& hub = frontend.hub();
  server::HttpServer& http = frontend.http();
  Reloader reloader(flags, c, *service, frontend);
  api.SetReload(
      [&reloader] { return reloader.Reload("POST /v1/admin/reload"); });

  auto work = asio::make_work_guard(io);
  std::vector<std::thread> threads;
  for (int i = 0; i < c.io_threads; ++i)
    threads.emplace_back([&io] { io.run(); });
  // Before the first request: a namespace's options (e.g. memory locks)
  // apply from its first lock on.
  for (const auto& [ns, options] : c.namespaces) {
    service->SetNamespaceOptions(ns, options);
  }
  auto port = http.Start();
  if (!port) {
    log::Error("cannot serve: " + port.error().message());
    work.reset();
    io.stop();
    for (auto& t : threads) t.join();
    return 1;
  }

  if (clustered) {
    cluster::ClusterNodeOptions options;
    options.lease = {.url = c.store,
                     .schema = c.store_schema,
                     .node = flags.node.empty() ? HostName() : flags.node,
                     .advertise = flags.advertise.empty()
                                      ? DefaultAdvertise(c, *port)
                                      : flags.advertise,
                     .lease = milliseconds(flags.leader_lease_ms),
                     .margin = milliseconds(flags.leader_lease_ms / 4)};
    options.session_grace = milliseconds(flags.leader_lease_ms);
    options.on_leadership = [&hub, &clock, advertise = options.lease.advertise](
                                std::uint64_t epoch) {
      if (epoch == 0) return;
      OwnedEvent e;
      e.type = EventType::kClusterLeader;
      e.at = clock.Now();
      e.holder = advertise;
      e.version = epoch;
      hub.Publish({e});
    };
    auto started = cluster::ClusterNode::Start(
        std::move(options), *service, [&c, store_timeout](std::uint64_t epoch) {
          return OpenConfiguredStore(c, store_timeout, epoch);
        });
    if (!started) {
      log::Error("cannot serve: " + started.error().message());
      http.Stop();
      work.reset();
      io.stop();
      for (auto& t : threads) t.join();
      return 1;
    }
    node = std::move(*started);
    node_for_recovery = node.get();
    api.SetCluster(node.get());
  }

  ReloadOnHangUp(hangup, reloader);
  std::promise<int> stop;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&stop](const boost::system::error_code& ec, int signo) {
    if (!ec) stop.set_value(signo);
  });
  if (!flags.port_file.empty()) {
    std::error_code fs_error;
    std::ofstream(flags.port_file + ".tmp") << *port << "\n";
    std::filesystem::rename(flags.port_file + ".tmp", flags.port_file,
                            fs_error);
  }
  log::Fields serving = {
      {"listen", DefaultAdvertise(c, *port)},
      {"store", where},
      {"auth", !c.api.auth.enabled()      ? "off"
               : c.api.auth.HasSubjects() ? "bearer tokens, client certificates"
                                          : "bearer tokens"},
      {"config", flags.config.empty() ? "none" : flags.config},
      {"io_threads", std::to_string(c.io_threads)}};
  if (c.http.tls != nullptr) {
    serving.emplace_back("certificate", c.http.tls->description());
    serving.emplace_back("client_certificates",
                         c.tls->client_ca.empty() ? "not asked for"
                         : c.tls->require_client_certificate
                             ? "required"
                             : "verified when given");
  }
  if (manual_clock) {
    serving.emplace_back("clock",
                         "manual: it moves only by POST "
                         "/v1/testing/clock");
  }
  log::Info("serving " + where, serving);

  const int signo = stop.get_future().get();
  log::Info("stopping: no new connections, waiters cancelled",
            {{"signal", std::to_string(signo)}});
  http.Stop();
  service->Shutdown();  // answers waiters (-2) and flushes the store
  if (node != nullptr) node->Stop(/*resign=*/true);
  for (int i = 0; i < 200 && http.open_connections() > 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  work.reset();
  io.stop();
  for (auto& t : threads) t.join();
  log::Info(c.store == kMemoryStore
                ? "stopped; the data was in memory: it is gone"
                : "stopped; every acknowledged change is on disk");
  return 0;
}

}  // namespace leasehold::cli
