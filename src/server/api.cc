// The request pipeline: target decoding, the route table's lookup, the
// checks a route asks for, then its handler; and the error conventions.
#include "server/api.h"

#include <charconv>
#include <chrono>
#include <map>

#include "server/fault_point.h"
#include "server/handlers.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding; `plus_is_space` for query strings. nullopt when a %
// escape is malformed.
std::optional<std::string> Decode(std::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      const int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (in[i] == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

Status BadTarget() {
  return Status(StatusCode::kBadRequest,
                "the request path or query has a malformed %-escape");
}

using QueryMap = std::map<std::string, std::string, std::less<>>;

// The decoded parameters of `target`'s query string; nullopt when a
// %-escape is malformed.
std::optional<QueryMap> ParseQuery(std::string_view target) {
  QueryMap query;
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) return query;
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? "" : rest.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    auto k = Decode(pair.substr(0, eq), true);
    auto v =
        Decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
    if (!k || !v) return std::nullopt;
    query[*k] = *v;
  }
  return query;
}

}  // namespace

unsigned HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kBadJson:
    case StatusCode::kBadRequest:
    case StatusCode::kNameTooLong:
    case StatusCode::kNameEmpty:
    case StatusCode::kBadMode:
    case StatusCode::kBadOwner:
    case StatusCode::kBadTimeout:
    case StatusCode::kNoTransaction:
      return 400;
    case StatusCode::kUnauthorized:
      return 401;
    case StatusCode::kForbidden:
      return 403;
    case StatusCode::kSessionNotFound:
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kTransactionOpen:
    case StatusCode::kNotHeld:
    case StatusCode::kExists:
    case StatusCode::kWaitPending:
    case StatusCode::kTransactionAborted:
    case StatusCode::kTransactionExpired:
    case StatusCode::kTransactionLost:
    case StatusCode::kWrongKind:
    case StatusCode::kLimitMismatch:
    case StatusCode::kStaleFence:
      return 409;
    case StatusCode::kBodyTooLarge:
    case StatusCode::kTransactionTooLarge:
      return 413;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kNotSupported:
      return 501;
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

ApiResponse JsonResponse(unsigned status, const json::value& v) {
  return ApiResponse{status, Serialize(v)};
}

ApiResponse JsonResponse(unsigned status, AnswerText&& text) {
  return ApiResponse{status, std::move(text).Take()};
}

ApiResponse ErrorResponse(const Status& st) {
  AnswerText error;
  error
      .String(wire::kCode, StatusCodeName(st.code()))
      // A message may quote what the client sent, which need not be UTF-8.
      .String(wire::kMessage, EscapeInvalidUtf8(st.message()));
  return JsonResponse(
      HttpStatusFor(st.code()),
      std::move(AnswerText().Object(wire::kError, std::move(error))));
}

void Call::Reply(unsigned status, const json::value& v) const {
  respond(JsonResponse(status, v));
}

void Call::Fail(const Status& st) const { respond(ErrorResponse(st)); }

Status SessionOwnerCheck::Check(Engine& engine, Time now) const {
  if (session == 0) return Status::Ok();
  auto info = engine.GetSession(now, session);
  if (!info || info->caller == principal) return Status::Ok();
  return Status(StatusCode::kForbidden, "session " + SessionIdText(session) +
                                            " belongs to another principal");
}

template <typename Outcome>
void Call::RunParkable(
    std::function<Result<Outcome>(Engine&, Time)> command,
    std::function<ApiResponse(const Outcome&)> answer,
    std::function<ApiResponse(const FinishedWait&)> answer_finished) const {
  if (route != nullptr && !route->Has(kMayPark)) {
    return Fail(Status(StatusCode::kInternal,
                       "a route that may not park ran a parkable command"));
  }
  service.ExecuteParkable<Outcome>(
      OwnerChecked<Result<Outcome>>(std::move(command)),
      [respond = respond, on_parked = on_parked,
       answer = std::move(answer)](Result<Outcome> r) {
        if (!r) return respond(ErrorResponse(r.error()));
        if (!r->wait) return respond(answer(*r));
        if (on_parked) on_parked(*r->wait);  // the answer comes below
      },
      [respond = respond, answer_finished = std::move(answer_finished)](
          const Result<FinishedWait>& done) {
        if (!done) return respond(ErrorResponse(done.error()));
        if (done->result == AcquireResult::kGrantedAfterWait) {
          FaultPoint(kFaultWaitGrantDurable);
        }
        respond(answer_finished(*done));
      });
}

template void Call::RunParkable<AcquireOutcome>(
    std::function<Result<AcquireOutcome>(Engine&, Time)>,
    std::function<ApiResponse(const AcquireOutcome&)>,
    std::function<ApiResponse(const FinishedWait&)>) const;
template void Call::RunParkable<AcquireAllOutcome>(
    std::function<Result<AcquireAllOutcome>(Engine&, Time)>,
    std::function<ApiResponse(const AcquireAllOutcome&)>,
    std::function<ApiResponse(const FinishedWait&)>) const;

std::string Call::Query(std::string_view name) const {
  auto it = query.find(name);
  return it == query.end() ? std::string() : it->second;
}

const std::string& Call::Param(std::string_view name) const {
  static const std::string kNone;
  const int i = route == nullptr ? -1 : route->pattern.ParamIndex(name);
  return i < 0 ? kNone : path[static_cast<std::size_t>(i)];
}

SessionId ParseSessionId(std::string_view text) {
  SessionId id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size()) return 0;
  return id;
}

std::string SessionIdText(SessionId id) { return std::to_string(id); }

Result<SessionId> SessionField(const Fields& fields) {
  auto raw = fields.Raw(wire::kSession);
  if (!raw || raw->is_null()) {
    return Error(StatusCode::kBadRequest, "field \"session\" is required");
  }
  if (raw->is_string()) return ParseSessionId(raw->as_string());
  if (raw->is_uint64()) return raw->as_uint64();
  if (raw->is_int64() && raw->as_int64() > 0) {
    return static_cast<SessionId>(raw->as_int64());
  }
  return Error(StatusCode::kBadRequest,
               "field \"session\" must be a session id string");
}

namespace {

// The session a request acts through, if it names one: the path's {id},
// else the body's or the query's "session".
std::optional<SessionId> NamedSession(const Call& c, int id_index) {
  if (id_index >= 0) {
    return ParseSessionId(c.path[static_cast<std::size_t>(id_index)]);
  }
  if (c.body.contains(wire::kSession)) {
    auto id = SessionField(Fields(c.body));
    return id ? std::optional<SessionId>(*id) : std::nullopt;
  }
  if (auto s = c.Query(wire::kSession); !s.empty()) return ParseSessionId(s);
  return std::nullopt;
}

}  // namespace

std::optional<ApiResponse> Api::ToLeader(std::string_view target) const {
  const cluster::ClusterView* cluster = cluster_.load();
  if (cluster == nullptr || cluster->Leads()) return std::nullopt;
  std::string leader = cluster->LeaderUrl();
  if (leader.empty()) {
    return ErrorResponse(
        Status(StatusCode::kUnavailable,
               "no node leads now (a standby takes over once the last "
               "leader's lease expires): retry shortly"));
  }
  while (!leader.empty() && leader.back() == '/') leader.pop_back();
  ApiResponse r;
  r.status = 307;
  r.location = leader + std::string(target);
  r.body = boost::json::serialize(boost::json::object{
      {wire::kLeader, leader},
      {wire::kMessage, "this node stands by; the leader is " + leader}});
  return r;
}

namespace {

// Counts each answer for its endpoint (Metrics::OnAnswer) on its way out;
// `route` is filled in once the request is matched.
struct CountedRespond {
  Api::Respond inner;
  Metrics* metrics;
  const Route* route;
  std::chrono::steady_clock::time_point arrived;

  void operator()(ApiResponse r) const {
    metrics->OnAnswer(route, r.status,
                      std::chrono::steady_clock::now() - arrived);
    inner(std::move(r));
  }
};

}  // namespace

void Api::Handle(ApiRequest request, Respond respond) {
  if (metrics_ != nullptr) {
    respond = CountedRespond{std::move(respond), metrics_, nullptr,
                             std::chrono::steady_clock::now()};
  }
  const std::string_view target = request.target;
  const std::size_t q = target.find('?');
  const std::string_view raw_path = target.substr(0, q);
  const std::string& m = request.method;
  const bool has_body =
      !request.body.empty() || m == "POST" || m == "PUT" || m == "DELETE";
  Call c{service_,
         options_,
         {},
         {},
         // The body is parsed into this object's arena (see below).
         has_body ? boost::json::object(MakeRequestArena())
                  : boost::json::object(),
         std::move(request.on_parked),
         std::move(respond),
         request.method,
         std::string(raw_path),
         nullptr,
         nullptr,
         history_,
         metrics_,
         nullptr,
         nullptr,
         reload_ ? &reload_ : nullptr,
         {}};

  auto query = ParseQuery(target);
  if (!query) return c.Fail(BadTarget());
  c.query = std::move(*query);
  c.path.reserve(6);  // the longest routes have 5
  {
    std::string_view rest = raw_path;
    while (!rest.empty()) {
      if (rest.front() == '/') {
        rest.remove_prefix(1);
        continue;
      }
      const std::size_t slash = rest.find('/');
      auto seg = Decode(rest.substr(0, slash), false);
      if (!seg) return c.Fail(BadTarget());
      c.path.push_back(std::move(*seg));
      rest = slash == std::string_view::npos ? "" : rest.substr(slash);
    }
  }

  const RouteMatch match = MatchRoute(m, c.path);
  c.route = match.route;
  if (auto* counted = c.respond.target<CountedRespond>()) {
    counted->route = match.route;
  }
  c.cluster = cluster_.load();
  if (match.route == nullptr || !match.route->Has(kEveryNode)) {
    if (auto elsewhere = ToLeader(target)) {
      return c.respond(std::move(*elsewhere));
    }
  }
  if (match.route != nullptr && match.route->Has(kPublic)) {
    return match.route->handler(c);
  }
  c.auth = auth_.load();
  if (c.auth->enabled()) {
    auto who = c.auth->Authenticate(request.authorization, request.peer.get());
    if (!who) return c.Fail(who.error());
    c.caller = *who;
  }
  // What is checked: the route's asks, or, for a path no route serves,
  // those of the nearest route (a read for GET, else a write) before 404.
  const Route* checked = match.route != nullptr ? match.route : match.nearest;
  if (checked == nullptr || !checked->Has(kSessionScoped)) {
    if (match.route == nullptr) {
      return c.Fail(NoRoute(m, c.raw_path));
    }
    // Without kSessionScoped a route asks only for a token, whose any role
    // covers what these need: reads that belong to no namespace.
    return match.route->handler(c);
  }
  if (c.caller != nullptr) {
    const Role role = match.route != nullptr ? match.route->role
                      : m == "GET"           ? Role::kRead
                                             : Role::kWrite;
    const std::string_view ns =
        match.ns_index < 0
            ? std::string_view()
            : std::string_view(
                  c.path[static_cast<std::size_t>(match.ns_index)]);
    // A name that is no name is refused as every handler refuses it, not
    // judged by the token first.
    if (match.ns_index >= 0) {
      if (Status st = ValidateName(ns, "namespace"); !st.ok()) {
        return c.Fail(st);
      }
    }
    if (Status st = Authorize(*c.caller, ns, role); !st.ok()) {
      return c.Fail(st);
    }
  }
  if (has_body) {
    auto body = ParseBodyObject(request.body, c.body.storage());
    if (!body) return c.Fail(body.error());
    c.body = std::move(*body);  // same arena: moved, not copied
  }
  if (c.caller != nullptr) {
    if (auto id = NamedSession(c, match.id_index)) {
      const TokenGrant& who = *c.caller;
      // A route that asks for the admin role (a break) acts on others'
      // sessions by its nature: Authorize checked the role for the
      // namespace.
      const bool admin = match.route != nullptr &&
                         (match.route->role == Role::kAdmin ||
                          (match.route->Has(kAdminMayActForOthers) &&
                           who.role == Role::kAdmin && who.AllNamespaces()));
      if (!admin) c.owner_check = {*id, who.principal};
    }
  }
  Dispatch(c);
}

void Api::Dispatch(Call& c) {
  if (c.route == nullptr) return c.Fail(NoRoute(c.method, c.raw_path));
  c.route->handler(c);
}

Result<EventAccess> Api::AuthorizeEvents(std::string_view authorization,
                                         std::string_view target,
                                         const PeerCertificate* peer) const {
  auto query = ParseQuery(target);
  if (!query) return std::unexpected(BadTarget());
  auto ns = query->find(wire::kNs);
  EventAccess access{ns == query->end() ? "" : ns->second, true};
  // ?ns= names a namespace as a path does: the same refusals.
  if (ns != query->end()) {
    if (Status st = ValidateName(access.ns, "namespace"); !st.ok()) {
      return std::unexpected(st);
    }
  }
  const std::shared_ptr<const Authenticator> auth = auth_.load();
  if (!auth->enabled()) return access;
  auto who = auth->Authenticate(authorization, peer);
  if (!who) return std::unexpected(who.error());
  if (access.ns.empty() && !(*who)->AllNamespaces()) {
    return Error(StatusCode::kForbidden,
                 "principal \"" + (*who)->principal +
                     "\" may watch only its own namespaces: add ?ns=NAME");
  }
  if (Status st = Authorize(**who, access.ns, Role::kRead); !st.ok()) {
    return std::unexpected(st);
  }
  access.unscoped = (*who)->AllNamespaces();
  return access;
}

}  // namespace leasehold::server
