// Semaphores (docs/api.md, "Semaphores").
#include "server/fault_point.h"
#include "server/handlers.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

// An optional count field ("permits", "limit") as the engine takes it: a
// value beyond uint32 is out of every range, and says so here.
Result<std::uint32_t> CountField(const Fields& f, std::string_view name,
                                 std::optional<std::int64_t> fallback) {
  auto value = f.OptionalInt(name);
  const std::string what(name);
  if (!value)
    return Error(StatusCode::kBadRequest, what + " must be an integer");
  if (!*value) {
    if (!fallback) return Error(StatusCode::kBadRequest, what + " is required");
    *value = fallback;
  }
  if (**value < 1 || **value > kMaxSemaphoreLimit) {
    return Error(StatusCode::kBadRequest,
                 what + " must be 1.." + std::to_string(kMaxSemaphoreLimit) +
                     "; got " + std::to_string(**value));
  }
  return static_cast<std::uint32_t>(**value);
}

json::object SemaphoreJson(const SemaphoreInfo& s) {
  json::array holders, waiting;
  for (const SemaphoreHolderInfo& h : s.holders)
    holders.push_back(HolderJson(h));
  for (const SemaphoreWaiterInfo& w : s.waiting)
    waiting.push_back(WaiterJson(w));
  return json::object{{wire::kName, s.name},
                      {wire::kPrincipal, s.principal},
                      {wire::kLimit, s.limit},
                      {wire::kHeld, s.held},
                      {wire::kHolders, holders},
                      {wire::kWaiting, waiting},
                      {wire::kLockDelayUntil, TimeJson(s.lock_delay_until)},
                      {wire::kLockDelayPermits, s.lock_delay_permits}};
}

}  // namespace

void AcquireSemaphore(Call& c, const std::string& ns, const std::string& name) {
  const Fields f(c.body);
  auto holder = HolderArgsFromBody(f);
  if (!holder) return c.Fail(holder.error());
  auto limit = CountField(f, wire::kLimit, std::nullopt);
  if (!limit) return c.Fail(limit.error());
  auto permits = CountField(f, wire::kPermits, 1);
  if (!permits) return c.Fail(permits.error());
  auto timeout = f.OptionalInt(wire::kTimeoutMs);
  if (!timeout) {
    return c.Fail(
        Status(StatusCode::kBadTimeout, "timeout_ms must be an integer"));
  }
  auto max_hold = MaxHoldFrom(f);
  if (!max_hold) return c.Fail(max_hold.error());
  c.RunParkable<AcquireOutcome>(
      [ns, name, h = *holder, permits = *permits, limit = *limit,
       timeout = milliseconds(timeout->value_or(-1)),
       max_hold = *max_hold](Engine& e, Time now) {
        return e.AcquireSemaphore(now, {h.session,
                                        {ns, h.principal, name},
                                        permits,
                                        limit,
                                        h.owner,
                                        timeout,
                                        max_hold});
      },
      [](const AcquireOutcome& r) {
        return AcquireAnswer(Holding::kSemaphore, r.result, r.fence, r.held,
                             r.count, r.deadlock);
      },
      [](const FinishedWait& done) {
        return AcquireAnswer(Holding::kSemaphore, done.result, done.fence,
                             done.held, done.count, done.deadlock);
      });
}

void BreakSemaphore(Call& c, const std::string& ns, const std::string& name) {
  auto holder = HolderArgsFromBody(Fields(c.body));
  if (!holder) return c.Fail(holder.error());
  c.Run<Result<std::vector<BrokenHold>>>(
      [ns, name, h = *holder](Engine& e, Time now) {
        return e.BreakSemaphore(now, h.session, {ns, h.principal, name});
      },
      [](Result<std::vector<BrokenHold>>& r) {
        return r ? BreakAnswer(Holding::kSemaphore, *r)
                 : ErrorResponse(r.error());
      });
}

void ReleaseSemaphore(Call& c, const std::string& ns, const std::string& name) {
  const Fields f(c.body);
  auto holder = HolderArgsFromBody(f);
  if (!holder) return c.Fail(holder.error());
  auto permits = f.OptionalInt(wire::kPermits);
  if (!permits) {
    return c.Fail(Status(StatusCode::kBadRequest,
                         "permits must be an integer (leave it out for all)"));
  }
  if (*permits && (**permits < 1 || **permits > kMaxSemaphoreLimit)) {
    return c.Fail(Status(
        StatusCode::kBadRequest,
        "permits must be 1.." + std::to_string(kMaxSemaphoreLimit) +
            " (leave it out for all); got " + std::to_string(**permits)));
  }
  c.Run<Result<std::uint32_t>>(
      [ns, name, a = *holder,
       n = static_cast<std::uint32_t>(permits->value_or(0))](Engine& e,
                                                             Time now) {
        return e.ReleaseSemaphore(
            now, {a.session, {ns, a.principal, name}, a.owner, n});
      },
      [](Result<std::uint32_t>& left) {
        if (!left) return ErrorResponse(left.error());
        return JsonResponse(
            200, json::object{{wire::kResult, 0}, {wire::kPermits, *left}});
      });
}

void ListSemaphores(Call& c, const std::string& ns) {
  if (Status st = ValidateName(ns, "namespace"); !st.ok()) return c.Fail(st);
  c.Run<std::vector<SemaphoreInfo>>(
      [ns](Engine& e, Time now) { return e.ListSemaphores(now, ns); },
      [](std::vector<SemaphoreInfo>& all) {
        json::array out;
        for (const SemaphoreInfo& s : all) out.push_back(SemaphoreJson(s));
        return JsonResponse(200, json::object{{wire::kSemaphores, out}});
      });
}

void GetSemaphore(Call& c, const std::string& ns, const std::string& name) {
  if (Status st = ValidateName(ns, "namespace"); !st.ok()) return c.Fail(st);
  if (Status st = ValidateName(name, "name"); !st.ok()) return c.Fail(st);
  std::string principal = "public";
  if (const std::string p = c.Query(wire::kPrincipal); !p.empty()) {
    principal = PrincipalScope(p);
  }
  c.Run<std::optional<SemaphoreInfo>>(
      [ns, name, principal](Engine& e, Time now) {
        return e.GetSemaphore(now, {ns, principal, name});
      },
      [name](std::optional<SemaphoreInfo>& found) {
        if (found) return JsonResponse(200, SemaphoreJson(*found));
        return ErrorResponse(
            Status(StatusCode::kNotFound,
                   "semaphore \"" + name +
                       "\" is not in use: nobody holds or waits for it"));
      });
}

}  // namespace leasehold::server
