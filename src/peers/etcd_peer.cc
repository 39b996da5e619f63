// etcd as a peer, for the benchmarks only (it holds no documents to race
// on), through its v3 JSON gateway over plain HTTP (one blocking
// connection per client), the way etcd's own lock recipe works:
// each client is granted a lease once (its session); acquire is a
// transaction "if the key's create_revision is 0, put it under my lease";
// release deletes the key. Checkouts are the same on other keys. Every
// write goes through raft and is fsynced to etcd's WAL before the answer.
// etcd cannot wait for a key in one call (its lock service watches the
// previous key), so a contender retries (spin.h). Keys and values are
// base64 in the JSON; 64-bit numbers are strings.
#include <fmt/format.h>

#include "peers/base64.h"
#include "peers/factories.h"
#include "peers/spin.h"

namespace leasehold::peers {

namespace {

constexpr int kClientLeaseTtlS = 600;
constexpr int kIdleLeaseTtlS = 3600;
constexpr std::uint64_t kMaxTxnOps = 128;  // etcd's default --max-txn-ops

Status Unexpected(std::string_view what, const http::Answer& a) {
  if (a.error) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("etcd {}: {}", what, a.error.message()));
  }
  return Status(
      StatusCode::kInternal,
      fmt::format("etcd {}: {} {}", what, a.status, a.body.substr(0, 200)));
}

// Grants a lease of `ttl_s` seconds; its ID (a decimal string).
Result<std::string> GrantLease(http::Connection& http, int ttl_s) {
  const http::Answer a = http.Request(http::Method::kPost, "/v3/lease/grant",
                                      fmt::format(R"({{"TTL":{}}})", ttl_s));
  const std::string_view key = R"("ID":")";
  const std::size_t at = a.body.find(key);
  if (a.error || a.status != 200 || at == std::string::npos) {
    return std::unexpected(Unexpected("lease grant", a));
  }
  const std::size_t start = at + key.size();
  return a.body.substr(start, a.body.find('"', start) - start);
}

Status RevokeLease(http::Connection& http, const std::string& id) {
  const http::Answer a = http.Request(http::Method::kPost, "/v3/lease/revoke",
                                      fmt::format(R"({{"ID":"{}"}})", id));
  if (a.error || a.status != 200) return Unexpected("lease revoke", a);
  return Status::Ok();
}

// One put of `key64` under `lease`, as a txn success op.
std::string PutOp(const std::string& key64, const std::string& value64,
                  const std::string& lease) {
  return fmt::format(
      R"({{"request_put":{{"key":"{}","value":"{}","lease":"{}"}}}})", key64,
      value64, lease);
}

class EtcdClient final : public LockClient {
 public:
  EtcdClient(http::Address address, int index)
      : http_(std::move(address)),
        value64_(Base64(fmt::format("c{}", index))) {}

  ~EtcdClient() override {
    if (!lease_.empty()) (void)RevokeLease(http_, lease_);
  }

  Status Open() {
    auto id = GrantLease(http_, kClientLeaseTtlS);
    if (!id) return id.error();
    lease_ = std::move(*id);
    return Status::Ok();
  }

  Result<bool> Acquire(std::uint64_t name,
                       std::chrono::milliseconds wait) override {
    const std::string key = LockKey(name);
    if (wait.count() == 0) return Create(key);
    return SpinAcquire(wait, [&] { return Create(key); });
  }
  Status Release(std::uint64_t name) override { return Delete(LockKey(name)); }
  Result<bool> Checkout(std::uint64_t key) override {
    return Create(Base64(fmt::format("bench/k/{}", key)));
  }
  Status Checkin(std::uint64_t key) override {
    return Delete(Base64(fmt::format("bench/k/{}", key)));
  }

 private:
  static std::string LockKey(std::uint64_t name) {
    return Base64(name == kHotName ? std::string("bench/r/hot")
                                   : fmt::format("bench/r/{}", name));
  }

  // Puts `key64` under this client's lease iff it does not exist.
  Result<bool> Create(const std::string& key64) {
    const http::Answer a = http_.Request(
        http::Method::kPost, "/v3/kv/txn",
        fmt::format(R"({{"compare":[{{"key":"{}","result":"EQUAL",)"
                    R"("target":"CREATE","create_revision":"0"}}],)"
                    R"("success":[{}]}})",
                    key64, PutOp(key64, value64_, lease_)));
    if (a.error || a.status != 200) {
      return std::unexpected(Unexpected("txn", a));
    }
    return a.body.find(R"("succeeded":true)") != std::string::npos;
  }

  Status Delete(const std::string& key64) {
    const http::Answer a =
        http_.Request(http::Method::kPost, "/v3/kv/deleterange",
                      fmt::format(R"({{"key":"{}"}})", key64));
    if (a.error || a.status != 200) return Unexpected("deleterange", a);
    if (a.body.find(R"("deleted":"1")") == std::string::npos) {
      return Status(StatusCode::kNotHeld, "etcd key was not held: " + a.body);
    }
    return Status::Ok();
  }

  http::Connection http_;
  const std::string value64_;
  std::string lease_;
};

// Keys bench/idle/0.. under one lease, put kMaxTxnOps per transaction;
// revoking the lease deletes them all.
class EtcdIdle final : public IdleLocks {
 public:
  explicit EtcdIdle(http::Address address) : http_(std::move(address)) {}
  ~EtcdIdle() override { (void)Release(); }

  Status Build(std::uint64_t count) {
    auto id = GrantLease(http_, kIdleLeaseTtlS);
    if (!id) return id.error();
    lease_ = std::move(*id);
    const std::string value64 = Base64("idle");
    for (std::uint64_t i = 0; i < count; i += kMaxTxnOps) {
      std::string ops;
      for (std::uint64_t j = i; j < std::min(count, i + kMaxTxnOps); ++j) {
        if (!ops.empty()) ops += ',';
        ops += PutOp(Base64(fmt::format("bench/idle/{}", j)), value64, lease_);
      }
      const http::Answer a =
          http_.Request(http::Method::kPost, "/v3/kv/txn",
                        fmt::format(R"({{"success":[{}]}})", ops));
      if (a.error || a.status != 200) return Unexpected("idle txn", a);
    }
    return Status::Ok();
  }

  Status Release() override {
    if (lease_.empty()) return Status::Ok();
    Status st = RevokeLease(http_, lease_);
    lease_.clear();
    return st;
  }

 private:
  http::Connection http_;
  std::string lease_;
};

class EtcdPeer final : public Peer {
 public:
  explicit EtcdPeer(http::Address address) : address_(std::move(address)) {}

  std::string_view Kind() const override { return "etcd"; }
  std::string_view Name() const override { return "etcd"; }

  Status Prepare(Workload, std::uint64_t) override {
    http::Connection http(address_);
    const http::Answer a = http.Request(http::Method::kGet, "/health", "");
    if (a.error || a.status != 200) return Unexpected("GET /health", a);
    return Status::Ok();
  }

  std::string Durability(Workload) const override {
    return "yes: raft log fsynced (WAL) before the answer";
  }
  bool Durable(Workload) const override { return true; }

  Result<std::unique_ptr<LockClient>> Connect(int index) override {
    auto c = std::make_unique<EtcdClient>(address_, index);
    if (Status st = c->Open(); !st.ok()) return std::unexpected(st);
    return c;
  }

  Result<std::unique_ptr<IdleLocks>> HoldIdle(std::uint64_t count) override {
    auto idle = std::make_unique<EtcdIdle>(address_);
    if (Status st = idle->Build(count); !st.ok()) return std::unexpected(st);
    return idle;
  }

 private:
  const http::Address address_;
};

}  // namespace

std::unique_ptr<Peer> MakeEtcdPeer(http::Address address) {
  return std::make_unique<EtcdPeer>(std::move(address));
}

}  // namespace leasehold::peers
