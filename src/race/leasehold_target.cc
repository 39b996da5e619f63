#include "race/leasehold_target.h"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "leasehold/client.h"

namespace leasehold::race {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

Status Failure(const client::Error& e) {
  return Status(StatusCode::kUnavailable,
                fmt::format("leasehold {}: {}", e.code, e.message));
}

std::string Key(int doc) { return fmt::format("doc-{}", doc); }

std::string FreshNamespace() {
  std::random_device random;
  return fmt::format("race-{:08x}{:08x}", random(), random());
}

class LeaseholdSession final : public TargetSession {
 public:
  LeaseholdSession(client::Client client, std::string ns, std::string user)
      : client_(std::move(client)),
        ns_(std::move(ns)),
        user_(std::move(user)) {}

  Result<bool> Checkout(int doc, Variant variant, milliseconds ttl,
                        microseconds) override {
    if (variant != Variant::kAtomic) {
      return leasehold::Error(StatusCode::kBadRequest,
                              "a leasehold server has no check-then-set");
    }
    auto r = client_.Checkout(ns_, Key(doc),
                              {.owner = user_, .ttl = ttl, .token = ""});
    if (!r) return std::unexpected(Failure(r.error()));
    return r->granted;
  }

  Status Log(int, bool) override { return Status::Ok(); }

  Result<bool> Save(int doc, std::string_view body) override {
    auto r = client_.Save(ns_, Key(doc), {.owner = user_, .token = ""}, body);
    if (!r) return std::unexpected(Failure(r.error()));
    return r->done;
  }

  Result<bool> Checkin(int doc) override {
    auto r = client_.Checkin(ns_, Key(doc), {.owner = user_, .token = ""});
    if (!r) return std::unexpected(Failure(r.error()));
    return r->done;
  }

  Result<DocumentView> Read(int doc) override {
    auto r = client_.Get(ns_, Key(doc));
    if (!r) return std::unexpected(Failure(r.error()));
    return DocumentView{r->locked_by, r->state == "locked"};
  }

 private:
  client::Client client_;
  std::string ns_;
  std::string user_;
};

class LeaseholdTarget final : public Target {
 public:
  LeaseholdTarget(std::string url, std::string token)
      : url_(std::move(url)), token_(std::move(token)) {}

  std::string_view Engine() const override { return "leasehold"; }
  bool SupportsNaive() const override { return false; }

  // Puts documents 1..rows into a fresh namespace, from a few threads.
  Status Prepare(int rows) override {
    auto client = Connect();
    if (!client) return client.error();
    if (auto healthy = client->Healthy(); !healthy) {
      return Failure(healthy.error());
    }
    ns_ = FreshNamespace();
    constexpr int kThreads = 4;
    std::atomic<int> next{1};
    std::mutex mu;
    Status failed;
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, c = *client]() mutable {
        for (int doc = next++; doc <= rows; doc = next++) {
          auto put = c.Put(ns_, Key(doc), "draft");
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

  Result<std::unique_ptr<TargetSession>> Open(
      const std::string& user) override {
    auto client = Connect();
    if (!client) return std::unexpected(client.error());
    return std::make_unique<LeaseholdSession>(std::move(*client), ns_, user);
  }

  Result<std::optional<Tally>> TallyLog(int, int) override {
    return std::optional<Tally>();
  }

 private:
  // A client of its own (and so its own connections) per caller.
  Result<client::Client> Connect() const {
    auto c =
        client::Client::Create({.url = url_,
                                .token = token_,
                                .io_timeout = client::Milliseconds(30000)});
    if (!c) return std::unexpected(Failure(c.error()));
    return std::move(*c);
  }

  std::string url_;
  std::string token_;
  std::string ns_;
};

}  // namespace

std::unique_ptr<Target> MakeLeaseholdTarget(std::string url,
                                            std::string token) {
  return std::make_unique<LeaseholdTarget>(std::move(url), std::move(token));
}

}  // namespace leasehold::race
