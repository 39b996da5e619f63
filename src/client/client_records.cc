// Client: records and checkouts (docs/api.md, "Records and checkouts").
#include <boost/json/value.hpp>

#include "client/api_codec.h"
#include "client/client_impl.h"

namespace leasehold::client {

namespace json = boost::json;
using api::RecordPath;

Result<std::int64_t> Client::Put(std::string_view ns, std::string_view key,
                                 std::string_view body, std::uint64_t fence,
                                 json::value* answer) {
  return Parsed(
      impl_->Call("PUT", RecordPath(ns, key), api::PutBody(body, fence), {},
                  impl_->options().io_timeout, Retry::kRefused),
      answer, api::ParsePutAnswer);
}

Result<RecordInfo> Client::Get(std::string_view ns, std::string_view key,
                               json::value* answer) {
  return Parsed(impl_->Call("GET", RecordPath(ns, key), nullptr, {},
                            impl_->options().io_timeout, Retry::kIdempotent),
                answer, api::ParseRecord);
}

Result<RecordPage> Client::List(std::string_view ns, const ListOptions& options,
                                json::value* answer) {
  return Parsed(
      impl_->Call("GET", api::ListRecordsPath(ns, options), nullptr, {},
                  impl_->options().io_timeout, Retry::kIdempotent),
      answer, api::ParseRecordPage);
}

Result<CheckoutOutcome> Client::Checkout(std::string_view ns,
                                         std::string_view key,
                                         const CheckoutOptions& options,
                                         json::value* answer) {
  return CheckoutWithin(ns, key, options, impl_->options().io_timeout, answer);
}

Result<CheckoutOutcome> Client::CheckoutWithin(std::string_view ns,
                                               std::string_view key,
                                               const CheckoutOptions& options,
                                               Milliseconds wait,
                                               json::value* answer) {
  // With the caller's token a second arrival is a renewal of the same lease.
  const Retry retry =
      options.token.empty() ? Retry::kRefused : Retry::kIdempotent;
  return Parsed(impl_->Call("POST", RecordPath(ns, key, "checkout"),
                            api::CheckoutBody(options), {423}, wait, retry),
                answer, [&](const json::value& a) {
                  return api::ParseCheckoutAnswer(a, options.owner);
                });
}

Result<WriteOutcome> Client::Save(std::string_view ns, std::string_view key,
                                  const Proof& proof, std::string_view body,
                                  std::optional<std::int64_t> if_version,
                                  json::value* answer) {
  return Parsed(impl_->Call("POST", RecordPath(ns, key, "save"),
                            api::SaveBody(proof, body, if_version), {412, 423},
                            impl_->options().io_timeout, Retry::kRefused),
                answer, api::ParseSaveAnswer);
}

Result<WriteOutcome> Client::Checkin(std::string_view ns, std::string_view key,
                                     const Proof& proof, json::value* answer) {
  return Parsed(
      impl_->Call("POST", RecordPath(ns, key, "checkin"),
                  api::ProofBody({proof.owner, proof.token}), {412, 423},
                  impl_->options().io_timeout, Retry::kRefused),
      answer, api::ParseCheckinAnswer);
}

Result<WriteOutcome> Client::Delete(std::string_view ns, std::string_view key,
                                    const Proof& proof, json::value* answer) {
  return Parsed(
      impl_->Call("DELETE", RecordPath(ns, key), api::ProofBody(proof),
                  {412, 423}, impl_->options().io_timeout, Retry::kRefused),
      answer, api::ParseDeleteAnswer);
}

Result<std::int64_t> Client::Purge(std::string_view ns, Milliseconds older_than,
                                   json::value* answer) {
  return Parsed(impl_->Call("POST", api::RecordsPath(ns, "purge"),
                            api::PurgeBody(older_than), {},
                            impl_->options().io_timeout, Retry::kRefused),
                answer, api::ParsePurgeAnswer);
}

Result<bool> Client::Break(std::string_view ns, std::string_view key,
                           json::value* answer) {
  // Never resent: a second break could end a lease granted in between.
  return Parsed(impl_->Call("POST", RecordPath(ns, key, "break"), nullptr, {},
                            impl_->options().io_timeout, Retry::kRefused),
                answer, api::ParseBreakAnswer);
}

}  // namespace leasehold::client
