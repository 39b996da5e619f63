#include "client/api_codec.h"

#include <boost/json/object.hpp>

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

std::string SessionsPath() { return "/v1/sessions"; }

std::string SessionPath(std::string_view session, std::string_view action) {
  return action.empty() ? JoinPath({"v1", "sessions", session})
                        : JoinPath({"v1", "sessions", session, action});
}

std::string ApplockPath(std::string_view ns, std::string_view action) {
  return action.empty() ? JoinPath({"v1", "applocks", ns})
                        : JoinPath({"v1", "applocks", ns, action});
}

std::string RecordsPath(std::string_view ns, std::string_view action) {
  return action.empty() ? JoinPath({"v1", "records", ns})
                        : JoinPath({"v1", "records", ns, action});
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
    Key(key);
    text_.append(std::to_string(value));
    return *this;
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

std::string CheckoutBody(const CheckoutOptions& options) {
  Body body;
  body.Str("owner", options.owner).Int("ttl_ms", options.ttl.count());
  if (!options.token.empty()) body.Str("token", options.token);
  return body.Done();
}

namespace {

Body& AddProof(Body& body, const Proof& proof) {
  if (!proof.token.empty()) return body.Str("token", proof.token);
  return body.Str("owner", proof.owner);
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

// --- answers ----------------------------------------------------------------

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

Result<AcquireOutcome> ParseAcquireAnswer(const json::value& answer) {
  AnswerReader reader(answer, "acquire");
  AcquireOutcome out;
  out.result = static_cast<int>(reader.Int("result"));
  out.status = reader.String("status");
  out.fence = reader.UintOr("fence", 0);
  if (const json::value* d = reader.Find("deadlock")) out.deadlock = *d;
  return reader.Finish(std::move(out));
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

}  // namespace leasehold::client::api
