// Idempotent operations and the outbox (docs/api.md, "Idempotent operations and
// the outbox"; docs/outbox.md). Outcomes and payloads are JSON values kept
// by the engine as serialized text and given back as JSON.
#include "common/token.h"
#include "server/handlers.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

constexpr milliseconds kDefaultClaimLease{30'000};
constexpr std::int64_t kDefaultClaimMax = 10;

// A required field of any JSON type, serialized.
Result<std::string> RequiredJson(const Fields& f, std::string_view name) {
  auto raw = f.Raw(name);
  if (!raw) {
    return Error(StatusCode::kBadRequest,
                 "field \"" + std::string(name) + "\" is required");
  }
  return Serialize(*raw);
}

// Stored JSON text back as a value (it was serialized by us; text that is
// not JSON, which a hand-edited store could hold, is given as a string).
json::value StoredJson(const std::string& text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  return ec ? json::value(text) : v;
}

// The optional "session" a write is staged in (absent or null: at once).
Result<std::optional<SessionId>> OptionalSession(const Fields& f) {
  auto raw = f.Raw(wire::kSession);
  if (!raw || raw->is_null()) return std::nullopt;
  auto id = SessionField(f);
  if (!id) return std::unexpected(id.error());
  return std::optional<SessionId>(*id);
}

// A message id: a JSON number or a string of digits.
Result<MessageId> MessageIdField(const Fields& f) {
  auto raw = f.Raw(wire::kId);
  if (raw && raw->is_uint64()) return raw->as_uint64();
  if (raw && raw->is_int64() && raw->as_int64() > 0) {
    return static_cast<MessageId>(raw->as_int64());
  }
  if (raw && raw->is_string()) {
    if (const SessionId id = ParseSessionId(raw->as_string()); id != 0) {
      return id;
    }
  }
  return Error(StatusCode::kBadRequest,
               "field \"id\" must be the message id a claim answered");
}

json::object DeadLetterJson(const MessageView& m) {
  return json::object{
      {wire::kId, m.id},
      {wire::kKey, m.key},
      {wire::kPayload, StoredJson(m.payload)},
      {wire::kAttempts, m.attempts},
      {wire::kConsumer, m.consumer},
      {wire::kEnqueuedAt, TimeJson(m.enqueued_at)},
      {wire::kLastLeaseExpiredAt, TimeJson(m.lease_expires_at)}};
}

}  // namespace

void BeginOperation(Call& c, const std::string& ns, const std::string& op_id) {
  auto session = SessionField(Fields(c.body));
  if (!session) return c.Fail(session.error());
  c.Run<Result<OperationStatus>>(
      [id = *session, ns, op_id](Engine& e, Time now) {
        return e.BeginOperation(now, id, {ns, op_id});
      },
      [](Result<OperationStatus>& r) {
        if (!r) return ErrorResponse(r.error());
        json::object o{{wire::kState, OperationStateName(r->state)}};
        if (r->state == OperationState::kCompleted) {
          o[wire::kOutcome] = StoredJson(r->outcome);
          o[wire::kCompletedAt] = TimeJson(r->completed_at);
        }
        return JsonResponse(200, o);
      });
}

void CompleteOperation(Call& c, const std::string& ns,
                       const std::string& op_id) {
  const Fields f(c.body);
  auto session = SessionField(f);
  if (!session) return c.Fail(session.error());
  auto outcome = RequiredJson(f, wire::kOutcome);
  if (!outcome) return c.Fail(outcome.error());
  c.Run<Result<StageOutcome>>(
      [id = *session, ns, op_id, o = std::move(*outcome)](Engine& e, Time now) {
        return e.CompleteOperation(now, id, {ns, op_id}, o);
      },
      [](Result<StageOutcome>& r) {
        if (!r) return ErrorResponse(r.error());
        return JsonResponse(
            200, json::object{{wire::kStaged, true},
                              {wire::kStagedWrites, r->staged_writes}});
      });
}

void Enqueue(Call& c, const std::string& ns, const std::string& topic) {
  const Fields f(c.body);
  auto key = f.RequiredString(wire::kKey);
  if (!key) return c.Fail(key.error());
  auto payload = RequiredJson(f, wire::kPayload);
  if (!payload) return c.Fail(payload.error());
  auto session = OptionalSession(f);
  if (!session) return c.Fail(session.error());
  c.Run<Result<EnqueueOutcome>>(
      [ns, topic, k = std::move(*key), p = std::move(*payload), s = *session](
          Engine& e, Time now) {
        return e.Enqueue(now, {ns, topic, k, p, s});
      },
      [](Result<EnqueueOutcome>& r) {
        if (!r) return ErrorResponse(r.error());
        json::object o{{wire::kId, r->id},
                       {wire::kDuplicate, r->duplicate},
                       {wire::kStaged, r->staged}};
        if (r->staged) o[wire::kStagedWrites] = r->staged_writes;
        return JsonResponse(r->duplicate ? 200 : 201, o);
      });
}

void ClaimMessages(Call& c, const std::string& ns, const std::string& topic) {
  const Fields f(c.body);
  auto consumer = f.RequiredString(wire::kConsumer);
  if (!consumer) return c.Fail(consumer.error());
  auto max = f.OptionalInt(wire::kMax);
  if (!max) return c.Fail(max.error());
  auto lease = f.OptionalInt(wire::kLeaseMs);
  if (!lease) return c.Fail(lease.error());
  const std::int64_t n = max->value_or(kDefaultClaimMax);
  if (n < 1 || n > 1000) {
    return c.Fail(
        Status(StatusCode::kBadRequest, "max must be between 1 and 1000"));
  }
  const milliseconds lease_ms =
      lease->has_value() ? milliseconds(**lease) : kDefaultClaimLease;
  if (lease_ms.count() <= 0 || lease_ms > c.options.max_checkout_ttl) {
    return c.Fail(
        Status(StatusCode::kBadRequest,
               "lease_ms must be between 1 and " +
                   std::to_string(c.options.max_checkout_ttl.count())));
  }
  c.Run<Result<std::vector<ClaimedMessage>>>(
      [ns, topic, who = std::move(*consumer), n, lease_ms,
       token = NewLeaseToken()](Engine& e, Time now) {
        return e.Claim(now, {ns, topic, who, static_cast<std::size_t>(n),
                             lease_ms, token});
      },
      [](Result<std::vector<ClaimedMessage>>& r) {
        if (!r) return ErrorResponse(r.error());
        json::array messages;
        for (const ClaimedMessage& m : *r) {
          messages.push_back(json::object{
              {wire::kId, m.id},
              {wire::kKey, m.key},
              {wire::kPayload, StoredJson(m.payload)},
              {wire::kAttempt, m.attempt},
              {wire::kClaimToken, m.claim_token},
              {wire::kLeaseExpiresAt, TimeJson(m.lease_expires_at)}});
        }
        return JsonResponse(200, json::object{{wire::kMessages, messages}});
      });
}

void AckMessage(Call& c, const std::string& ns, const std::string& topic) {
  const Fields f(c.body);
  auto id = MessageIdField(f);
  if (!id) return c.Fail(id.error());
  auto token = f.RequiredString(wire::kClaimToken);
  if (!token) return c.Fail(token.error());
  c.Run<Result<AckOutcome>>(
      [ns, topic, id = *id, t = std::move(*token)](Engine& e, Time now) {
        return e.Ack(now, ns, topic, id, t);
      },
      [](Result<AckOutcome>& r) {
        if (!r) return ErrorResponse(r.error());
        if (!r->acked) {
          return JsonResponse(
              423, json::object{{wire::kAcked, false},
                                {wire::kReason, RefusalReasonName(r->reason)}});
        }
        return JsonResponse(200, json::object{{wire::kAcked, true},
                                              {wire::kAlready, r->already}});
      });
}

void GetOutbox(Call& c, const std::string& ns, const std::string& topic) {
  c.Run<Result<OutboxSummary>>(
      [ns, topic](Engine& e, Time now) { return e.GetOutbox(now, ns, topic); },
      [](Result<OutboxSummary>& r) {
        if (!r) return ErrorResponse(r.error());
        json::array dead;
        for (const MessageView& m : r->dead_letters) {
          dead.push_back(DeadLetterJson(m));
        }
        return JsonResponse(200, json::object{{wire::kPending, r->pending},
                                              {wire::kClaimed, r->claimed},
                                              {wire::kDead, r->dead},
                                              {wire::kDeadLetters, dead}});
      });
}

}  // namespace leasehold::server
