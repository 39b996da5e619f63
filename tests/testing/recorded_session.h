// RecordedSession: the session of one client thread in a fault test,
// opened, kept alive and ended through a LeaderClient, each call recorded
// in a HistoryRecorder (lock_history.h) as the checks expect: its creation
// and every keep-alive as a KeepAlive carrying the ttl, its end as an
// EndSession.
#ifndef LEASEHOLD_TESTS_TESTING_RECORDED_SESSION_H_
#define LEASEHOLD_TESTS_TESTING_RECORDED_SESSION_H_

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "engine/lock_types.h"
#include "tests/testing/leader_client.h"
#include "tests/testing/lock_history.h"

namespace leasehold::testing {

class RecordedSession {
 public:
  RecordedSession(LeaderClient& client, HistoryRecorder& history,
                  std::string name, std::chrono::milliseconds ttl)
      : client_(client), history_(history), name_(std::move(name)), ttl_(ttl) {}

  const std::string& id() const { return id_; }
  bool open() const { return !id_.empty(); }

  // Asks for a new session until one is created or `stop` is set.
  void Open(const std::atomic<bool>& stop) {
    while (!stop) {
      const Instant invoked = HistoryRecorder::Now();
      auto r = client_.Send("POST", "/v1/sessions",
                            boost::json::serialize(boost::json::object{
                                {"name", name_}, {"ttl_ms", ttl_.count()}}));
      if (r.answered && r.status == 201) {
        id_ = JsonString(r.json, "id");
        kept_at_ = invoked;
        history_.Add(KeepAlive(id_, invoked, HistoryRecorder::Now(),
                               Outcome::kOk, ttl_));
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // Keeps the session alive once `every` has passed since the last
  // keep-alive that was answered; false once the server says it is gone.
  bool KeepAliveIfDue(
      std::chrono::milliseconds every = std::chrono::seconds(2)) {
    if (HistoryRecorder::Now() - kept_at_ < every) return true;
    const Instant invoked = HistoryRecorder::Now();
    auto r = client_.Send("POST", "/v1/sessions/" + id_ + "/keepalive", "");
    const Outcome o = OutcomeOf(r, 200);
    history_.Add(KeepAlive(id_, invoked, HistoryRecorder::Now(), o, ttl_));
    if (o == Outcome::kOk) kept_at_ = invoked;
    return o != Outcome::kSessionLost;
  }

  // Ends it (which releases whatever it may hold), asking for up to 30 s
  // until answered (a 404 means it is gone anyway). Its outcome: kUnknown
  // when never answered.
  Outcome End() {
    const Instant invoked = HistoryRecorder::Now();
    auto r = client_.Retry("DELETE", "/v1/sessions/" + id_, "",
                           std::chrono::seconds(30));
    const Outcome o = OutcomeOf(r, 204);
    history_.Add(EndSession(id_, invoked, HistoryRecorder::Now(), o));
    id_.clear();
    return o;
  }

  struct Answer {
    Outcome outcome = Outcome::kUnknown;
    LeaderClient::Reply reply;
  };

  // Asks for `resource` in namespace "app", Session-owned, in `mode`,
  // waiting up to `timeout_ms`; recorded with the fence granted.
  Answer Acquire(const std::string& resource, LockMode mode, int timeout_ms) {
    const Instant invoked = HistoryRecorder::Now();
    Answer a;
    a.reply = client_.Send(
        "POST", "/v1/applocks/app/acquire",
        boost::json::serialize(
            boost::json::object{{"session", id_},
                                {"resource", resource},
                                {"mode", std::string(LockModeName(mode))},
                                {"owner", "Session"},
                                {"timeout_ms", timeout_ms}}),
        std::chrono::milliseconds(timeout_ms) + std::chrono::seconds(3));
    a.outcome = OutcomeOf(a.reply, 200);
    history_.Add(testing::Acquire(
        id_, resource, mode, invoked, HistoryRecorder::Now(), a.outcome,
        static_cast<Fence>(JsonInt(a.reply.json, "fence").value_or(0))));
    return a;
  }

  // Releases the session's hold of `resource` in namespace "app";
  // recorded.
  Answer Release(const std::string& resource) {
    const Instant invoked = HistoryRecorder::Now();
    Answer a;
    a.reply = client_.Send(
        "POST", "/v1/applocks/app/release",
        boost::json::serialize(boost::json::object{
            {"session", id_}, {"resource", resource}, {"owner", "Session"}}));
    a.outcome = OutcomeOf(a.reply, 200);
    history_.Add(testing::Release(id_, resource, invoked,
                                  HistoryRecorder::Now(), a.outcome));
    return a;
  }

  // Drops a session the server said is gone, without a call.
  void Forget() { id_.clear(); }

 private:
  LeaderClient& client_;
  HistoryRecorder& history_;
  std::string name_;
  std::chrono::milliseconds ttl_;
  std::string id_;
  Instant kept_at_;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_RECORDED_SESSION_H_
