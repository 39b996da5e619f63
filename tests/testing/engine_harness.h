// EngineHarness: an Engine driven by a manual clock, with short helpers for
// the calls unit tests make again and again, and a recorder of events.
#ifndef LEASEHOLD_TESTS_TESTING_ENGINE_HARNESS_H_
#define LEASEHOLD_TESTS_TESTING_ENGINE_HARNESS_H_

#include <gtest/gtest.h>
#include <algorithm>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "tests/testing/manual_clock.h"

namespace leasehold::testing {

// "r" and 7 give "r7". Appended rather than `"r" + std::to_string(7)`: GCC 12
// at -O3 warns of that insert with a false -Wrestrict (GCC bug 105329).
inline std::string NumberedName(std::string_view prefix, int n) {
  std::string name(prefix);
  name += std::to_string(n);
  return name;
}

// Copies of events (the engine's string views die with the callback).
struct RecordedEvent {
  EventType type;
  SessionId session;
  std::string resource;
  LockMode mode;
  std::uint32_t count;
  Fence fence;
};

class EventRecorder final : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    events.push_back(RecordedEvent{e.type, e.session, std::string(e.resource),
                                   e.mode, e.count, e.fence});
  }
  std::vector<EventType> Types() const {
    std::vector<EventType> out;
    for (const auto& e : events) out.push_back(e.type);
    return out;
  }
  std::vector<RecordedEvent> events;
};

class EngineHarness : public ::testing::Test {
 protected:
  EngineHarness() : engine_(EngineOptions{.events = &recorder_}) {}

  Time Now() const { return clock_.Now(); }
  void Advance(long long ms) {
    clock_.AdvanceMs(ms);
    engine_.AdvanceTo(Now());
  }

  SessionId Open(const std::string& name, long long ttl_ms = 60'000,
                 int priority = 0) {
    auto s = engine_.OpenSession(
        Now(), {name, std::chrono::milliseconds(ttl_ms), priority, ""});
    EXPECT_TRUE(s.has_value()) << s.error().ToString();
    return s ? s->id : 0;
  }

  static LockKey Key(std::string_view resource, std::string_view ns = "app",
                     std::string_view principal = "public") {
    return LockKey{ns, principal, resource};
  }

  Result<AcquireOutcome> Acquire(SessionId s, std::string_view resource,
                                 LockMode mode,
                                 LockOwner owner = LockOwner::kSession,
                                 long long timeout_ms = 0) {
    return engine_.Acquire(Now(), {s, Key(resource), mode, owner,
                                   std::chrono::milliseconds(timeout_ms)});
  }

  // The immediate result code (0, -1, -3), or 99 when the request waits.
  int Code(SessionId s, std::string_view resource, LockMode mode,
           LockOwner owner = LockOwner::kSession, long long timeout_ms = 0) {
    auto r = Acquire(s, resource, mode, owner, timeout_ms);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    if (!r) return -100;
    return r->wait ? 99 : static_cast<int>(r->result);
  }

  Status Release(SessionId s, std::string_view resource,
                 LockOwner owner = LockOwner::kSession) {
    return engine_.Release(Now(), {s, Key(resource), owner});
  }

  LockMode ModeOf(SessionId s, std::string_view resource,
                  LockOwner owner = LockOwner::kSession) {
    auto m = engine_.Mode(Now(), s, Key(resource), owner);
    EXPECT_TRUE(m.has_value());
    return m ? *m : LockMode::kNoLock;
  }

  std::uint32_t CountOf(SessionId s, std::string_view resource,
                        LockOwner owner = LockOwner::kSession) {
    for (const auto& l : engine_.ListLocks(Now(), "app")) {
      if (l.resource != resource) continue;
      for (const auto& g : l.granted) {
        if (g.session == s && g.owner == owner) return g.count;
      }
    }
    return 0;
  }

  // Finished waits as (session, result) pairs, in order.
  std::vector<std::pair<SessionId, int>> Finished() {
    std::vector<std::pair<SessionId, int>> out;
    for (const auto& f : engine_.TakeFinishedWaits()) {
      out.emplace_back(f.session, static_cast<int>(f.result));
    }
    return out;
  }

  // Takes the journal; whether it holds anything besides session and lock
  // rows and id reservations (which every session's life writes).
  bool TookDataJournal() {
    using Kind = JournalEntry::Kind;
    return std::ranges::any_of(engine_.TakeJournal(), [](const auto& e) {
      return e.kind != Kind::kPutSession && e.kind != Kind::kDeleteSession &&
             e.kind != Kind::kPutLock && e.kind != Kind::kDeleteLock &&
             e.kind != Kind::kReserveSessionIds &&
             e.kind != Kind::kReserveTransactionIds;
    });
  }

  ManualClock clock_;
  EventRecorder recorder_;
  Engine engine_;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_ENGINE_HARNESS_H_
