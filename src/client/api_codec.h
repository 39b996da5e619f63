// The API of docs/api.md in one place, for every client of the server (the C++
// client, and through it the CLI; the load generator; the tests): the paths
// of the endpoints (each segment and query value percent-encoded), the
// request bodies as JSON text, and the parsing of the answers into the types
// of leasehold/client.h. Bodies are built by appending (no JSON tree) because
// the load generator sends them on its hot path. Each Parse* takes the
// answer's body as the server sent it (for the statuses it names) and gives
// "bad_response" when a field docs/api.md promises is missing.
#ifndef LEASEHOLD_SRC_CLIENT_API_CODEC_H_
#define LEASEHOLD_SRC_CLIENT_API_CODEC_H_

#include <boost/json/value.hpp>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// /healthz
std::string HealthPath();
// /v1/sessions
std::string SessionsPath();
// /v1/sessions/{session}[/{action}]
std::string SessionPath(std::string_view session, std::string_view action = {});
// /v1/sessions/{session}/transaction[/{action}] (begin; commit, rollback)
std::string TransactionPath(std::string_view session,
                            std::string_view action = {});
// /v1/applocks/{ns}[/{action}]
std::string ApplockPath(std::string_view ns, std::string_view action = {});
// /v1/applocks/{ns}/mode?session=&resource=&owner=&principal=
std::string ModePath(std::string_view ns, std::string_view session,
                     std::string_view resource, std::string_view owner,
                     std::string_view principal);
// /v1/applocks/{ns}/test?session=&resource=&owner=&principal=&mode=
std::string TestPath(std::string_view ns, std::string_view session,
                     std::string_view resource, const AcquireOptions& options);
// /v1/semaphores/{ns}
std::string SemaphoresPath(std::string_view ns);
// /v1/semaphores/{ns}/{name}[/{action}] (acquire, release)
std::string SemaphorePath(std::string_view ns, std::string_view name,
                          std::string_view action = {});
// /v1/semaphores/{ns}/{name}?principal=
std::string GetSemaphorePath(std::string_view ns, std::string_view name,
                             std::string_view principal);
// /v1/records/{ns}[/{action}] (list, purge)
std::string RecordsPath(std::string_view ns, std::string_view action = {});
// /v1/records/{ns}?state=&prefix=&after=&limit= (the options that are set)
std::string ListRecordsPath(std::string_view ns, const ListOptions& options);
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
// POST /v1/applocks/{ns}/acquire-all
std::string AcquireAllBody(std::string_view session,
                           const std::vector<LockSpec>& locks,
                           const AcquireAllOptions& options);
// POST /v1/semaphores/{ns}/{name}/acquire
std::string SemaphoreAcquireBody(std::string_view session,
                                 const SemaphoreOptions& options);
// POST /v1/semaphores/{ns}/{name}/release; `permits` 0: left out (all).
std::string SemaphoreReleaseBody(std::string_view session,
                                 std::string_view owner, std::int64_t permits,
                                 std::string_view principal);
// PUT /v1/records/{ns}/{key}
std::string PutBody(std::string_view body, std::uint64_t fence = 0);
// POST /v1/records/{ns}/{key}/checkout
std::string CheckoutBody(const CheckoutOptions& options);
// The holder's proof alone: checkin and delete ({"token"} or {"owner"},
// and a delete's "fence").
std::string ProofBody(const Proof& proof);
// POST /v1/records/{ns}/{key}/save: the proof, the text, the version the
// caller expects (if any).
std::string SaveBody(const Proof& proof, std::string_view body,
                     std::optional<std::int64_t> if_version);
// POST /v1/records/{ns}/purge
std::string PurgeBody(Milliseconds older_than);
// POST /v1/operations/{ns}/{op_id}/begin
std::string BeginOperationBody(std::string_view session);
// POST /v1/operations/{ns}/{op_id}/complete
std::string CompleteOperationBody(std::string_view session,
                                  const boost::json::value& outcome);
// POST /v1/outbox/{ns}/{topic}; `session` empty: none (enqueued at once).
std::string EnqueueBody(std::string_view key, const boost::json::value& payload,
                        std::string_view session);
// POST /v1/outbox/{ns}/{topic}/claim
std::string ClaimBody(std::string_view consumer, int max, Milliseconds lease);
// POST /v1/outbox/{ns}/{topic}/ack
std::string AckBody(std::int64_t id, std::string_view claim_token);

// --- answers ----------------------------------------------------------------

// A session as POST /v1/sessions and GET /v1/sessions give it; `what`
// names the answer in the error.
Result<SessionInfo> ParseSession(const boost::json::value& answer,
                                 std::string_view what);
// GET /v1/sessions: every session.
Result<std::vector<SessionInfo>> ParseSessions(
    const boost::json::value& answer);
// keepalive: the session's new expires_at.
Result<KeepaliveAnswer> ParseKeepaliveAnswer(const boost::json::value& answer);
// cancel: whether a wait was ended.
Result<bool> ParseCancelAnswer(const boost::json::value& answer);
// POST .../transaction: the new transaction's id.
Result<std::int64_t> ParseTransactionAnswer(const boost::json::value& answer);

// The answer of acquire (200 or 409).
Result<AcquireOutcome> ParseAcquireAnswer(const boost::json::value& answer);
// The answer of acquire-all (200 or 409).
Result<AcquireAllOutcome> ParseAcquireAllAnswer(
    const boost::json::value& answer);
// GET mode: the combined mode held ("NoLock" for none).
Result<std::string> ParseModeAnswer(const boost::json::value& answer);
// GET test: whether the lock would be granted now.
Result<bool> ParseTestAnswer(const boost::json::value& answer);
// GET /v1/applocks/{ns}: every lock with its holders and waiters.
Result<std::vector<LockInfo>> ParseLocks(const boost::json::value& answer);

// The answer of a semaphore's acquire (200 or 409).
Result<SemaphoreOutcome> ParseSemaphoreAcquireAnswer(
    const boost::json::value& answer);
// A semaphore's release: the permits the owner still holds.
Result<std::int64_t> ParseSemaphoreReleaseAnswer(
    const boost::json::value& answer);
// GET /v1/semaphores/{ns}: every semaphore in use.
Result<std::vector<SemaphoreInfo>> ParseSemaphores(
    const boost::json::value& answer);
// GET /v1/semaphores/{ns}/{name}: one.
Result<SemaphoreInfo> ParseSemaphore(const boost::json::value& answer);

// PUT record: the new record's version.
Result<std::int64_t> ParsePutAnswer(const boost::json::value& answer);
// GET record.
Result<RecordInfo> ParseRecord(const boost::json::value& answer);
// GET /v1/records/{ns}: one page.
Result<RecordPage> ParseRecordPage(const boost::json::value& answer);
// The answer of checkout (200 or 423); `owner` is the caller's, the holder
// when the server leaves it out.
Result<CheckoutOutcome> ParseCheckoutAnswer(const boost::json::value& answer,
                                            std::string_view owner);
// The answers of save, checkin and delete (200, 412 or 423).
Result<WriteOutcome> ParseSaveAnswer(const boost::json::value& answer);
Result<WriteOutcome> ParseCheckinAnswer(const boost::json::value& answer);
Result<WriteOutcome> ParseDeleteAnswer(const boost::json::value& answer);
// purge: how many expired leases were cleared.
Result<std::int64_t> ParsePurgeAnswer(const boost::json::value& answer);
// break: whether there was a lease to break.
Result<bool> ParseBreakAnswer(const boost::json::value& answer);

// begin operation: "new", or "completed" with the stored outcome.
Result<OperationStatus> ParseOperationStatus(const boost::json::value& answer);
Result<EnqueueOutcome> ParseEnqueueAnswer(const boost::json::value& answer);
Result<std::vector<OutboxMessage>> ParseClaimAnswer(
    const boost::json::value& answer);
// The answer of ack (200 or 423).
Result<AckOutcome> ParseAckAnswer(const boost::json::value& answer);
// GET /v1/outbox/{ns}/{topic}.
Result<OutboxCounts> ParseOutboxCounts(const boost::json::value& answer);

}  // namespace leasehold::client::api

#endif  // LEASEHOLD_SRC_CLIENT_API_CODEC_H_
