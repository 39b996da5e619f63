// `leasehold demo`: a scripted, honest walkthrough of the lock engine. Every
// line is printed from what the engine actually answered; a step that does
// not answer as the script expects is flagged and the demo exits 1.
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <ostream>
#include <string>

#include "cli/cli.h"
#include "engine/engine.h"

namespace leasehold::cli {
namespace {

using std::chrono::milliseconds;

std::string Describe(AcquireResult r) {
  return fmt::format("{} {}", static_cast<int>(r), AcquireResultName(r));
}

class EventPrinter final : public EventSink {
 public:
  explicit EventPrinter(std::ostream& out) : out_(out) {}
  void OnEvent(const Event& e) override {
    std::string what =
        fmt::format("{:<20} {}", EventTypeName(e.type), e.session_name);
    if (!e.resource.empty()) {
      what += fmt::format(" {} {}", e.resource, LockModeName(e.mode));
    }
    if (e.type == EventType::kLockGranted ||
        e.type == EventType::kLockReleased) {
      what += fmt::format(" count={} fence={}", e.count, e.fence);
    }
    out_ << "            event  " << what << "\n";
  }

 private:
  std::ostream& out_;
};

class Demo {
 public:
  explicit Demo(std::ostream& out)
      : out_(out), printer_(out), engine_(EngineOptions{.events = &printer_}) {}

  int Run() {
    Section("Two sessions contend for one invoice");
    const SessionId asha = Open("Asha", 10'000);
    const SessionId ravi = Open("Ravi", 3'000);
    ExpectResult(Acquire(asha, "invoice:481", LockMode::kExclusive,
                         LockOwner::kSession, -1),
                 AcquireResult::kGranted);
    const auto wait = Acquire(ravi, "invoice:481", LockMode::kShared,
                              LockOwner::kSession, 5'000);
    Expect(wait.wait.has_value(), "Ravi waits behind Asha's Exclusive lock");
    At(1'500);
    Release(asha, "invoice:481", LockOwner::kSession);
    ExpectFinished(AcquireResult::kGrantedAfterWait);
    KeepAlive(ravi);

    Section("Counted re-acquisition and a conversion (S + IX = SIX)");
    Begin(asha);
    ExpectResult(Acquire(asha, "report:q3", LockMode::kShared,
                         LockOwner::kTransaction, 0),
                 AcquireResult::kGranted);
    ExpectResult(Acquire(asha, "report:q3", LockMode::kShared,
                         LockOwner::kTransaction, 0),
                 AcquireResult::kGranted);
    ExpectResult(Acquire(asha, "report:q3", LockMode::kIntentExclusive,
                         LockOwner::kTransaction, 0),
                 AcquireResult::kGranted);
    ShowMode(asha, "report:q3", LockOwner::kTransaction,
             LockMode::kSharedIntentExclusive);
    ExpectResult(Acquire(ravi, "report:q3", LockMode::kIntentShared,
                         LockOwner::kSession, 0),
                 AcquireResult::kGranted);
    ExpectResult(
        Acquire(ravi, "report:q3", LockMode::kShared, LockOwner::kSession, 0),
        AcquireResult::kTimeout);
    Commit(asha);
    // The commit took Asha's Transaction-owned locks with it.
    ShowTest(ravi, "report:q3", LockMode::kShared, true);
    Release(ravi, "report:q3", LockOwner::kSession);

    Section("A deadlock, found the moment it forms");
    ExpectResult(Acquire(asha, "account:A", LockMode::kExclusive,
                         LockOwner::kSession, -1),
                 AcquireResult::kGranted);
    ExpectResult(Acquire(ravi, "account:B", LockMode::kExclusive,
                         LockOwner::kSession, -1),
                 AcquireResult::kGranted);
    const auto asha_waits = Acquire(asha, "account:B", LockMode::kExclusive,
                                    LockOwner::kSession, -1);
    Expect(asha_waits.wait.has_value(), "Asha waits for Ravi's account:B");
    const auto closes = Acquire(ravi, "account:A", LockMode::kExclusive,
                                LockOwner::kSession, -1);
    ExpectResult(closes, AcquireResult::kDeadlock);
    if (closes.deadlock) PrintCycle(*closes.deadlock);
    Line("Ravi was the victim (he closed the cycle); he keeps account:B");
    ShowMode(ravi, "account:B", LockOwner::kSession, LockMode::kExclusive);
    Release(ravi, "account:B", LockOwner::kSession);
    ExpectFinished(AcquireResult::kGrantedAfterWait);
    KeepAlive(ravi);

    Section("A timeout, and a session that is not kept alive");
    const auto times_out =
        Acquire(ravi, "account:A", LockMode::kShared, LockOwner::kSession, 500);
    Expect(times_out.wait.has_value(), "Ravi waits up to 500 ms");
    At(2'000);
    ExpectFinished(AcquireResult::kTimeout);
    ExpectResult(
        Acquire(ravi, "account:C", LockMode::kUpdate, LockOwner::kSession, -1),
        AcquireResult::kGranted);
    const auto asha_on_c = Acquire(asha, "account:C", LockMode::kExclusive,
                                   LockOwner::kSession, -1);
    Expect(asha_on_c.wait.has_value(), "Asha waits for Ravi's account:C");
    Line("Ravi stops sending keepalives; his 3 s TTL runs out");
    At(4'500);
    ExpectFinished(AcquireResult::kGrantedAfterWait);
    const auto stats = engine_.Stats();
    Line(
        fmt::format("sessions open: {}, locks held: {}, deadlocks: {}, "
                    "timeouts: {}, last fence: {}",
                    stats.sessions, stats.granted_locks, stats.deadlocks,
                    stats.timeouts, stats.last_fence));
    out_ << (failures_ == 0 ? "\nEvery step behaved as expected.\n"
                            : fmt::format("\n{} step(s) did NOT behave as "
                                          "expected.\n",
                                          failures_));
    return failures_ == 0 ? 0 : 1;
  }

 private:
  Time Now() const { return start_ + milliseconds(t_ms_); }

  void At(long long ms) {
    t_ms_ = ms;
    out_ << fmt::format("  t={:6.3f}s  (time passes)\n",
                        static_cast<double>(ms) / 1000.0);
    engine_.AdvanceTo(Now());
  }

  void Section(std::string_view title) { out_ << "\n== " << title << "\n"; }
  void Line(std::string_view text) {
    out_ << fmt::format("  t={:6.3f}s  {}\n",
                        static_cast<double>(t_ms_) / 1000.0, text);
  }

  void Expect(bool ok, std::string_view what) {
    Line(fmt::format("{}{}", what, ok ? "" : "  <-- UNEXPECTED"));
    if (!ok) ++failures_;
  }

  SessionId Open(const std::string& name, long long ttl_ms) {
    auto s = engine_.OpenSession(Now(), {name, milliseconds(ttl_ms), 0, ""});
    if (!s) {
      Expect(false, s.error().ToString());
      return 0;
    }
    names_[s->id] = name;
    Line(fmt::format("{} opens session {} (ttl {} ms)", name, s->id, ttl_ms));
    return s->id;
  }

  void KeepAlive(SessionId s) {
    if (!engine_.KeepAlive(Now(), s)) Expect(false, "keepalive failed");
  }

  void Begin(SessionId s) {
    auto t = engine_.BeginTransaction(Now(), s);
    Line(fmt::format("{} begins transaction {}", names_[s], t ? t->id : 0));
    if (!t) ++failures_;
  }

  void Commit(SessionId s) {
    Line(fmt::format("{} commits", names_[s]));
    Status st = engine_.Commit(Now(), s);
    Line(fmt::format("  -> {}", st.ToString()));
    if (!st.ok()) ++failures_;
  }

  AcquireOutcome Acquire(SessionId s, std::string_view resource, LockMode mode,
                         LockOwner owner, long long timeout_ms) {
    AcquireRequest req{
        s, {"demo", "public", resource}, mode, owner, milliseconds(timeout_ms)};
    Line(fmt::format("{} asks {} on {} (owner {}, timeout {} ms)", names_[s],
                     LockModeName(mode), resource, LockOwnerName(owner),
                     timeout_ms));
    auto r = engine_.Acquire(Now(), req);
    if (!r) {
      Expect(false, "  error " + r.error().ToString());
      return {};
    }
    if (r->wait) {
      Line(fmt::format("  -> waiting (request {})", *r->wait));
    } else if (r->result == AcquireResult::kGranted) {
      Line(fmt::format("  -> {}: holds {} count {}, fence {}",
                       Describe(r->result), LockModeName(r->held), r->count,
                       r->fence));
    } else {
      Line(fmt::format("  -> {}", Describe(r->result)));
    }
    return *r;
  }

  void ExpectResult(const AcquireOutcome& got, AcquireResult want) {
    if (got.wait || got.result != want) {
      Expect(false, fmt::format("expected {}", Describe(want)));
    }
  }

  void ExpectFinished(AcquireResult want) {
    auto done = engine_.TakeFinishedWaits();
    for (const auto& f : done) {
      Line(fmt::format("  request {} of {} finished: {}{}", f.wait,
                       names_[f.session], Describe(f.result),
                       f.fence ? fmt::format(", fence {}", f.fence) : ""));
    }
    if (done.size() != 1 || done[0].result != want) {
      Expect(false, fmt::format("expected one request to finish with {}",
                                Describe(want)));
    }
  }

  void Release(SessionId s, std::string_view resource, LockOwner owner) {
    Line(fmt::format("{} releases {}", names_[s], resource));
    Status st =
        engine_.Release(Now(), {s, {"demo", "public", resource}, owner});
    Line(fmt::format("  -> {}", st.ToString()));
    if (!st.ok()) ++failures_;
  }

  void ShowMode(SessionId s, std::string_view resource, LockOwner owner,
                LockMode want) {
    auto m = engine_.Mode(Now(), s, {"demo", "public", resource}, owner);
    const bool ok = m && *m == want;
    Expect(ok,
           fmt::format("APPLOCK_MODE({}, {}, {}) = {}", names_[s], resource,
                       LockOwnerName(owner), m ? LockModeName(*m) : "error"));
  }

  void ShowTest(SessionId s, std::string_view resource, LockMode mode,
                bool want) {
    auto t = engine_.Test(Now(), s, {"demo", "public", resource}, mode,
                          LockOwner::kSession);
    const bool ok = t && *t == want;
    Expect(ok, fmt::format("APPLOCK_TEST({}, {}, {}) = {}", names_[s], resource,
                           LockModeName(mode), t ? (*t ? "1" : "0") : "error"));
  }

  void PrintCycle(const DeadlockReport& report) {
    Line("  the cycle:");
    for (const auto& e : report.cycle) {
      Line(fmt::format("    {} wants {} on {}, held by {}", e.waiter_name,
                       LockModeName(e.wanted), e.resource, e.holder_name));
    }
  }

  std::ostream& out_;
  EventPrinter printer_;
  Engine engine_;
  Time start_ = std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::sys_days{std::chrono::year{2026} / 1 / 1});
  long long t_ms_ = 0;
  int failures_ = 0;
  std::map<SessionId, std::string> names_;
};

}  // namespace

int RunDemo(std::ostream& out) { return Demo(out).Run(); }

}  // namespace leasehold::cli
