#include "tests/scenarios/scenario_runner.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "common/status.h"
#include "engine/engine.h"

namespace leasehold::scenarios {
namespace {

using std::chrono::milliseconds;
using Kind = Expectation::Kind;

// Empty when a step met its expectation; otherwise says what differed.
using Mismatch = std::optional<std::string>;

Mismatch Differs(const std::string& expected, const std::string& got) {
  return "expected: " + expected + "\n     got: " + got;
}

std::string ResultName(AcquireResult result) {
  switch (result) {
    case AcquireResult::kGranted:
      return "granted at once";
    case AcquireResult::kGrantedAfterWait:
      return "granted after waiting";
    case AcquireResult::kTimeout:
      return "timed out";
    case AcquireResult::kCancelled:
      return "cancelled";
    case AcquireResult::kDeadlock:
      return "deadlock victim";
  }
  return "?";
}

std::string JoinNames(const std::vector<std::string>& names,
                      std::string_view separator) {
  std::string out;
  for (const std::string& name : names) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

std::string DescribeExpectation(const Expectation& e) {
  switch (e.kind) {
    case Kind::kOk:
      return "ok";
    case Kind::kError:
      return "error " + e.error;
    case Kind::kWaits:
      return "waits";
    case Kind::kBool:
      return e.flag ? "true" : "false";
    case Kind::kMode:
      return std::string(ModeName(e.mode));
    case Kind::kNumber:
      return std::to_string(e.number);
    case Kind::kNames:
      return e.names.empty() ? "none" : JoinNames(e.names, " ");
    case Kind::kDelay:
      if (!e.until_ms) return "none";
      return "until=" + std::to_string(*e.until_ms) +
             (e.permits ? " permits=" + std::to_string(*e.permits) : "");
    case Kind::kResult:
      break;
  }
  std::string out = std::to_string(e.result) + " (" +
                    ResultName(static_cast<AcquireResult>(e.result)) + ")";
  if (e.held) out += " held=" + std::string(ModeName(*e.held));
  if (e.count) out += " count=" + std::to_string(*e.count);
  if (e.permits) out += " permits=" + std::to_string(*e.permits);
  if (e.cycle) out += " cycle=" + JoinNames(*e.cycle, ",");
  return out;
}

std::string DescribeError(const Status& status) {
  return "error " + std::string(StatusCodeName(status.code())) + " (" +
         status.message() + ")";
}

bool IsExpectedError(const Status& status, const Expectation& e) {
  return !status.ok() && e.kind == Kind::kError &&
         StatusCodeName(status.code()) == e.error;
}

// Compares a Result<T> with an expectation: an error must be the expected
// error; a value must be expected and pass `matches`.
template <typename T, typename Matches, typename Describe>
Mismatch CheckResult(const Result<T>& got, const Expectation& e,
                     Matches matches, Describe describe) {
  if (!got) {
    if (IsExpectedError(got.error(), e)) return std::nullopt;
    return Differs(DescribeExpectation(e), DescribeError(got.error()));
  }
  if (e.kind != Kind::kError && matches(*got)) return std::nullopt;
  return Differs(DescribeExpectation(e), describe(*got));
}

Mismatch CheckStatus(const Status& got, const Expectation& e) {
  if (got.ok() ? e.kind == Kind::kOk : IsExpectedError(got, e)) {
    return std::nullopt;
  }
  return Differs(DescribeExpectation(e), got.ok() ? "ok" : DescribeError(got));
}

// What a grant, a timeout or a deadlock said, whether at once or later.
struct Answer {
  AcquireResult result = AcquireResult::kGranted;
  LockMode held = LockMode::kNoLock;
  std::uint32_t count = 0;  // of a semaphore: the permits its owner holds
  const std::optional<DeadlockReport>* deadlock = nullptr;
  bool semaphore = false;
};

// ---------------------------------------------------------------------------

class Runner {
 public:
  std::optional<ScenarioFailure> Run(const Scenario& scenario);

 private:
  struct Finished {
    FinishedWait wait;
    const Step* step = nullptr;  // the step during which it finished
  };

  Time Now() const { return ScenarioStart() + milliseconds(now_ms_); }
  std::int64_t MsOf(Time t) const {
    return std::chrono::duration_cast<milliseconds>(t - ScenarioStart())
        .count();
  }
  SessionId Id(const std::string& name) const;
  std::string NameOf(SessionId id) const;
  LockKey KeyOf(const Step& step) const;
  Answer AnswerOf(const FinishedWait& wait) const;

  void CollectFinished(const Step& step);
  std::optional<ScenarioFailure> UnexpectedFinish();
  ScenarioFailure Failure(const Step& step, const std::string& what);
  std::string DescribeTables();  // locks, then semaphores
  std::string DescribeLocks();
  std::string DescribeSemaphores();
  std::string DescribeDelay(const std::optional<Time>& until) const;
  std::string DescribeAnswer(const Answer& answer) const;
  std::string DescribeCycle(const DeadlockReport& report) const;
  std::set<std::string> CycleMembers(const DeadlockReport& report) const;
  bool Matches(const Answer& answer, const Expectation& e) const;
  const LockInfo* FindLock(const std::vector<LockInfo>& locks,
                           const Step& step) const;
  const SemaphoreInfo* FindSemaphore(
      const std::vector<SemaphoreInfo>& semaphores, const Step& step) const;

  Mismatch RunStep(const Step& step);
  Mismatch OpenSession(const Step& step);
  Mismatch SetNamespace(const Step& step);
  Mismatch SessionCommand(const Step& step);
  Mismatch Acquire(const Step& step);
  Mismatch AcquireAll(const Step& step);
  Mismatch Release(const Step& step);
  Mismatch QueryMode(const Step& step);
  Mismatch QueryCount(const Step& step);
  Mismatch QueryTest(const Step& step);
  Mismatch QuerySession(const Step& step);
  Mismatch QueryQueue(const Step& step);
  Mismatch Take(const Step& step);
  Mismatch Give(const Step& step);
  Mismatch QueryPermits(const Step& step);
  Mismatch QueryHeld(const Step& step);
  Mismatch QueryDelay(const Step& step);
  Mismatch CheckFinished(const Step& step);

  Engine engine_;
  std::int64_t now_ms_ = 0;
  std::map<std::string, SessionId, std::less<>> ids_;
  std::map<SessionId, std::string> names_;
  std::deque<Finished> finished_;  // not yet matched by a `finished` line
  // Waits for permits, so that their results read as a semaphore's.
  std::set<WaitId> semaphore_waits_;
  std::map<std::string, NamespaceOptions, std::less<>> namespaces_;
};

std::optional<ScenarioFailure> Runner::Run(const Scenario& scenario) {
  for (const Step& step : scenario.steps) {
    if (step.action != Action::kFinished) {
      if (auto failure = UnexpectedFinish()) return failure;
    }
    if (step.at_ms > now_ms_) {
      now_ms_ = step.at_ms;
      // A command gets the new time as its `now` and must itself apply what
      // fell due first; only `at MS` alone and `finished` call AdvanceTo.
      if (step.action == Action::kAdvance || step.action == Action::kFinished) {
        engine_.AdvanceTo(Now());
        CollectFinished(step);
      }
    }
    Mismatch mismatch = RunStep(step);
    CollectFinished(step);
    if (mismatch) return Failure(step, *mismatch);
  }
  return UnexpectedFinish();
}

SessionId Runner::Id(const std::string& name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? 0 : it->second;  // 0 is never a session
}

std::string Runner::NameOf(SessionId id) const {
  auto it = names_.find(id);
  return it == names_.end() ? "session#" + std::to_string(id) : it->second;
}

LockKey Runner::KeyOf(const Step& step) const {
  return LockKey{.ns = step.target.ns,
                 .principal = step.target.principal,
                 .resource = step.target.resource};
}

Answer Runner::AnswerOf(const FinishedWait& wait) const {
  return Answer{wait.result, wait.held, wait.count, &wait.deadlock,
                semaphore_waits_.contains(wait.wait)};
}

void Runner::CollectFinished(const Step& step) {
  for (FinishedWait& wait : engine_.TakeFinishedWaits()) {
    finished_.push_back(Finished{std::move(wait), &step});
  }
}

std::optional<ScenarioFailure> Runner::UnexpectedFinish() {
  if (finished_.empty()) return std::nullopt;
  const Finished& f = finished_.front();
  std::string name = NameOf(f.wait.session);
  std::string what = name + "'s wait finished during this step, but no " +
                     "`finished` line expects it\n     got: " +
                     DescribeAnswer(AnswerOf(f.wait)) + "\n    hint: add `at " +
                     std::to_string(f.step->at_ms) + " " + name + " finished " +
                     std::to_string(static_cast<int>(f.wait.result)) +
                     "` right after this line";
  return Failure(*f.step, what);
}

ScenarioFailure Runner::Failure(const Step& step, const std::string& what) {
  return ScenarioFailure{
      step.line, "step: " + step.text + "\n" + what + "\nlocks at " +
                     std::to_string(now_ms_) + " ms:\n" + DescribeTables()};
}

std::string Runner::DescribeDelay(const std::optional<Time>& until) const {
  if (!until) return "";
  return " (lock-delay until " + std::to_string(MsOf(*until)) + " ms)";
}

std::string Runner::DescribeLocks() {
  std::string out;
  for (const LockInfo& lock : engine_.ListLocks(Now(), "")) {
    out += "  " + lock.ns + "/" + lock.principal + "/" + lock.resource +
           DescribeDelay(lock.lock_delay_until) + "\n";
    for (const GrantedLockInfo& g : lock.granted) {
      out += "    granted: " + NameOf(g.session) + " " +
             std::string(LockOwnerName(g.owner)) + " " +
             std::string(ModeName(g.mode)) +
             " count=" + std::to_string(g.count) + "\n";
    }
    for (const WaitingLockInfo& w : lock.waiting) {
      out += "    waiting: " + NameOf(w.session) + " " +
             std::string(LockOwnerName(w.owner)) + " wants " +
             std::string(ModeName(w.requested)) +
             (w.conversion ? " (conversion)" : "") +
             (w.deadline ? " until " + std::to_string(MsOf(*w.deadline)) + " ms"
                         : "") +
             "\n";
    }
  }
  return out;
}

std::string Runner::DescribeTables() {
  std::string out = DescribeLocks() + DescribeSemaphores();
  return out.empty() ? "  (none)\n" : out;
}

std::string Runner::DescribeSemaphores() {
  std::string out;
  for (const SemaphoreInfo& sem : engine_.ListSemaphores(Now(), "")) {
    out += "  " + sem.ns + "/" + sem.principal + "/" + sem.name +
           " semaphore limit=" + std::to_string(sem.limit) +
           " held=" + std::to_string(sem.held);
    if (sem.lock_delay_until) {
      out += " (lock-delay holds back " +
             std::to_string(sem.lock_delay_permits) + " until " +
             std::to_string(MsOf(*sem.lock_delay_until)) + " ms)";
    }
    out += "\n";
    for (const SemaphoreHolderInfo& h : sem.holders) {
      out += "    granted: " + NameOf(h.session) + " " +
             std::string(LockOwnerName(h.owner)) +
             " permits=" + std::to_string(h.permits) + "\n";
    }
    for (const SemaphoreWaiterInfo& w : sem.waiting) {
      out += "    waiting: " + NameOf(w.session) + " " +
             std::string(LockOwnerName(w.owner)) + " wants " +
             std::to_string(w.permits) + " permit(s)" +
             (w.conversion ? " (conversion)" : "") +
             (w.deadline ? " until " + std::to_string(MsOf(*w.deadline)) + " ms"
                         : "") +
             "\n";
    }
  }
  return out;
}

std::string Runner::DescribeAnswer(const Answer& answer) const {
  std::string out = std::to_string(static_cast<int>(answer.result)) + " (" +
                    ResultName(answer.result) + ")";
  bool granted = answer.result == AcquireResult::kGranted ||
                 answer.result == AcquireResult::kGrantedAfterWait;
  if (granted && answer.semaphore) {
    out += " permits=" + std::to_string(answer.count);
  } else if (granted) {
    out += " held=" + std::string(ModeName(answer.held)) +
           " count=" + std::to_string(answer.count);
  }
  if (answer.deadlock != nullptr && answer.deadlock->has_value()) {
    out += " " + DescribeCycle(**answer.deadlock);
  }
  return out;
}

std::set<std::string> Runner::CycleMembers(const DeadlockReport& r) const {
  std::set<std::string> members;
  for (const WaitForEdge& edge : r.cycle) {
    members.insert(NameOf(edge.waiter));
    members.insert(NameOf(edge.holder));
  }
  return members;
}

std::string Runner::DescribeCycle(const DeadlockReport& report) const {
  std::set<std::string> members = CycleMembers(report);
  std::string out = "cycle=" + JoinNames({members.begin(), members.end()}, ",");
  out += " (victim " + NameOf(report.victim) + ":";
  for (const WaitForEdge& edge : report.cycle) {
    const std::string wanted = edge.permits > 0
                                   ? std::to_string(edge.permits) + " permit(s)"
                                   : std::string(ModeName(edge.wanted));
    out += " " + NameOf(edge.waiter) + " wants " + edge.resource + " " +
           wanted + " held or awaited by " + NameOf(edge.holder) + ";";
  }
  out.back() = ')';
  return out;
}

bool Runner::Matches(const Answer& answer, const Expectation& e) const {
  if (e.kind != Kind::kResult) return false;
  if (static_cast<int>(answer.result) != e.result) return false;
  // held= and count= are a lock's, permits= a semaphore's.
  if ((e.held || e.count) && answer.semaphore) return false;
  if (e.permits && (!answer.semaphore || *e.permits != answer.count)) {
    return false;
  }
  if (e.held && *e.held != answer.held) return false;
  if (e.count && *e.count != answer.count) return false;
  if (e.cycle) {
    if (answer.deadlock == nullptr || !answer.deadlock->has_value()) {
      return false;
    }
    std::set<std::string> expected(e.cycle->begin(), e.cycle->end());
    if (CycleMembers(**answer.deadlock) != expected) return false;
  }
  return true;
}

const LockInfo* Runner::FindLock(const std::vector<LockInfo>& locks,
                                 const Step& step) const {
  for (const LockInfo& lock : locks) {
    if (lock.ns == step.target.ns && lock.principal == step.target.principal &&
        lock.resource == step.target.resource) {
      return &lock;
    }
  }
  return nullptr;
}

const SemaphoreInfo* Runner::FindSemaphore(
    const std::vector<SemaphoreInfo>& semaphores, const Step& step) const {
  for (const SemaphoreInfo& sem : semaphores) {
    if (sem.ns == step.target.ns && sem.principal == step.target.principal &&
        sem.name == step.target.resource) {
      return &sem;
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// Steps

Mismatch Runner::RunStep(const Step& step) {
  switch (step.action) {
    case Action::kAdvance:
      return std::nullopt;  // time already moved
    case Action::kOpenSession:
      return OpenSession(step);
    case Action::kNamespace:
      return SetNamespace(step);
    case Action::kBegin:
    case Action::kCommit:
    case Action::kRollback:
    case Action::kEnd:
    case Action::kKeepAlive:
    case Action::kSetPriority:
      return SessionCommand(step);
    case Action::kAcquire:
      return Acquire(step);
    case Action::kAcquireAll:
      return AcquireAll(step);
    case Action::kRelease:
      return Release(step);
    case Action::kMode:
      return QueryMode(step);
    case Action::kCount:
      return QueryCount(step);
    case Action::kTest:
      return QueryTest(step);
    case Action::kCancel:
    case Action::kWaiting:
    case Action::kLocks:
      return QuerySession(step);
    case Action::kQueue:
      return QueryQueue(step);
    case Action::kTake:
      return Take(step);
    case Action::kGive:
      return Give(step);
    case Action::kPermits:
      return QueryPermits(step);
    case Action::kHeld:
      return QueryHeld(step);
    case Action::kDelay:
      return QueryDelay(step);
    case Action::kFinished:
      return CheckFinished(step);
  }
  return "unknown step";
}

Mismatch Runner::OpenSession(const Step& step) {
  SessionOptions options;
  options.name = step.session;
  options.ttl = milliseconds(step.ttl_ms);
  options.deadlock_priority = step.priority;
  Result<SessionInfo> opened = engine_.OpenSession(Now(), options);
  if (opened) {
    ids_[step.session] = opened->id;
    names_[opened->id] = step.session;
  }
  return CheckResult(
      opened, step.expect, [](const SessionInfo&) { return true; },
      [](const SessionInfo&) { return std::string("ok"); });
}

// Later options of the same namespace keep the earlier ones.
Mismatch Runner::SetNamespace(const Step& step) {
  NamespaceOptions& options = namespaces_[step.target.ns];
  options.lock_delay = milliseconds(step.lock_delay_ms);
  engine_.SetNamespaceOptions(step.target.ns, options);
  return std::nullopt;
}

Mismatch Runner::SessionCommand(const Step& step) {
  SessionId id = Id(step.session);
  switch (step.action) {
    case Action::kBegin: {
      Result<TransactionInfo> begun = engine_.BeginTransaction(Now(), id);
      return CheckStatus(begun ? Status() : begun.error(), step.expect);
    }
    case Action::kCommit:
      return CheckStatus(engine_.Commit(Now(), id), step.expect);
    case Action::kRollback:
      return CheckStatus(engine_.Rollback(Now(), id), step.expect);
    case Action::kEnd: {
      const auto how = step.ended_by_administrator
                           ? Engine::SessionEnd::kByAdministrator
                           : Engine::SessionEnd::kByClient;
      return CheckStatus(engine_.EndSession(Now(), id, how), step.expect);
    }
    case Action::kKeepAlive: {
      Result<KeepAliveOutcome> kept = engine_.KeepAlive(Now(), id);
      return CheckStatus(kept ? Status() : kept.error(), step.expect);
    }
    default:
      return CheckStatus(engine_.SetDeadlockPriority(Now(), id, step.priority),
                         step.expect);
  }
}

Mismatch Runner::Acquire(const Step& step) {
  AcquireRequest request{.session = Id(step.session),
                         .key = KeyOf(step),
                         .mode = step.mode,
                         .owner = step.owner,
                         .timeout = milliseconds(step.timeout_ms)};
  Result<AcquireOutcome> outcome = engine_.Acquire(Now(), request);
  auto answer = [](const AcquireOutcome& o) {
    return Answer{o.result, o.held, o.count, &o.deadlock};
  };
  return CheckResult(
      outcome, step.expect,
      [&](const AcquireOutcome& o) {
        if (step.expect.kind == Kind::kWaits) return o.wait.has_value();
        return !o.wait && Matches(answer(o), step.expect);
      },
      [&](const AcquireOutcome& o) {
        return o.wait ? std::string("waits") : DescribeAnswer(answer(o));
      });
}

Mismatch Runner::AcquireAll(const Step& step) {
  AcquireAllRequest request{.session = Id(step.session),
                            .ns = step.target.ns,
                            .principal = step.target.principal,
                            .owner = step.owner,
                            .timeout = milliseconds(step.timeout_ms),
                            .locks = {}};
  for (const auto& [resource, mode] : step.locks) {
    request.locks.push_back({resource, mode});
  }
  Result<AcquireAllOutcome> outcome = engine_.AcquireAll(Now(), request);
  auto answer = [](const AcquireAllOutcome& o) {
    return Answer{o.result.result, LockMode::kNoLock, 0, &o.result.deadlock};
  };
  return CheckResult(
      outcome, step.expect,
      [&](const AcquireAllOutcome& o) {
        if (step.expect.kind == Kind::kWaits) return o.wait.has_value();
        return !o.wait && Matches(answer(o), step.expect);
      },
      [&](const AcquireAllOutcome& o) {
        return o.wait ? std::string("waits") : DescribeAnswer(answer(o));
      });
}

Mismatch Runner::Release(const Step& step) {
  ReleaseRequest request{
      .session = Id(step.session), .key = KeyOf(step), .owner = step.owner};
  return CheckStatus(engine_.Release(Now(), request), step.expect);
}

Mismatch Runner::QueryMode(const Step& step) {
  Result<LockMode> mode =
      engine_.Mode(Now(), Id(step.session), KeyOf(step), step.owner);
  return CheckResult(
      mode, step.expect, [&](LockMode m) { return m == step.expect.mode; },
      [](LockMode m) { return std::string(ModeName(m)); });
}

Mismatch Runner::QueryCount(const Step& step) {
  std::vector<LockInfo> locks = engine_.ListLocks(Now(), step.target.ns);
  std::int64_t count = 0;
  if (const LockInfo* lock = FindLock(locks, step)) {
    for (const GrantedLockInfo& g : lock->granted) {
      if (g.session == Id(step.session) && g.owner == step.owner) {
        count = g.count;
      }
    }
  }
  Result<std::int64_t> got = count;
  return CheckResult(
      got, step.expect, [&](std::int64_t n) { return n == step.expect.number; },
      [](std::int64_t n) { return std::to_string(n); });
}

Mismatch Runner::QueryTest(const Step& step) {
  Result<bool> test =
      engine_.Test(Now(), Id(step.session), KeyOf(step), step.mode, step.owner);
  return CheckResult(
      test, step.expect, [&](bool b) { return b == step.expect.flag; },
      [](bool b) { return std::string(b ? "true" : "false"); });
}

// cancel, waiting, locks: about the session as a whole.
Mismatch Runner::QuerySession(const Step& step) {
  SessionId id = Id(step.session);
  if (step.action == Action::kCancel) {
    return CheckResult(
        engine_.Cancel(Now(), id), step.expect,
        [&](bool b) { return b == step.expect.flag; },
        [](bool b) { return std::string(b ? "true" : "false"); });
  }
  Result<SessionInfo> info = engine_.GetSession(Now(), id);
  if (step.action == Action::kWaiting) {
    return CheckResult(
        info, step.expect,
        [&](const SessionInfo& s) {
          return s.waiting.has_value() == step.expect.flag;
        },
        [](const SessionInfo& s) {
          return std::string(s.waiting ? "true" : "false");
        });
  }
  return CheckResult(
      info, step.expect,
      [&](const SessionInfo& s) {
        return static_cast<std::int64_t>(s.locks) == step.expect.number;
      },
      [](const SessionInfo& s) { return std::to_string(s.locks); });
}

// A lock's queue, or else a semaphore's.
Mismatch Runner::QueryQueue(const Step& step) {
  std::vector<LockInfo> locks = engine_.ListLocks(Now(), step.target.ns);
  std::vector<SemaphoreInfo> semaphores =
      engine_.ListSemaphores(Now(), step.target.ns);
  std::vector<std::string> names;
  if (const LockInfo* lock = FindLock(locks, step)) {
    for (const WaitingLockInfo& w : lock->waiting) {
      names.push_back(NameOf(w.session));
    }
  } else if (const SemaphoreInfo* sem = FindSemaphore(semaphores, step)) {
    for (const SemaphoreWaiterInfo& w : sem->waiting) {
      names.push_back(NameOf(w.session));
    }
  }
  if (names == step.expect.names) return std::nullopt;
  return Differs(DescribeExpectation(step.expect),
                 names.empty() ? "none" : JoinNames(names, " "));
}

Mismatch Runner::CheckFinished(const Step& step) {
  SessionId id = Id(step.session);
  auto it = std::ranges::find_if(
      finished_, [&](const Finished& f) { return f.wait.session == id; });
  if (it == finished_.end()) {
    Result<SessionInfo> info = engine_.GetSession(Now(), id);
    std::string state = !info           ? "the session is gone"
                        : info->waiting ? "it is still waiting"
                                        : "it is not waiting";
    return Differs(step.session + "'s wait finishes with " +
                       DescribeExpectation(step.expect),
                   "no wait of " + step.session + " finished (" + state + ")");
  }
  FinishedWait wait = std::move(it->wait);
  finished_.erase(it);
  Answer answer = AnswerOf(wait);
  if (Matches(answer, step.expect)) return std::nullopt;
  return Differs(DescribeExpectation(step.expect), DescribeAnswer(answer));
}

// ---------------------------------------------------------------------------
// Semaphore steps

Mismatch Runner::Take(const Step& step) {
  SemaphoreRequest request{.session = Id(step.session),
                           .key = KeyOf(step),
                           .permits = static_cast<std::uint32_t>(step.permits),
                           .limit = static_cast<std::uint32_t>(step.limit),
                           .owner = step.owner,
                           .timeout = milliseconds(step.timeout_ms)};
  Result<AcquireOutcome> outcome = engine_.AcquireSemaphore(Now(), request);
  if (outcome && outcome->wait) semaphore_waits_.insert(*outcome->wait);
  auto answer = [](const AcquireOutcome& o) {
    return Answer{o.result, o.held, o.count, &o.deadlock, true};
  };
  return CheckResult(
      outcome, step.expect,
      [&](const AcquireOutcome& o) {
        if (step.expect.kind == Kind::kWaits) return o.wait.has_value();
        return !o.wait && Matches(answer(o), step.expect);
      },
      [&](const AcquireOutcome& o) {
        return o.wait ? std::string("waits") : DescribeAnswer(answer(o));
      });
}

// `-> ok` accepts any permits left; `-> N` checks them.
Mismatch Runner::Give(const Step& step) {
  SemaphoreReleaseRequest request{
      .session = Id(step.session),
      .key = KeyOf(step),
      .owner = step.owner,
      .permits = static_cast<std::uint32_t>(step.permits)};
  Result<std::uint32_t> left = engine_.ReleaseSemaphore(Now(), request);
  return CheckResult(
      left, step.expect,
      [&](std::uint32_t n) {
        return step.expect.kind == Kind::kOk || n == step.expect.number;
      },
      [](std::uint32_t n) { return std::to_string(n); });
}

Mismatch Runner::QueryPermits(const Step& step) {
  std::vector<SemaphoreInfo> semaphores =
      engine_.ListSemaphores(Now(), step.target.ns);
  std::int64_t permits = 0;
  if (const SemaphoreInfo* sem = FindSemaphore(semaphores, step)) {
    for (const SemaphoreHolderInfo& h : sem->holders) {
      if (h.session == Id(step.session) && h.owner == step.owner) {
        permits = h.permits;
      }
    }
  }
  if (permits == step.expect.number) return std::nullopt;
  return Differs(DescribeExpectation(step.expect), std::to_string(permits));
}

// All holders' permits; those a lock-delay holds back are not held.
Mismatch Runner::QueryHeld(const Step& step) {
  std::vector<SemaphoreInfo> semaphores =
      engine_.ListSemaphores(Now(), step.target.ns);
  const SemaphoreInfo* sem = FindSemaphore(semaphores, step);
  const std::int64_t held = sem == nullptr ? 0 : sem->held;
  if (held == step.expect.number) return std::nullopt;
  return Differs(DescribeExpectation(step.expect), std::to_string(held));
}

// A lock's delay, or else a semaphore's with the permits it holds back.
Mismatch Runner::QueryDelay(const Step& step) {
  std::vector<LockInfo> locks = engine_.ListLocks(Now(), step.target.ns);
  std::vector<SemaphoreInfo> semaphores =
      engine_.ListSemaphores(Now(), step.target.ns);
  Expectation got;
  got.kind = Kind::kDelay;
  std::optional<Time> until;
  if (const LockInfo* lock = FindLock(locks, step)) {
    until = lock->lock_delay_until;
  } else if (const SemaphoreInfo* sem = FindSemaphore(semaphores, step)) {
    until = sem->lock_delay_until;
    if (until) got.permits = sem->lock_delay_permits;
  }
  if (until) got.until_ms = MsOf(*until);
  const Expectation& e = step.expect;
  // permits= is checked only when the scenario gives it.
  const bool matches =
      got.until_ms == e.until_ms && (!e.permits || e.permits == got.permits);
  if (matches) return std::nullopt;
  return Differs(DescribeExpectation(e), DescribeExpectation(got));
}

}  // namespace

Time ScenarioStart() {
  using namespace std::chrono;
  return Time(sys_days{year{2026} / January / 1});
}

std::optional<ScenarioFailure> RunScenario(const Scenario& scenario) {
  return Runner().Run(scenario);
}

}  // namespace leasehold::scenarios
