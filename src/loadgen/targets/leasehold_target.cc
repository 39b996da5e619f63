// A leasehold server as a target: each client opens a session and takes
// session-owned Exclusive application locks (timeout_ms = the wait, so a
// contender is parked in the server's FIFO queue); checkouts are the record
// checkout and check-in of docs/api.md, each answered once on disk.
#include <fmt/format.h>

#include <boost/json/parse.hpp>
#include <thread>
#include <vector>

#include "client/api_codec.h"
#include "loadgen/targets/factories.h"

namespace leasehold::loadgen {

namespace api = client::api;

namespace {

constexpr int kSessionTtlMs = 3'600'000;  // outlives any run, no keepalive
constexpr int kLeaseTtlMs = 60'000;
constexpr std::uint64_t kIdleLocksPerSession = 100;
constexpr int kIdleBuilders = 4;

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

Status Unexpected(std::string_view what, const HttpAnswer& a) {
  if (a.error) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("{}: {}", what, a.error.message()));
  }
  return Status(StatusCode::kInternal, fmt::format("{}: {} {}", what, a.status,
                                                   a.body.substr(0, 200)));
}

// Opens a session on `http`; its id.
Result<std::string> OpenSession(BlockingHttpConnection& http,
                                std::string_view name) {
  const HttpAnswer a = http.Request(
      Method::kPost, api::SessionsPath(),
      api::OpenSessionBody(name, std::chrono::milliseconds(kSessionTtlMs)));
  boost::system::error_code ec;
  const auto parsed = boost::json::parse(a.body, ec);
  auto session = api::ParseSession(parsed, "POST /v1/sessions");
  if (a.error || a.status != 201 || ec || !session) {
    return std::unexpected(Unexpected("POST /v1/sessions", a));
  }
  return std::move(session->id);
}

Status EndSession(BlockingHttpConnection& http, const std::string& id) {
  const HttpAnswer a = http.Request(Method::kDelete, api::SessionPath(id), "");
  if (a.error || a.status != 204) return Unexpected("DELETE session", a);
  return Status::Ok();
}

class LeaseholdClient final : public TargetClient {
 public:
  LeaseholdClient(ServerAddress address, const std::string& ns, int index)
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
    const HttpAnswer a = http_.Request(
        Method::kPost, acquire_,
        api::AcquireBody(session_, Resource(name), Exclusive(wait)));
    if (!a.error && a.status == 200) return true;
    if (!a.error && a.status == 409) return false;
    return std::unexpected(Unexpected("acquire", a));
  }

  Status Release(std::uint64_t name) override {
    const HttpAnswer a = http_.Request(
        Method::kPost, release_,
        api::ReleaseBody(session_, Resource(name), "Session", "public"));
    if (a.error || a.status != 200) return Unexpected("release", a);
    return Status::Ok();
  }

  Result<bool> Checkout(std::uint64_t key) override {
    const HttpAnswer a = http_.Request(
        Method::kPost,
        api::RecordPath(ns_, fmt::format("k{}", key), "checkout"),
        api::CheckoutBody({.owner = owner_,
                           .ttl = std::chrono::milliseconds(kLeaseTtlMs),
                           .token = ""}));
    if (!a.error && a.status == 200) return true;
    if (!a.error && a.status == 423) return false;
    return std::unexpected(Unexpected("checkout", a));
  }

  Status Checkin(std::uint64_t key) override {
    const HttpAnswer a = http_.Request(
        Method::kPost, api::RecordPath(ns_, fmt::format("k{}", key), "checkin"),
        api::ProofBody({.owner = owner_, .token = ""}));
    if (a.error || a.status != 200) return Unexpected("checkin", a);
    return Status::Ok();
  }

 private:
  BlockingHttpConnection http_;
  const std::string ns_, acquire_, release_, owner_;
  std::string session_;
};

// Sessions of kIdleLocksPerSession locks each, built by a few threads.
class LeaseholdIdle final : public IdleLocks {
 public:
  LeaseholdIdle(ServerAddress address, std::string ns)
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
    BlockingHttpConnection http(address_);
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
    BlockingHttpConnection http(address_);
    const std::string acquire = api::ApplockPath(ns_, "acquire");
    for (std::uint64_t s = t; s < sessions; s += kIdleBuilders) {
      auto id = OpenSession(http, fmt::format("bench-idle-{}", s));
      if (!id) return id.error();
      ids.push_back(*id);
      const std::uint64_t end = std::min(count, (s + 1) * kIdleLocksPerSession);
      for (std::uint64_t j = s * kIdleLocksPerSession; j < end; ++j) {
        const HttpAnswer a = http.Request(
            Method::kPost, acquire,
            api::AcquireBody(*id, fmt::format("idle-{}", j),
                             Exclusive(std::chrono::milliseconds(0))));
        if (a.error || a.status != 200) return Unexpected("idle acquire", a);
      }
    }
    return Status::Ok();
  }

  const ServerAddress address_;
  const std::string ns_;
  std::vector<std::vector<std::string>> ids_;
};

class LeaseholdTarget final : public Target {
 public:
  LeaseholdTarget(ServerAddress address, std::string ns)
      : address_(std::move(address)), ns_(std::move(ns)) {}

  std::string_view Kind() const override { return "leasehold"; }

  Status Prepare(Workload, std::uint64_t) override {
    BlockingHttpConnection http(address_);
    const HttpAnswer a = http.Request(Method::kGet, "/healthz", "");
    if (a.error || a.status != 200) return Unexpected("GET /healthz", a);
    return Status::Ok();
  }

  std::string Durability(Workload w) const override {
    return w == Workload::kCheckout
               ? "yes: on disk before the answer (SQLite WAL, "
                 "synchronous=FULL, group commit)"
               : "no: session-owned locks live in memory (not journaled)";
  }
  bool Durable(Workload w) const override { return w == Workload::kCheckout; }

  Result<std::unique_ptr<TargetClient>> Connect(int index) override {
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
  const ServerAddress address_;
  const std::string ns_;
};

}  // namespace

std::unique_ptr<Target> MakeLeaseholdTarget(ServerAddress address,
                                            std::string ns) {
  return std::make_unique<LeaseholdTarget>(std::move(address), std::move(ns));
}

}  // namespace leasehold::loadgen
