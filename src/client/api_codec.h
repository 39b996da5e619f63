// The API of docs/api.md in one place, for every client of the server (the C++
// client, the CLI, the load generator): the paths of the endpoints (each
// segment and query value percent-encoded), the request bodies as JSON text,
// and the parsing of the answers into the types of leasehold/client.h.
// Bodies are built by appending (no JSON tree) because the load generator
// sends them on its hot path.
#ifndef LEASEHOLD_SRC_CLIENT_API_CODEC_H_
#define LEASEHOLD_SRC_CLIENT_API_CODEC_H_

#include <boost/json/value.hpp>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "leasehold/client.h"

namespace leasehold::client::api {

// --- paths ------------------------------------------------------------------

// Percent-encodes `text` for use as one path segment or query value.
std::string PercentEncode(std::string_view text);
// "/a/b/c" from the segments, each percent-encoded.
std::string JoinPath(std::initializer_list<std::string_view> segments);
// Appends "?key=value" or "&key=value" (value percent-encoded) to `target`.
void AddQuery(std::string& target, std::string_view key,
              std::string_view value);

// /v1/sessions
std::string SessionsPath();
// /v1/sessions/{session}[/{action}]
std::string SessionPath(std::string_view session, std::string_view action = {});
// /v1/applocks/{ns}[/{action}]
std::string ApplockPath(std::string_view ns, std::string_view action = {});
// /v1/records/{ns}[/{action}] (list, purge)
std::string RecordsPath(std::string_view ns, std::string_view action = {});
// /v1/records/{ns}/{key}[/{action}]
std::string RecordPath(std::string_view ns, std::string_view key,
                       std::string_view action = {});
// /v1/operations/{ns}/{op_id}/{action}
std::string OperationPath(std::string_view ns, std::string_view op_id,
                          std::string_view action);
// /v1/outbox/{ns}/{topic}[/{action}]
std::string OutboxPath(std::string_view ns, std::string_view topic,
                       std::string_view action = {});
// /v1/events[?ns={ns}] (all namespaces when `ns` is empty)
std::string EventsPath(std::string_view ns);

// --- request bodies (JSON text) ---------------------------------------------

// POST /v1/sessions
std::string OpenSessionBody(std::string_view name, Milliseconds ttl);
// POST /v1/applocks/{ns}/acquire
std::string AcquireBody(std::string_view session, std::string_view resource,
                        const AcquireOptions& options);
// POST /v1/applocks/{ns}/release
std::string ReleaseBody(std::string_view session, std::string_view resource,
                        std::string_view owner, std::string_view principal);
// POST /v1/records/{ns}/{key}/checkout
std::string CheckoutBody(const CheckoutOptions& options);
// The holder's proof alone: checkin and delete ({"token"} or {"owner"}).
std::string ProofBody(const Proof& proof);
// POST /v1/records/{ns}/{key}/save: the proof, the text, the version the
// caller expects (if any).
std::string SaveBody(const Proof& proof, std::string_view body,
                     std::optional<std::int64_t> if_version);

// --- answers ----------------------------------------------------------------

// A session as POST /v1/sessions and GET /v1/sessions give it; `what`
// names the answer in the error.
Result<SessionInfo> ParseSession(const boost::json::value& answer,
                                 std::string_view what);
// The answer of acquire (200 or 409).
Result<AcquireOutcome> ParseAcquireAnswer(const boost::json::value& answer);
// The answer of checkout (200 or 423); `owner` is the caller's, the holder
// when the server leaves it out.
Result<CheckoutOutcome> ParseCheckoutAnswer(const boost::json::value& answer,
                                            std::string_view owner);

}  // namespace leasehold::client::api

#endif  // LEASEHOLD_SRC_CLIENT_API_CODEC_H_
