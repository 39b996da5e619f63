// Runner: drives one Scenario against a fresh Engine and the model of
// model.h, and checks everything harness.h lists after every step. The
// commands and how they update the model are in runner.cc; the checks made
// after each step are in runner_checks.cc. Internal to tests/property.
#ifndef LEASEHOLD_TESTS_PROPERTY_RUNNER_H_
#define LEASEHOLD_TESTS_PROPERTY_RUNNER_H_

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "engine/engine.h"
#include "tests/property/harness.h"
#include "tests/property/model.h"
#include "tests/property/ops.h"

namespace leasehold::property::internal {

class Runner {
 public:
  Runner(const Scenario& scenario, const RunOptions& options)
      : scenario_(scenario),
        options_(options),
        engine_(EngineOptions{.fence_floor = scenario.fence_floor,
                              .events = &sink_}),
        t0_(std::chrono::sys_days{std::chrono::year{2026} /
                                  std::chrono::January / 1}),
        now_(t0_),
        applied_(t0_),
        step_time_(t0_),
        slots_(static_cast<std::size_t>(scenario.sessions)) {}

  RunStats& stats() { return stats_; }

  // Runs the scenario. Returns the first violation, empty if none.
  std::string Run();

 private:
  // --- Driving and commands (runner.cc) -----------------------------------
  void Apply(const Op& op, const std::string& where);
  void Advance(const Op& op);
  void RunAdvanceStep(Time t);
  bool SomethingDue(Time t) const;
  bool TouchesPendingWait(const Op& op) const;
  Step NewStep(Time t);
  void Execute(const Op& op, Step& step);
  // Checks an outcome against the errors the model says apply. Returns true
  // when the command succeeded (and was expected to).
  bool Expect(const Status& status, const std::set<StatusCode>& allowed,
              const char* what);
  template <typename T>
  bool Expect(const Result<T>& result, const std::set<StatusCode>& allowed,
              const char* what) {
    return Expect(result ? Status() : result.error(), allowed, what);
  }
  void ExecAcquire(const Op& op, Step& step);
  void ExecRelease(const Op& op, Step& step);
  void ExecBegin(const Op& op, Step& step);
  void ExecEndTransaction(const Op& op, Step& step);
  void ExecCancel(const Op& op, Step& step);
  WaitId CancelTarget(const Op& op) const;
  void ExecCancelWait(const Op& op, Step& step);
  void ExecEndSession(const Op& op, Step& step);
  void ExecOpenSession(const Op& op, Step& step);
  void ExecKeepAlive(const Op& op, Step& step);
  void ExecSetPriority(const Op& op, Step& step);
  void ExecTest(const Op& op, Step& step);
  void ExecMode(const Op& op, Step& step);
  // The wait-for graph as it was when the acquirer's request was queued.
  void BuildHypothetical(Step& step, const PendingWait& w, LockMode target);

  // --- After every step (runner_checks.cc) --------------------------------
  // A victim is named with a real cycle through the session whose request
  // closed it, and is the cycle's lowest priority, the closer on a tie.
  void CheckDeadlockReport(const DeadlockReport& report, const Step& step);
  int PriorityOf(SessionId id) const;
  void FinishStep(Step& step);
  void ApplyFinished(const FinishedWait& fw, Step& step,
                     std::vector<Fence>& fences);
  void Expire(SessionId id);
  void CompareEntries(const std::vector<LockInfo>& locks);
  void CompareWaits(const std::vector<LockInfo>& locks);
  // Relaxed FIFO: a request granted after a wait (not a conversion) must
  // not have passed a conflicting request queued ahead of it that is still
  // waiting, since that one was ahead the whole time.
  void CheckNoQueueJumping(const std::vector<FinishedWait>& finished);
  // `wait_fences`: grants reported by FinishedWaits, in their order.
  void CheckFences(const Step& step, const std::vector<Fence>& wait_fences);
  // The events of the step report what the results did.
  void CheckEvents(const Step& step, const std::vector<Fence>& wait_fences);
  void CompareSessions(const std::vector<SessionInfo>& sessions);
  void CheckNextDeadlineAndStats(const std::vector<LockInfo>& locks);
  void CheckNamespaceFilter(const Step& step,
                            const std::vector<LockInfo>& locks);

  // --- Helpers ------------------------------------------------------------
  ModelSession& slot(const Op& op) {
    return slots_[static_cast<std::size_t>(op.slot)];
  }
  const ModelSession& slot(const Op& op) const {
    return slots_[static_cast<std::size_t>(op.slot)];
  }
  const ModelSession& SessionById(SessionId id) const {
    return slots_[static_cast<std::size_t>(slot_of_.at(id))];
  }
  static bool AliveNow(const ModelSession& s, const Step& step) {
    return s.alive && !step.expired.contains(s.id);
  }
  static Key KeyOf(const Op& op) {
    return Key{std::string(kNamespaces[static_cast<std::size_t>(op.ns)]),
               std::string(kPrincipals[static_cast<std::size_t>(op.principal)]),
               std::string(kResources[static_cast<std::size_t>(op.resource)])};
  }
  static LockKey LockKeyOf(const Op& op) {
    return LockKey{
        .ns = kNamespaces[static_cast<std::size_t>(op.ns)],
        .principal = kPrincipals[static_cast<std::size_t>(op.principal)],
        .resource = kResources[static_cast<std::size_t>(op.resource)]};
  }
  const Entry* FindEntry(const EntryId& id) const {
    auto it = entries_.find(id);
    return it == entries_.end() ? nullptr : &it->second;
  }
  bool SessionHolds(SessionId session, const Key& key) const {
    return entries_.contains(EntryId{session, LockOwner::kTransaction, key}) ||
           entries_.contains(EntryId{session, LockOwner::kSession, key});
  }
  const LockInfo* SnapshotFind(const Key& key) const {
    for (const LockInfo& info : snapshot_) {
      if (std::tie(info.ns, info.principal, info.resource) == key) {
        return &info;
      }
    }
    return nullptr;
  }
  long long MsSinceStart(Time t) const {
    return std::chrono::duration_cast<milliseconds>(t - t0_).count();
  }

  const Scenario& scenario_;
  const RunOptions& options_;
  RecordingSink sink_;  // outlives engine_
  Engine engine_;
  const Time t0_;
  Time now_;        // the test's clock; ahead of applied_ after a lazy advance
  Time applied_;    // the last instant the engine was told about
  Time step_time_;  // of the step being checked, for messages
  std::vector<ModelSession> slots_;
  std::map<SessionId, int> slot_of_;  // every session ever opened
  std::vector<int> generation_ = std::vector<int>(8, 0);
  std::map<EntryId, Entry> entries_;
  std::map<WaitId, PendingWait> waits_;
  std::set<WaitId> finished_;
  std::set<TransactionId> txn_ids_;
  std::uint64_t next_seq_ = 1;
  Fence max_fence_ = 0;
  std::size_t grants_seen_ = 0;
  std::vector<LockInfo> snapshot_;  // ListLocks after the previous step
  std::string where_;
  std::string current_;
  RunStats stats_;
};

}  // namespace leasehold::property::internal

#endif  // LEASEHOLD_TESTS_PROPERTY_RUNNER_H_
