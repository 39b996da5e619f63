// Client: records and checkouts (docs/api.md, "Records and checkouts").
#include <boost/json/object.hpp>

#include "client/answer_reader.h"
#include "client/api_codec.h"
#include "client/client_impl.h"

namespace leasehold::client {

namespace json = boost::json;
using api::AddQuery;
using api::RecordPath;
using detail::AnswerReader;

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
  return rec;
}

// Save, checkin and delete answer alike: `done_field` true, or false with a
// reason (423, 412).
Result<WriteOutcome> WriteFrom(const Result<json::value>& r,
                               std::string_view done_field,
                               std::string_view what) {
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, what);
  WriteOutcome out;
  out.done = reader.Bool(done_field);
  if (!out.done) out.reason = reader.String("reason");
  out.version = reader.IntOr("version", 0);
  return reader.Finish(std::move(out));
}

}  // namespace

Result<std::int64_t> Client::Put(std::string_view ns, std::string_view key,
                                 std::string_view body) {
  const json::value request = json::object{{"body", body}};
  auto r = impl_->Call("PUT", RecordPath(ns, key), &request, {},
                       impl_->options().io_timeout, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "PUT record");
  const std::int64_t version = reader.Int("version");
  return reader.Finish(version);
}

Result<RecordInfo> Client::Get(std::string_view ns, std::string_view key) {
  auto r = impl_->Call("GET", RecordPath(ns, key), nullptr, {},
                       impl_->options().io_timeout, Retry::kIdempotent);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "GET record");
  RecordInfo rec = RecordFrom(reader);
  return reader.Finish(std::move(rec));
}

Result<RecordPage> Client::List(std::string_view ns,
                                const ListOptions& options) {
  std::string target = api::RecordsPath(ns);
  if (!options.state.empty()) AddQuery(target, "state", options.state);
  if (!options.prefix.empty()) AddQuery(target, "prefix", options.prefix);
  if (!options.after.empty()) AddQuery(target, "after", options.after);
  if (options.limit > 0) {
    AddQuery(target, "limit", std::to_string(options.limit));
  }
  auto r = impl_->Call("GET", std::move(target), nullptr, {},
                       impl_->options().io_timeout, Retry::kIdempotent);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "GET records");
  RecordPage page;
  for (const json::value& v : reader.Array("records")) {
    AnswerReader one(v, "GET records");
    page.records.push_back(RecordFrom(one));
    if (!one.ok()) return std::unexpected(one.Failure());
  }
  page.next = reader.OptionalString("next");
  return reader.Finish(std::move(page));
}

Result<CheckoutOutcome> Client::Checkout(std::string_view ns,
                                         std::string_view key,
                                         const CheckoutOptions& options) {
  // With the caller's token a second arrival is a renewal of the same lease.
  const Retry retry =
      options.token.empty() ? Retry::kNever : Retry::kIdempotent;
  auto r = impl_->Call("POST", RecordPath(ns, key, "checkout"),
                       api::CheckoutBody(options), {423},
                       impl_->options().io_timeout, retry);
  if (!r) return std::unexpected(r.error());
  return api::ParseCheckoutAnswer(*r, options.owner);
}

Result<WriteOutcome> Client::Save(std::string_view ns, std::string_view key,
                                  const Proof& proof, std::string_view body,
                                  std::optional<std::int64_t> if_version) {
  return WriteFrom(
      impl_->Call("POST", RecordPath(ns, key, "save"),
                  api::SaveBody(proof, body, if_version), {412, 423},
                  impl_->options().io_timeout, Retry::kNever),
      "saved", "save");
}

Result<WriteOutcome> Client::Checkin(std::string_view ns, std::string_view key,
                                     const Proof& proof) {
  return WriteFrom(
      impl_->Call("POST", RecordPath(ns, key, "checkin"), api::ProofBody(proof),
                  {412, 423}, impl_->options().io_timeout, Retry::kNever),
      "released", "checkin");
}

Result<WriteOutcome> Client::Delete(std::string_view ns, std::string_view key,
                                    const Proof& proof) {
  return WriteFrom(
      impl_->Call("DELETE", RecordPath(ns, key), api::ProofBody(proof),
                  {412, 423}, impl_->options().io_timeout, Retry::kNever),
      "deleted", "delete");
}

Result<std::int64_t> Client::Purge(std::string_view ns,
                                   Milliseconds older_than) {
  const json::value v = json::object{{"older_than_ms", older_than.count()}};
  auto r = impl_->Call("POST", api::RecordsPath(ns, "purge"), &v, {},
                       impl_->options().io_timeout, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "purge");
  const std::int64_t purged = reader.Int("purged");
  return reader.Finish(purged);
}

Result<bool> Client::Break(std::string_view ns, std::string_view key) {
  // Never resent: a second break could end a lease granted in between.
  auto r = impl_->Call("POST", RecordPath(ns, key, "break"), nullptr, {},
                       impl_->options().io_timeout, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "break");
  const bool broken = reader.Bool("broken");
  return reader.Finish(broken);
}

}  // namespace leasehold::client
