// The C++ client across a SIGKILL of a real `leasehold serve`, restarted on
// the same data and port: its session and locks survive, a wait whose
// connection broke is asked again, and a grant that reached the disk before
// the break is adopted rather than taken twice: through Session::Lock,
// Client::Acquire and Client::AcquireAll (docs/client.md, "Restarts"); and
// a semaphore's wait, through Session::Permits and Client::AcquireSemaphore.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "leasehold/client.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::client {
namespace {

using std::chrono::milliseconds;
using testing::ServerProcess;
using testing::TempDir;

AcquireOptions Exclusive(milliseconds timeout) {
  AcquireOptions o;
  o.timeout = timeout;
  return o;
}

// The holders of `resource` in "app" as (session, count, fence).
std::vector<LockHolder> Holders(Client& c, const std::string& resource) {
  auto locks = c.ListLocks("app");
  EXPECT_TRUE(locks) << locks.error().message;
  for (const LockInfo& l : locks.value_or(std::vector<LockInfo>{})) {
    if (l.resource == resource) return l.granted;
  }
  return {};
}

// Polls until the server lists a waiter in "app", or about 10 s pass.
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

AcquireAllOptions Within(milliseconds timeout) {
  AcquireAllOptions o;
  o.owner = "Session";
  o.timeout = timeout;
  return o;
}

// The one holder of `resource`, as (session, count, fence); a failed
// expectation when there is not exactly one.
LockHolder OnlyHolder(Client& c, const std::string& resource) {
  const auto holders = Holders(c, resource);
  EXPECT_EQ(holders.size(), 1u) << resource;
  return holders.empty() ? LockHolder{} : holders.front();
}

SemaphoreOptions OneOfOne(milliseconds timeout) {
  SemaphoreOptions o;
  o.limit = 1;
  o.timeout = timeout;
  return o;
}

// Polls until the server lists a waiter for permits of "pool" in "app", or
// about 10 s pass.
bool SomeoneWaitsForPermits(Client& c) {
  for (int i = 0; i < 1000; ++i) {
    auto pool = c.GetSemaphore("app", "pool");
    if (pool && !pool->waiting.empty()) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

// What each test starts from: a server on its data, a session "holder"
// holding one resource Exclusive, and a session "waiter" to wait for it.
class ClientRestartTest : public ::testing::Test {
 protected:
  // `fault`: the first server's fault point (LEASEHOLD_FAULT), if any.
  void StartHolding(const std::string& resource,
                    const std::string& fault = "") {
    std::vector<std::string> env;
    if (!fault.empty()) env.push_back("LEASEHOLD_FAULT=" + fault);
    first_ = std::make_unique<ServerProcess>(dir_.File("data"), "", env);
    port_ = first_->port();
    client_ = *Client::Create({"http://127.0.0.1:" + std::to_string(port_), "",
                               milliseconds(10'000)});
    auto holder = client_->StartSession("holder", milliseconds(60'000));
    ASSERT_TRUE(holder) << holder.error().message;
    holder_.emplace(std::move(*holder));
    auto held = holder_->Lock("app", resource, Exclusive(milliseconds(0)));
    ASSERT_TRUE(held) << held.error().message;
    held_.emplace(std::move(*held));
    auto waiter = client_->StartSession("waiter", milliseconds(60'000));
    ASSERT_TRUE(waiter) << waiter.error().message;
    waiter_.emplace(std::move(*waiter));
  }

  // As StartHolding, for the one permit of the semaphore "pool".
  void StartHoldingPermits(const std::string& fault = "") {
    std::vector<std::string> env;
    if (!fault.empty()) env.push_back("LEASEHOLD_FAULT=" + fault);
    first_ = std::make_unique<ServerProcess>(dir_.File("data"), "", env);
    port_ = first_->port();
    client_ = *Client::Create({"http://127.0.0.1:" + std::to_string(port_), "",
                               milliseconds(10'000)});
    auto holder = client_->StartSession("holder", milliseconds(60'000));
    ASSERT_TRUE(holder) << holder.error().message;
    holder_.emplace(std::move(*holder));
    auto held = holder_->Permits("app", "pool", OneOfOne(milliseconds(0)));
    ASSERT_TRUE(held) << held.error().message;
    held_permits_.emplace(std::move(*held));
    auto waiter = client_->StartSession("waiter", milliseconds(60'000));
    ASSERT_TRUE(waiter) << waiter.error().message;
    waiter_.emplace(std::move(*waiter));
  }

  // The one holder of "pool"; a failed expectation when there is not
  // exactly one.
  SemaphoreHolder OnlyPermitHolder() {
    auto pool = client_->GetSemaphore("app", "pool");
    EXPECT_TRUE(pool) << pool.error().message;
    if (!pool || pool->holders.size() != 1) {
      ADD_FAILURE() << "not one holder of pool";
      return {};
    }
    return pool->holders.front();
  }

  // Once the waiter waits: the holder's release grants it, the first
  // server (started with kGrantDurable) dies before it answers, and a
  // second one starts.
  void GrantAndRestart() {
    ASSERT_TRUE(SomeoneWaits(*client_));
    (void)held_->Release();  // its answer may be lost with the server, too
    EXPECT_NE(first_->Wait(), 0) << "the fault point did not kill it";
    Restart();
  }
  // The same for the holder's permit of "pool".
  void GrantPermitAndRestart() {
    ASSERT_TRUE(SomeoneWaitsForPermits(*client_));
    (void)held_permits_->Release();
    EXPECT_NE(first_->Wait(), 0) << "the fault point did not kill it";
    Restart();
  }

  // A server on the first one's data and port, once the first is gone.
  void Restart() {
    second_ = std::make_unique<ServerProcess>(
        dir_.File("data"), "", std::vector<std::string>{}, port_);
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> first_, second_;
  std::uint16_t port_ = 0;
  std::optional<Client> client_;
  std::optional<Session> holder_, waiter_;
  std::optional<LockGuard> held_;               // the holder's lock
  std::optional<SemaphoreGuard> held_permits_;  // or its permit
};

// The fault point that kills the server once a waiter's grant is durable,
// before the answer goes out.
constexpr char kGrantDurable[] = "wait_grant.durable";

TEST_F(ClientRestartTest, AWaitBrokenByARestartIsAskedAgain) {
  ASSERT_NO_FATAL_FAILURE(StartHolding("job"));
  auto wait = std::async(std::launch::async, [&] {
    return waiter_->Lock("app", "job", Exclusive(milliseconds(60'000)));
  });
  ASSERT_TRUE(SomeoneWaits(*client_));

  first_->Kill();
  Restart();
  // The holder still holds it; its release lets the asked-again wait in.
  ASSERT_TRUE(held_->held());
  ASSERT_TRUE(held_->Release()) << "the restored lock releases";
  auto got = wait.get();
  ASSERT_TRUE(got) << got.error().code << ": " << got.error().message;
  EXPECT_GT(got->fence(), held_->fence());
  const LockHolder h = OnlyHolder(*client_, "job");
  EXPECT_EQ(h.session, waiter_->id());
  EXPECT_EQ(h.count, 1);
}

TEST_F(ClientRestartTest, AGrantOnDiskBeforeTheBreakIsAdoptedNotTakenTwice) {
  ASSERT_NO_FATAL_FAILURE(StartHolding("job", kGrantDurable));
  auto wait = std::async(std::launch::async, [&] {
    return waiter_->Lock("app", "job", Exclusive(milliseconds(60'000)));
  });
  ASSERT_NO_FATAL_FAILURE(GrantAndRestart());
  auto got = wait.get();
  ASSERT_TRUE(got) << got.error().code << ": " << got.error().message;
  EXPECT_TRUE(got->waited());
  const LockHolder h = OnlyHolder(*client_, "job");
  EXPECT_EQ(h.session, waiter_->id());
  EXPECT_EQ(h.count, 1) << "the grant was taken twice";
  EXPECT_EQ(h.fence, got->fence());
  ASSERT_TRUE(got->Release());
  EXPECT_TRUE(Holders(*client_, "job").empty());
}

TEST_F(ClientRestartTest, ADirectAcquireGrantOnDiskBeforeTheBreakIsAdopted) {
  ASSERT_NO_FATAL_FAILURE(StartHolding("job", kGrantDurable));
  // Not a guard: the client reads the session's mode first (NoLock).
  auto wait = std::async(std::launch::async, [&] {
    return client_->Acquire("app", waiter_->id(), "job",
                            Exclusive(milliseconds(60'000)));
  });
  ASSERT_NO_FATAL_FAILURE(GrantAndRestart());
  auto got = wait.get();
  ASSERT_TRUE(got) << got.error().code << ": " << got.error().message;
  EXPECT_EQ(got->result, 1);
  const LockHolder h = OnlyHolder(*client_, "job");
  EXPECT_EQ(h.session, waiter_->id());
  EXPECT_EQ(h.count, 1) << "the grant was taken twice";
  EXPECT_EQ(h.fence, got->fence);
}

TEST_F(ClientRestartTest, AnAcquireAllGrantOnDiskBeforeTheBreakIsAdoptedWhole) {
  ASSERT_NO_FATAL_FAILURE(StartHolding("b", kGrantDurable));
  // Takes a, then waits for b.
  auto wait = std::async(std::launch::async, [&] {
    return client_->AcquireAll("app", waiter_->id(),
                               {{"b"}, {"a", "Exclusive"}},
                               Within(milliseconds(60'000)));
  });
  ASSERT_NO_FATAL_FAILURE(GrantAndRestart());
  auto got = wait.get();
  ASSERT_TRUE(got) << got.error().code << ": " << got.error().message;
  EXPECT_EQ(got->result, 1);
  ASSERT_EQ(got->locks.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string resource = i == 0 ? "a" : "b";  // canonical order
    EXPECT_EQ(got->locks[i].resource, resource);
    EXPECT_EQ(got->locks[i].mode, "Exclusive");
    EXPECT_EQ(got->locks[i].count, 1) << resource;
    const LockHolder h = OnlyHolder(*client_, resource);
    EXPECT_EQ(h.session, waiter_->id()) << resource;
    EXPECT_EQ(h.count, 1) << resource << " was taken twice";
    EXPECT_EQ(h.fence, got->locks[i].fence) << resource;
  }
}

TEST_F(ClientRestartTest, AnAcquireAllBrokenWhileWaitingGivesBackAndAsksAgain) {
  ASSERT_NO_FATAL_FAILURE(StartHolding("b"));
  auto wait = std::async(std::launch::async, [&] {
    return client_->AcquireAll("app", waiter_->id(), {{"b"}, {"a"}},
                               Within(milliseconds(60'000)));
  });
  ASSERT_TRUE(SomeoneWaits(*client_));
  ASSERT_EQ(OnlyHolder(*client_, "a").session, waiter_->id())
      << "a is taken first";

  first_->Kill();  // a's grant is on disk: the restart brings it back
  Restart();
  ASSERT_TRUE(held_->Release()) << "the restored lock releases";
  auto got = wait.get();
  ASSERT_TRUE(got) << got.error().code << ": " << got.error().message;
  ASSERT_TRUE(got->granted()) << got->status;
  ASSERT_EQ(got->locks.size(), 2u);
  for (const std::string resource : {"a", "b"}) {
    const LockHolder h = OnlyHolder(*client_, resource);
    EXPECT_EQ(h.session, waiter_->id()) << resource;
    EXPECT_EQ(h.count, 1) << resource << " was taken twice";
  }
  EXPECT_GT(got->locks[1].fence, held_->fence());
}

// An acquire-all call is all or nothing across a restart: the engine
// journals its locks only in the step that answers it, so a restart while
// it waits brings back none of what it took. A call the client sends once
// (here: the session holds c already, so a grant before a break could not
// be told from that hold) reports the break and leaves the session holding
// what it held before the call, nothing more.
TEST_F(ClientRestartTest, AnAcquireAllSentOnceLeavesNothingOfTheCall) {
  ASSERT_NO_FATAL_FAILURE(StartHolding("b"));
  auto own =
      client_->Acquire("app", waiter_->id(), "c", Exclusive(milliseconds(0)));
  ASSERT_TRUE(own && own->granted());
  // Takes a, waits for b; c would be re-acquired after b.
  auto wait = std::async(std::launch::async, [&] {
    return client_->AcquireAll("app", waiter_->id(), {{"a"}, {"b"}, {"c"}},
                               Within(milliseconds(5'000)));
  });
  ASSERT_TRUE(SomeoneWaits(*client_));

  first_->Kill();
  Restart();  // before the answer: a call asked again would see it back
  auto broken = wait.get();
  ASSERT_FALSE(broken) << "sent once, yet answered: " << broken->status;
  EXPECT_EQ(broken.error().code, "unreachable");
  EXPECT_TRUE(Holders(*client_, "a").empty())
      << "a came back without the call that took it";
  EXPECT_EQ(OnlyHolder(*client_, "b").session, holder_->id());
  const LockHolder c = OnlyHolder(*client_, "c");
  EXPECT_EQ(c.session, waiter_->id());
  EXPECT_EQ(c.count, 1);
  EXPECT_EQ(c.fence, own->fence);
}

TEST_F(ClientRestartTest, ASemaphoreWaitBrokenByARestartIsAskedAgain) {
  ASSERT_NO_FATAL_FAILURE(StartHoldingPermits());
  auto wait = std::async(std::launch::async, [&] {
    return waiter_->Permits("app", "pool", OneOfOne(milliseconds(60'000)));
  });
  ASSERT_TRUE(SomeoneWaitsForPermits(*client_));

  first_->Kill();
  Restart();
  ASSERT_TRUE(held_permits_->held());
  ASSERT_TRUE(held_permits_->Release()) << "the restored permit goes back";
  auto got = wait.get();
  ASSERT_TRUE(got) << got.error().code << ": " << got.error().message;
  EXPECT_GT(got->fence(), held_permits_->fence());
  const SemaphoreHolder h = OnlyPermitHolder();
  EXPECT_EQ(h.session, waiter_->id());
  EXPECT_EQ(h.permits, 1);
}

TEST_F(ClientRestartTest,
       APermitGrantOnDiskBeforeTheBreakIsAdoptedNotTakenTwice) {
  ASSERT_NO_FATAL_FAILURE(StartHoldingPermits(kGrantDurable));
  auto wait = std::async(std::launch::async, [&] {
    return waiter_->Permits("app", "pool", OneOfOne(milliseconds(60'000)));
  });
  ASSERT_NO_FATAL_FAILURE(GrantPermitAndRestart());
  auto got = wait.get();
  ASSERT_TRUE(got) << got.error().code << ": " << got.error().message;
  EXPECT_TRUE(got->waited());
  const SemaphoreHolder h = OnlyPermitHolder();
  EXPECT_EQ(h.session, waiter_->id());
  EXPECT_EQ(h.permits, 1) << "the grant was taken twice";
  EXPECT_EQ(h.fence, got->fence());
  ASSERT_TRUE(got->Release());
}

TEST_F(ClientRestartTest, ADirectPermitGrantOnDiskBeforeTheBreakIsAdopted) {
  ASSERT_NO_FATAL_FAILURE(StartHoldingPermits(kGrantDurable));
  auto wait = std::async(std::launch::async, [&] {
    return client_->AcquireSemaphore("app", waiter_->id(), "pool",
                                     OneOfOne(milliseconds(60'000)));
  });
  ASSERT_NO_FATAL_FAILURE(GrantPermitAndRestart());
  auto got = wait.get();
  ASSERT_TRUE(got) << got.error().code << ": " << got.error().message;
  EXPECT_EQ(got->result, 1);
  const SemaphoreHolder h = OnlyPermitHolder();
  EXPECT_EQ(h.session, waiter_->id());
  EXPECT_EQ(h.permits, 1) << "the grant was taken twice";
  EXPECT_EQ(h.fence, got->fence);
}

TEST_F(ClientRestartTest, ADirectSemaphoreWaitBrokenByARestartIsAskedAgain) {
  ASSERT_NO_FATAL_FAILURE(StartHoldingPermits());
  // Not a guard: the client reads what the session holds first (nothing).
  auto wait = std::async(std::launch::async, [&] {
    return client_->AcquireSemaphore("app", waiter_->id(), "pool",
                                     OneOfOne(milliseconds(60'000)));
  });
  ASSERT_TRUE(SomeoneWaitsForPermits(*client_));

  first_->Kill();
  Restart();
  ASSERT_TRUE(held_permits_->Release()) << "the restored permit goes back";
  auto got = wait.get();
  ASSERT_TRUE(got) << got.error().code << ": " << got.error().message;
  // Granted at once (0) when asked again after the release, or after a wait.
  EXPECT_TRUE(got->granted()) << got->status;
  EXPECT_EQ(got->permits, 1);
  const SemaphoreHolder h = OnlyPermitHolder();
  EXPECT_EQ(h.session, waiter_->id());
  EXPECT_EQ(h.fence, got->fence);
}

}  // namespace
}  // namespace leasehold::client
