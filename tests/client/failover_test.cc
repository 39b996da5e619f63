// The C++ client against a cluster: two real `leasehold serve` nodes on one
// PostgreSQL database (the tests' throwaway cluster, fixture pg_cluster),
// with a 1 s leader lease, and a client given both URLs. It reaches the
// leader whichever node is listed first; a session, the lock it holds and
// a checkout ride through kill -9 of the leader, and a session through a
// leader that stops answering; a lock wait broken by kill -9, or answered
// 503 by a leader that stepped down, is asked again at the new leader
// (docs/client.md, "Clusters").
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "leasehold/client.h"
#include "tests/cluster/cluster_processes.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_postgres.h"

namespace leasehold::client {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::ClusterProcesses;
using testing::TempDir;
using testing::TestDatabase;

constexpr milliseconds kLease{1000};

std::string Url(std::uint16_t port) {
  return "http://127.0.0.1:" + std::to_string(port);
}

AcquireOptions Exclusive(milliseconds timeout) {
  AcquireOptions o;
  o.timeout = timeout;
  return o;
}

// The holders of `resource` in "app".
std::vector<LockHolder> Holders(Client& c, const std::string& resource) {
  auto locks = c.ListLocks("app");
  EXPECT_TRUE(locks) << locks.error().code << ": " << locks.error().message;
  for (const LockInfo& l : locks.value_or(std::vector<LockInfo>{})) {
    if (l.resource == resource) return l.granted;
  }
  return {};
}

// The one holder of `resource`; a failed expectation when there is not
// exactly one.
LockHolder OnlyHolder(Client& c, const std::string& resource) {
  const auto holders = Holders(c, resource);
  EXPECT_EQ(holders.size(), 1u) << resource;
  return holders.empty() ? LockHolder{} : holders.front();
}

// Polls until someone waits for a lock in "app", or about 10 s pass.
bool SomeoneWaits(Client& c) {
  for (int i = 0; i < 1000; ++i) {
    auto locks = c.ListLocks("app");
    if (locks) {
      for (const LockInfo& l : *locks) {
        if (!l.waiting.empty()) return true;
      }
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

class ClientFailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(db_.url().empty());
    cluster_.emplace(db_.url(), dir_.path(), 2, kLease);
    auto leader = cluster_->Leader(seconds(30));
    ASSERT_TRUE(leader.has_value()) << "no node leads";
    leader_ = *leader;
    standby_ = 1 - leader_;
  }

  // A client given both nodes, `first` listed first.
  Client ClientListing(int first) {
    auto c = Client::Create(
        {Url(cluster_->port(first)) + "," + Url(cluster_->port(1 - first)), "",
         milliseconds(10'000)});
    EXPECT_TRUE(c) << c.error().message;
    return std::move(*c);
  }

  // A client of node i alone, to see what that node says.
  Client ClientOf(int i) {
    return *Client::Create({Url(cluster_->port(i)), "", milliseconds(10'000)});
  }

  // Whether the standby leads within 30 s. (Not Leader(): the stopped
  // leader may still answer /healthz while the signal is on its way.)
  bool StandbyTakesOver() {
    const auto until = std::chrono::steady_clock::now() + seconds(30);
    while (!cluster_->Healthy(standby_)) {
      if (std::chrono::steady_clock::now() >= until) return false;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return true;
  }

  // Kills the leader; returns once the standby leads.
  void KillTheLeader() {
    cluster_->Kill(leader_);
    auto now = cluster_->Leader(seconds(30));
    ASSERT_TRUE(now.has_value()) << "no takeover";
    ASSERT_EQ(*now, standby_);
  }

  TestDatabase db_{"clfo"};
  TempDir dir_;
  std::optional<ClusterProcesses> cluster_;
  int leader_ = 0, standby_ = 1;
};

TEST_F(ClientFailoverTest, TheLeaderIsReachedWhicheverNodeIsListedFirst) {
  for (const int first : {standby_, leader_}) {
    SCOPED_TRACE(first == leader_ ? "leader first" : "standby first");
    const std::string tag = std::to_string(first);
    Client c = ClientListing(first);
    // A write first: listed first, the standby answers it with a 307.
    auto session = c.StartSession("s" + tag, seconds(10));
    ASSERT_TRUE(session) << session.error().code << ": "
                         << session.error().message;
    auto guard = session->Lock("app", "job" + tag, Exclusive(milliseconds(0)));
    ASSERT_TRUE(guard) << guard.error().code << ": " << guard.error().message;
    auto put = c.Put("docs", "k" + tag, "body " + tag);
    ASSERT_TRUE(put) << put.error().code << ": " << put.error().message;
    auto got = c.Get("docs", "k" + tag);
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->body, "body " + tag);
    EXPECT_EQ(OnlyHolder(c, "job" + tag).session, session->id());
    auto healthy = c.Healthy();
    ASSERT_TRUE(healthy) << healthy.error().message;
    EXPECT_TRUE(*healthy);

    // The event stream, too, comes from the leader: it begins by naming
    // it (cluster.leader), then streams the namespace's events.
    auto first_event = std::async(std::launch::async, [&c] {
      std::string types;
      auto watched = c.Watch("app", [&types](const Event& e) {
        types += e.type + " ";
        return e.type.rfind("applock.", 0) != 0;
      });
      return watched ? types : watched.error().code;
    });
    bool seen = false;
    for (int i = 0; i < 50 && !seen; ++i) {
      auto more = session->Lock("app", "more", Exclusive(milliseconds(0)));
      ASSERT_TRUE(more) << more.error().message;
      ASSERT_TRUE(more->Release());
      seen =
          first_event.wait_for(milliseconds(100)) == std::future_status::ready;
    }
    ASSERT_TRUE(seen) << "no event streamed";
    const std::string types = first_event.get();
    EXPECT_EQ(types.rfind("cluster.leader applock.", 0), 0u) << types;
  }
  // Given the standby alone, a client follows its redirect to the leader.
  Client via_standby = ClientOf(standby_);
  auto session = via_standby.OpenSession("via standby", seconds(10));
  ASSERT_TRUE(session) << session.error().code << ": "
                       << session.error().message;
}

TEST_F(ClientFailoverTest,
       ASessionItsLockAndACheckoutRideThroughKillOfTheLeader) {
  Client c = ClientListing(leader_);
  std::atomic<int> lost{0};
  const milliseconds ttl{2000};
  auto session = c.StartSession("holder", ttl, [&](const Error&) { ++lost; });
  ASSERT_TRUE(session) << session.error().message;
  auto guard = session->Lock("app", "job", Exclusive(milliseconds(0)));
  ASSERT_TRUE(guard) << guard.error().message;
  ASSERT_TRUE(c.Put("docs", "17", "draft"));
  CheckoutOptions checkout;
  checkout.owner = "Asha";
  checkout.ttl = milliseconds(4000);
  auto doc =
      c.CheckoutKey("docs", "17", checkout, [&](const Error&) { ++lost; });
  ASSERT_TRUE(doc) << doc.error().message;

  ASSERT_NO_FATAL_FAILURE(KillTheLeader());
  // The new leader gives sessions their ttl again plus a grace of one
  // lease; a checkout keeps the expiry its last renewal set. Past both,
  // only renewals that reached the new leader keep them.
  std::this_thread::sleep_for(ttl + kLease + milliseconds(1500));

  EXPECT_EQ(lost.load(), 0);
  EXPECT_FALSE(session->lost());
  EXPECT_TRUE(guard->held());
  EXPECT_TRUE(doc->held());
  Client now = ClientOf(standby_);
  const LockHolder h = OnlyHolder(now, "job");
  EXPECT_EQ(h.session, session->id());
  EXPECT_EQ(h.count, 1);
  EXPECT_EQ(h.fence, guard->fence());
  auto other = now.StartSession("other", seconds(10));
  ASSERT_TRUE(other) << other.error().message;
  auto refused = other->Lock("app", "job", Exclusive(milliseconds(0)));
  ASSERT_FALSE(refused) << "the lock was free at the new leader";
  EXPECT_EQ(refused.error().code, "timeout");
  auto record = now.Get("docs", "17");
  ASSERT_TRUE(record) << record.error().message;
  EXPECT_EQ(record->locked_by, "Asha");
  auto saved = doc->Save("final");
  ASSERT_TRUE(saved) << saved.error().message;
  EXPECT_TRUE(saved->done) << saved->reason;

  ASSERT_TRUE(guard->Release());
  EXPECT_TRUE(Holders(now, "job").empty());
  ASSERT_TRUE(doc->Checkin());
  ASSERT_TRUE(session->End());
}

// A leader that stops answering without a word (SIGSTOP here; a host that
// is gone looks the same): its connections neither answer nor break. Each
// keepalive gives up after its period, and the next goes to the other node
// first, so the session lives on at the new leader.
TEST_F(ClientFailoverTest, ASessionRidesThroughALeaderThatStopsAnswering) {
  Client c = ClientListing(leader_);
  std::atomic<int> lost{0};
  const milliseconds ttl{3000};
  auto session = c.StartSession("holder", ttl, [&](const Error&) { ++lost; });
  ASSERT_TRUE(session) << session.error().message;
  auto guard = session->Lock("app", "job", Exclusive(milliseconds(0)));
  ASSERT_TRUE(guard) << guard.error().message;

  cluster_->Signal(leader_, SIGSTOP);
  struct Resume {  // so that the node can be stopped at the end
    ClusterProcesses& cluster;
    int node;
    ~Resume() { cluster.Signal(node, SIGCONT); }
  } resume{*cluster_, leader_};
  ASSERT_TRUE(StandbyTakesOver());
  std::this_thread::sleep_for(ttl + kLease + milliseconds(1500));

  EXPECT_EQ(lost.load(), 0);
  EXPECT_TRUE(guard->held());
  Client at_new_leader = ClientOf(standby_);
  const LockHolder h = OnlyHolder(at_new_leader, "job");
  EXPECT_EQ(h.session, session->id());
  EXPECT_EQ(h.fence, guard->fence());
  ASSERT_TRUE(guard->Release());
  EXPECT_TRUE(Holders(at_new_leader, "job").empty());
}

// A waiting request whose connection dies with the leader is asked again
// at the new leader, which still has the holder's lock; the holder's
// release there lets it in. `wait` asks as client `c`, for session
// `waiter`, with the timeout given.
class ClientFailoverWaitTest : public ClientFailoverTest {
 protected:
  template <typename Wait>
  void WaitAcrossTheFailover(Wait wait) {
    Client c = ClientListing(leader_);
    auto holder = c.StartSession("holder", seconds(10));
    ASSERT_TRUE(holder) << holder.error().message;
    auto held = holder->Lock("app", "job", Exclusive(milliseconds(0)));
    ASSERT_TRUE(held) << held.error().message;
    auto waiter = c.StartSession("waiter", seconds(10));
    ASSERT_TRUE(waiter) << waiter.error().message;
    auto waited = std::async(std::launch::async, [&] {
      return wait(c, *waiter, milliseconds(20'000));
    });
    ASSERT_TRUE(SomeoneWaits(c));

    ASSERT_NO_FATAL_FAILURE(KillTheLeader());
    ASSERT_TRUE(held->held());
    ASSERT_TRUE(held->Release()) << "the holder's lock is at the new leader";
    const Result<std::uint64_t> fence = waited.get();
    ASSERT_TRUE(fence) << fence.error().code << ": " << fence.error().message;
    EXPECT_GT(*fence, held->fence());
    const LockHolder h = OnlyHolder(c, "job");
    EXPECT_EQ(h.session, waiter->id());
    EXPECT_EQ(h.count, 1);
    EXPECT_EQ(h.fence, *fence);
  }
};

// A leader paused past its lease while a request waited there answers it
// 503 unavailable once it runs again and steps down: the wait is asked
// again at the new leader, as a broken one is.
TEST_F(ClientFailoverTest, AWaitAnsweredUnavailableByALeaderThatSteppedDown) {
  Client c = ClientListing(leader_);
  auto holder = c.StartSession("holder", seconds(10));
  ASSERT_TRUE(holder) << holder.error().message;
  auto held = holder->Lock("app", "job", Exclusive(milliseconds(0)));
  ASSERT_TRUE(held) << held.error().message;
  auto waiter = c.StartSession("waiter", seconds(10));
  ASSERT_TRUE(waiter) << waiter.error().message;
  auto waited = std::async(std::launch::async, [&] {
    return c.Acquire("app", waiter->id(), "job", Exclusive(seconds(20)));
  });
  ASSERT_TRUE(SomeoneWaits(c));

  cluster_->Signal(leader_, SIGSTOP);
  const bool took_over = StandbyTakesOver();
  cluster_->Signal(leader_, SIGCONT);  // it answers the wait, and stands by
  ASSERT_TRUE(took_over);
  ASSERT_TRUE(held->Release()) << "the holder's lock is at the new leader";
  auto got = waited.get();
  ASSERT_TRUE(got) << got.error().code << ": " << got.error().message;
  ASSERT_TRUE(got->granted()) << got->status;
  const LockHolder h = OnlyHolder(c, "job");
  EXPECT_EQ(h.session, waiter->id());
  EXPECT_EQ(h.count, 1);
  EXPECT_EQ(h.fence, got->fence);
}

TEST_F(ClientFailoverWaitTest, AWaitingAcquireIsAskedAgainAtTheNewLeader) {
  WaitAcrossTheFailover([](Client& c, Session& waiter,
                           milliseconds timeout) -> Result<std::uint64_t> {
    auto r = c.Acquire("app", waiter.id(), "job", Exclusive(timeout));
    if (!r) return std::unexpected(r.error());
    if (!r->granted()) return std::unexpected(Error{r->status, "", 409});
    return r->fence;
  });
}

TEST_F(ClientFailoverWaitTest, AWaitingSessionLockIsAskedAgainAtTheNewLeader) {
  std::optional<LockGuard> guard;
  WaitAcrossTheFailover(
      [&guard](Client&, Session& waiter,
               milliseconds timeout) -> Result<std::uint64_t> {
        auto r = waiter.Lock("app", "job", Exclusive(timeout));
        if (!r) return std::unexpected(r.error());
        guard.emplace(std::move(*r));
        return guard->fence();
      });
}

}  // namespace
}  // namespace leasehold::client
