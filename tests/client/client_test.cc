// The C++ client against a real `leasehold serve` on an ephemeral loopback
// port: every typed call, refusals as outcomes, waits, deadlocks, cancels,
// self-renewing sessions and guards, the event stream, and failures.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "leasehold/client.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::client {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;
using testing::ServerProcess;
using testing::TempDir;

// Polls `done` every 10 ms until it holds or `limit` passes.
bool Eventually(const std::function<bool()>& done,
                milliseconds limit = milliseconds(3000)) {
  const auto deadline = SteadyClock::now() + limit;
  while (!done()) {
    if (SteadyClock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

CheckoutOptions Lease(std::string owner, milliseconds ttl) {
  CheckoutOptions o;
  o.owner = std::move(owner);
  o.ttl = ttl;
  return o;
}

ListOptions Page(std::string state, std::string after, int limit) {
  ListOptions o;
  o.state = std::move(state);
  o.after = std::move(after);
  o.limit = limit;
  return o;
}

AcquireOptions Exclusive(milliseconds timeout) {
  AcquireOptions o;
  o.timeout = timeout;
  return o;
}

SemaphoreOptions Permits(std::int64_t permits, std::int64_t limit,
                         milliseconds timeout) {
  SemaphoreOptions o;
  o.permits = permits;
  o.limit = limit;
  o.timeout = timeout;
  return o;
}

class ClientTest : public ::testing::Test {
 protected:
  ClientTest()
      : server_(dir_.File("data")),
        client_(*Client::Create(
            {"http://127.0.0.1:" + std::to_string(server_.port()), "",
             milliseconds(10'000)})) {}

  std::string NewSession(const std::string& name,
                         milliseconds ttl = milliseconds(60'000)) {
    auto s = client_.OpenSession(name, ttl);
    EXPECT_TRUE(s) << s.error().message;
    return s ? s->id : "";
  }

  // Requests parked in `ns`, as the server lists them.
  std::size_t Waiting(const std::string& ns) {
    auto locks = client_.ListLocks(ns);
    std::size_t n = 0;
    if (locks) {
      for (const auto& l : *locks) n += l.waiting.size();
    }
    return n;
  }

  // Requests for permits parked in `ns`, as the server lists them.
  std::size_t WaitingForPermits(const std::string& ns) {
    auto semaphores = client_.ListSemaphores(ns);
    std::size_t n = 0;
    if (semaphores) {
      for (const auto& s : *semaphores) n += s.waiting.size();
    }
    return n;
  }

  bool SessionListed(const std::string& id) {
    auto list = client_.ListSessions();
    if (!list) return false;
    for (const auto& s : *list) {
      if (s.id == id) return true;
    }
    return false;
  }

  TempDir dir_;
  ServerProcess server_;
  Client client_;
};

TEST_F(ClientTest, HealthyAndGenericCall) {
  auto healthy = client_.Healthy();
  ASSERT_TRUE(healthy) << healthy.error().message;
  EXPECT_TRUE(*healthy);
  auto sessions = client_.Call("GET", "/v1/sessions");
  ASSERT_TRUE(sessions) << sessions.error().message;
  EXPECT_TRUE(sessions->as_object().contains("sessions"));
  auto head = client_.Call("HEAD", "/v1/sessions");
  ASSERT_TRUE(head || head.error().http_status != 0) << head.error().message;
  EXPECT_TRUE(*client_.Healthy());  // the connection after HEAD still works
  auto missing = client_.Call("GET", "/v1/nowhere");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "not_found");
  EXPECT_EQ(missing.error().http_status, 404u);
}

TEST_F(ClientTest, SessionsAndTransactions) {
  auto s = client_.OpenSession("Asha", milliseconds(30'000));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_FALSE(s->id.empty());
  EXPECT_EQ(s->name, "Asha");
  EXPECT_EQ(s->ttl, milliseconds(30'000));
  EXPECT_FALSE(s->expires_at.empty());

  auto kept = client_.Keepalive(s->id);
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_GE(kept->expires_at, s->expires_at);  // RFC 3339 UTC sorts as text
  EXPECT_FALSE(kept->locks_lost);

  auto tx = client_.BeginTransaction(s->id);
  ASSERT_TRUE(tx) << tx.error().message;
  auto again = client_.BeginTransaction(s->id);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, "transaction_open");
  auto list = client_.ListSessions();
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].id, s->id);
  EXPECT_EQ((*list)[0].transaction, *tx);
  ASSERT_TRUE(client_.Commit(s->id));
  ASSERT_TRUE(client_.BeginTransaction(s->id));
  ASSERT_TRUE(client_.Rollback(s->id));
  auto none = client_.Commit(s->id);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, "no_transaction");

  ASSERT_TRUE(client_.EndSession(s->id));
  auto gone = client_.Keepalive(s->id);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, "session_not_found");
  EXPECT_EQ(gone.error().http_status, 404u);
  EXPECT_EQ(client_.EndSession(s->id).error().code, "session_not_found");
  EXPECT_EQ(client_.Cancel("999999").error().code, "session_not_found");
}

TEST_F(ClientTest, AcquireModeTestListAndRelease) {
  const std::string a = NewSession("A"), b = NewSession("B");
  auto granted = client_.Acquire("app", a, "invoice:481", Exclusive({}));
  ASSERT_TRUE(granted) << granted.error().message;
  EXPECT_EQ(granted->result, 0);
  EXPECT_EQ(granted->status, "granted");
  EXPECT_GT(granted->fence, 0u);

  EXPECT_EQ(*client_.Mode("app", a, "invoice:481", "Session"), "Exclusive");
  EXPECT_EQ(*client_.Mode("app", b, "invoice:481", "Session"), "NoLock");
  EXPECT_FALSE(*client_.Test("app", b, "invoice:481", Exclusive({})));
  auto locks = client_.ListLocks("app");
  ASSERT_TRUE(locks) << locks.error().message;
  ASSERT_EQ(locks->size(), 1u);
  EXPECT_EQ((*locks)[0].resource, "invoice:481");
  ASSERT_EQ((*locks)[0].granted.size(), 1u);
  EXPECT_EQ((*locks)[0].granted[0].session, a);
  EXPECT_EQ((*locks)[0].granted[0].mode, "Exclusive");

  // The refusal is an outcome, not an Error.
  auto refused = client_.Acquire("app", b, "invoice:481", Exclusive({}));
  ASSERT_TRUE(refused) << refused.error().message;
  EXPECT_EQ(refused->result, -1);
  EXPECT_EQ(refused->status, "timeout");
  EXPECT_FALSE(refused->granted());

  ASSERT_TRUE(client_.Release("app", a, "invoice:481", "Session"));
  auto twice = client_.Release("app", a, "invoice:481", "Session");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, "not_held");
  EXPECT_EQ(twice.error().http_status, 409u);
  EXPECT_TRUE(*client_.Test("app", b, "invoice:481", Exclusive({})));

  auto unknown = client_.Acquire("app", "424242", "r", Exclusive({}));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, "session_not_found");
}

TEST_F(ClientTest, AcquireWaitsAndIsGrantedAfterRelease) {
  const std::string a = NewSession("A"), b = NewSession("B");
  auto first = client_.Acquire("app", a, "doc", Exclusive({}));
  ASSERT_TRUE(first && first->result == 0);
  auto waiter = std::async(std::launch::async, [&] {
    return client_.Acquire("app", b, "doc", Exclusive(milliseconds(10'000)));
  });
  ASSERT_TRUE(Eventually([&] { return Waiting("app") == 1; }));
  ASSERT_TRUE(client_.Release("app", a, "doc", "Session"));
  auto second = waiter.get();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->result, 1);
  EXPECT_EQ(second->status, "granted_after_wait");
  EXPECT_GT(second->fence, first->fence);
}

TEST_F(ClientTest, DeadlockEndsOneWaitWithMinusThree) {
  const std::string a = NewSession("A"), b = NewSession("B");
  ASSERT_EQ(client_.Acquire("app", a, "r1", Exclusive({}))->result, 0);
  ASSERT_EQ(client_.Acquire("app", b, "r2", Exclusive({}))->result, 0);
  auto a_waits = std::async(std::launch::async, [&] {
    return client_.Acquire("app", a, "r2", Exclusive(milliseconds(10'000)));
  });
  ASSERT_TRUE(Eventually([&] { return Waiting("app") == 1; }));
  auto b_waits = std::async(std::launch::async, [&] {
    return client_.Acquire("app", b, "r1", Exclusive(milliseconds(10'000)));
  });
  // The victim's answer comes first; releasing what it holds lets the
  // other wait end with a grant.
  std::future<Result<AcquireOutcome>>* victim = nullptr;
  std::future<Result<AcquireOutcome>>* survivor = nullptr;
  ASSERT_TRUE(Eventually([&] {
    if (a_waits.wait_for(milliseconds(0)) == std::future_status::ready) {
      victim = &a_waits, survivor = &b_waits;
    } else if (b_waits.wait_for(milliseconds(0)) == std::future_status::ready) {
      victim = &b_waits, survivor = &a_waits;
    }
    return victim != nullptr;
  }));
  auto dead = victim->get();
  ASSERT_TRUE(dead) << dead.error().message;
  EXPECT_EQ(dead->result, -3);
  EXPECT_EQ(dead->status, "deadlock");
  ASSERT_TRUE(dead->deadlock.is_object());
  EXPECT_TRUE(dead->deadlock.as_object().contains("victim"));
  const bool a_died = victim == &a_waits;
  ASSERT_TRUE(
      client_.Release("app", a_died ? a : b, a_died ? "r1" : "r2", "Session"));
  auto alive = survivor->get();
  ASSERT_TRUE(alive) << alive.error().message;
  EXPECT_EQ(alive->result, 1);
}

TEST_F(ClientTest, CancelEndsAWaitWithMinusTwo) {
  const std::string a = NewSession("A"), b = NewSession("B");
  ASSERT_EQ(client_.Acquire("app", a, "doc", Exclusive({}))->result, 0);
  auto waiter = std::async(std::launch::async, [&] {
    return client_.Acquire("app", b, "doc", Exclusive(milliseconds(-1)));
  });
  ASSERT_TRUE(Eventually([&] { return Waiting("app") == 1; }));
  auto cancelled = client_.Cancel(b);
  ASSERT_TRUE(cancelled) << cancelled.error().message;
  EXPECT_TRUE(*cancelled);
  auto outcome = waiter.get();
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->result, -2);
  EXPECT_EQ(outcome->status, "cancelled");
  EXPECT_FALSE(*client_.Cancel(b));  // nothing left to cancel
}

TEST_F(ClientTest, AcquireAllGrantsInOrderOrTakesNothing) {
  const std::string holder = NewSession("Ravi");
  ASSERT_TRUE(client_.Acquire("app", holder, "c", Exclusive(milliseconds(0))));
  const std::string s = NewSession("Asha");
  AcquireAllOptions now;
  now.timeout = milliseconds(0);
  auto got = client_.AcquireAll("app", s, {{"b", "Shared"}, {"a"}}, now);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->granted());
  ASSERT_EQ(got->locks.size(), 2u);
  EXPECT_EQ(got->locks[0].resource, "a");
  EXPECT_EQ(got->locks[1].mode, "Shared");
  EXPECT_GT(got->locks[1].fence, got->locks[0].fence);

  auto refused = client_.AcquireAll("app", s, {{"d"}, {"c"}}, now);
  ASSERT_TRUE(refused) << refused.error().message;
  EXPECT_FALSE(refused->granted());
  EXPECT_EQ(refused->result, -1);
  EXPECT_EQ(refused->failed_resource, "c");
  EXPECT_EQ(*client_.Mode("app", s, "d", "Session"), "NoLock");
  auto twice = client_.AcquireAll("app", s, {{"x"}, {"x"}}, now);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, "bad_request");
}

TEST_F(ClientTest, OperationsAndOutboxExactlyOnce) {
  const std::string s = NewSession("worker");
  ASSERT_TRUE(client_.BeginTransaction(s));
  auto first = client_.BeginOperation("billing", "op-1", s);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_FALSE(first->completed);
  ASSERT_TRUE(client_.CompleteOperation("billing", "op-1", s,
                                        boost::json::object{{"total", 5}}));
  auto staged = client_.Enqueue("billing", "mail", "m-1",
                                boost::json::object{{"to", "asha"}}, s);
  ASSERT_TRUE(staged) << staged.error().message;
  EXPECT_TRUE(staged->staged);
  ASSERT_TRUE(client_.Commit(s));

  ASSERT_TRUE(client_.BeginTransaction(s));
  auto again = client_.BeginOperation("billing", "op-1", s);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->completed);
  EXPECT_EQ(again->outcome.at("total").as_int64(), 5);
  EXPECT_FALSE(again->completed_at.empty());
  ASSERT_TRUE(client_.Rollback(s));
  auto dup = client_.Enqueue("billing", "mail", "m-1", boost::json::object{});
  ASSERT_TRUE(dup);
  EXPECT_TRUE(dup->duplicate);
  EXPECT_EQ(dup->id, staged->id);

  auto claimed =
      client_.Claim("billing", "mail", "sender", 10, milliseconds(100));
  ASSERT_TRUE(claimed) << claimed.error().message;
  ASSERT_EQ(claimed->size(), 1u);
  EXPECT_EQ((*claimed)[0].attempt, 1);
  EXPECT_EQ((*claimed)[0].payload.at("to").as_string(), "asha");
  std::this_thread::sleep_for(milliseconds(150));  // the claim runs out
  auto late = client_.Ack("billing", "mail", (*claimed)[0].id,
                          (*claimed)[0].claim_token);
  ASSERT_TRUE(late) << late.error().message;
  EXPECT_FALSE(late->acked);
  EXPECT_EQ(late->reason, "expired");
  auto redelivered =
      client_.Claim("billing", "mail", "sender", 10, milliseconds(10'000));
  ASSERT_TRUE(redelivered);
  ASSERT_EQ(redelivered->size(), 1u);
  EXPECT_EQ((*redelivered)[0].attempt, 2);
  auto acked = client_.Ack("billing", "mail", (*redelivered)[0].id,
                           (*redelivered)[0].claim_token);
  ASSERT_TRUE(acked);
  EXPECT_TRUE(acked->acked);
  auto counts = client_.GetOutbox("billing", "mail");
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->pending + counts->claimed + counts->dead, 0);
}

TEST_F(ClientTest, RecordsAndCheckoutsWithRefusals) {
  auto v = client_.Put("docs", "a/b c", "First draft");
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(*v, 1);
  auto exists = client_.Put("docs", "a/b c", "again");
  ASSERT_FALSE(exists);
  EXPECT_EQ(exists.error().code, "exists");

  auto rec = client_.Get("docs", "a/b c");
  ASSERT_TRUE(rec) << rec.error().message;
  EXPECT_EQ(rec->key, "a/b c");
  EXPECT_EQ(rec->body, "First draft");
  EXPECT_EQ(rec->version, 1);
  EXPECT_EQ(rec->state, "free");
  EXPECT_FALSE(rec->locked_by);

  auto asha =
      client_.Checkout("docs", "a/b c", Lease("Asha", milliseconds(60'000)));
  ASSERT_TRUE(asha) << asha.error().message;
  EXPECT_TRUE(asha->granted);
  EXPECT_FALSE(asha->renewed);
  EXPECT_FALSE(asha->token.empty());
  EXPECT_GT(asha->fence, 0u);

  auto bob =
      client_.Checkout("docs", "a/b c", Lease("Bob", milliseconds(60'000)));
  ASSERT_TRUE(bob) << bob.error().message;
  EXPECT_FALSE(bob->granted);
  EXPECT_EQ(bob->locked_by, "Asha");
  EXPECT_FALSE(bob->expires_at.empty());

  auto not_owner = client_.Save("docs", "a/b c", {"Bob", ""}, "Bob's");
  ASSERT_TRUE(not_owner) << not_owner.error().message;
  EXPECT_FALSE(not_owner->done);
  EXPECT_EQ(not_owner->reason, "not_owner");

  const Proof proof{"", asha->token};
  auto mismatch = client_.Save("docs", "a/b c", proof, "Second", 7);
  ASSERT_TRUE(mismatch) << mismatch.error().message;
  EXPECT_FALSE(mismatch->done);
  EXPECT_EQ(mismatch->reason, "version_mismatch");
  auto saved = client_.Save("docs", "a/b c", proof, "Second", 1);
  ASSERT_TRUE(saved) << saved.error().message;
  EXPECT_TRUE(saved->done);
  EXPECT_EQ(saved->version, 2);

  auto locked = client_.Get("docs", "a/b c");
  ASSERT_TRUE(locked);
  EXPECT_EQ(locked->body, "Second");
  EXPECT_EQ(locked->state, "locked");
  EXPECT_EQ(locked->locked_by, "Asha");
  EXPECT_EQ(locked->fence, asha->fence);

  ASSERT_TRUE(client_.Put("docs", "b", "other"));
  ASSERT_TRUE(client_.Put("docs", "c", "third"));
  auto only_locked = client_.List("docs", Page("locked", "", 0));
  ASSERT_TRUE(only_locked) << only_locked.error().message;
  ASSERT_EQ(only_locked->records.size(), 1u);
  EXPECT_EQ(only_locked->records[0].key, "a/b c");
  EXPECT_FALSE(only_locked->records[0].body);  // lists carry no bodies
  auto page = client_.List("docs", Page("", "", 2));
  ASSERT_TRUE(page);
  ASSERT_EQ(page->records.size(), 2u);
  ASSERT_TRUE(page->next);
  auto rest = client_.List("docs", Page("", *page->next, 2));
  ASSERT_TRUE(rest);
  ASSERT_EQ(rest->records.size(), 1u);
  EXPECT_EQ(rest->records[0].key, "c");
  EXPECT_FALSE(rest->next);

  auto refused_checkin = client_.Checkin("docs", "a/b c", {"Bob", ""});
  ASSERT_TRUE(refused_checkin);
  EXPECT_FALSE(refused_checkin->done);
  auto checkin = client_.Checkin("docs", "a/b c", proof);
  ASSERT_TRUE(checkin) << checkin.error().message;
  EXPECT_TRUE(checkin->done);

  auto again =
      client_.Checkout("docs", "a/b c", Lease("Bob", milliseconds(60'000)));
  ASSERT_TRUE(again && again->granted);
  EXPECT_GT(again->fence, asha->fence);
  auto broken = client_.Break("docs", "a/b c");
  ASSERT_TRUE(broken) << broken.error().message;
  EXPECT_TRUE(*broken);
  auto late = client_.Save("docs", "a/b c", {"", again->token}, "late");
  ASSERT_TRUE(late);
  EXPECT_FALSE(late->done);

  auto del_lease =
      client_.Checkout("docs", "b", Lease("Bob", milliseconds(60'000)));
  ASSERT_TRUE(del_lease && del_lease->granted);
  auto deleted = client_.Delete("docs", "b", {"", del_lease->token});
  ASSERT_TRUE(deleted) << deleted.error().message;
  EXPECT_TRUE(deleted->done);
  auto gone = client_.Get("docs", "b");
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, "not_found");

  ASSERT_TRUE(client_.Checkout("docs", "short", Lease("Eve", milliseconds(1))));
  ASSERT_TRUE(Eventually([&] {
    auto purged = client_.Purge("docs", milliseconds(0));
    return purged && *purged >= 1;
  }));
}

TEST_F(ClientTest, SessionKeepaliveOutlivesItsTtl) {
  const milliseconds ttl(600);
  auto kept = client_.StartSession("kept", ttl);
  ASSERT_TRUE(kept) << kept.error().message;
  const std::string unkept = NewSession("unkept", ttl);
  std::this_thread::sleep_for(4 * ttl);  // several TTLs
  EXPECT_FALSE(SessionListed(unkept));   // would have been the fate of both
  EXPECT_TRUE(SessionListed(kept->id()));
  EXPECT_FALSE(kept->lost());
  const std::string id = kept->id();
  ASSERT_TRUE(kept->End());
  EXPECT_FALSE(SessionListed(id));
}

TEST_F(ClientTest, SessionReportsLossOnce) {
  std::atomic<int> calls{0};
  std::string code;
  std::mutex mu;
  auto session =
      client_.StartSession("doomed", milliseconds(600), [&](const Error& e) {
        std::lock_guard lock(mu);
        code = e.code;
        ++calls;
      });
  ASSERT_TRUE(session);
  auto other = Client::Create(client_.options());
  ASSERT_TRUE(other);
  ASSERT_TRUE(other->EndSession(session->id()));
  ASSERT_TRUE(Eventually([&] { return calls.load() > 0; }));
  EXPECT_TRUE(session->lost());
  std::this_thread::sleep_for(milliseconds(500));  // more than a period
  EXPECT_EQ(calls.load(), 1);
  std::lock_guard lock(mu);
  EXPECT_EQ(code, "session_not_found");
}

TEST_F(ClientTest, LockGuardReleasesWhenDestroyed) {
  auto session = client_.StartSession("holder", milliseconds(60'000));
  ASSERT_TRUE(session);
  const std::string other = NewSession("other");
  {
    auto guard = session->Lock("app", "report");
    ASSERT_TRUE(guard) << guard.error().message;
    EXPECT_TRUE(guard->held());
    EXPECT_FALSE(guard->waited());
    EXPECT_GT(guard->fence(), 0u);
    EXPECT_EQ(client_.Acquire("app", other, "report", Exclusive({}))->result,
              -1);
    auto second = client_.StartSession("second", milliseconds(60'000));
    ASSERT_TRUE(second);
    auto refused = second->Lock("app", "report", Exclusive({}));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, "timeout");
  }
  auto after = client_.Acquire("app", other, "report", Exclusive({}));
  ASSERT_TRUE(after);
  EXPECT_EQ(after->result, 0);
}

// docs/api.md, "Fenced writes", through Put, Save and Delete.
TEST_F(ClientTest, FencedWritesRefuseAHolderWhoseLockWasTakenOver) {
  std::uint64_t old_fence = 0, new_fence = 0;
  {
    auto first = client_.StartSession("first", milliseconds(60'000));
    ASSERT_TRUE(first);
    auto guard = first->Lock("app", "invoice:481");
    ASSERT_TRUE(guard) << guard.error().message;
    old_fence = guard->fence();
    auto put = client_.Put("billing", "481", "draft", old_fence);
    ASSERT_TRUE(put) << put.error().message;
  }
  auto second = client_.StartSession("second", milliseconds(60'000));
  ASSERT_TRUE(second);
  auto guard = second->Lock("app", "invoice:481");
  ASSERT_TRUE(guard) << guard.error().message;
  new_fence = guard->fence();
  ASSERT_GT(new_fence, old_fence);
  auto saved = client_.Save("billing", "481", {.fence = new_fence}, "paid");
  ASSERT_TRUE(saved) << saved.error().message;
  EXPECT_TRUE(saved->done);
  EXPECT_EQ(client_.Get("billing", "481")->write_fence, new_fence);

  auto stale = client_.Save("billing", "481", {.fence = old_fence}, "late");
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code, "stale_fence");
  EXPECT_EQ(stale.error().http_status, 409u);
  auto stale_delete = client_.Delete("billing", "481", {.fence = old_fence});
  ASSERT_FALSE(stale_delete);
  EXPECT_EQ(stale_delete.error().code, "stale_fence");
  EXPECT_EQ(client_.Get("billing", "481")->body, "paid");

  auto deleted = client_.Delete("billing", "481", {.fence = new_fence});
  ASSERT_TRUE(deleted) << deleted.error().message;
  EXPECT_TRUE(deleted->done);
  auto tomb = client_.Get("billing", "481");
  ASSERT_TRUE(tomb) << tomb.error().message;
  EXPECT_FALSE(tomb->body.has_value());
  EXPECT_EQ(tomb->write_fence, new_fence);
  auto back = client_.Put("billing", "481", "back", old_fence);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().code, "stale_fence");
}

TEST_F(ClientTest, SemaphoreAcquireListAndRelease) {
  const std::string a = NewSession("A"), b = NewSession("B"),
                    c = NewSession("C");
  auto first = client_.AcquireSemaphore("app", a, "provider",
                                        Permits(1, 2, milliseconds(0)));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->result, 0);
  EXPECT_EQ(first->status, "granted");
  EXPECT_EQ(first->permits, 1);
  EXPECT_GT(first->fence, 0u);
  auto second = client_.AcquireSemaphore("app", b, "provider",
                                         Permits(1, 2, milliseconds(0)));
  ASSERT_TRUE(second && second->granted());
  EXPECT_GT(second->fence, first->fence);

  // Both permits are taken: the refusal is an outcome, not an Error.
  auto refused = client_.AcquireSemaphore("app", c, "provider",
                                          Permits(1, 2, milliseconds(0)));
  ASSERT_TRUE(refused) << refused.error().message;
  EXPECT_EQ(refused->result, -1);
  EXPECT_EQ(refused->status, "timeout");

  auto listed = client_.ListSemaphores("app");
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->size(), 1u);
  const SemaphoreInfo& s = listed->front();
  EXPECT_EQ(s.name, "provider");
  EXPECT_EQ(s.principal, "public");
  EXPECT_EQ(s.limit, 2);
  EXPECT_EQ(s.held, 2);
  ASSERT_EQ(s.holders.size(), 2u);
  EXPECT_EQ(s.holders[0].session, a);
  EXPECT_EQ(s.holders[0].session_name, "A");
  EXPECT_EQ(s.holders[0].permits, 1);
  EXPECT_EQ(s.holders[0].fence, first->fence);
  EXPECT_TRUE(s.lock_delay_until.empty());
  auto one = client_.GetSemaphore("app", "provider");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(one->held, 2);

  // Another limit while in use, or the name as a lock: Errors.
  auto mismatch = client_.AcquireSemaphore("app", c, "provider",
                                           Permits(1, 3, milliseconds(0)));
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().code, "limit_mismatch");
  EXPECT_EQ(mismatch.error().http_status, 409u);
  auto as_lock = client_.Acquire("app", c, "provider", Exclusive({}));
  ASSERT_FALSE(as_lock);
  EXPECT_EQ(as_lock.error().code, "wrong_kind");

  auto left = client_.ReleaseSemaphore("app", a, "provider", "Session");
  ASSERT_TRUE(left) << left.error().message;
  EXPECT_EQ(*left, 0);
  auto twice = client_.ReleaseSemaphore("app", a, "provider", "Session");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, "not_held");
  auto third = client_.AcquireSemaphore("app", c, "provider",
                                        Permits(1, 2, milliseconds(0)));
  ASSERT_TRUE(third && third->granted());

  // Asking again while holding adds permits; a release may give back some.
  ASSERT_TRUE(client_.ReleaseSemaphore("app", b, "provider", "Session"));
  auto more = client_.AcquireSemaphore("app", c, "provider",
                                       Permits(1, 2, milliseconds(0)));
  ASSERT_TRUE(more && more->granted());
  EXPECT_EQ(more->permits, 2);
  auto some = client_.ReleaseSemaphore("app", c, "provider", "Session", 1);
  ASSERT_TRUE(some) << some.error().message;
  EXPECT_EQ(*some, 1);
  ASSERT_TRUE(client_.ReleaseSemaphore("app", c, "provider", "Session"));
  auto gone = client_.GetSemaphore("app", "provider");
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, "not_found");
  EXPECT_TRUE(client_.ListSemaphores("app")->empty());
}

TEST_F(ClientTest, SemaphoreAcquireWaitsAndIsGrantedAfterRelease) {
  const std::string a = NewSession("A"), b = NewSession("B");
  auto first = client_.AcquireSemaphore("app", a, "slots",
                                        Permits(2, 3, milliseconds(0)));
  ASSERT_TRUE(first && first->granted());
  auto waiter = std::async(std::launch::async, [&] {
    return client_.AcquireSemaphore("app", b, "slots",
                                    Permits(2, 3, milliseconds(10'000)));
  });
  ASSERT_TRUE(Eventually([&] { return WaitingForPermits("app") == 1; }));
  const auto listed = client_.ListSemaphores("app");
  ASSERT_TRUE(listed && listed->size() == 1u);
  ASSERT_EQ(listed->front().waiting.size(), 1u);
  EXPECT_EQ(listed->front().waiting[0].session, b);
  EXPECT_EQ(listed->front().waiting[0].permits, 2);
  EXPECT_FALSE(listed->front().waiting[0].conversion);
  ASSERT_TRUE(client_.ReleaseSemaphore("app", a, "slots", "Session"));
  auto second = waiter.get();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->result, 1);
  EXPECT_EQ(second->status, "granted_after_wait");
  EXPECT_EQ(second->permits, 2);
  EXPECT_GT(second->fence, first->fence);
}

TEST_F(ClientTest, SemaphoreGuardGivesItsPermitsBackWhenDestroyed) {
  auto session = client_.StartSession("holder", milliseconds(60'000));
  ASSERT_TRUE(session) << session.error().message;
  const std::string other = NewSession("other");
  {
    auto two = session->Permits("app", "pool", Permits(2, 3, milliseconds(0)));
    ASSERT_TRUE(two) << two.error().message;
    EXPECT_TRUE(two->held());
    EXPECT_FALSE(two->waited());
    EXPECT_EQ(two->permits(), 2);
    EXPECT_GT(two->fence(), 0u);
    {
      // A second guard of the same session adds one; it gives back its own.
      auto one =
          session->Permits("app", "pool", Permits(1, 3, milliseconds(0)));
      ASSERT_TRUE(one) << one.error().message;
      EXPECT_GT(one->fence(), two->fence());
      EXPECT_EQ(client_.GetSemaphore("app", "pool")->held, 3);
    }
    auto pool = client_.GetSemaphore("app", "pool");
    ASSERT_TRUE(pool) << pool.error().message;
    EXPECT_EQ(pool->held, 2) << "the inner guard gave back only its own";
    auto refused = client_.AcquireSemaphore("app", other, "pool",
                                            Permits(2, 3, milliseconds(0)));
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->result, -1);

    // Refusals of a guard are Errors.
    auto second = client_.StartSession("second", milliseconds(60'000));
    ASSERT_TRUE(second);
    auto timeout =
        second->Permits("app", "pool", Permits(2, 3, milliseconds(0)));
    ASSERT_FALSE(timeout);
    EXPECT_EQ(timeout.error().code, "timeout");
    auto mismatch =
        second->Permits("app", "pool", Permits(1, 4, milliseconds(0)));
    ASSERT_FALSE(mismatch);
    EXPECT_EQ(mismatch.error().code, "limit_mismatch");
  }
  auto after = client_.AcquireSemaphore("app", other, "pool",
                                        Permits(3, 3, milliseconds(0)));
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(after->result, 0) << "the guard did not give its permits back";
}

TEST_F(ClientTest, SemaphoreGuardWaitsThenIsGranted) {
  auto session = client_.StartSession("waiter", milliseconds(60'000));
  ASSERT_TRUE(session);
  const std::string holder = NewSession("holder");
  ASSERT_TRUE(client_
                  .AcquireSemaphore("app", holder, "pool",
                                    Permits(1, 1, milliseconds(0)))
                  ->granted());
  auto wait = std::async(std::launch::async, [&] {
    return session->Permits("app", "pool", Permits(1, 1, milliseconds(10'000)));
  });
  ASSERT_TRUE(Eventually([&] { return WaitingForPermits("app") == 1; }));
  ASSERT_TRUE(client_.ReleaseSemaphore("app", holder, "pool", "Session"));
  auto guard = wait.get();
  ASSERT_TRUE(guard) << guard.error().message;
  EXPECT_TRUE(guard->waited());
  EXPECT_EQ(guard->permits(), 1);
  ASSERT_TRUE(guard->Release());
  auto twice = guard->Release();
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, "not_held");
  EXPECT_FALSE(guard->held());
  EXPECT_FALSE(client_.GetSemaphore("app", "pool"));
}

TEST_F(ClientTest, SemaphoreGuardReportsTheSessionsLoss) {
  std::atomic<int> calls{0};
  auto session = client_.StartSession("doomed", milliseconds(600),
                                      [&](const Error&) { ++calls; });
  ASSERT_TRUE(session);
  auto guard = session->Permits("app", "pool", Permits(1, 2, milliseconds(0)));
  ASSERT_TRUE(guard) << guard.error().message;
  ASSERT_TRUE(client_.EndSession(session->id()));  // the operator ends it
  ASSERT_TRUE(Eventually([&] { return calls.load() > 0; }));
  EXPECT_FALSE(guard->held());
  auto released = guard->Release();
  ASSERT_FALSE(released);
  EXPECT_EQ(released.error().code, "lost");
}

TEST_F(ClientTest, CheckoutGuardRenewsAndChecksIn) {
  const milliseconds ttl(600);
  ASSERT_TRUE(client_.Put("docs", "plan", "Plan v0"));
  {
    auto guard = client_.CheckoutKey("docs", "plan", Lease("Asha", ttl));
    ASSERT_TRUE(guard) << guard.error().message;
    EXPECT_GT(guard->fence(), 0u);
    std::this_thread::sleep_for(milliseconds(2000));  // > 3 TTLs
    auto bob = client_.Checkout("docs", "plan", Lease("Bob", ttl));
    ASSERT_TRUE(bob);
    EXPECT_FALSE(bob->granted) << "the lease ran out despite renewals";
    EXPECT_EQ(bob->locked_by, "Asha");
    auto held = client_.CheckoutKey("docs", "plan", Lease("Bob", ttl));
    ASSERT_FALSE(held);
    EXPECT_EQ(held.error().code, "locked");
    auto saved = guard->Save("Plan v1", 1);
    ASSERT_TRUE(saved) << saved.error().message;
    EXPECT_TRUE(saved->done);
    EXPECT_EQ(saved->version, 2);
    EXPECT_TRUE(guard->held());
  }
  auto rec = client_.Get("docs", "plan");
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->body, "Plan v1");
  EXPECT_EQ(rec->state, "free");  // checked in by the destructor
  auto bob = client_.Checkout("docs", "plan", Lease("Bob", ttl));
  ASSERT_TRUE(bob);
  EXPECT_TRUE(bob->granted);
}

TEST_F(ClientTest, CheckoutGuardReportsLossAfterBreak) {
  std::atomic<int> calls{0};
  auto guard =
      client_.CheckoutKey("docs", "plan", Lease("Asha", milliseconds(600)),
                          [&](const Error&) { ++calls; });
  ASSERT_TRUE(guard);
  ASSERT_TRUE(client_.Break("docs", "plan"));
  ASSERT_TRUE(Eventually([&] { return calls.load() > 0; }));
  EXPECT_FALSE(guard->held());
  auto save = guard->Save("too late");
  ASSERT_FALSE(save);
  EXPECT_EQ(save.error().code, "lost");
  // The guard gave back the lease its renewal was granted by accident.
  auto bob =
      client_.Checkout("docs", "plan", Lease("Bob", milliseconds(60'000)));
  ASSERT_TRUE(bob);
  EXPECT_TRUE(bob->granted);
  std::this_thread::sleep_for(milliseconds(400));  // more than a period
  EXPECT_EQ(calls.load(), 1);
}

TEST_F(ClientTest, WatchReceivesCheckoutEvents) {
  std::mutex mu;
  std::vector<Event> seen;
  std::atomic<bool> stop{false};
  auto watcher = std::async(std::launch::async, [&] {
    return client_.Watch("wns", [&](const Event& e) {
      std::lock_guard lock(mu);
      seen.push_back(e);
      if (e.type == "checkout.released") return false;
      return !stop.load();
    });
  });
  // The stream subscribes asynchronously: renew a probe lease until the
  // watcher sees one, so that the events below cannot be missed.
  CheckoutOptions probe = Lease("probe", milliseconds(60'000));
  probe.token = "probe-token";
  const bool subscribed = Eventually([&] {
    (void)client_.Checkout("wns", "probe", probe);
    std::lock_guard lock(mu);
    return !seen.empty();
  });
  if (!subscribed) stop = true;
  ASSERT_TRUE(subscribed);
  auto co = client_.Checkout("wns", "doc", Lease("Asha", milliseconds(60'000)));
  ASSERT_TRUE(co && co->granted);
  ASSERT_TRUE(client_.Checkin("wns", "doc", {"", co->token}));
  if (watcher.wait_for(milliseconds(5000)) != std::future_status::ready) {
    stop = true;
    (void)client_.Checkout("wns", "probe", probe);  // wakes the watcher
    FAIL() << "no checkout.released event";
  }
  auto ended = watcher.get();
  ASSERT_TRUE(ended) << ended.error().message;
  std::lock_guard lock(mu);
  std::vector<std::string> doc_events;
  for (const auto& e : seen) {
    if (e.data.is_object() && e.data.as_object().contains("resource") &&
        e.data.at("resource") == "doc") {
      doc_events.push_back(e.type);
    }
  }
  EXPECT_EQ(doc_events, (std::vector<std::string>{"checkout.granted",
                                                  "checkout.released"}));
}

// The server drops idle keep-alive connections after request_timeout_ms;
// the pool must notice instead of failing (or resending) the next call.
TEST(ClientKeepAlive, StaleIdleConnectionIsReplaced) {
  TempDir dir;
  const std::string config = dir.File("config.json");
  {
    std::FILE* f = std::fopen(config.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"request_timeout_ms\": 100}", f);
    std::fclose(f);
  }
  ServerProcess server(dir.File("data"), config);
  auto client =
      Client::Create({"http://127.0.0.1:" + std::to_string(server.port()), "",
                      milliseconds(5000)});
  ASSERT_TRUE(client);
  for (int i = 0; i < 3; ++i) {
    auto s = client->OpenSession("s" + std::to_string(i), milliseconds(60'000));
    ASSERT_TRUE(s) << "round " << i << ": " << s.error().message;
    std::this_thread::sleep_for(milliseconds(300));  // the server hangs up
    auto list = client->ListSessions();
    ASSERT_TRUE(list) << "round " << i << ": " << list.error().message;
    EXPECT_EQ(list->size(), static_cast<std::size_t>(i + 1));
    std::this_thread::sleep_for(milliseconds(300));
  }
}

TEST(ClientFailures, BadUrl) {
  for (const char* url : {"ftp://127.0.0.1:1", "http://127.0.0.1:0",
                          "http://127.0.0.1:7070/v1", "127.0.0.1"}) {
    auto c = Client::Create({url, "", milliseconds(1000)});
    ASSERT_FALSE(c) << url;
    EXPECT_EQ(c.error().code, "bad_url") << url;
  }
}

TEST(ClientFailures, UnreachableAndTimeout) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor silent(
      io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const auto silent_port = silent.local_endpoint().port();
  std::uint16_t closed_port = 0;
  {
    boost::asio::ip::tcp::acceptor closing(
        io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    closed_port = closing.local_endpoint().port();
  }
  auto closed =
      Client::Create({"http://127.0.0.1:" + std::to_string(closed_port), "",
                      milliseconds(2000)});
  ASSERT_TRUE(closed);
  auto refused = closed->Healthy();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "unreachable");
  EXPECT_EQ(refused.error().http_status, 0u);

  // A listener that never answers: connected, but no answer in time.
  auto quiet =
      Client::Create({"http://127.0.0.1:" + std::to_string(silent_port), "",
                      milliseconds(200)});
  ASSERT_TRUE(quiet);
  const auto start = SteadyClock::now();
  auto late = quiet->OpenSession("x", milliseconds(1000));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, "timeout");
  EXPECT_LT(SteadyClock::now() - start, milliseconds(2000));
}

TEST_F(ClientTest, EightThreadsShareOneClient) {
  constexpr int kThreads = 8, kRounds = 25;
  std::atomic<int> inside{0}, overlaps{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Client mine = client_;  // copies share the pool
      auto s =
          mine.OpenSession("worker" + std::to_string(t), milliseconds(60'000));
      if (!s) return void(++failures);
      for (int i = 0; i < kRounds; ++i) {
        auto got =
            mine.Acquire("app", s->id, "counter", Exclusive(milliseconds(-1)));
        if (!got || !got->granted()) return void(++failures);
        if (inside.fetch_add(1) != 0) ++overlaps;
        auto co = mine.Checkout("par", "k" + std::to_string(t),
                                Lease("w", milliseconds(60'000)));
        if (!co || !co->granted) ++failures;
        inside.fetch_sub(1);
        if (!mine.Release("app", s->id, "counter", "Session")) ++failures;
      }
      if (!mine.EndSession(s->id)) ++failures;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(overlaps.load(), 0);
  auto page = client_.List("par", {});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->records.size(), static_cast<std::size_t>(kThreads));
}

}  // namespace
}  // namespace leasehold::client
