#include "client/api_codec.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "client/answer_reader.h"
#include "common/wire_names.h"

namespace leasehold::client::api {

namespace json = boost::json;
using detail::AnswerReader;

// --- paths ------------------------------------------------------------------

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                       c == '.' || c == '~' || c == ':';
    if (plain) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string JoinPath(std::initializer_list<std::string_view> segments) {
  std::string out;
  for (const std::string_view s : segments) {
    out.push_back('/');
    out += PercentEncode(s);
  }
  return out;
}

void AddQuery(std::string& target, std::string_view key,
              std::string_view value) {
  target.push_back(target.find('?') == std::string::npos ? '?' : '&');
  target += PercentEncode(key);
  target.push_back('=');
  target += PercentEncode(value);
}

std::string HealthPath() { return "/healthz"; }

std::string SessionsPath() { return "/v1/sessions"; }

std::string SessionPath(std::string_view session, std::string_view action) {
  return action.empty() ? JoinPath({"v1", "sessions", session})
                        : JoinPath({"v1", "sessions", session, action});
}

std::string TransactionPath(std::string_view session, std::string_view action) {
  return action.empty()
             ? JoinPath({"v1", "sessions", session, "transaction"})
             : JoinPath({"v1", "sessions", session, "transaction", action});
}

std::string ApplockPath(std::string_view ns, std::string_view action) {
  return action.empty() ? JoinPath({"v1", "applocks", ns})
                        : JoinPath({"v1", "applocks", ns, action});
}

namespace {

// The query of GET mode/test: the lock's identity as the server reads it.
std::string LockQuery(std::string target, std::string_view session,
                      std::string_view resource, std::string_view owner,
                      std::string_view principal) {
  AddQuery(target, wire::kSession, session);
  AddQuery(target, wire::kResource, resource);
  AddQuery(target, wire::kOwner, owner);
  AddQuery(target, wire::kPrincipal, principal);
  return target;
}

}  // namespace

std::string ModePath(std::string_view ns, std::string_view session,
                     std::string_view resource, std::string_view owner,
                     std::string_view principal) {
  return LockQuery(ApplockPath(ns, "mode"), session, resource, owner,
                   principal);
}

std::string TestPath(std::string_view ns, std::string_view session,
                     std::string_view resource, const AcquireOptions& options) {
  std::string target = LockQuery(ApplockPath(ns, "test"), session, resource,
                                 options.owner, options.principal);
  AddQuery(target, wire::kMode, options.mode);
  return target;
}

std::string SemaphoresPath(std::string_view ns) {
  return JoinPath({"v1", "semaphores", ns});
}

std::string SemaphorePath(std::string_view ns, std::string_view name,
                          std::string_view action) {
  return action.empty() ? JoinPath({"v1", "semaphores", ns, name})
                        : JoinPath({"v1", "semaphores", ns, name, action});
}

std::string GetSemaphorePath(std::string_view ns, std::string_view name,
                             std::string_view principal) {
  std::string target = SemaphorePath(ns, name);
  AddQuery(target, wire::kPrincipal, principal);
  return target;
}

std::string RecordsPath(std::string_view ns, std::string_view action) {
  return action.empty() ? JoinPath({"v1", "records", ns})
                        : JoinPath({"v1", "records", ns, action});
}

std::string ListRecordsPath(std::string_view ns, const ListOptions& options) {
  std::string target = RecordsPath(ns);
  if (!options.state.empty()) AddQuery(target, wire::kState, options.state);
  if (!options.prefix.empty()) AddQuery(target, wire::kPrefix, options.prefix);
  if (!options.after.empty()) AddQuery(target, wire::kAfter, options.after);
  if (options.limit > 0) {
    AddQuery(target, wire::kLimit, std::to_string(options.limit));
  }
  return target;
}

std::string RecordPath(std::string_view ns, std::string_view key,
                       std::string_view action) {
  return action.empty() ? JoinPath({"v1", "records", ns, key})
                        : JoinPath({"v1", "records", ns, key, action});
}

std::string OperationPath(std::string_view ns, std::string_view op_id,
                          std::string_view action) {
  return JoinPath({"v1", "operations", ns, op_id, action});
}

std::string OutboxPath(std::string_view ns, std::string_view topic,
                       std::string_view action) {
  return action.empty() ? JoinPath({"v1", "outbox", ns, topic})
                        : JoinPath({"v1", "outbox", ns, topic, action});
}

std::string EventsPath(std::string_view ns) {
  std::string target = "/v1/events";
  if (!ns.empty()) AddQuery(target, wire::kNs, ns);
  return target;
}

// --- request bodies ---------------------------------------------------------

namespace {

// Appends `text` as a JSON string (quoted, escaped).
void AppendString(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c < 0x20) {
      out.append("\\u00");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
}

// A JSON object built field by field, in order.
class Body {
 public:
  Body() {
    text_.reserve(128);
    text_.push_back('{');
  }
  Body& Str(std::string_view key, std::string_view value) {
    Key(key);
    AppendString(text_, value);
    return *this;
  }
  Body& Int(std::string_view key, std::int64_t value) {
    return Raw(key, std::to_string(value));
  }
  // An optional number left out at 0 (the server's default).
  Body& IntIfPositive(std::string_view key, std::int64_t value) {
    return value > 0 ? Int(key, value) : *this;
  }
  // `json_text` as the value, as it is.
  Body& Raw(std::string_view key, std::string_view json_text) {
    Key(key);
    text_.append(json_text);
    return *this;
  }
  Body& Json(std::string_view key, const json::value& value) {
    return Raw(key, json::serialize(value));
  }
  std::string Done() {
    text_.push_back('}');
    return std::move(text_);
  }

 private:
  void Key(std::string_view key) {
    if (text_.size() > 1) text_.push_back(',');
    AppendString(text_, key);
    text_.push_back(':');
  }
  std::string text_;
};

}  // namespace

std::string OpenSessionBody(std::string_view name, Milliseconds ttl) {
  return Body().Str(wire::kName, name).Int(wire::kTtlMs, ttl.count()).Done();
}

std::string AcquireBody(std::string_view session, std::string_view resource,
                        const AcquireOptions& options) {
  return Body()
      .Str(wire::kSession, session)
      .Str(wire::kResource, resource)
      .Str(wire::kMode, options.mode)
      .Str(wire::kOwner, options.owner)
      .Int(wire::kTimeoutMs, options.timeout.count())
      .Str(wire::kPrincipal, options.principal)
      .IntIfPositive(wire::kMaxHoldMs, options.max_hold.count())
      .Done();
}

std::string ReleaseBody(std::string_view session, std::string_view resource,
                        std::string_view owner, std::string_view principal) {
  return Body()
      .Str(wire::kSession, session)
      .Str(wire::kResource, resource)
      .Str(wire::kOwner, owner)
      .Str(wire::kPrincipal, principal)
      .Done();
}

std::string AcquireAllBody(std::string_view session,
                           const std::vector<LockSpec>& locks,
                           const AcquireAllOptions& options) {
  std::string wanted = "[";
  for (const LockSpec& l : locks) {
    if (wanted.size() > 1) wanted.push_back(',');
    wanted +=
        Body().Str(wire::kResource, l.resource).Str(wire::kMode, l.mode).Done();
  }
  wanted.push_back(']');
  return Body()
      .Str(wire::kSession, session)
      .Raw(wire::kLocks, wanted)
      .Str(wire::kOwner, options.owner)
      .Int(wire::kTimeoutMs, options.timeout.count())
      .Str(wire::kPrincipal, options.principal)
      .IntIfPositive(wire::kMaxHoldMs, options.max_hold.count())
      .Done();
}

std::string SemaphoreAcquireBody(std::string_view session,
                                 const SemaphoreOptions& options) {
  return Body()
      .Str(wire::kSession, session)
      .Int(wire::kLimit, options.limit)
      .Int(wire::kPermits, options.permits)
      .Str(wire::kOwner, options.owner)
      .Int(wire::kTimeoutMs, options.timeout.count())
      .Str(wire::kPrincipal, options.principal)
      .IntIfPositive(wire::kMaxHoldMs, options.max_hold.count())
      .Done();
}

std::string SemaphoreReleaseBody(std::string_view session,
                                 std::string_view owner, std::int64_t permits,
                                 std::string_view principal) {
  Body body;
  body.Str(wire::kSession, session);
  if (permits != 0) body.Int(wire::kPermits, permits);
  return body.Str(wire::kOwner, owner).Str(wire::kPrincipal, principal).Done();
}

std::string PutBody(std::string_view body, std::uint64_t fence) {
  Body out;
  out.Str(wire::kBody, body);
  if (fence != 0) out.Raw(wire::kFence, std::to_string(fence));
  return out.Done();
}

std::string CheckoutBody(const CheckoutOptions& options) {
  Body body;
  body.Str(wire::kOwner, options.owner).Int(wire::kTtlMs, options.ttl.count());
  if (!options.token.empty()) body.Str(wire::kToken, options.token);
  return body.Done();
}

namespace {

Body& AddProof(Body& body, const Proof& proof) {
  if (!proof.token.empty()) {
    body.Str(wire::kToken, proof.token);
  } else if (!proof.owner.empty() || proof.fence == 0) {
    body.Str(wire::kOwner, proof.owner);
  }
  if (proof.fence != 0) body.Raw(wire::kFence, std::to_string(proof.fence));
  return body;
}

}  // namespace

std::string ProofBody(const Proof& proof) {
  Body body;
  return AddProof(body, proof).Done();
}

std::string SaveBody(const Proof& proof, std::string_view text,
                     std::optional<std::int64_t> if_version) {
  Body body;
  AddProof(body, proof).Str(wire::kBody, text);
  if (if_version) body.Int(wire::kIfVersion, *if_version);
  return body.Done();
}

std::string PurgeBody(Milliseconds older_than) {
  return Body().Int(wire::kOlderThanMs, older_than.count()).Done();
}

std::string BeginOperationBody(std::string_view session) {
  return Body().Str(wire::kSession, session).Done();
}

std::string CompleteOperationBody(std::string_view session,
                                  const json::value& outcome) {
  return Body()
      .Str(wire::kSession, session)
      .Json(wire::kOutcome, outcome)
      .Done();
}

std::string EnqueueBody(std::string_view key, const json::value& payload,
                        std::string_view session) {
  Body body;
  body.Str(wire::kKey, key).Json(wire::kPayload, payload);
  if (!session.empty()) body.Str(wire::kSession, session);
  return body.Done();
}

std::string ClaimBody(std::string_view consumer, int max, Milliseconds lease) {
  return Body()
      .Str(wire::kConsumer, consumer)
      .Int(wire::kMax, max)
      .Int(wire::kLeaseMs, lease.count())
      .Done();
}

std::string AckBody(std::int64_t id, std::string_view claim_token) {
  return Body().Int(wire::kId, id).Str(wire::kClaimToken, claim_token).Done();
}

// --- answers ----------------------------------------------------------------

namespace {

// An answer of one required field: its value, or "bad_response".
template <typename T, typename Read>
Result<T> OneField(const json::value& answer, std::string_view what,
                   Read read) {
  AnswerReader reader(answer, what);
  T value = read(reader);
  return reader.Finish(std::move(value));
}

// Each element of the array `key` of `answer`, read by `one` (a reader of
// its own per element); a malformed element fails the whole answer.
template <typename T, typename ReadOne>
Result<std::vector<T>> EachOf(const json::value& answer, std::string_view key,
                              std::string_view what, ReadOne one) {
  AnswerReader reader(answer, what);
  std::vector<T> out;
  for (const json::value& v : reader.Array(key)) {
    Result<T> element = one(v);
    if (!element) return std::unexpected(element.error());
    out.push_back(std::move(*element));
  }
  return reader.Finish(std::move(out));
}

}  // namespace

Result<SessionInfo> ParseSession(const json::value& answer,
                                 std::string_view what) {
  AnswerReader r(answer, what);
  SessionInfo s;
  s.id = r.String(wire::kId);
  s.name = r.String(wire::kName);
  s.ttl = Milliseconds(r.IntOr(wire::kTtlMs, 0));
  s.expires_at = r.String(wire::kExpiresAt);
  s.locks = r.IntOr(wire::kLocks, 0);
  s.waiting = r.BoolOr(wire::kWaiting, false);
  if (const json::value* t = r.Find(wire::kTransaction); t && t->is_object()) {
    AnswerReader tr(*t, "a session's transaction");
    s.transaction = tr.Int(wire::kTransaction);
    if (!tr.ok()) r.Int(wire::kTransaction);  // mark the answer malformed
  }
  return r.Finish(std::move(s));
}

Result<std::vector<SessionInfo>> ParseSessions(const json::value& answer) {
  return EachOf<SessionInfo>(
      answer, wire::kSessions, "GET /v1/sessions",
      [](const json::value& v) { return ParseSession(v, "GET /v1/sessions"); });
}

Result<KeepaliveAnswer> ParseKeepaliveAnswer(const json::value& answer) {
  return OneField<KeepaliveAnswer>(answer, "keepalive", [](AnswerReader& r) {
    KeepaliveAnswer out;
    out.expires_at = r.String(wire::kExpiresAt);
    out.locks_lost = r.BoolOr(wire::kLocksLost, false);
    if (r.Find(wire::kLost) != nullptr) {
      for (const json::value& v : r.Array(wire::kLost)) {
        AnswerReader l(v, "keepalive's lost");
        LostHold h;
        h.ns = l.String(wire::kNs);
        h.principal = l.String(wire::kPrincipal);
        h.resource = l.String(wire::kResource);
        h.kind = l.String(wire::kKind);
        h.owner = l.String(wire::kOwner);
        h.reason = l.String(wire::kReason);
        h.at = l.String(wire::kAt);
        r.Adopt(l);
        out.lost.push_back(std::move(h));
      }
    }
    return out;
  });
}

Result<bool> ParseCancelAnswer(const json::value& answer) {
  return OneField<bool>(answer, "cancel", [](AnswerReader& r) {
    return r.BoolOr(wire::kCancelled, false);
  });
}

Result<std::int64_t> ParseTransactionAnswer(const json::value& answer) {
  return OneField<std::int64_t>(
      answer, "begin transaction",
      [](AnswerReader& r) { return r.Int(wire::kTransaction); });
}

// What a lock's and a semaphore's answers share, read once; they differ
// only in what is held or wanted (a lock's mode and count, a semaphore's
// permits).
namespace {

void ReadHeld(AnswerReader& r, LockHolder& h) {
  h.mode = r.String(wire::kMode);
  h.count = r.IntOr(wire::kCount, 0);
}
void ReadHeld(AnswerReader& r, SemaphoreHolder& h) {
  h.permits = r.Int(wire::kPermits);
}
void ReadHeld(AnswerReader& r, LockWaiter& w) {
  w.mode = r.String(wire::kMode);
}
void ReadHeld(AnswerReader& r, SemaphoreWaiter& w) {
  w.permits = r.Int(wire::kPermits);
}
void ReadHeld(AnswerReader&, AcquireOutcome&) {}  // the client keeps the fence
void ReadHeld(AnswerReader& r, SemaphoreOutcome& out) {
  out.permits = r.Int(wire::kPermits);
}

template <typename Outcome>
Result<Outcome> AcquireFrom(const json::value& answer, std::string_view what) {
  AnswerReader reader(answer, what);
  Outcome out;
  out.result = static_cast<int>(reader.Int(wire::kResult));
  out.status = reader.String(wire::kStatus);
  if (out.granted()) {
    out.fence = reader.Uint(wire::kFence);
    ReadHeld(reader, out);
  }
  if (const json::value* d = reader.Find(wire::kDeadlock)) out.deadlock = *d;
  return reader.Finish(std::move(out));
}

// A holder in GET /v1/applocks/{ns} ("granted") or /v1/semaphores/{ns}.
template <typename Holder>
Result<Holder> HolderFrom(const json::value& v, std::string_view what) {
  AnswerReader r(v, what);
  Holder h;
  h.session = r.String(wire::kSession);
  h.session_name = r.OptionalString(wire::kSessionName).value_or("");
  h.owner = r.String(wire::kOwner);
  ReadHeld(r, h);
  h.since = r.OptionalString(wire::kSince).value_or("");
  h.fence = r.UintOr(wire::kFence, 0);
  h.hold_until = r.OptionalString(wire::kHoldUntil).value_or("");
  return r.Finish(std::move(h));
}

template <typename Waiter>
Result<Waiter> WaiterFrom(const json::value& v, std::string_view what) {
  AnswerReader r(v, what);
  Waiter w;
  w.session = r.String(wire::kSession);
  w.session_name = r.OptionalString(wire::kSessionName).value_or("");
  w.owner = r.OptionalString(wire::kOwner).value_or("");
  ReadHeld(r, w);
  w.conversion = r.BoolOr(wire::kConversion, false);
  w.since = r.OptionalString(wire::kSince).value_or("");
  w.deadline = r.OptionalString(wire::kDeadline).value_or("");
  return r.Finish(std::move(w));
}

}  // namespace

Result<AcquireOutcome> ParseAcquireAnswer(const json::value& answer) {
  return AcquireFrom<AcquireOutcome>(answer, "acquire");
}

Result<AcquireAllOutcome> ParseAcquireAllAnswer(const json::value& answer) {
  AnswerReader reader(answer, "acquire-all");
  AcquireAllOutcome out;
  out.result = static_cast<int>(reader.Int(wire::kResult));
  out.status = reader.String(wire::kStatus);
  if (out.granted()) {
    for (const json::value& v : reader.Array(wire::kLocks)) {
      AnswerReader one(v, "acquire-all");
      GrantedLock g;
      g.resource = one.String(wire::kResource);
      g.mode = one.String(wire::kMode);
      g.fence = one.Uint(wire::kFence);
      g.count = one.Int(wire::kCount);
      if (!one.ok()) return std::unexpected(one.Failure());
      out.locks.push_back(std::move(g));
    }
  } else {
    out.failed_resource = reader.OptionalString(wire::kResource).value_or("");
    if (const json::value* d = reader.Find(wire::kDeadlock)) out.deadlock = *d;
  }
  return reader.Finish(std::move(out));
}

Result<std::string> ParseModeAnswer(const json::value& answer) {
  return OneField<std::string>(answer, "GET mode", [](AnswerReader& r) {
    return r.String(wire::kMode);
  });
}

Result<bool> ParseTestAnswer(const json::value& answer) {
  return OneField<bool>(answer, "GET test", [](AnswerReader& r) {
    return r.Bool(wire::kGrantable);
  });
}

namespace {

constexpr std::string_view kListLocks = "GET /v1/applocks/{ns}";

Result<LockInfo> LockFrom(const json::value& v) {
  AnswerReader r(v, kListLocks);
  LockInfo l;
  l.resource = r.String(wire::kResource);
  l.principal = r.String(wire::kPrincipal);
  auto granted = EachOf<LockHolder>(
      v, wire::kGranted, kListLocks, [](const json::value& h) {
        return HolderFrom<LockHolder>(h, kListLocks);
      });
  if (!granted) return std::unexpected(granted.error());
  l.granted = std::move(*granted);
  auto waiting = EachOf<LockWaiter>(
      v, wire::kWaiting, kListLocks, [](const json::value& w) {
        return WaiterFrom<LockWaiter>(w, kListLocks);
      });
  if (!waiting) return std::unexpected(waiting.error());
  l.waiting = std::move(*waiting);
  return r.Finish(std::move(l));
}

}  // namespace

Result<std::vector<LockInfo>> ParseLocks(const json::value& answer) {
  return EachOf<LockInfo>(answer, wire::kLocks, kListLocks, LockFrom);
}

Result<SemaphoreOutcome> ParseSemaphoreAcquireAnswer(
    const json::value& answer) {
  return AcquireFrom<SemaphoreOutcome>(answer, "semaphore acquire");
}

Result<std::int64_t> ParseSemaphoreReleaseAnswer(const json::value& answer) {
  return OneField<std::int64_t>(
      answer, "semaphore release",
      [](AnswerReader& r) { return r.Int(wire::kPermits); });
}

namespace {

constexpr std::string_view kListSemaphores = "GET /v1/semaphores/{ns}";

}  // namespace

Result<SemaphoreInfo> ParseSemaphore(const json::value& answer) {
  AnswerReader r(answer, kListSemaphores);
  SemaphoreInfo s;
  s.name = r.String(wire::kName);
  s.principal = r.String(wire::kPrincipal);
  s.limit = r.Int(wire::kLimit);
  s.held = r.Int(wire::kHeld);
  auto holders = EachOf<SemaphoreHolder>(
      answer, wire::kHolders, kListSemaphores, [](const json::value& h) {
        return HolderFrom<SemaphoreHolder>(h, kListSemaphores);
      });
  if (!holders) return std::unexpected(holders.error());
  s.holders = std::move(*holders);
  auto waiting = EachOf<SemaphoreWaiter>(
      answer, wire::kWaiting, kListSemaphores, [](const json::value& w) {
        return WaiterFrom<SemaphoreWaiter>(w, kListSemaphores);
      });
  if (!waiting) return std::unexpected(waiting.error());
  s.waiting = std::move(*waiting);
  s.lock_delay_until = r.OptionalString(wire::kLockDelayUntil).value_or("");
  s.lock_delay_permits = r.IntOr(wire::kLockDelayPermits, 0);
  return r.Finish(std::move(s));
}

Result<std::vector<SemaphoreInfo>> ParseSemaphores(const json::value& answer) {
  return EachOf<SemaphoreInfo>(answer, wire::kSemaphores, kListSemaphores,
                               ParseSemaphore);
}

Result<std::int64_t> ParsePutAnswer(const json::value& answer) {
  return OneField<std::int64_t>(answer, "PUT record", [](AnswerReader& r) {
    return r.Int(wire::kVersion);
  });
}

namespace {

RecordInfo RecordFrom(AnswerReader& r) {
  RecordInfo rec;
  rec.key = r.String(wire::kKey);
  rec.body = r.OptionalString(wire::kBody);
  rec.version = r.IntOr(wire::kVersion, 0);
  rec.locked_by = r.OptionalString(wire::kLockedBy);
  rec.lock_expires_at = r.OptionalString(wire::kLockExpiresAt);
  rec.state = r.String(wire::kState);
  rec.fence = r.UintOr(wire::kFence, 0);
  rec.write_fence = r.UintOr(wire::kWriteFence, 0);
  return rec;
}

// Save, checkin and delete answer alike: `done_field` true, or false with a
// reason (423, 412).
Result<WriteOutcome> WriteFrom(const json::value& answer,
                               std::string_view done_field,
                               std::string_view what) {
  AnswerReader reader(answer, what);
  WriteOutcome out;
  out.done = reader.Bool(done_field);
  if (!out.done) out.reason = reader.String(wire::kReason);
  out.version = reader.IntOr(wire::kVersion, 0);
  return reader.Finish(std::move(out));
}

}  // namespace

Result<RecordInfo> ParseRecord(const json::value& answer) {
  return OneField<RecordInfo>(answer, "GET record", RecordFrom);
}

Result<RecordPage> ParseRecordPage(const json::value& answer) {
  auto records = EachOf<RecordInfo>(
      answer, wire::kRecords, "GET records", [](const json::value& v) {
        return OneField<RecordInfo>(v, "GET records", RecordFrom);
      });
  if (!records) return std::unexpected(records.error());
  AnswerReader reader(answer, "GET records");
  RecordPage page{std::move(*records), reader.OptionalString(wire::kNext)};
  return reader.Finish(std::move(page));
}

Result<CheckoutOutcome> ParseCheckoutAnswer(const json::value& answer,
                                            std::string_view owner) {
  AnswerReader reader(answer, "checkout");
  CheckoutOutcome out;
  out.granted = reader.Bool(wire::kGranted);
  if (out.granted) {
    out.renewed = reader.BoolOr(wire::kRenewed, false);
    out.token = reader.String(wire::kToken);
    out.fence = reader.Uint(wire::kFence);
    out.locked_by =
        reader.OptionalString(wire::kLockedBy).value_or(std::string(owner));
    out.expires_at = reader.String(wire::kExpiresAt);
  } else {
    out.locked_by = reader.OptionalString(wire::kLockedBy).value_or("");
    out.expires_at = reader.OptionalString(wire::kLockExpiresAt).value_or("");
  }
  return reader.Finish(std::move(out));
}

Result<WriteOutcome> ParseSaveAnswer(const json::value& answer) {
  return WriteFrom(answer, wire::kSaved, "save");
}

Result<WriteOutcome> ParseCheckinAnswer(const json::value& answer) {
  return WriteFrom(answer, wire::kReleased, "checkin");
}

Result<WriteOutcome> ParseDeleteAnswer(const json::value& answer) {
  return WriteFrom(answer, wire::kDeleted, "delete");
}

Result<std::int64_t> ParsePurgeAnswer(const json::value& answer) {
  return OneField<std::int64_t>(
      answer, "purge", [](AnswerReader& r) { return r.Int(wire::kPurged); });
}

Result<bool> ParseBreakAnswer(const json::value& answer) {
  return OneField<bool>(answer, "break",
                        [](AnswerReader& r) { return r.Bool(wire::kBroken); });
}

Result<OperationStatus> ParseOperationStatus(const json::value& answer) {
  AnswerReader reader(answer, "begin operation");
  OperationStatus out;
  out.completed = reader.String(wire::kState) == "completed";
  if (out.completed) {
    if (const json::value* o = reader.Find(wire::kOutcome)) out.outcome = *o;
    out.completed_at = reader.OptionalString(wire::kCompletedAt).value_or("");
  }
  return reader.Finish(std::move(out));
}

Result<EnqueueOutcome> ParseEnqueueAnswer(const json::value& answer) {
  AnswerReader reader(answer, "enqueue");
  EnqueueOutcome out;
  out.id = reader.Int(wire::kId);
  out.duplicate = reader.BoolOr(wire::kDuplicate, false);
  out.staged = reader.BoolOr(wire::kStaged, false);
  return reader.Finish(out);
}

Result<std::vector<OutboxMessage>> ParseClaimAnswer(const json::value& answer) {
  return EachOf<OutboxMessage>(
      answer, wire::kMessages, "claim",
      [](const json::value& v) -> Result<OutboxMessage> {
        AnswerReader one(v, "claim");
        OutboxMessage m;
        m.id = one.Int(wire::kId);
        m.key = one.String(wire::kKey);
        if (const json::value* p = one.Find(wire::kPayload)) m.payload = *p;
        m.attempt = one.Int(wire::kAttempt);
        m.claim_token = one.String(wire::kClaimToken);
        m.lease_expires_at =
            one.OptionalString(wire::kLeaseExpiresAt).value_or("");
        return one.Finish(std::move(m));
      });
}

Result<AckOutcome> ParseAckAnswer(const json::value& answer) {
  AnswerReader reader(answer, "ack");
  AckOutcome out;
  out.acked = reader.Bool(wire::kAcked);
  out.already = reader.BoolOr(wire::kAlready, false);
  out.reason = reader.OptionalString(wire::kReason).value_or("");
  return reader.Finish(std::move(out));
}

Result<OutboxCounts> ParseOutboxCounts(const json::value& answer) {
  AnswerReader reader(answer, "GET outbox");
  OutboxCounts out;
  out.pending = reader.Int(wire::kPending);
  out.claimed = reader.Int(wire::kClaimed);
  out.dead = reader.Int(wire::kDead);
  out.dead_letters = reader.Array(wire::kDeadLetters);
  return reader.Finish(std::move(out));
}

}  // namespace leasehold::client::api
