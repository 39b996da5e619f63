// Sessions and transactions (docs/api.md, "Sessions", "Transactions").
#include "server/fault_point.h"
#include "server/handlers.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

json::value TransactionJson(const std::optional<TransactionInfo>& t) {
  if (!t) return nullptr;
  // `deadline`: when a namespace's max_transaction_ms will roll it back.
  return json::object{{wire::kTransaction, t->id},
                      {wire::kStartedAt, TimeJson(t->started_at)},
                      {wire::kStagedWrites, t->staged_writes},
                      {wire::kDeadline, TimeJson(t->deadline)}};
}

json::object SessionJson(const SessionInfo& s) {
  json::object o{{wire::kId, SessionIdText(s.id)},
                 {wire::kName, s.name},
                 {wire::kTtlMs, s.ttl.count()},
                 {wire::kExpiresAt, TimeJson(s.expires_at)},
                 {wire::kDeadlockPriority, s.deadlock_priority},
                 {wire::kLocks, s.locks},
                 {wire::kWaiting, s.waiting.has_value()},
                 {wire::kTransaction, TransactionJson(s.transaction)}};
  if (!s.caller.empty()) o[wire::kOpenedBy] = s.caller;
  return o;
}

}  // namespace

void CreateSession(Call& c) {
  const Fields f(c.body);
  auto name = f.OptionalString(wire::kName);
  if (!name) return c.Fail(name.error());
  auto ttl = f.OptionalInt(wire::kTtlMs);
  if (!ttl) return c.Fail(ttl.error());
  auto priority = f.OptionalInt(wire::kDeadlockPriority);
  if (!priority) return c.Fail(priority.error());
  const milliseconds ttl_ms =
      ttl->has_value() ? milliseconds(**ttl) : c.options.default_session_ttl;
  if (ttl_ms.count() <= 0 || ttl_ms > c.options.max_session_ttl) {
    return c.Fail(
        Status(StatusCode::kBadRequest,
               "ttl_ms must be between 1 and " +
                   std::to_string(c.options.max_session_ttl.count())));
  }
  if (priority->value_or(0) < -10 || priority->value_or(0) > 10) {
    return c.Fail(Status(StatusCode::kBadRequest,
                         "deadlock_priority must be between -10 and 10"));
  }
  SessionOptions options{name->value_or(""), ttl_ms,
                         static_cast<int>(priority->value_or(0)),
                         c.CallerName()};
  c.Run<Result<SessionInfo>>(
      [options](Engine& e, Time now) { return e.OpenSession(now, options); },
      [](Result<SessionInfo>& r) {
        return r ? JsonResponse(201, SessionJson(*r))
                 : ErrorResponse(r.error());
      });
}

void KeepAlive(Call& c, SessionId id) {
  c.Run<Result<KeepAliveOutcome>>(
      [id](Engine& e, Time now) { return e.KeepAlive(now, id); },
      [](Result<KeepAliveOutcome>& r) {
        if (!r) return ErrorResponse(r.error());
        json::array lost;
        for (const LostHold& l : r->lost) lost.push_back(LostJson(l));
        return JsonResponse(
            200, json::object{{wire::kExpiresAt, TimeJson(r->expires_at)},
                              {wire::kLocksLost, r->locks_lost},
                              {wire::kLost, std::move(lost)}});
      });
}

void EndSession(Call& c, SessionId id) {
  // An administrator ending another principal's session is not its client
  // letting go: a lock-delay holds its locks back, as at an expiry.
  const bool authenticated = c.caller != nullptr;
  c.Run<Status>(
      [id, authenticated, caller = c.CallerName()](Engine& e, Time now) {
        auto how = Engine::SessionEnd::kByClient;
        if (authenticated) {
          auto s = e.GetSession(now, id);
          if (s && s->caller != caller) {
            how = Engine::SessionEnd::kByAdministrator;
          }
        }
        return e.EndSession(now, id, how);
      },
      [](Status& st) {
        return st.ok() ? ApiResponse{204, "", "application/json"}
                       : ErrorResponse(st);
      });
}

void ListSessions(Call& c) {
  c.Run<std::vector<SessionInfo>>(
      [](Engine& e, Time now) { return e.ListSessions(now); },
      [all = c.SeesAllSessions(),
       caller = c.CallerName()](std::vector<SessionInfo>& list) {
        json::array sessions;
        for (const auto& s : list) {
          if (all || s.caller == caller) sessions.push_back(SessionJson(s));
        }
        return JsonResponse(200, json::object{{wire::kSessions, sessions}});
      });
}

void CancelSessionWait(Call& c, SessionId id) {
  c.Run<Result<bool>>(
      [id](Engine& e, Time now) { return e.Cancel(now, id); },
      [](Result<bool>& r) {
        return r ? JsonResponse(200, json::object{{wire::kCancelled, *r}})
                 : ErrorResponse(r.error());
      });
}

void BeginTransaction(Call& c, SessionId id) {
  c.Run<Result<TransactionInfo>>(
      [id](Engine& e, Time now) { return e.BeginTransaction(now, id); },
      [](Result<TransactionInfo>& r) {
        return r ? JsonResponse(201, TransactionJson(*r))
                 : ErrorResponse(r.error());
      });
}

void EndTransaction(Call& c, SessionId id, bool commit) {
  if (commit) {
    // Answered once the applied writes are durable (one store append).
    return c.Run<Result<CommitOutcome>>(
        [id](Engine& e, Time now) { return e.CommitTransaction(now, id); },
        [](Result<CommitOutcome>& r) {
          if (!r) return ErrorResponse(r.error());
          FaultPoint(kFaultCommitDurable);
          json::array applied;
          for (const AppliedWrite& w : r->applied) {
            json::object o{{wire::kOp, StagedWriteKindName(w.kind)},
                           {wire::kNs, w.ns},
                           {wire::kKey, w.key}};
            if (w.kind == StagedWriteKind::kInsert ||
                w.kind == StagedWriteKind::kSave) {
              o[wire::kVersion] = w.version;
            }
            if (w.kind == StagedWriteKind::kEnqueue) {
              o[wire::kTopic] = w.topic;
              o[wire::kId] = w.message;
              o[wire::kDuplicate] = w.duplicate;
            }
            applied.push_back(std::move(o));
          }
          return JsonResponse(200,
                              json::object{{wire::kCommitted, true},
                                           {wire::kTransaction, r->transaction},
                                           {wire::kApplied, applied}});
        });
  }
  c.Run<Status>([id](Engine& e, Time now) { return e.Rollback(now, id); },
                [](Status& st) {
                  return st.ok()
                             ? JsonResponse(
                                   200, json::object{{wire::kRolledBack, true}})
                             : ErrorResponse(st);
                });
}

}  // namespace leasehold::server
