// What a lock's and a semaphore's answers share, written once: the acquire
// answer and a holder or waiter in a listing differ only in what is held (a
// lock's mode and re-entrant count, a semaphore's permits).
#include "server/handlers.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;

// What is held or wanted, in the place the answers have always had it.
void AddHeld(AnswerText& o, Holding kind, LockMode mode, std::uint32_t count) {
  if (kind == Holding::kSemaphore) {
    o.Uint(wire::kPermits, count);
  } else {
    o.String(wire::kMode, LockModeName(mode)).Uint(wire::kCount, count);
  }
}
void AddHeld(json::object& o, const GrantedLockInfo& g) {
  o[wire::kMode] = LockModeName(g.mode);
  o[wire::kCount] = g.count;
}
void AddHeld(json::object& o, const SemaphoreHolderInfo& h) {
  o[wire::kPermits] = h.permits;
}
void AddHeld(json::object& o, const WaitingLockInfo& w) {
  o[wire::kMode] = LockModeName(w.requested);
}
void AddHeld(json::object& o, const SemaphoreWaiterInfo& w) {
  o[wire::kPermits] = w.permits;
}

// Who holds or waits: "session", "session_name", "owner".
template <typename Info>
json::object WhoJson(const Info& i) {
  return json::object{{wire::kSession, SessionIdText(i.session)},
                      {wire::kSessionName, i.session_name},
                      {wire::kOwner, LockOwnerName(i.owner)}};
}

template <typename Holder>
json::object AnyHolderJson(const Holder& h) {
  json::object o = WhoJson(h);
  AddHeld(o, h);
  o[wire::kSince] = TimeJson(h.since);
  o[wire::kFence] = h.fence;
  o[wire::kHoldUntil] = TimeJson(h.hold_until);
  return o;
}

template <typename Waiter>
json::object AnyWaiterJson(const Waiter& w) {
  json::object o = WhoJson(w);
  AddHeld(o, w);
  o[wire::kConversion] = w.conversion;
  o[wire::kSince] = TimeJson(w.since);
  o[wire::kDeadline] = TimeJson(w.deadline);
  return o;
}

}  // namespace

ApiResponse AcquireAnswer(Holding kind, AcquireResult result, Fence fence,
                          LockMode mode, std::uint32_t count,
                          const std::optional<DeadlockReport>& deadlock) {
  AnswerText o;
  o.Int(wire::kResult, static_cast<int>(result))
      .String(wire::kStatus, AcquireResultName(result));
  const bool granted = result == AcquireResult::kGranted ||
                       result == AcquireResult::kGrantedAfterWait;
  if (granted) AddHeld(o.Uint(wire::kFence, fence), kind, mode, count);
  if (deadlock) o.Value(wire::kDeadlock, DeadlockJson(*deadlock));
  return JsonResponse(granted ? 200 : 409, std::move(o));
}

Result<std::chrono::milliseconds> MaxHoldFrom(const Fields& f) {
  auto ms = f.OptionalInt(wire::kMaxHoldMs);
  if (!ms) {
    return Error(StatusCode::kBadRequest,
                 "max_hold_ms must be an integer (milliseconds; leave it out "
                 "for the namespace's limit)");
  }
  return std::chrono::milliseconds(ms->value_or(0));
}

ApiResponse BreakAnswer(Holding kind, const std::vector<BrokenHold>& taken) {
  json::array out;
  for (const BrokenHold& b : taken) {
    json::object o{{wire::kOwner, LockOwnerName(b.owner)}};
    if (kind == Holding::kSemaphore) {
      o[wire::kPermits] = b.count;
    } else {
      o[wire::kMode] = LockModeName(b.mode);
      o[wire::kCount] = b.count;
    }
    o[wire::kFence] = b.fence;
    out.push_back(std::move(o));
  }
  return JsonResponse(200, json::object{{wire::kTaken, std::move(out)}});
}

json::object LostJson(const LostHold& l) {
  return json::object{{wire::kNs, l.ns},
                      {wire::kPrincipal, l.principal},
                      {wire::kResource, l.resource},
                      {wire::kKind, l.semaphore ? "semaphore" : "applock"},
                      {wire::kOwner, LockOwnerName(l.owner)},
                      {wire::kReason, LostReasonName(l.reason)},
                      {wire::kAt, TimeJson(l.at)}};
}

json::object HolderJson(const GrantedLockInfo& g) { return AnyHolderJson(g); }
json::object HolderJson(const SemaphoreHolderInfo& h) {
  return AnyHolderJson(h);
}
json::object WaiterJson(const WaitingLockInfo& w) { return AnyWaiterJson(w); }
json::object WaiterJson(const SemaphoreWaiterInfo& w) {
  return AnyWaiterJson(w);
}

}  // namespace leasehold::server
