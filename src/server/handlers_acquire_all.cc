// POST /v1/applocks/{ns}/acquire-all: several locks taken in one canonical
// order, all or nothing, within one timeout (docs/lock-manager.md, "Ordered
// multi-lock").
//
// Callers that take locks in one global order can never wait for each other
// in a circle. The server does the ordering (bytewise by resource name) so
// that every client agrees on it, and undoes a partial acquisition, so that
// a refusal leaves the caller holding nothing it did not hold before.
#include <algorithm>
#include <chrono>
#include <memory>

#include "server/handlers.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// More than this in one call is almost surely a mistake, and would keep
// one connection's request going for long.
constexpr std::size_t kMaxLocksPerCall = 1000;

struct WantedLock {
  std::string resource;
  LockMode mode = LockMode::kExclusive;
};

struct GrantedLock {
  std::string resource;
  LockMode held = LockMode::kNoLock;
  Fence fence = 0;
  std::uint32_t count = 0;
};

struct AcquireAllRequest {
  SessionId session = 0;
  std::string ns;
  std::string principal = "public";
  LockOwner owner = LockOwner::kTransaction;
  milliseconds timeout = kWaitForever;
  std::vector<WantedLock> locks;  // in canonical order
};

Status Bad(StatusCode code, std::string message) {
  return Status(code, std::move(message));
}

Result<std::vector<WantedLock>> ParseLocks(const Fields& f) {
  auto raw = f.Raw("locks");
  if (!raw || !raw->is_array() || raw->as_array().empty()) {
    return std::unexpected(
        Bad(StatusCode::kBadRequest,
            "locks must be a non-empty array of "
            "{\"resource\": \"...\", \"mode\": \"Exclusive\"}"));
  }
  const json::array& items = raw->as_array();
  if (items.size() > kMaxLocksPerCall) {
    return std::unexpected(Bad(StatusCode::kBadRequest,
                               "at most " + std::to_string(kMaxLocksPerCall) +
                                   " locks per call; got " +
                                   std::to_string(items.size())));
  }
  std::vector<WantedLock> out;
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string where = "locks[" + std::to_string(i) + "]";
    if (!items[i].is_object()) {
      return std::unexpected(Bad(StatusCode::kBadRequest,
                                 where + " must be an object with resource "
                                         "and mode"));
    }
    const Fields item(items[i].as_object());
    auto resource = item.RequiredString("resource");
    if (!resource) {
      return std::unexpected(Bad(resource.error().code(),
                                 where + ": " + resource.error().message()));
    }
    if (Status st = ValidateName(*resource, "resource"); !st.ok()) {
      return std::unexpected(Bad(st.code(), where + ": " + st.message()));
    }
    auto mode_text = item.OptionalString("mode");
    if (!mode_text || !*mode_text) {
      return std::unexpected(
          Bad(StatusCode::kBadMode, where + ": mode is required"));
    }
    auto mode = ParseLockMode(**mode_text);
    if (!mode) {
      return std::unexpected(
          Bad(mode.error().code(), where + ": " + mode.error().message()));
    }
    out.push_back({std::move(*resource), *mode});
  }
  // std::string orders by unsigned bytes: the canonical order of API.md.
  std::ranges::sort(out, {}, &WantedLock::resource);
  for (std::size_t i = 1; i < out.size(); ++i) {
    if (out[i].resource == out[i - 1].resource) {
      return std::unexpected(
          Bad(StatusCode::kBadRequest,
              "resource \"" + out[i].resource +
                  "\" is listed twice; list it once with the mode you need"));
    }
  }
  return out;
}

Result<AcquireAllRequest> ParseRequest(const json::object& body,
                                       const std::string& ns) {
  if (Status st = ValidateName(ns, "namespace"); !st.ok()) {
    return std::unexpected(st);
  }
  const Fields f(body);
  AcquireAllRequest r;
  r.ns = ns;
  auto session = SessionField(f);
  if (!session) return std::unexpected(session.error());
  r.session = *session;
  auto principal = f.OptionalString("principal");
  if (!principal) return std::unexpected(principal.error());
  if (*principal) r.principal = std::move(**principal);
  if (Status st = ValidateName(r.principal, "principal"); !st.ok()) {
    return std::unexpected(st);
  }
  auto owner = f.OptionalString("owner");
  if (!owner) {
    return std::unexpected(
        Bad(StatusCode::kBadOwner, "owner must be Transaction or Session"));
  }
  if (*owner) {
    auto parsed = ParseLockOwner(**owner);
    if (!parsed) return std::unexpected(parsed.error());
    r.owner = *parsed;
  }
  auto timeout = f.OptionalInt("timeout_ms");
  if (!timeout || timeout->value_or(-1) < -1) {
    return std::unexpected(Bad(StatusCode::kBadTimeout,
                               "timeout_ms must be -1 (wait without limit), 0 "
                               "(do not wait) or a positive number of ms"));
  }
  r.timeout = milliseconds(timeout->value_or(-1));
  auto locks = ParseLocks(f);
  if (!locks) return std::unexpected(locks.error());
  r.locks = std::move(*locks);
  return r;
}

json::array GrantedJson(const std::vector<GrantedLock>& granted) {
  json::array out;
  for (const GrantedLock& g : granted) {
    out.push_back(json::object{{"resource", g.resource},
                               {"mode", LockModeName(g.held)},
                               {"fence", g.fence},
                               {"count", g.count}});
  }
  return out;
}

// One acquire-all call on its way: lock after lock, each answered by the
// engine service, then the answer (or the undoing and the refusal).
class AcquireAllRun : public std::enable_shared_from_this<AcquireAllRun> {
 public:
  AcquireAllRun(EngineService& service, AcquireAllRequest request,
                Api::Respond respond, std::function<void(WaitId)> on_parked)
      : service_(service),
        request_(std::move(request)),
        respond_(std::move(respond)),
        on_parked_(std::move(on_parked)),
        deadline_(SteadyClock::now() +
                  std::max(request_.timeout, milliseconds(0))) {}

  void Start() { RefuseConversions(); }

 private:
  // A lock the caller holds in a weaker mode would be converted, and a
  // release cannot convert it back: refuse before taking anything, so that
  // all-or-nothing stays true.
  void RefuseConversions() {
    auto self = shared_from_this();
    service_.Execute<Status>(
        [self](Engine& e, Time now) {
          const AcquireAllRequest& r = self->request_;
          for (const WantedLock& w : r.locks) {
            auto held = e.Mode(now, r.session, {r.ns, r.principal, w.resource},
                               r.owner);
            if (!held) return held.error();
            if (*held != LockMode::kNoLock && Combine(*held, w.mode) != *held) {
              return Status(
                  StatusCode::kBadRequest,
                  "session " + SessionIdText(r.session) + " holds \"" +
                      w.resource + "\" as " + std::string(LockModeName(*held)) +
                      "; acquire-all does not convert locks (a failure could "
                      "not undo it): ask for it with acquire");
            }
          }
          return Status::Ok();
        },
        [self](Result<Status> r) {
          const Status st = r ? *r : r.error();
          if (!st.ok()) return self->respond_(ErrorResponse(st));
          self->Next();
        });
  }

  // The timeout left for the next lock: one budget for the whole call.
  milliseconds Remaining() const {
    if (request_.timeout.count() <= 0) return request_.timeout;
    const auto left =
        std::chrono::ceil<milliseconds>(deadline_ - SteadyClock::now());
    return std::max(left, milliseconds(0));
  }

  void Next() {
    if (granted_.size() == request_.locks.size()) {
      const AcquireResult result =
          waited_ ? AcquireResult::kGrantedAfterWait : AcquireResult::kGranted;
      return respond_(
          JsonResponse(200, json::object{{"result", static_cast<int>(result)},
                                         {"status", AcquireResultName(result)},
                                         {"locks", GrantedJson(granted_)}}));
    }
    const WantedLock& w = request_.locks[granted_.size()];
    OwnedLockRequest req{request_.session, request_.ns, request_.principal,
                         w.resource,       w.mode,      request_.owner,
                         Remaining()};
    auto self = shared_from_this();
    service_.Acquire(
        std::move(req),
        [self](Result<AcquireOutcome> r) {
          if (!r) return self->Undo(ErrorResponse(r.error()));
          if (r->wait) {
            if (self->on_parked_) self->on_parked_(*r->wait);
            return;  // decided later, in the second callback
          }
          self->Decided(r->result, r->fence, r->held, r->count, r->deadlock);
        },
        [self](const Result<FinishedWait>& done) {
          if (!done) return self->Undo(ErrorResponse(done.error()));
          self->Decided(done->result, done->fence, done->held, done->count,
                        done->deadlock);
        });
  }

  void Decided(AcquireResult result, Fence fence, LockMode held,
               std::uint32_t count,
               const std::optional<DeadlockReport>& deadlock) {
    const WantedLock& w = request_.locks[granted_.size()];
    if (result == AcquireResult::kGranted ||
        result == AcquireResult::kGrantedAfterWait) {
      waited_ = waited_ || result == AcquireResult::kGrantedAfterWait;
      granted_.push_back({w.resource, held, fence, count});
      return Next();
    }
    json::object o{{"result", static_cast<int>(result)},
                   {"status", AcquireResultName(result)},
                   {"resource", w.resource},
                   {"released", granted_.size()}};
    if (deadlock) o["deadlock"] = DeadlockJson(*deadlock);
    Undo(JsonResponse(409, o));
  }

  // Releases, newest first, what this call was granted; then answers.
  void Undo(ApiResponse answer) {
    if (granted_.empty()) return respond_(std::move(answer));
    const std::string resource = std::move(granted_.back().resource);
    granted_.pop_back();
    auto self = shared_from_this();
    service_.Execute<Status>(
        [self, resource](Engine& e, Time now) {
          const AcquireAllRequest& r = self->request_;
          // Fails only if the session ended meanwhile, which released it.
          return e.Release(now,
                           {r.session, {r.ns, r.principal, resource}, r.owner});
        },
        [self, answer = std::move(answer)](Result<Status>) mutable {
          self->Undo(std::move(answer));
        });
  }

  EngineService& service_;
  const AcquireAllRequest request_;
  Api::Respond respond_;
  std::function<void(WaitId)> on_parked_;
  const SteadyClock::time_point deadline_;
  std::vector<GrantedLock> granted_;
  bool waited_ = false;
};

}  // namespace

void AcquireAllLocks(Call& c, const std::string& ns) {
  auto request = ParseRequest(c.body, ns);
  if (!request) return c.Fail(request.error());
  std::make_shared<AcquireAllRun>(c.service, std::move(*request), c.respond,
                                  c.on_parked)
      ->Start();
}

}  // namespace leasehold::server
