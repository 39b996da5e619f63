#include "client/api_codec.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "client/answer_reader.h"

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
  AddQuery(target, "session", session);
  AddQuery(target, "resource", resource);
  AddQuery(target, "owner", owner);
  AddQuery(target, "principal", principal);
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
  AddQuery(target, "mode", options.mode);
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
  AddQuery(target, "principal", principal);
  return target;
}

std::string RecordsPath(std::string_view ns, std::string_view action) {
  return action.empty() ? JoinPath({"v1", "records", ns})
                        : JoinPath({"v1", "records", ns, action});
}

std::string ListRecordsPath(std::string_view ns, const ListOptions& options) {
  std::string target = RecordsPath(ns);
  if (!options.state.empty()) AddQuery(target, "state", options.state);
  if (!options.prefix.empty()) AddQuery(target, "prefix", options.prefix);
  if (!options.after.empty()) AddQuery(target, "after", options.after);
  if (options.limit > 0) {
    AddQuery(target, "limit", std::to_string(options.limit));
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
  if (!ns.empty()) AddQuery(target, "ns", ns);
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
  return Body().Str("name", name).Int("ttl_ms", ttl.count()).Done();
}

std::string AcquireBody(std::string_view session, std::string_view resource,
                        const AcquireOptions& options) {
  return Body()
      .Str("session", session)
      .Str("resource", resource)
      .Str("mode", options.mode)
      .Str("owner", options.owner)
      .Int("timeout_ms", options.timeout.count())
      .Str("principal", options.principal)
      .Done();
}

std::string ReleaseBody(std::string_view session, std::string_view resource,
                        std::string_view owner, std::string_view principal) {
  return Body()
      .Str("session", session)
      .Str("resource", resource)
      .Str("owner", owner)
      .Str("principal", principal)
      .Done();
}

std::string AcquireAllBody(std::string_view session,
                           const std::vector<LockSpec>& locks,
                           const AcquireAllOptions& options) {
  std::string wanted = "[";
  for (const LockSpec& l : locks) {
    if (wanted.size() > 1) wanted.push_back(',');
    wanted += Body().Str("resource", l.resource).Str("mode", l.mode).Done();
  }
  wanted.push_back(']');
  return Body()
      .Str("session", session)
      .Raw("locks", wanted)
      .Str("owner", options.owner)
      .Int("timeout_ms", options.timeout.count())
      .Str("principal", options.principal)
      .Done();
}

std::string SemaphoreAcquireBody(std::string_view session,
                                 const SemaphoreOptions& options) {
  return Body()
      .Str("session", session)
      .Int("limit", options.limit)
      .Int("permits", options.permits)
      .Str("owner", options.owner)
      .Int("timeout_ms", options.timeout.count())
      .Str("principal", options.principal)
      .Done();
}

std::string SemaphoreReleaseBody(std::string_view session,
                                 std::string_view owner, std::int64_t permits,
                                 std::string_view principal) {
  Body body;
  body.Str("session", session);
  if (permits != 0) body.Int("permits", permits);
  return body.Str("owner", owner).Str("principal", principal).Done();
}

std::string PutBody(std::string_view body, std::uint64_t fence) {
  Body out;
  out.Str("body", body);
  if (fence != 0) out.Raw("fence", std::to_string(fence));
  return out.Done();
}

std::string CheckoutBody(const CheckoutOptions& options) {
  Body body;
  body.Str("owner", options.owner).Int("ttl_ms", options.ttl.count());
  if (!options.token.empty()) body.Str("token", options.token);
  return body.Done();
}

namespace {

Body& AddProof(Body& body, const Proof& proof) {
  if (!proof.token.empty()) {
    body.Str("token", proof.token);
  } else if (!proof.owner.empty() || proof.fence == 0) {
    body.Str("owner", proof.owner);
  }
  if (proof.fence != 0) body.Raw("fence", std::to_string(proof.fence));
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
  AddProof(body, proof).Str("body", text);
  if (if_version) body.Int("if_version", *if_version);
  return body.Done();
}

std::string PurgeBody(Milliseconds older_than) {
  return Body().Int("older_than_ms", older_than.count()).Done();
}

std::string BeginOperationBody(std::string_view session) {
  return Body().Str("session", session).Done();
}

std::string CompleteOperationBody(std::string_view session,
                                  const json::value& outcome) {
  return Body().Str("session", session).Json("outcome", outcome).Done();
}

std::string EnqueueBody(std::string_view key, const json::value& payload,
                        std::string_view session) {
  Body body;
  body.Str("key", key).Json("payload", payload);
  if (!session.empty()) body.Str("session", session);
  return body.Done();
}

std::string ClaimBody(std::string_view consumer, int max, Milliseconds lease) {
  return Body()
      .Str("consumer", consumer)
      .Int("max", max)
      .Int("lease_ms", lease.count())
      .Done();
}

std::string AckBody(std::int64_t id, std::string_view claim_token) {
  return Body().Int("id", id).Str("claim_token", claim_token).Done();
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
  s.id = r.String("id");
  s.name = r.String("name");
  s.ttl = Milliseconds(r.IntOr("ttl_ms", 0));
  s.expires_at = r.String("expires_at");
  s.locks = r.IntOr("locks", 0);
  s.waiting = r.BoolOr("waiting", false);
  if (const json::value* t = r.Find("transaction"); t && t->is_object()) {
    AnswerReader tr(*t, "a session's transaction");
    s.transaction = tr.Int("transaction");
    if (!tr.ok()) r.Int("transaction");  // mark the answer malformed
  }
  return r.Finish(std::move(s));
}

Result<std::vector<SessionInfo>> ParseSessions(const json::value& answer) {
  return EachOf<SessionInfo>(
      answer, "sessions", "GET /v1/sessions",
      [](const json::value& v) { return ParseSession(v, "GET /v1/sessions"); });
}

Result<KeepaliveAnswer> ParseKeepaliveAnswer(const json::value& answer) {
  return OneField<KeepaliveAnswer>(answer, "keepalive", [](AnswerReader& r) {
    KeepaliveAnswer out;
    out.expires_at = r.String("expires_at");
    out.locks_lost = r.BoolOr("locks_lost", false);
    return out;
  });
}

Result<bool> ParseCancelAnswer(const json::value& answer) {
  return OneField<bool>(answer, "cancel", [](AnswerReader& r) {
    return r.BoolOr("cancelled", false);
  });
}

Result<std::int64_t> ParseTransactionAnswer(const json::value& answer) {
  return OneField<std::int64_t>(
      answer, "begin transaction",
      [](AnswerReader& r) { return r.Int("transaction"); });
}

Result<AcquireOutcome> ParseAcquireAnswer(const json::value& answer) {
  AnswerReader reader(answer, "acquire");
  AcquireOutcome out;
  out.result = static_cast<int>(reader.Int("result"));
  out.status = reader.String("status");
  out.fence = reader.UintOr("fence", 0);
  if (const json::value* d = reader.Find("deadlock")) out.deadlock = *d;
  return reader.Finish(std::move(out));
}

Result<AcquireAllOutcome> ParseAcquireAllAnswer(const json::value& answer) {
  AnswerReader reader(answer, "acquire-all");
  AcquireAllOutcome out;
  out.result = static_cast<int>(reader.Int("result"));
  out.status = reader.String("status");
  if (out.granted()) {
    for (const json::value& v : reader.Array("locks")) {
      AnswerReader one(v, "acquire-all");
      GrantedLock g;
      g.resource = one.String("resource");
      g.mode = one.String("mode");
      g.fence = one.Uint("fence");
      g.count = one.Int("count");
      if (!one.ok()) return std::unexpected(one.Failure());
      out.locks.push_back(std::move(g));
    }
  } else {
    out.failed_resource = reader.OptionalString("resource").value_or("");
    if (const json::value* d = reader.Find("deadlock")) out.deadlock = *d;
  }
  return reader.Finish(std::move(out));
}

Result<std::string> ParseModeAnswer(const json::value& answer) {
  return OneField<std::string>(
      answer, "GET mode", [](AnswerReader& r) { return r.String("mode"); });
}

Result<bool> ParseTestAnswer(const json::value& answer) {
  return OneField<bool>(answer, "GET test",
                        [](AnswerReader& r) { return r.Bool("grantable"); });
}

namespace {

constexpr std::string_view kListLocks = "GET /v1/applocks/{ns}";

Result<LockHolder> HolderFrom(const json::value& v) {
  AnswerReader r(v, kListLocks);
  LockHolder h;
  h.session = r.String("session");
  h.session_name = r.OptionalString("session_name").value_or("");
  h.owner = r.String("owner");
  h.mode = r.String("mode");
  h.since = r.OptionalString("since").value_or("");
  h.count = r.IntOr("count", 0);
  h.fence = r.UintOr("fence", 0);
  return r.Finish(std::move(h));
}

Result<LockWaiter> WaiterFrom(const json::value& v) {
  AnswerReader r(v, kListLocks);
  LockWaiter w;
  w.session = r.String("session");
  w.session_name = r.OptionalString("session_name").value_or("");
  w.owner = r.OptionalString("owner").value_or("");
  w.mode = r.String("mode");
  w.since = r.OptionalString("since").value_or("");
  w.deadline = r.OptionalString("deadline").value_or("");
  w.conversion = r.BoolOr("conversion", false);
  return r.Finish(std::move(w));
}

Result<LockInfo> LockFrom(const json::value& v) {
  AnswerReader r(v, kListLocks);
  LockInfo l;
  l.resource = r.String("resource");
  l.principal = r.String("principal");
  auto granted = EachOf<LockHolder>(v, "granted", kListLocks, HolderFrom);
  if (!granted) return std::unexpected(granted.error());
  l.granted = std::move(*granted);
  auto waiting = EachOf<LockWaiter>(v, "waiting", kListLocks, WaiterFrom);
  if (!waiting) return std::unexpected(waiting.error());
  l.waiting = std::move(*waiting);
  return r.Finish(std::move(l));
}

}  // namespace

Result<std::vector<LockInfo>> ParseLocks(const json::value& answer) {
  return EachOf<LockInfo>(answer, "locks", kListLocks, LockFrom);
}

Result<SemaphoreOutcome> ParseSemaphoreAcquireAnswer(
    const json::value& answer) {
  AnswerReader reader(answer, "semaphore acquire");
  SemaphoreOutcome out;
  out.result = static_cast<int>(reader.Int("result"));
  out.status = reader.String("status");
  if (out.granted()) {
    out.fence = reader.Uint("fence");
    out.permits = reader.Int("permits");
  }
  if (const json::value* d = reader.Find("deadlock")) out.deadlock = *d;
  return reader.Finish(std::move(out));
}

Result<std::int64_t> ParseSemaphoreReleaseAnswer(const json::value& answer) {
  return OneField<std::int64_t>(
      answer, "semaphore release",
      [](AnswerReader& r) { return r.Int("permits"); });
}

namespace {

constexpr std::string_view kListSemaphores = "GET /v1/semaphores/{ns}";

Result<SemaphoreHolder> SemaphoreHolderFrom(const json::value& v) {
  AnswerReader r(v, kListSemaphores);
  SemaphoreHolder h;
  h.session = r.String("session");
  h.session_name = r.OptionalString("session_name").value_or("");
  h.owner = r.String("owner");
  h.permits = r.Int("permits");
  h.since = r.OptionalString("since").value_or("");
  h.fence = r.UintOr("fence", 0);
  return r.Finish(std::move(h));
}

Result<SemaphoreWaiter> SemaphoreWaiterFrom(const json::value& v) {
  AnswerReader r(v, kListSemaphores);
  SemaphoreWaiter w;
  w.session = r.String("session");
  w.session_name = r.OptionalString("session_name").value_or("");
  w.owner = r.OptionalString("owner").value_or("");
  w.permits = r.Int("permits");
  w.conversion = r.BoolOr("conversion", false);
  w.since = r.OptionalString("since").value_or("");
  w.deadline = r.OptionalString("deadline").value_or("");
  return r.Finish(std::move(w));
}

}  // namespace

Result<SemaphoreInfo> ParseSemaphore(const json::value& answer) {
  AnswerReader r(answer, kListSemaphores);
  SemaphoreInfo s;
  s.name = r.String("name");
  s.principal = r.String("principal");
  s.limit = r.Int("limit");
  s.held = r.Int("held");
  auto holders = EachOf<SemaphoreHolder>(answer, "holders", kListSemaphores,
                                         SemaphoreHolderFrom);
  if (!holders) return std::unexpected(holders.error());
  s.holders = std::move(*holders);
  auto waiting = EachOf<SemaphoreWaiter>(answer, "waiting", kListSemaphores,
                                         SemaphoreWaiterFrom);
  if (!waiting) return std::unexpected(waiting.error());
  s.waiting = std::move(*waiting);
  s.lock_delay_until = r.OptionalString("lock_delay_until").value_or("");
  s.lock_delay_permits = r.IntOr("lock_delay_permits", 0);
  return r.Finish(std::move(s));
}

Result<std::vector<SemaphoreInfo>> ParseSemaphores(const json::value& answer) {
  return EachOf<SemaphoreInfo>(answer, "semaphores", kListSemaphores,
                               ParseSemaphore);
}

Result<std::int64_t> ParsePutAnswer(const json::value& answer) {
  return OneField<std::int64_t>(
      answer, "PUT record", [](AnswerReader& r) { return r.Int("version"); });
}

namespace {

RecordInfo RecordFrom(AnswerReader& r) {
  RecordInfo rec;
  rec.key = r.String("key");
  rec.body = r.OptionalString("body");
  rec.version = r.IntOr("version", 0);
  rec.locked_by = r.OptionalString("locked_by");
  rec.lock_expires_at = r.OptionalString("lock_expires_at");
  rec.state = r.String("state");
  rec.fence = r.UintOr("fence", 0);
  rec.write_fence = r.UintOr("write_fence", 0);
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
  if (!out.done) out.reason = reader.String("reason");
  out.version = reader.IntOr("version", 0);
  return reader.Finish(std::move(out));
}

}  // namespace

Result<RecordInfo> ParseRecord(const json::value& answer) {
  return OneField<RecordInfo>(answer, "GET record", RecordFrom);
}

Result<RecordPage> ParseRecordPage(const json::value& answer) {
  auto records = EachOf<RecordInfo>(
      answer, "records", "GET records", [](const json::value& v) {
        return OneField<RecordInfo>(v, "GET records", RecordFrom);
      });
  if (!records) return std::unexpected(records.error());
  AnswerReader reader(answer, "GET records");
  RecordPage page{std::move(*records), reader.OptionalString("next")};
  return reader.Finish(std::move(page));
}

Result<CheckoutOutcome> ParseCheckoutAnswer(const json::value& answer,
                                            std::string_view owner) {
  AnswerReader reader(answer, "checkout");
  CheckoutOutcome out;
  out.granted = reader.Bool("granted");
  if (out.granted) {
    out.renewed = reader.BoolOr("renewed", false);
    out.token = reader.String("token");
    out.fence = reader.Uint("fence");
    out.locked_by =
        reader.OptionalString("locked_by").value_or(std::string(owner));
    out.expires_at = reader.String("expires_at");
  } else {
    out.locked_by = reader.OptionalString("locked_by").value_or("");
    out.expires_at = reader.OptionalString("lock_expires_at").value_or("");
  }
  return reader.Finish(std::move(out));
}

Result<WriteOutcome> ParseSaveAnswer(const json::value& answer) {
  return WriteFrom(answer, "saved", "save");
}

Result<WriteOutcome> ParseCheckinAnswer(const json::value& answer) {
  return WriteFrom(answer, "released", "checkin");
}

Result<WriteOutcome> ParseDeleteAnswer(const json::value& answer) {
  return WriteFrom(answer, "deleted", "delete");
}

Result<std::int64_t> ParsePurgeAnswer(const json::value& answer) {
  return OneField<std::int64_t>(
      answer, "purge", [](AnswerReader& r) { return r.Int("purged"); });
}

Result<bool> ParseBreakAnswer(const json::value& answer) {
  return OneField<bool>(answer, "break",
                        [](AnswerReader& r) { return r.Bool("broken"); });
}

Result<OperationStatus> ParseOperationStatus(const json::value& answer) {
  AnswerReader reader(answer, "begin operation");
  OperationStatus out;
  out.completed = reader.String("state") == "completed";
  if (out.completed) {
    if (const json::value* o = reader.Find("outcome")) out.outcome = *o;
    out.completed_at = reader.OptionalString("completed_at").value_or("");
  }
  return reader.Finish(std::move(out));
}

Result<EnqueueOutcome> ParseEnqueueAnswer(const json::value& answer) {
  AnswerReader reader(answer, "enqueue");
  EnqueueOutcome out;
  out.id = reader.Int("id");
  out.duplicate = reader.BoolOr("duplicate", false);
  out.staged = reader.BoolOr("staged", false);
  return reader.Finish(out);
}

Result<std::vector<OutboxMessage>> ParseClaimAnswer(const json::value& answer) {
  return EachOf<OutboxMessage>(
      answer, "messages", "claim",
      [](const json::value& v) -> Result<OutboxMessage> {
        AnswerReader one(v, "claim");
        OutboxMessage m;
        m.id = one.Int("id");
        m.key = one.String("key");
        if (const json::value* p = one.Find("payload")) m.payload = *p;
        m.attempt = one.Int("attempt");
        m.claim_token = one.String("claim_token");
        m.lease_expires_at =
            one.OptionalString("lease_expires_at").value_or("");
        return one.Finish(std::move(m));
      });
}

Result<AckOutcome> ParseAckAnswer(const json::value& answer) {
  AnswerReader reader(answer, "ack");
  AckOutcome out;
  out.acked = reader.Bool("acked");
  out.already = reader.BoolOr("already", false);
  out.reason = reader.OptionalString("reason").value_or("");
  return reader.Finish(std::move(out));
}

Result<OutboxCounts> ParseOutboxCounts(const json::value& answer) {
  AnswerReader reader(answer, "GET outbox");
  OutboxCounts out;
  out.pending = reader.Int("pending");
  out.claimed = reader.Int("claimed");
  out.dead = reader.Int("dead");
  out.dead_letters = reader.Array("dead_letters");
  return reader.Finish(std::move(out));
}

}  // namespace leasehold::client::api
