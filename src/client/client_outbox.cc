// Client: idempotent operations and the outbox (docs/api.md, "Idempotent
// operations and the outbox").
#include <boost/json/object.hpp>

#include "client/answer_reader.h"
#include "client/api_codec.h"
#include "client/client_impl.h"

namespace leasehold::client {

namespace json = boost::json;
using api::OperationPath;
using api::OutboxPath;
using detail::AnswerReader;

Result<OperationStatus> Client::BeginOperation(std::string_view ns,
                                               std::string_view op_id,
                                               std::string_view session) {
  const json::value body = json::object{{"session", session}};
  auto r = impl_->Call("POST", OperationPath(ns, op_id, "begin"), &body, {},
                       impl_->options().io_timeout, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "begin operation");
  OperationStatus out;
  out.completed = reader.String("state") == "completed";
  if (out.completed) {
    if (const json::value* o = reader.Find("outcome")) out.outcome = *o;
    out.completed_at = reader.OptionalString("completed_at").value_or("");
  }
  return reader.Finish(std::move(out));
}

Result<void> Client::CompleteOperation(std::string_view ns,
                                       std::string_view op_id,
                                       std::string_view session,
                                       const json::value& outcome) {
  const json::value body =
      json::object{{"session", session}, {"outcome", outcome}};
  auto r = impl_->Call("POST", OperationPath(ns, op_id, "complete"), &body, {},
                       impl_->options().io_timeout, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  return {};
}

Result<EnqueueOutcome> Client::Enqueue(std::string_view ns,
                                       std::string_view topic,
                                       std::string_view key,
                                       const json::value& payload,
                                       std::string_view session) {
  json::object body{{"key", key}, {"payload", payload}};
  if (!session.empty()) body["session"] = session;
  const json::value v = std::move(body);
  // Deduplicated by key, so a resend cannot enqueue twice.
  auto r = impl_->Call("POST", OutboxPath(ns, topic), &v, {},
                       impl_->options().io_timeout, Retry::kIdempotent);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "enqueue");
  EnqueueOutcome out;
  out.id = reader.Int("id");
  out.duplicate = reader.BoolOr("duplicate", false);
  out.staged = reader.BoolOr("staged", false);
  return reader.Finish(out);
}

Result<std::vector<OutboxMessage>> Client::Claim(std::string_view ns,
                                                 std::string_view topic,
                                                 std::string_view consumer,
                                                 int max, Milliseconds lease) {
  const json::value body = json::object{
      {"consumer", consumer}, {"max", max}, {"lease_ms", lease.count()}};
  auto r = impl_->Call("POST", OutboxPath(ns, topic, "claim"), &body, {},
                       impl_->options().io_timeout, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "claim");
  std::vector<OutboxMessage> out;
  for (const json::value& v : reader.Array("messages")) {
    AnswerReader one(v, "claim");
    OutboxMessage m;
    m.id = one.Int("id");
    m.key = one.String("key");
    if (const json::value* p = one.Find("payload")) m.payload = *p;
    m.attempt = one.Int("attempt");
    m.claim_token = one.String("claim_token");
    m.lease_expires_at = one.OptionalString("lease_expires_at").value_or("");
    if (!one.ok()) return std::unexpected(one.Failure());
    out.push_back(std::move(m));
  }
  return reader.Finish(std::move(out));
}

Result<AckOutcome> Client::Ack(std::string_view ns, std::string_view topic,
                               std::int64_t id, std::string_view claim_token) {
  const json::value body =
      json::object{{"id", id}, {"claim_token", claim_token}};
  // Acks are idempotent on the server (a second ack with the same claim is
  // "already"), so a resend after a lost answer is safe.
  auto r = impl_->Call("POST", OutboxPath(ns, topic, "ack"), &body, {423},
                       impl_->options().io_timeout, Retry::kIdempotent);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "ack");
  AckOutcome out;
  out.acked = reader.Bool("acked");
  out.already = reader.BoolOr("already", false);
  out.reason = reader.OptionalString("reason").value_or("");
  return reader.Finish(std::move(out));
}

Result<OutboxCounts> Client::GetOutbox(std::string_view ns,
                                       std::string_view topic) {
  auto r = impl_->Call("GET", OutboxPath(ns, topic), nullptr, {},
                       impl_->options().io_timeout, Retry::kIdempotent);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "GET outbox");
  OutboxCounts out;
  out.pending = reader.Int("pending");
  out.claimed = reader.Int("claimed");
  out.dead = reader.Int("dead");
  out.dead_letters = reader.Array("dead_letters");
  return reader.Finish(std::move(out));
}

}  // namespace leasehold::client
