// Client: idempotent operations and the outbox (docs/api.md, "Idempotent
// operations and the outbox").
#include <boost/json/value.hpp>

#include "client/api_codec.h"
#include "client/client_impl.h"

namespace leasehold::client {

namespace json = boost::json;
using api::OperationPath;
using api::OutboxPath;

Result<OperationStatus> Client::BeginOperation(std::string_view ns,
                                               std::string_view op_id,
                                               std::string_view session) {
  return Parsed(impl_->Call("POST", OperationPath(ns, op_id, "begin"),
                            api::BeginOperationBody(session), {},
                            impl_->options().io_timeout, Retry::kRefused),
                nullptr, api::ParseOperationStatus);
}

Result<void> Client::CompleteOperation(std::string_view ns,
                                       std::string_view op_id,
                                       std::string_view session,
                                       const json::value& outcome) {
  return Done(impl_->Call("POST", OperationPath(ns, op_id, "complete"),
                          api::CompleteOperationBody(session, outcome), {},
                          impl_->options().io_timeout, Retry::kRefused));
}

Result<EnqueueOutcome> Client::Enqueue(std::string_view ns,
                                       std::string_view topic,
                                       std::string_view key,
                                       const json::value& payload,
                                       std::string_view session) {
  // Deduplicated by key, so a resend cannot enqueue twice.
  return Parsed(impl_->Call("POST", OutboxPath(ns, topic),
                            api::EnqueueBody(key, payload, session), {},
                            impl_->options().io_timeout, Retry::kIdempotent),
                nullptr, api::ParseEnqueueAnswer);
}

Result<std::vector<OutboxMessage>> Client::Claim(std::string_view ns,
                                                 std::string_view topic,
                                                 std::string_view consumer,
                                                 int max, Milliseconds lease) {
  return Parsed(impl_->Call("POST", OutboxPath(ns, topic, "claim"),
                            api::ClaimBody(consumer, max, lease), {},
                            impl_->options().io_timeout, Retry::kRefused),
                nullptr, api::ParseClaimAnswer);
}

Result<AckOutcome> Client::Ack(std::string_view ns, std::string_view topic,
                               std::int64_t id, std::string_view claim_token) {
  // Acks are idempotent on the server (a second ack with the same claim is
  // "already"), so a resend after a lost answer is safe.
  return Parsed(impl_->Call("POST", OutboxPath(ns, topic, "ack"),
                            api::AckBody(id, claim_token), {423},
                            impl_->options().io_timeout, Retry::kIdempotent),
                nullptr, api::ParseAckAnswer);
}

Result<OutboxCounts> Client::GetOutbox(std::string_view ns,
                                       std::string_view topic) {
  return Parsed(impl_->Call("GET", OutboxPath(ns, topic), nullptr, {},
                            impl_->options().io_timeout, Retry::kIdempotent),
                nullptr, api::ParseOutboxCounts);
}

}  // namespace leasehold::client
