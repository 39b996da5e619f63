// POST /v1/applocks/{ns}/acquire-all: several locks taken in one canonical
// order, all or nothing, within one timeout (docs/lock-manager.md, "Ordered
// multi-lock"). The engine does the ordering, the waiting and the undoing
// (Engine::AcquireAll); this reads the body and writes the answer.
#include <chrono>
#include <memory>

#include "server/fault_point.h"
#include "server/handlers.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

// The body, with the names the engine's request points into.
struct AcquireAllBody {
  SessionId session = 0;
  std::string ns;
  std::string principal = "public";
  LockOwner owner = LockOwner::kTransaction;
  milliseconds timeout = kWaitForever;
  std::vector<std::pair<std::string, LockMode>> locks;  // as listed
  milliseconds max_hold{0};

  AcquireAllRequest Request() const {
    AcquireAllRequest r{session, ns, principal, owner, timeout, {}, max_hold};
    r.locks.reserve(locks.size());
    for (const auto& [resource, mode] : locks)
      r.locks.push_back({resource, mode});
    return r;
  }
};

Status Bad(StatusCode code, std::string message) {
  return Status(code, std::move(message));
}

Result<std::vector<std::pair<std::string, LockMode>>> ParseLocks(
    const Fields& f) {
  auto raw = f.Raw(wire::kLocks);
  if (!raw || !raw->is_array() || raw->as_array().empty()) {
    return std::unexpected(
        Bad(StatusCode::kBadRequest,
            "locks must be a non-empty array of "
            "{\"resource\": \"...\", \"mode\": \"Exclusive\"}"));
  }
  const json::array& items = raw->as_array();
  // Before reading the items: the engine refuses as many, and a body this
  // long is not worth reading.
  if (items.size() > kMaxLocksPerAcquireAll) {
    return std::unexpected(
        Bad(StatusCode::kBadRequest,
            "at most " + std::to_string(kMaxLocksPerAcquireAll) +
                " locks per call; got " + std::to_string(items.size())));
  }
  std::vector<std::pair<std::string, LockMode>> out;
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string where = "locks[" + std::to_string(i) + "]";
    if (!items[i].is_object()) {
      return std::unexpected(Bad(StatusCode::kBadRequest,
                                 where + " must be an object with resource "
                                         "and mode"));
    }
    const Fields item(items[i].as_object());
    auto resource = item.RequiredString(wire::kResource);
    if (!resource) {
      return std::unexpected(Bad(resource.error().code(),
                                 where + ": " + resource.error().message()));
    }
    if (Status st = ValidateName(*resource, "resource"); !st.ok()) {
      return std::unexpected(Bad(st.code(), where + ": " + st.message()));
    }
    auto mode_text = item.OptionalString(wire::kMode);
    if (!mode_text || !*mode_text) {
      return std::unexpected(
          Bad(StatusCode::kBadMode, where + ": mode is required"));
    }
    auto mode = ParseLockMode(**mode_text);
    if (!mode) {
      return std::unexpected(
          Bad(mode.error().code(), where + ": " + mode.error().message()));
    }
    out.emplace_back(std::move(*resource), *mode);
  }
  return out;
}

Result<AcquireAllBody> ParseBody(const json::object& body,
                                 const std::string& ns) {
  if (Status st = ValidateName(ns, "namespace"); !st.ok()) {
    return std::unexpected(st);
  }
  const Fields f(body);
  AcquireAllBody r;
  r.ns = ns;
  auto session = SessionField(f);
  if (!session) return std::unexpected(session.error());
  r.session = *session;
  auto principal = f.OptionalString(wire::kPrincipal);
  if (!principal) return std::unexpected(principal.error());
  if (*principal) r.principal = PrincipalScope(**principal);
  if (Status st = ValidateName(r.principal, "principal"); !st.ok()) {
    return std::unexpected(st);
  }
  auto owner = f.OptionalString(wire::kOwner);
  if (!owner) {
    return std::unexpected(
        Bad(StatusCode::kBadOwner, "owner must be Transaction or Session"));
  }
  if (*owner) {
    auto parsed = ParseLockOwner(**owner);
    if (!parsed) return std::unexpected(parsed.error());
    r.owner = *parsed;
  }
  auto timeout = f.OptionalInt(wire::kTimeoutMs);
  if (!timeout || timeout->value_or(-1) < -1) {
    return std::unexpected(Bad(StatusCode::kBadTimeout,
                               "timeout_ms must be -1 (wait without limit), 0 "
                               "(do not wait) or a positive number of ms"));
  }
  r.timeout = milliseconds(timeout->value_or(-1));
  auto max_hold = MaxHoldFrom(f);
  if (!max_hold) return std::unexpected(max_hold.error());
  r.max_hold = *max_hold;
  auto locks = ParseLocks(f);
  if (!locks) return std::unexpected(locks.error());
  r.locks = std::move(*locks);
  return r;
}

ApiResponse Answer(const AcquireAllResult& r) {
  if (!r.error.ok()) return ErrorResponse(r.error);
  if (r.result == AcquireResult::kGranted ||
      r.result == AcquireResult::kGrantedAfterWait) {
    json::array locks;
    for (const AcquiredLock& l : r.locks) {
      locks.push_back(json::object{{wire::kResource, l.resource},
                                   {wire::kMode, LockModeName(l.held)},
                                   {wire::kFence, l.fence},
                                   {wire::kCount, l.count}});
    }
    return JsonResponse(
        200, json::object{{wire::kResult, static_cast<int>(r.result)},
                          {wire::kStatus, AcquireResultName(r.result)},
                          {wire::kLocks, std::move(locks)}});
  }
  json::object o{{wire::kResult, static_cast<int>(r.result)},
                 {wire::kStatus, AcquireResultName(r.result)},
                 {wire::kResource, r.refused},
                 {wire::kReleased, r.released}};
  if (r.deadlock) o[wire::kDeadlock] = DeadlockJson(*r.deadlock);
  return JsonResponse(409, o);
}

}  // namespace

void AcquireAllLocks(Call& c, const std::string& ns) {
  auto body = ParseBody(c.body, ns);
  if (!body) return c.Fail(body.error());
  c.RunParkable<AcquireAllOutcome>(
      [body = std::move(*body)](Engine& e, Time now) {
        return e.AcquireAll(now, body.Request());
      },
      [](const AcquireAllOutcome& r) { return Answer(r.result); },
      [](const FinishedWait& done) { return Answer(*done.all); });
}

}  // namespace leasehold::server
