#include "engine/acquire_all.h"

#include <memory>

namespace leasehold::engine {

Result<AcquireAllOutcome> AcquireAllCalls::Start(Time now,
                                                 AcquireAllCall call) {
  WaitId id = 0;
  if (!Continue(call, now, id)) {
    calls_.emplace(id, std::move(call));
    AcquireAllOutcome out;
    out.wait = id;
    return out;
  }
  if (!call.result.error.ok()) return std::unexpected(call.result.error);
  AcquireAllOutcome out;
  out.result = std::move(call.result);
  return out;
}

void AcquireAllCalls::Settle(Time now) {
  while (locks_->has_call_steps()) {
    CallStep step = locks_->TakeCallStep();
    auto it = calls_.find(step.wait);
    AcquireAllCall& call = it->second;
    WaitId same = step.wait;
    if (Took(call, step.outcome, now) && !Continue(call, now, same)) {
      continue;
    }
    FinishedWait done;
    done.wait = step.wait;
    done.session = call.session;
    done.result = call.result.result;
    done.deadlock = call.result.deadlock;
    done.all = std::make_shared<const AcquireAllResult>(std::move(call.result));
    calls_.erase(it);
    locks_->Finish(std::move(done));
  }
}

// Takes the call's locks from the next one on until one waits (false) or
// the call ends (true; call.result is then final). `id`: the call's wait
// id, 0 until its first lock waits.
bool AcquireAllCalls::Continue(AcquireAllCall& call, Time now, WaitId& id) {
  while (call.result.locks.size() < call.locks.size()) {
    const auto& [resource, mode] = call.locks[call.result.locks.size()];
    const LockKey key{call.ns, call.principal, resource};
    auto s = may_request_(call.session, key.ns, call.owner, now);
    if (!s) {
      call.result.error = s.error();
      Undo(call, now);
      return true;
    }
    WaitTerms terms{call.may_wait, call.deadline, id, /*for_call=*/true,
                    call.max_hold};
    // A name may have become a semaphore while the call waited.
    auto done = locks_->Acquire(now, *s, key, mode, call.owner, terms);
    if (!done) {
      call.result.error = done.error();
      Undo(call, now);
      return true;
    }
    id = terms.wait;
    if (done->wait) return false;
    if (!Took(call, *done, now)) return true;
  }
  call.result.result =
      call.waited ? AcquireResult::kGrantedAfterWait : AcquireResult::kGranted;
  // All or nothing on disk too: the call's locks were not journaled as
  // each was taken; they are now, in the step that answers the call.
  if (Session* s = sessions_->Find(call.session)) {
    for (const auto& l : call.result.locks) {
      locks_->JournalHeld(s, {call.ns, call.principal, l.resource}, call.owner);
    }
  }
  return true;
}

// Records the decision on the call's next lock. A refusal undoes the call
// and ends it: returns false.
bool AcquireAllCalls::Took(AcquireAllCall& call, AcquireOutcome& done,
                           Time now) {
  const std::string& resource = call.locks[call.result.locks.size()].first;
  if (done.result == AcquireResult::kGranted ||
      done.result == AcquireResult::kGrantedAfterWait) {
    call.waited =
        call.waited || done.result == AcquireResult::kGrantedAfterWait;
    call.result.locks.push_back({resource, done.held, done.fence, done.count});
    return true;
  }
  call.result.result = done.result;
  call.result.refused = resource;
  call.result.released = call.result.locks.size();
  call.result.deadlock = std::move(done.deadlock);
  Undo(call, now);
  return false;
}

// Drops, newest first, the reference the call took on each lock. One that
// is gone already (the session or its transaction ended) stays gone.
void AcquireAllCalls::Undo(AcquireAllCall& call, Time now) {
  Session* s = sessions_->Find(call.session);
  for (auto it = call.result.locks.rbegin();
       s != nullptr && it != call.result.locks.rend(); ++it) {
    locks_->ReleaseIfHeld(now, s, {call.ns, call.principal, it->resource},
                          call.owner);
  }
  call.result.locks.clear();
}

}  // namespace leasehold::engine
