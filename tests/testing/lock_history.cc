// Recording a history, and the words violations are written in.
#include "tests/testing/lock_history.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>

#include "tests/testing/lock_history_modes.h"

namespace leasehold::testing {
namespace {

Operation Timed(OperationKind kind, Instant invoke, Instant complete,
                Outcome outcome) {
  Operation op;
  op.kind = kind;
  op.invoke = invoke;
  op.complete = complete;
  op.outcome = outcome;
  return op;
}

std::string OutcomeWords(const Operation& op) {
  switch (op.outcome) {
    case Outcome::kOk:
      switch (op.kind) {
        case OperationKind::kAcquire:
          return "granted fence " + std::to_string(op.fence);
        case OperationKind::kKeepAlive:
          return "renewed";
        case OperationKind::kWrite:
          return "acknowledged";
        default:
          return "ok";
      }
    case Outcome::kRefused:
      return "refused";
    case Outcome::kUnknown:
      return "unknown";
    case Outcome::kSessionLost:
      return "session lost";
    case Outcome::kLocksLost:
      return "renewed, locks lost";
  }
  return "?";
}

std::string Quoted(const std::optional<std::string>& value) {
  return value ? "\"" + *value + "\"" : "no record";
}

}  // namespace

Operation Acquire(std::string session, std::string resource, LockMode mode,
                  Instant invoke, Instant complete, Outcome outcome,
                  Fence fence) {
  Operation op = Timed(OperationKind::kAcquire, invoke, complete, outcome);
  op.session = std::move(session);
  op.name = std::move(resource);
  op.mode = mode;
  op.fence = fence;
  return op;
}

Operation Release(std::string session, std::string resource, Instant invoke,
                  Instant complete, Outcome outcome) {
  Operation op = Timed(OperationKind::kRelease, invoke, complete, outcome);
  op.session = std::move(session);
  op.name = std::move(resource);
  return op;
}

Operation KeepAlive(std::string session, Instant invoke, Instant complete,
                    Outcome outcome, std::chrono::nanoseconds ttl) {
  Operation op = Timed(OperationKind::kKeepAlive, invoke, complete, outcome);
  op.session = std::move(session);
  op.ttl = ttl;
  return op;
}

Operation EndSession(std::string session, Instant invoke, Instant complete,
                     Outcome outcome) {
  Operation op = Timed(OperationKind::kEndSession, invoke, complete, outcome);
  op.session = std::move(session);
  return op;
}

Operation Write(std::string key, std::string value, Instant invoke,
                Instant complete, Outcome outcome) {
  Operation op = Timed(OperationKind::kWrite, invoke, complete, outcome);
  op.name = std::move(key);
  op.value = std::move(value);
  return op;
}

Operation Read(std::string key, std::optional<std::string> value,
               Instant invoke, Instant complete) {
  Operation op = Timed(OperationKind::kRead, invoke, complete, Outcome::kOk);
  op.name = std::move(key);
  op.value = std::move(value);
  return op;
}

Operation Probe(std::string session, std::string resource, LockMode seen,
                Instant invoke, Instant complete) {
  Operation op = Timed(OperationKind::kProbe, invoke, complete, Outcome::kOk);
  op.session = std::move(session);
  op.name = std::move(resource);
  op.mode = seen;
  return op;
}

void HistoryRecorder::Add(Operation op) {
  std::lock_guard lock(mutex_);
  history_.push_back(std::move(op));
}

std::size_t HistoryRecorder::size() const {
  std::lock_guard lock(mutex_);
  return history_.size();
}

History HistoryRecorder::Snapshot() const {
  std::lock_guard lock(mutex_);
  return history_;
}

std::string HistorySummary::ToString() const {
  return std::to_string(operations) +
         " operations: " + std::to_string(acquires) + " acquires (" +
         std::to_string(grants) + " granted, " + std::to_string(refusals) +
         " refused), " + std::to_string(releases) + " releases, " +
         std::to_string(writes) + " writes (" +
         std::to_string(writes_acknowledged) + " acknowledged), " +
         std::to_string(reads) + " reads, " + std::to_string(probes) +
         " probes; " + std::to_string(unknowns) + " unknown outcomes; " +
         std::to_string(sessions) + " sessions, " +
         std::to_string(sessions_lost) + " lost, " +
         std::to_string(locks_lost) + " told their locks were lost";
}

HistorySummary Summarize(const History& history) {
  HistorySummary s;
  std::set<std::string> sessions, lost;
  s.operations = history.size();
  for (const Operation& op : history) {
    if (!op.session.empty()) sessions.insert(op.session);
    if (op.outcome == Outcome::kUnknown) ++s.unknowns;
    if (op.outcome == Outcome::kSessionLost) lost.insert(op.session);
    if (op.outcome == Outcome::kLocksLost) ++s.locks_lost;
    switch (op.kind) {
      case OperationKind::kAcquire:
        ++s.acquires;
        if (op.outcome == Outcome::kOk) ++s.grants;
        if (op.outcome == Outcome::kRefused) ++s.refusals;
        break;
      case OperationKind::kRelease:
        ++s.releases;
        break;
      case OperationKind::kWrite:
        ++s.writes;
        if (op.outcome == Outcome::kOk) ++s.writes_acknowledged;
        break;
      case OperationKind::kRead:
        ++s.reads;
        break;
      case OperationKind::kProbe:
        ++s.probes;
        break;
      default:
        break;
    }
  }
  s.sessions = sessions.size();
  s.sessions_lost = lost.size();
  return s;
}

HistoryDescriber::HistoryDescriber(const History& history)
    : history_(history), origin_(Instant::max()) {
  for (const Operation& op : history) origin_ = std::min(origin_, op.invoke);
  if (history.empty()) origin_ = Instant{};
}

std::string HistoryDescriber::At(Instant moment) const {
  if (moment == Instant::max()) return "the end of the history";
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(moment - origin_)
          .count();
  char text[48];
  std::snprintf(text, sizeof text, "t%c%.6fs", ns < 0 ? '-' : '+',
                static_cast<double>(ns < 0 ? -ns : ns) / 1e9);
  return text;
}

std::string HistoryDescriber::Span(std::chrono::nanoseconds span) {
  char text[48];
  std::snprintf(text, sizeof text, "%.3fus",
                static_cast<double>(span.count()) / 1e3);
  return text;
}

std::string HistoryDescriber::Op(std::size_t index) const {
  const Operation& op = history_[index];
  const std::string when = "[" + At(op.invoke) + ".." + At(op.complete) + "]";
  std::string what;
  switch (op.kind) {
    case OperationKind::kAcquire:
      what = "acquire " + op.session + " " + op.name + " " +
             std::string(ModeName(op.mode));
      break;
    case OperationKind::kRelease:
      what = "release " + op.session + " " + op.name;
      break;
    case OperationKind::kKeepAlive:
      what = "keep-alive " + op.session;
      break;
    case OperationKind::kEndSession:
      what = "end session " + op.session;
      break;
    case OperationKind::kWrite:
      what = "write " + op.name + " = " + Quoted(op.value);
      break;
    case OperationKind::kRead:
      return "#" + std::to_string(index) + " read " + op.name + " " + when +
             " saw " + Quoted(op.value);
    case OperationKind::kProbe:
      return "#" + std::to_string(index) + " probe " + op.session + " " +
             op.name + " " + when + " saw " + std::string(ModeName(op.mode));
  }
  return "#" + std::to_string(index) + " " + what + " " + when + " " +
         OutcomeWords(op);
}

}  // namespace leasehold::testing
