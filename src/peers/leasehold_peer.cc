// A leasehold server as a peer.
// The race: documents are records doc-1..doc-N of a fresh namespace, put
// from a few threads; each session is a client of its own (the C++ client
// library) checking out, saving and checking in as its user. Every checkout
// is one atomic decision in the engine, so there is no naive variant, and
// no race log (the sessions' answers are counted).
// The benchmarks: each client opens a session and takes session-owned
// Exclusive application locks (timeout_ms = the wait, so a contender is
// parked in the server's FIFO queue), journaled before the answer unless
// the namespace keeps its locks in memory (Prepare asks the server which);
// checkouts are the record checkout and check-in of docs/api.md, each
// answered once on disk. They talk over one
// blocking http::Connection per client with the API codec, the cheapest
// client there is.
#include <fmt/format.h>

#include <atomic>
#include <boost/json/parse.hpp>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "client/api_codec.h"
#include "leasehold/client.h"
#include "peers/factories.h"

namespace leasehold::peers {

namespace api = client::api;

namespace {

constexpr int kSessionTtlMs = 3'600'000;  // outlives any run, no keepalive
constexpr int kLeaseTtlMs = 60'000;
constexpr std::uint64_t kIdleLocksPerSession = 100;
constexpr int kIdleBuilders = 4;

// --- the race: the C++ client ------------------------------------------

Status Failure(const client::Error& e) {
  return Status(StatusCode::kUnavailable,
                fmt::format("leasehold {}: {}", e.code, e.message));
}

std::string DocumentKey(int doc) { return fmt::format("doc-{}", doc); }

std::string FreshNamespace() {
  std::random_device random;
  return fmt::format("race-{:08x}{:08x}", random(), random());
}

class LeaseholdDocumentSession final : public DocumentSession {
 public:
  LeaseholdDocumentSession(client::Client client, std::string ns,
                           std::string user)
      : client_(std::move(client)),
        ns_(std::move(ns)),
        user_(std::move(user)) {}

  Result<bool> Checkout(int doc, Variant variant, std::chrono::milliseconds ttl,
                        std::chrono::microseconds) override {
    if (variant != Variant::kAtomic) {
      return leasehold::Error(StatusCode::kBadRequest,
                              "a leasehold server has no check-then-set");
    }
    auto r = client_.Checkout(ns_, DocumentKey(doc),
                              {.owner = user_, .ttl = ttl, .token = ""});
    if (!r) return std::unexpected(Failure(r.error()));
    return r->granted;
  }

  Status Log(int, bool) override { return Status::Ok(); }

  Result<bool> Save(int doc, std::string_view body) override {
    auto r = client_.Save(ns_, DocumentKey(doc), {.owner = user_, .token = ""},
                          body);
    if (!r) return std::unexpected(Failure(r.error()));
    return r->done;
  }

  Result<bool> Checkin(int doc) override {
    auto r =
        client_.Checkin(ns_, DocumentKey(doc), {.owner = user_, .token = ""});
    if (!r) return std::unexpected(Failure(r.error()));
    return r->done;
  }

  Result<DocumentView> Read(int doc) override {
    auto r = client_.Get(ns_, DocumentKey(doc));
    if (!r) return std::unexpected(Failure(r.error()));
    return DocumentView{r->locked_by, r->state == "locked"};
  }

 private:
  client::Client client_;
  std::string ns_;
  std::string user_;
};

// --- the benchmarks: one blocking connection and the codec ---------------

// Session-owned Exclusive locks waiting up to `wait`.
client::AcquireOptions Exclusive(std::chrono::milliseconds wait) {
  return {.mode = "Exclusive",
          .owner = "Session",
          .timeout = wait,
          .principal = "public"};
}

std::string Resource(std::uint64_t name) {
  return name == kHotName ? "hot" : fmt::format("r{}", name);
}

Status Unexpected(std::string_view what, const http::Answer& a) {
  if (a.error) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("{}: {}", what, a.error.message()));
  }
  return Status(StatusCode::kInternal, fmt::format("{}: {} {}", what, a.status,
                                                   a.body.substr(0, 200)));
}

// Opens a session on `http`; its id.
Result<std::string> OpenSession(http::Connection& http, std::string_view name) {
  const http::Answer a = http.Request(
      http::Method::kPost, api::SessionsPath(),
      api::OpenSessionBody(name, std::chrono::milliseconds(kSessionTtlMs)));
  boost::system::error_code ec;
  const auto parsed = boost::json::parse(a.body, ec);
  auto session = api::ParseSession(parsed, "POST /v1/sessions");
  if (a.error || a.status != 201 || ec || !session) {
    return std::unexpected(Unexpected("POST /v1/sessions", a));
  }
  return std::move(session->id);
}

Status EndSession(http::Connection& http, const std::string& id) {
  const http::Answer a =
      http.Request(http::Method::kDelete, api::SessionPath(id), "");
  if (a.error || a.status != 204) return Unexpected("DELETE session", a);
  return Status::Ok();
}

// leasehold_store_entries_total from GET /metrics.
Result<double> JournalEntries(http::Connection& http) {
  const http::Answer a = http.Request(http::Method::kGet, "/metrics", "");
  if (a.error || a.status != 200) {
    return std::unexpected(Unexpected("GET /metrics", a));
  }
  constexpr std::string_view kName = "\nleasehold_store_entries_total ";
  const std::size_t at = a.body.find(kName);
  if (at == std::string::npos) {
    return leasehold::Error(StatusCode::kInternal,
                            "GET /metrics: no leasehold_store_entries_total");
  }
  return std::strtod(a.body.c_str() + at + kName.size(), nullptr);
}

// Session `id` takes the probe's lock in `ns` and gives it back.
Status ProbePair(http::Connection& http, const std::string& id,
                 const std::string& ns) {
  const http::Answer got =
      http.Request(http::Method::kPost, api::ApplockPath(ns, "acquire"),
                   api::AcquireBody(id, "durability-probe",
                                    Exclusive(std::chrono::milliseconds(0))));
  if (got.error || got.status != 200) return Unexpected("probe acquire", got);
  const http::Answer gave = http.Request(
      http::Method::kPost, api::ApplockPath(ns, "release"),
      api::ReleaseBody(id, "durability-probe", "Session", "public"));
  if (gave.error || gave.status != 200) {
    return Unexpected("probe release", gave);
  }
  return Status::Ok();
}

// Whether `ns` journals session-owned locks (the default) or keeps them in
// memory ("locks": "memory"), asked of the server: its journal's entry count
// across a lock taken and given back. Only the second pair is counted: a
// session's first memory lock journals the session's mark that it has one.
Result<bool> JournalsLocks(http::Connection& http, const std::string& ns) {
  auto id = OpenSession(http, "bench-durability-probe");
  if (!id) return std::unexpected(id.error());
  auto probe = [&]() -> Result<bool> {
    if (Status st = ProbePair(http, *id, ns); !st.ok()) {
      return std::unexpected(st);
    }
    const Result<double> before = JournalEntries(http);
    if (!before) return std::unexpected(before.error());
    if (Status st = ProbePair(http, *id, ns); !st.ok()) {
      return std::unexpected(st);
    }
    const Result<double> after = JournalEntries(http);
    if (!after) return std::unexpected(after.error());
    return *after > *before;
  };
  const Result<bool> journaled = probe();
  const Status ended = EndSession(http, *id);
  if (journaled && !ended.ok()) return std::unexpected(ended);
  return journaled;
}

class LeaseholdClient final : public LockClient {
 public:
  LeaseholdClient(http::Address address, const std::string& ns, int index)
      : http_(std::move(address)),
        ns_(ns),
        acquire_(api::ApplockPath(ns, "acquire")),
        release_(api::ApplockPath(ns, "release")),
        owner_(fmt::format("bench-owner-{}", index)) {}

  ~LeaseholdClient() override {
    if (!session_.empty()) (void)EndSession(http_, session_);
  }

  Status Open(int index) {
    auto id = OpenSession(http_, fmt::format("bench-{}", index));
    if (!id) return id.error();
    session_ = std::move(*id);
    return Status::Ok();
  }

  Result<bool> Acquire(std::uint64_t name,
                       std::chrono::milliseconds wait) override {
    const http::Answer a = http_.Request(
        http::Method::kPost, acquire_,
        api::AcquireBody(session_, Resource(name), Exclusive(wait)));
    if (!a.error && a.status == 200) return true;
    if (!a.error && a.status == 409) return false;
    return std::unexpected(Unexpected("acquire", a));
  }

  Status Release(std::uint64_t name) override {
    const http::Answer a = http_.Request(
        http::Method::kPost, release_,
        api::ReleaseBody(session_, Resource(name), "Session", "public"));
    if (a.error || a.status != 200) return Unexpected("release", a);
    return Status::Ok();
  }

  Result<bool> Checkout(std::uint64_t key) override {
    const http::Answer a = http_.Request(
        http::Method::kPost,
        api::RecordPath(ns_, fmt::format("k{}", key), "checkout"),
        api::CheckoutBody({.owner = owner_,
                           .ttl = std::chrono::milliseconds(kLeaseTtlMs),
                           .token = ""}));
    if (!a.error && a.status == 200) return true;
    if (!a.error && a.status == 423) return false;
    return std::unexpected(Unexpected("checkout", a));
  }

  Status Checkin(std::uint64_t key) override {
    const http::Answer a =
        http_.Request(http::Method::kPost,
                      api::RecordPath(ns_, fmt::format("k{}", key), "checkin"),
                      api::ProofBody({.owner = owner_, .token = ""}));
    if (a.error || a.status != 200) return Unexpected("checkin", a);
    return Status::Ok();
  }

 private:
  http::Connection http_;
  const std::string ns_, acquire_, release_, owner_;
  std::string session_;
};

// Sessions of kIdleLocksPerSession locks each, built by a few threads.
class LeaseholdIdle final : public IdleLocks {
 public:
  LeaseholdIdle(http::Address address, std::string ns)
      : address_(std::move(address)), ns_(std::move(ns)) {}
  ~LeaseholdIdle() override { (void)Release(); }

  Status Build(std::uint64_t count) {
    const std::uint64_t sessions =
        (count + kIdleLocksPerSession - 1) / kIdleLocksPerSession;
    std::vector<Status> results(kIdleBuilders);
    ids_.resize(kIdleBuilders);
    std::vector<std::thread> threads;
    for (int t = 0; t < kIdleBuilders; ++t) {
      threads.emplace_back(
          [&, t] { results[t] = BuildSome(t, sessions, count, ids_[t]); });
    }
    for (auto& th : threads) th.join();
    for (const Status& st : results) {
      if (!st.ok()) return st;
    }
    return Status::Ok();
  }

  Status Release() override {
    Status first;
    http::Connection http(address_);
    for (auto& ids : ids_) {
      for (const std::string& id : ids) {
        if (Status st = EndSession(http, id); !st.ok() && first.ok()) {
          first = st;
        }
      }
      ids.clear();
    }
    return first;
  }

 private:
  // Sessions t, t + kIdleBuilders, … below `sessions`.
  Status BuildSome(int t, std::uint64_t sessions, std::uint64_t count,
                   std::vector<std::string>& ids) {
    http::Connection http(address_);
    const std::string acquire = api::ApplockPath(ns_, "acquire");
    for (std::uint64_t s = t; s < sessions; s += kIdleBuilders) {
      auto id = OpenSession(http, fmt::format("bench-idle-{}", s));
      if (!id) return id.error();
      ids.push_back(*id);
      const std::uint64_t end = std::min(count, (s + 1) * kIdleLocksPerSession);
      for (std::uint64_t j = s * kIdleLocksPerSession; j < end; ++j) {
        const http::Answer a = http.Request(
            http::Method::kPost, acquire,
            api::AcquireBody(*id, fmt::format("idle-{}", j),
                             Exclusive(std::chrono::milliseconds(0))));
        if (a.error || a.status != 200) return Unexpected("idle acquire", a);
      }
    }
    return Status::Ok();
  }

  const http::Address address_;
  const std::string ns_;
  std::vector<std::vector<std::string>> ids_;
};

class LeaseholdPeer final : public Peer {
 public:
  LeaseholdPeer(std::string url, http::Address address, std::string ns)
      : url_(std::move(url)),
        address_(std::move(address)),
        ns_(std::move(ns)) {}

  std::string_view Kind() const override { return "leasehold"; }
  std::string_view Name() const override { return "leasehold"; }

  bool HasDocuments() const override { return true; }

  // Puts documents 1..rows into a fresh namespace, from a few threads.
  Status PrepareDocuments(int rows) override {
    auto client = Client();
    if (!client) return client.error();
    if (auto healthy = client->Healthy(); !healthy) {
      return Failure(healthy.error());
    }
    documents_ns_ = FreshNamespace();
    constexpr int kThreads = 4;
    std::atomic<int> next{1};
    std::mutex mu;
    Status failed;
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, c = *client]() mutable {
        for (int doc = next++; doc <= rows; doc = next++) {
          auto put = c.Put(documents_ns_, DocumentKey(doc), "draft");
          if (put) continue;
          std::scoped_lock lock(mu);
          failed = Failure(put.error());
          next = rows + 1;
        }
      });
    }
    threads.clear();
    return failed;
  }

  Result<std::unique_ptr<DocumentSession>> OpenDocumentSession(
      const std::string& user) override {
    auto client = Client();
    if (!client) return std::unexpected(client.error());
    return std::make_unique<LeaseholdDocumentSession>(std::move(*client),
                                                      documents_ns_, user);
  }

  Result<std::optional<RaceLog>> CountRaceLog() override {
    return std::optional<RaceLog>();
  }

  Status Prepare(Workload w, std::uint64_t) override {
    http::Connection http(address_);
    const http::Answer a = http.Request(http::Method::kGet, "/healthz", "");
    if (a.error || a.status != 200) return Unexpected("GET /healthz", a);
    // A node among several names itself (GET /v1/cluster): its store is
    // PostgreSQL.
    const http::Answer cluster =
        http.Request(http::Method::kGet, "/v1/cluster", "");
    boost::system::error_code ec;
    const auto parsed = boost::json::parse(cluster.body, ec);
    const boost::json::object* o = ec ? nullptr : parsed.if_object();
    const boost::json::value* node =
        o != nullptr ? o->if_contains("node") : nullptr;
    if (node != nullptr && !node->is_null()) {
      store_ =
          "PostgreSQL, one transaction per group commit, synchronous_commit";
    }
    if (w == Workload::kCheckout) return Status::Ok();
    auto journaled = JournalsLocks(http, ns_);
    if (!journaled) return journaled.error();
    locks_journaled_ = *journaled;
    return Status::Ok();
  }

  std::string Durability(Workload w) const override {
    if (w == Workload::kCheckout || locks_journaled_) {
      return "yes: on disk before the answer (" + store_ + ")";
    }
    return fmt::format(
        "no: namespace {} keeps session-owned locks in memory "
        "(\"locks\": \"memory\")",
        ns_);
  }
  bool Durable(Workload w) const override {
    return w == Workload::kCheckout || locks_journaled_;
  }

  Result<std::unique_ptr<LockClient>> Connect(int index) override {
    auto c = std::make_unique<LeaseholdClient>(address_, ns_, index);
    if (Status st = c->Open(index); !st.ok()) return std::unexpected(st);
    return c;
  }

  Result<std::unique_ptr<IdleLocks>> HoldIdle(std::uint64_t count) override {
    auto idle = std::make_unique<LeaseholdIdle>(address_, ns_);
    if (Status st = idle->Build(count); !st.ok()) return std::unexpected(st);
    return idle;
  }

 private:
  // A client of its own (and so its own connections) per race session.
  Result<client::Client> Client() const {
    auto c =
        client::Client::Create({.url = url_,
                                .token = address_.token,
                                .io_timeout = client::Milliseconds(30000)});
    if (!c) return std::unexpected(Failure(c.error()));
    return std::move(*c);
  }

  const std::string url_;
  const http::Address address_;
  const std::string ns_;
  std::string documents_ns_;      // the race's, fresh at each PrepareDocuments
  bool locks_journaled_ = false;  // ns_'s locks, as Prepare found them
  std::string store_ = "SQLite WAL, synchronous=FULL, group commit";
};

}  // namespace

std::unique_ptr<Peer> MakeLeaseholdPeer(std::string url, http::Address address,
                                        std::string ns) {
  return std::make_unique<LeaseholdPeer>(std::move(url), std::move(address),
                                         std::move(ns));
}

}  // namespace leasehold::peers
