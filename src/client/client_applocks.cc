// Client: application locks (docs/api.md, "Application locks").
#include <boost/json/object.hpp>

#include "client/answer_reader.h"
#include "client/api_codec.h"
#include "client/client_impl.h"

namespace leasehold::client {

namespace json = boost::json;
using api::AddQuery;
using api::ApplockPath;
using detail::AnswerReader;

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

// How long to wait for a lock call's answer: as long as the lock wait the
// caller asked for, plus the usual I/O allowance (none for -1: forever).
Milliseconds CallDeadline(const ClientOptions& options, Milliseconds timeout) {
  return timeout.count() < 0 ? Milliseconds(-1) : options.io_timeout + timeout;
}

LockHolder HolderFrom(AnswerReader& r) {
  LockHolder h;
  h.session = r.String("session");
  h.session_name = r.OptionalString("session_name").value_or("");
  h.owner = r.String("owner");
  h.mode = r.String("mode");
  h.since = r.OptionalString("since").value_or("");
  h.count = r.IntOr("count", 0);
  h.fence = r.UintOr("fence", 0);
  return h;
}

LockWaiter WaiterFrom(AnswerReader& r) {
  LockWaiter w;
  w.session = r.String("session");
  w.session_name = r.OptionalString("session_name").value_or("");
  w.owner = r.OptionalString("owner").value_or("");
  w.mode = r.String("mode");
  w.since = r.OptionalString("since").value_or("");
  w.deadline = r.OptionalString("deadline").value_or("");
  w.conversion = r.BoolOr("conversion", false);
  return w;
}

Result<LockInfo> LockFrom(const json::value& v) {
  AnswerReader r(v, "GET /v1/applocks/{ns}");
  LockInfo l;
  l.resource = r.String("resource");
  l.principal = r.String("principal");
  for (const json::value& g : r.Array("granted")) {
    AnswerReader one(g, "GET /v1/applocks/{ns}");
    l.granted.push_back(HolderFrom(one));
    if (!one.ok()) return std::unexpected(one.Failure());
  }
  for (const json::value& w : r.Array("waiting")) {
    AnswerReader one(w, "GET /v1/applocks/{ns}");
    l.waiting.push_back(WaiterFrom(one));
    if (!one.ok()) return std::unexpected(one.Failure());
  }
  return r.Finish(std::move(l));
}

}  // namespace

Result<AcquireOutcome> Client::Acquire(std::string_view ns,
                                       std::string_view session,
                                       std::string_view resource,
                                       const AcquireOptions& options) {
  const Milliseconds wait = CallDeadline(impl_->options(), options.timeout);
  auto r = impl_->Call("POST", ApplockPath(ns, "acquire"),
                       api::AcquireBody(session, resource, options), {409},
                       wait, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  return api::ParseAcquireAnswer(*r);
}

Result<void> Client::Release(std::string_view ns, std::string_view session,
                             std::string_view resource, std::string_view owner,
                             std::string_view principal) {
  auto r = impl_->Call("POST", ApplockPath(ns, "release"),
                       api::ReleaseBody(session, resource, owner, principal),
                       {}, impl_->options().io_timeout, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  return {};
}

Result<std::string> Client::Mode(std::string_view ns, std::string_view session,
                                 std::string_view resource,
                                 std::string_view owner,
                                 std::string_view principal) {
  auto r = impl_->Call(
      "GET",
      LockQuery(ApplockPath(ns, "mode"), session, resource, owner, principal),
      nullptr, {}, impl_->options().io_timeout, Retry::kIdempotent);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "GET mode");
  std::string mode = reader.String("mode");
  return reader.Finish(std::move(mode));
}

Result<bool> Client::Test(std::string_view ns, std::string_view session,
                          std::string_view resource,
                          const AcquireOptions& options) {
  std::string target = LockQuery(ApplockPath(ns, "test"), session, resource,
                                 options.owner, options.principal);
  AddQuery(target, "mode", options.mode);
  auto r = impl_->Call("GET", std::move(target), nullptr, {},
                       impl_->options().io_timeout, Retry::kIdempotent);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "GET test");
  const bool grantable = reader.Bool("grantable");
  return reader.Finish(grantable);
}

Result<std::vector<LockInfo>> Client::ListLocks(std::string_view ns) {
  auto r = impl_->Call("GET", ApplockPath(ns), nullptr, {},
                       impl_->options().io_timeout, Retry::kIdempotent);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "GET /v1/applocks/{ns}");
  std::vector<LockInfo> out;
  for (const json::value& v : reader.Array("locks")) {
    auto lock = LockFrom(v);
    if (!lock) return std::unexpected(lock.error());
    out.push_back(std::move(*lock));
  }
  return reader.Finish(std::move(out));
}

Result<AcquireAllOutcome> Client::AcquireAll(std::string_view ns,
                                             std::string_view session,
                                             const std::vector<LockSpec>& locks,
                                             const AcquireAllOptions& options) {
  json::array wanted;
  for (const LockSpec& l : locks) {
    wanted.push_back(json::object{{"resource", l.resource}, {"mode", l.mode}});
  }
  const json::value body = json::object{{"session", session},
                                        {"locks", std::move(wanted)},
                                        {"owner", options.owner},
                                        {"timeout_ms", options.timeout.count()},
                                        {"principal", options.principal}};
  const Milliseconds wait = CallDeadline(impl_->options(), options.timeout);
  auto r = impl_->Call("POST", ApplockPath(ns, "acquire-all"), &body, {409},
                       wait, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "acquire-all");
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

}  // namespace leasehold::client
