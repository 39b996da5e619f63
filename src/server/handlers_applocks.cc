// Application locks (docs/api.md, "Application locks").
#include <memory>

#include "server/fault_point.h"
#include "server/handlers.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

// The parts of a lock request shared by acquire, release, mode and test,
// from a body (`fields`) or a query string (`query`).
struct LockArgs : HolderArgs {
  std::string resource;
};

Result<LockArgs> ArgsFromBody(const Fields& f) {
  auto holder = HolderArgsFromBody(f);
  if (!holder) return std::unexpected(holder.error());
  LockArgs a{*holder, {}};
  auto resource = f.RequiredString(wire::kResource);
  if (!resource) return std::unexpected(resource.error());
  a.resource = std::move(*resource);
  return a;
}

Result<LockArgs> ArgsFromQuery(const Call& c) {
  LockArgs a;
  a.session = ParseSessionId(c.Query(wire::kSession));
  a.resource = c.Query(wire::kResource);
  if (const std::string p = c.Query(wire::kPrincipal); !p.empty()) {
    a.principal = PrincipalScope(p);
  }
  if (c.query.contains(wire::kOwner)) {
    auto parsed = ParseLockOwner(c.Query(wire::kOwner));
    if (!parsed) return std::unexpected(parsed.error());
    a.owner = *parsed;
  }
  return a;
}

// One lock in GET /v1/applocks/{ns} and /v1/applocks/{ns}/{resource}.
json::object LockJson(const LockInfo& l) {
  json::array granted, waiting;
  for (const auto& g : l.granted) granted.push_back(HolderJson(g));
  for (const auto& w : l.waiting) waiting.push_back(WaiterJson(w));
  return json::object{{wire::kResource, l.resource},
                      {wire::kPrincipal, l.principal},
                      {wire::kGranted, granted},
                      {wire::kWaiting, waiting},
                      {wire::kLockDelayUntil, TimeJson(l.lock_delay_until)}};
}

Result<LockMode> ModeField(std::optional<std::string> text) {
  if (!text) return Error(StatusCode::kBadMode, "mode is required");
  return ParseLockMode(*text);
}

}  // namespace

Result<HolderArgs> HolderArgsFromBody(const Fields& f) {
  HolderArgs a;
  auto session = SessionField(f);
  if (!session) return std::unexpected(session.error());
  a.session = *session;
  auto principal = f.OptionalString(wire::kPrincipal);
  if (!principal) return std::unexpected(principal.error());
  if (*principal) a.principal = PrincipalScope(**principal);
  auto owner = f.OptionalString(wire::kOwner);
  if (!owner) {
    return Error(StatusCode::kBadOwner, "owner must be Transaction or Session");
  }
  if (*owner) {
    auto parsed = ParseLockOwner(**owner);
    if (!parsed) return std::unexpected(parsed.error());
    a.owner = *parsed;
  }
  return a;
}

boost::json::object DeadlockJson(const DeadlockReport& d) {
  json::array cycle;
  for (const WaitForEdge& e : d.cycle) {
    cycle.push_back(json::object{{wire::kWaiter, SessionIdText(e.waiter)},
                                 {wire::kWaiterName, e.waiter_name},
                                 {wire::kHolder, SessionIdText(e.holder)},
                                 {wire::kHolderName, e.holder_name},
                                 {wire::kNs, e.ns},
                                 {wire::kPrincipal, e.principal},
                                 {wire::kResource, e.resource},
                                 {wire::kWanted, LockModeName(e.wanted)}});
    // A semaphore's edge: how many permits the waiter wants there.
    if (e.permits != 0) cycle.back().as_object()[wire::kPermits] = e.permits;
  }
  return json::object{{wire::kVictim, SessionIdText(d.victim)},
                      {wire::kCycle, cycle}};
}

void AcquireLock(Call& c, const std::string& ns) {
  const Fields f(c.body);
  auto args = ArgsFromBody(f);
  if (!args) return c.Fail(args.error());
  auto mode_text = f.OptionalString(wire::kMode);
  if (!mode_text)
    return c.Fail(Status(StatusCode::kBadMode, "mode must be a string"));
  auto mode = ModeField(*mode_text);
  if (!mode) return c.Fail(mode.error());
  auto timeout = f.OptionalInt(wire::kTimeoutMs);
  if (!timeout) {
    return c.Fail(
        Status(StatusCode::kBadTimeout, "timeout_ms must be an integer"));
  }
  auto max_hold = MaxHoldFrom(f);
  if (!max_hold) return c.Fail(max_hold.error());
  c.RunParkable<AcquireOutcome>(
      [ns, a = *args, mode = *mode,
       timeout = milliseconds(timeout->value_or(-1)),
       max_hold = *max_hold](Engine& e, Time now) {
        return e.Acquire(now, {a.session,
                               {ns, a.principal, a.resource},
                               mode,
                               a.owner,
                               timeout,
                               max_hold});
      },
      [](const AcquireOutcome& r) {
        return AcquireAnswer(Holding::kLock, r.result, r.fence, r.held, r.count,
                             r.deadlock);
      },
      [](const FinishedWait& done) {
        return AcquireAnswer(Holding::kLock, done.result, done.fence, done.held,
                             done.count, done.deadlock);
      });
}

void ReleaseLock(Call& c, const std::string& ns) {
  auto args = ArgsFromBody(Fields(c.body));
  if (!args) return c.Fail(args.error());
  c.Run<Status>(
      [ns, a = *args](Engine& e, Time now) {
        return e.Release(now,
                         {a.session, {ns, a.principal, a.resource}, a.owner});
      },
      [](Status& st) {
        if (!st.ok()) return ErrorResponse(st);
        return JsonResponse(200, std::move(AnswerText().Int(wire::kResult, 0)));
      });
}

void LockModeOf(Call& c, const std::string& ns) {
  auto args = ArgsFromQuery(c);
  if (!args) return c.Fail(args.error());
  c.Run<Result<LockMode>>(
      [ns, a = *args](Engine& e, Time now) {
        return e.Mode(now, a.session, {ns, a.principal, a.resource}, a.owner);
      },
      [](Result<LockMode>& r) {
        return r ? JsonResponse(200,
                                json::object{{wire::kMode, LockModeName(*r)}})
                 : ErrorResponse(r.error());
      });
}

void TestLock(Call& c, const std::string& ns) {
  auto args = ArgsFromQuery(c);
  if (!args) return c.Fail(args.error());
  auto mode = ModeField(c.query.contains(wire::kMode)
                            ? std::optional<std::string>(c.Query(wire::kMode))
                            : std::nullopt);
  if (!mode) return c.Fail(mode.error());
  c.Run<Result<bool>>(
      [ns, a = *args, m = *mode](Engine& e, Time now) {
        return e.Test(now, a.session, {ns, a.principal, a.resource}, m,
                      a.owner);
      },
      [](Result<bool>& r) {
        return r ? JsonResponse(200, json::object{{wire::kGrantable, *r}})
                 : ErrorResponse(r.error());
      });
}

void BreakLock(Call& c, const std::string& ns) {
  auto args = ArgsFromBody(Fields(c.body));
  if (!args) return c.Fail(args.error());
  c.Run<Result<std::vector<BrokenHold>>>(
      [ns, a = *args](Engine& e, Time now) {
        return e.BreakLock(now, a.session, {ns, a.principal, a.resource});
      },
      [](Result<std::vector<BrokenHold>>& r) {
        return r ? BreakAnswer(Holding::kLock, *r) : ErrorResponse(r.error());
      });
}

void GetLock(Call& c, const std::string& ns, const std::string& resource) {
  if (Status st = ValidateName(ns, "namespace"); !st.ok()) return c.Fail(st);
  if (Status st = ValidateName(resource, "resource"); !st.ok()) {
    return c.Fail(st);
  }
  std::string principal = "public";
  if (const std::string p = c.Query(wire::kPrincipal); !p.empty()) {
    principal = PrincipalScope(p);
  }
  c.Run<std::optional<LockInfo>>(
      [ns, resource, principal](Engine& e, Time now) {
        return e.GetLock(now, {ns, principal, resource});
      },
      [resource](std::optional<LockInfo>& found) {
        if (found) return JsonResponse(200, LockJson(*found));
        return ErrorResponse(Status(
            StatusCode::kNotFound,
            "lock \"" + resource +
                "\" is not in use: nobody holds it, waits for it or is held "
                "back from it"));
      });
}

void ListLocks(Call& c, const std::string& ns) {
  if (Status st = ValidateName(ns, "namespace"); !st.ok()) return c.Fail(st);
  c.Run<std::vector<LockInfo>>(
      [ns](Engine& e, Time now) { return e.ListLocks(now, ns); },
      [](std::vector<LockInfo>& locks) {
        json::array out;
        for (const LockInfo& l : locks) out.push_back(LockJson(l));
        return JsonResponse(200, json::object{{wire::kLocks, out}});
      });
}

}  // namespace leasehold::server
