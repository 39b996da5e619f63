// The handlers behind Api: one function per endpoint, grouped by resource
// (handlers_sessions.cc, handlers_applocks.cc, handlers_acquire_all.cc,
// handlers_semaphores.cc, handlers_holdings.cc for what the last three share,
// handlers_records.cc, handlers_outbox.cc, handlers_testing.cc).
// Internal to the server.
#ifndef LEASEHOLD_SERVER_HANDLERS_H_
#define LEASEHOLD_SERVER_HANDLERS_H_

#include <map>
#include <string>
#include <vector>

#include "common/wire_names.h"
#include "server/answer_text.h"
#include "server/api.h"
#include "server/json_io.h"
#include "server/routes.h"

namespace leasehold::server {

// With authentication on, the session a request acts through and the
// principal that must have opened it. Checked inside the same engine step
// as the request's command (Call::Run, Call::RunParkable), so that nothing
// runs between the check and the act.
struct SessionOwnerCheck {
  SessionId session = 0;  // 0: nothing to check
  std::string principal;

  // OK, or kForbidden when `session` was opened by another principal. An
  // unknown session is left to the command (session_not_found); ids are
  // never reused.
  Status Check(Engine& engine, Time now) const;
};

// One request on its way through a handler.
struct Call {
  EngineService& service;
  const ApiOptions& options;
  std::vector<std::string> path;  // decoded segments ("v1", "applocks", ...)
  std::map<std::string, std::string, std::less<>> query;
  boost::json::object body;
  std::function<void(WaitId)> on_parked;
  Api::Respond respond;
  std::string method;
  std::string raw_path;
  // The authenticated caller (in `auth`, which it keeps alive across a
  // reload); null when authentication is off.
  const TokenGrant* caller = nullptr;
  // The route that serves this call; null while it is being routed.
  const Route* route = nullptr;
  const ActivityHistory* history = nullptr;  // may be null
  Metrics* metrics = nullptr;                // may be null (no /metrics)
  // The node's cluster; null on a node of its own (SQLite).
  const cluster::ClusterView* cluster = nullptr;
  std::shared_ptr<const Authenticator> auth = nullptr;  // as found
  const Api::Reload* reload = nullptr;                  // null: no config file
  SessionOwnerCheck owner_check;  // session 0 without authentication

  // The principal that opens sessions through this call ("" when off).
  std::string CallerName() const {
    return caller == nullptr ? std::string() : caller->principal;
  }
  // Whether the caller may see sessions that other principals opened.
  bool SeesAllSessions() const {
    return caller == nullptr || caller->AllNamespaces();
  }

  // Answers with `status` and a JSON value.
  void Reply(unsigned status, const boost::json::value& v) const;
  void Fail(const Status& st) const;
  // The query parameter, or "" when absent.
  std::string Query(std::string_view name) const;
  // The path segment at the route's {`name`}, decoded; "" when none.
  const std::string& Param(std::string_view name) const;

  // Runs `command` on the engine, after owner_check in the same step, and
  // answers with `render` of its result, or with the error. A kReadOnly
  // route's command only reads: during a store outage it is answered from
  // the last acknowledged state.
  template <typename R, typename F>
  void Run(F command, std::function<ApiResponse(R&)> render) const {
    service.Execute<Result<R>>(
        OwnerChecked<Result<R>>(std::move(command)),
        [respond = respond, render = std::move(render)](Result<Result<R>> r) {
          if (r && *r) return respond(render(**r));
          respond(ErrorResponse(r ? r->error() : r.error()));
        },
        route != nullptr && route->Has(kReadOnly)
            ? EngineService::Access::kRead
            : EngineService::Access::kWrite);
  }

  // `command`, run after owner_check in the same engine step; answers
  // Ret's error when the check refuses. Takes the handler's own lambda, so
  // that one callable is made per request, not two.
  template <typename Ret, typename F>
  auto OwnerChecked(F command) const {
    return [owner = owner_check, command = std::move(command)](
               Engine& e, Time now) -> Ret {
      if (Status st = owner.Check(e, now); !st.ok()) {
        return std::unexpected(std::move(st));
      }
      return command(e, now);
    };
  }

  // Runs `command`, an acquire that may park (locks, permits, a set of
  // locks: a kMayPark route), after owner_check in the same step, and
  // answers with `answer` of what the engine decided at once; when it
  // parked, tells on_parked and answers with `answer_finished` once the
  // wait ends. Defined for AcquireOutcome and AcquireAllOutcome.
  template <typename Outcome>
  void RunParkable(
      std::function<Result<Outcome>(Engine&, Time)> command,
      std::function<ApiResponse(const Outcome&)> answer,
      std::function<ApiResponse(const FinishedWait&)> answer_finished) const;
};

ApiResponse JsonResponse(unsigned status, const boost::json::value& v);
ApiResponse JsonResponse(unsigned status, AnswerText&& text);

// A session id from the API's string form (digits); 0 when malformed, which
// no session has, so it answers session_not_found.
SessionId ParseSessionId(std::string_view text);
std::string SessionIdText(SessionId id);
// The session id in a body's "session" field (string or number).
Result<SessionId> SessionField(const Fields& fields);

// handlers_operating.cc: GET /healthz; GET /metrics (404 without metrics);
// GET /v1/events when the HTTP layer has no event hub (404).
void Health(Call& c);
void ServeMetrics(Call& c);
void ClusterInfo(Call& c);
void EventsWithoutHub(Call& c);
// POST /v1/admin/reload: the caller must administer every namespace.
void ReloadConfig(Call& c);

// handlers_backup.cc: GET /v1/admin/backup (admin of every namespace).
void ServeBackup(Call& c);

// handlers_testing.cc: GET and POST /v1/testing/clock (404 without a
// manual clock).
void ReadTestingClock(Call& c);
void AdvanceTestingClock(Call& c);

void CreateSession(Call& c);
void KeepAlive(Call& c, SessionId id);
void EndSession(Call& c, SessionId id);
void ListSessions(Call& c);
void CancelSessionWait(Call& c, SessionId id);
void BeginTransaction(Call& c, SessionId id);
void EndTransaction(Call& c, SessionId id, bool commit);

// handlers_holdings.cc: what a lock's and a semaphore's answers share. A
// lock holds a mode `count` times (re-entrant), a semaphore `count` permits.
enum class Holding { kLock, kSemaphore };
// An acquire's answer: "result", "status"; when granted (200) the "fence"
// and what is held; else 409, with the "deadlock" when one was broken.
ApiResponse AcquireAnswer(Holding kind, AcquireResult result, Fence fence,
                          LockMode mode, std::uint32_t count,
                          const std::optional<DeadlockReport>& deadlock);
// A holder or a waiter in GET /v1/applocks/{ns} and /v1/semaphores/{ns}.
boost::json::object HolderJson(const GrantedLockInfo& holder);
boost::json::object HolderJson(const SemaphoreHolderInfo& holder);
boost::json::object WaiterJson(const WaitingLockInfo& waiter);
boost::json::object WaiterJson(const SemaphoreWaiterInfo& waiter);

// An acquire's "max_hold_ms" (engine_types.h, "Hold limits"): 0 when
// absent (the namespace's limit). Range errors are the engine's.
Result<std::chrono::milliseconds> MaxHoldFrom(const Fields& fields);
// A break's answer: {"taken": [{"owner", what was held, "fence"}]}.
ApiResponse BreakAnswer(Holding kind, const std::vector<BrokenHold>& taken);
// One entry of a keepalive's "lost": {"ns", "principal", "resource",
// "kind", "owner", "reason", "at"}.
boost::json::object LostJson(const LostHold& lost);

// {"victim", "cycle": [{"waiter", "waiter_name", "holder", ...}]}.
boost::json::object DeadlockJson(const DeadlockReport& report);

// Who asks, in a lock's or a semaphore's body: "session", "principal"
// (default "public"), "owner" (default Transaction).
struct HolderArgs {
  SessionId session = 0;
  std::string principal = "public";
  LockOwner owner = LockOwner::kTransaction;
};
Result<HolderArgs> HolderArgsFromBody(const Fields& fields);

void AcquireLock(Call& c, const std::string& ns);
// handlers_acquire_all.cc
void AcquireAllLocks(Call& c, const std::string& ns);
void ReleaseLock(Call& c, const std::string& ns);
void LockModeOf(Call& c, const std::string& ns);
void TestLock(Call& c, const std::string& ns);
void ListLocks(Call& c, const std::string& ns);
void GetLock(Call& c, const std::string& ns, const std::string& resource);
// The administrator's break of one session's hold: {"session", "resource"}
// (a semaphore's name is in its path), both owners' grants.
void BreakLock(Call& c, const std::string& ns);
void BreakSemaphore(Call& c, const std::string& ns, const std::string& name);

// handlers_semaphores.cc
void AcquireSemaphore(Call& c, const std::string& ns, const std::string& name);
void ReleaseSemaphore(Call& c, const std::string& ns, const std::string& name);
void ListSemaphores(Call& c, const std::string& ns);
void GetSemaphore(Call& c, const std::string& ns, const std::string& name);

void InsertRecord(Call& c, const std::string& ns, const std::string& key);
void GetRecord(Call& c, const std::string& ns, const std::string& key);
void ListRecords(Call& c, const std::string& ns);
void Checkout(Call& c, const std::string& ns, const std::string& key);
void SaveRecord(Call& c, const std::string& ns, const std::string& key);
void Checkin(Call& c, const std::string& ns, const std::string& key);
void DeleteRecord(Call& c, const std::string& ns, const std::string& key);
void Purge(Call& c, const std::string& ns);
void BreakCheckout(Call& c, const std::string& ns, const std::string& key);

void BeginOperation(Call& c, const std::string& ns, const std::string& op_id);
void CompleteOperation(Call& c, const std::string& ns,
                       const std::string& op_id);
void Enqueue(Call& c, const std::string& ns, const std::string& topic);
void ClaimMessages(Call& c, const std::string& ns, const std::string& topic);
void AckMessage(Call& c, const std::string& ns, const std::string& topic);
void GetOutbox(Call& c, const std::string& ns, const std::string& topic);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_HANDLERS_H_
