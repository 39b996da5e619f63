// Redis as a peer, for the benchmarks only (it holds no documents to race
// on); hiredis, one blocking connection per client, and the lock recipe
// Redis documents for a single instance. Acquire: SET key token NX
// PX 60000 (the token is the client's own); release: a script that deletes
// the key only if it still holds this client's token. Checkouts are the
// same on other keys. Redis cannot wait for a key, so a contender retries
// (spin.h). Durability is whatever the server is configured with; it is
// read from CONFIG GET at Prepare.
#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <array>
#include <random>

#include "peers/factories.h"
#include "peers/spin.h"

namespace leasehold::peers {

namespace {

constexpr const char* kCompareAndDelete =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('del', KEYS[1]) else return 0 end";
constexpr std::string_view kLeaseMs = "60000";
constexpr std::string_view kIdleMs = "3600000";
constexpr std::uint64_t kIdleBatch = 1000;

struct ContextCloser {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyFreer {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Context = std::unique_ptr<redisContext, ContextCloser>;
using Reply = std::unique_ptr<redisReply, ReplyFreer>;

Result<Context> ConnectRedis(const std::string& host, int port) {
  Context c(redisConnectWithTimeout(host.c_str(), port, timeval{5, 0}));
  if (c == nullptr || c->err != 0) {
    return Error(StatusCode::kUnavailable,
                 fmt::format("Redis at {}:{}: {}", host, port,
                             c ? c->errstr : "cannot allocate a context"));
  }
  return c;
}

Status Failure(redisContext* c, std::string_view what) {
  return Status(StatusCode::kUnavailable,
                fmt::format("Redis {}: {}", what, c->errstr));
}

// Runs one command given as its words.
template <std::size_t N>
Result<Reply> Command(redisContext* c,
                      const std::array<std::string_view, N>& words) {
  std::array<const char*, N> argv;
  std::array<std::size_t, N> lengths;
  for (std::size_t i = 0; i < N; ++i) {
    argv[i] = words[i].data();
    lengths[i] = words[i].size();
  }
  Reply r(static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(N), argv.data(), lengths.data())));
  if (r == nullptr) return std::unexpected(Failure(c, words[0]));
  if (r->type == REDIS_REPLY_ERROR) {
    return Error(StatusCode::kInternal,
                 fmt::format("Redis {}: {}", words[0], r->str));
  }
  return r;
}

std::string LockKey(std::uint64_t name) {
  return name == kHotName ? "r:hot" : fmt::format("r:{}", name);
}
std::string RecordKey(std::uint64_t key) { return fmt::format("k:{}", key); }

class RedisClient final : public LockClient {
 public:
  RedisClient(Context c, std::string sha, int index)
      : c_(std::move(c)),
        sha_(std::move(sha)),
        token_(fmt::format("c{}-{:x}", index, std::random_device{}())) {}

  Result<bool> Acquire(std::uint64_t name,
                       std::chrono::milliseconds wait) override {
    const std::string key = LockKey(name);
    if (wait.count() == 0) return Set(key);
    return SpinAcquire(wait, [&] { return Set(key); });
  }
  Status Release(std::uint64_t name) override { return Delete(LockKey(name)); }
  Result<bool> Checkout(std::uint64_t key) override {
    return Set(RecordKey(key));
  }
  Status Checkin(std::uint64_t key) override { return Delete(RecordKey(key)); }

 private:
  Result<bool> Set(const std::string& key) {
    auto r = Command<6>(c_.get(), {"SET", key, token_, "NX", "PX", kLeaseMs});
    if (!r) return std::unexpected(r.error());
    return (*r)->type == REDIS_REPLY_STATUS;  // OK; nil when the key exists
  }

  Status Delete(const std::string& key) {
    auto r = Command<5>(c_.get(), {"EVALSHA", sha_, "1", key, token_});
    if (!r) return r.error();
    if ((*r)->type != REDIS_REPLY_INTEGER || (*r)->integer != 1) {
      return Status(StatusCode::kNotHeld, key + " was not held");
    }
    return Status::Ok();
  }

  Context c_;
  const std::string sha_;
  const std::string token_;
};

// idle:0.. set on one connection, pipelined in batches.
class RedisIdle final : public IdleLocks {
 public:
  explicit RedisIdle(Context c) : c_(std::move(c)) {}
  ~RedisIdle() override { (void)Release(); }

  Status Build(std::uint64_t count) {
    for (std::uint64_t i = 0; i < count; i += kIdleBatch) {
      const std::uint64_t end = std::min(count, i + kIdleBatch);
      for (std::uint64_t j = i; j < end; ++j) {
        const std::string key = fmt::format("idle:{}", j);
        std::array<const char*, 6> argv{"SET", key.c_str(), "idle",
                                        "NX",  "PX",        kIdleMs.data()};
        redisAppendCommandArgv(c_.get(), 6, argv.data(), nullptr);
      }
      if (Status st = Drain(end - i, REDIS_REPLY_STATUS); !st.ok()) return st;
    }
    count_ = count;
    return Status::Ok();
  }

  Status Release() override {
    for (std::uint64_t i = 0; i < count_; i += kIdleBatch) {
      const std::uint64_t end = std::min(count_, i + kIdleBatch);
      for (std::uint64_t j = i; j < end; ++j) {
        redisAppendCommand(c_.get(), "DEL idle:%llu",
                           static_cast<unsigned long long>(j));
      }
      if (Status st = Drain(end - i, REDIS_REPLY_INTEGER); !st.ok()) return st;
    }
    count_ = 0;
    return Status::Ok();
  }

 private:
  // Reads `n` pipelined replies, each of type `type`.
  Status Drain(std::uint64_t n, int type) {
    for (std::uint64_t k = 0; k < n; ++k) {
      void* raw = nullptr;
      if (redisGetReply(c_.get(), &raw) != REDIS_OK) {
        return Failure(c_.get(), "idle pipeline");
      }
      Reply r(static_cast<redisReply*>(raw));
      if (r->type != type) {
        return Status(StatusCode::kInternal, "Redis idle lock refused");
      }
    }
    return Status::Ok();
  }

  Context c_;
  std::uint64_t count_ = 0;
};

class RedisPeer final : public Peer {
 public:
  RedisPeer(std::string host, int port) : host_(std::move(host)), port_(port) {}

  std::string_view Kind() const override { return "redis"; }
  std::string_view Name() const override { return "Redis"; }

  Status Prepare(Workload, std::uint64_t) override {
    auto c = ConnectRedis(host_, port_);
    if (!c) return c.error();
    auto sha = Command<3>(c->get(), {"SCRIPT", "LOAD", kCompareAndDelete});
    if (!sha) return sha.error();
    sha_ = (*sha)->str;
    const std::string aof = Setting(c->get(), "appendonly");
    const std::string fsync = Setting(c->get(), "appendfsync");
    always_ = aof == "yes" && fsync == "always";
    durability_ = aof != "yes" ? "no: in memory (appendonly no)"
                               : fmt::format("{}: AOF, appendfsync {}",
                                             always_ ? "yes" : "no", fsync);
    return Status::Ok();
  }

  std::string Durability(Workload) const override { return durability_; }
  bool Durable(Workload) const override { return always_; }

  Result<std::unique_ptr<LockClient>> Connect(int index) override {
    auto c = ConnectRedis(host_, port_);
    if (!c) return std::unexpected(c.error());
    return std::make_unique<RedisClient>(std::move(*c), sha_, index);
  }

  Result<std::unique_ptr<IdleLocks>> HoldIdle(std::uint64_t count) override {
    auto c = ConnectRedis(host_, port_);
    if (!c) return std::unexpected(c.error());
    auto idle = std::make_unique<RedisIdle>(std::move(*c));
    if (Status st = idle->Build(count); !st.ok()) return std::unexpected(st);
    return idle;
  }

 private:
  // CONFIG GET `name`; "" when unknown.
  static std::string Setting(redisContext* c, std::string_view name) {
    auto r = Command<3>(c, {"CONFIG", "GET", name});
    if (!r || (*r)->type != REDIS_REPLY_ARRAY || (*r)->elements != 2) return "";
    return (*r)->element[1]->str;
  }

  const std::string host_;
  const int port_;
  std::string sha_;
  std::string durability_;
  bool always_ = false;
};

}  // namespace

std::unique_ptr<Peer> MakeRedisPeer(std::string host, int port) {
  return std::make_unique<RedisPeer>(std::move(host), port);
}

}  // namespace leasehold::peers
