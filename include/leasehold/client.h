// leasehold C++ client: the HTTP/JSON API of docs/api.md as typed calls, plus
// sessions that keep themselves alive and RAII guards for an application
// lock, a semaphore's permits and a checkout.
//
// Errors are values: every call returns Result<T>; nothing throws. A refusal
// that is an ordinary answer of the API (a lock wait that timed out, a
// checkout held by someone else) is part of T, not an Error, so that callers
// can tell "the server said no" from "the call failed".
//
// Threads: Client is a cheap, copyable handle; all copies share one pool of
// keep-alive connections and may be used from any thread at once. Session,
// LockGuard, SemaphoreGuard and CheckoutGuard are move-only and belong to
// one thread, but
// their background renewal runs on its own thread and reports loss through
// a callback (which runs on that background thread).
//
// Clusters: ClientOptions::url may name several nodes of one cluster
// (docs/ha.md), comma-separated. Every call goes to the node the client
// believes leads; a standby's 307 is followed to the leader, which is
// remembered; a node that cannot be reached, or that answers 503
// unavailable while no node leads, is passed over for the next, and the
// nodes are asked in turn, with a short pause between rounds, until the
// call's deadline. So calls, sessions and their keepalives, and lock waits
// ride through a failover to another node, as they ride through a restart.
#ifndef LEASEHOLD_CLIENT_H_
#define LEASEHOLD_CLIENT_H_

#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leasehold::client {

using Milliseconds = std::chrono::milliseconds;

// A failed call. `code` is the API's error code (docs/api.md conventions, e.g.
// "session_not_found", "unauthorized") or one of the client's own:
//   "bad_url"      - ClientOptions::url cannot be used, or its TLS files
//                    (ca_file, cert_file, key_file: the message names the
//                    file and why)
//   "unreachable"  - could not connect (to any node), or the connection
//                    broke mid-call; a failed TLS handshake too (the
//                    message names why: "certificate verify failed:
//                    certificate has expired", "…: hostname mismatch",
//                    "…: unable to get local issuer certificate", a server
//                    that refused this client's certificate)
//   "timeout"      - no answer within ClientOptions::io_timeout
//   "bad_response" - the server's answer is not what docs/api.md promises
//   "lost"         - (guards) the lease or session was lost earlier
// and, for guards only, the API's refusals: "timeout", "cancelled",
// "deadlock" (lock, semaphore), "locked" (checkout held by another).
struct Error {
  std::string code;
  std::string message;
  unsigned http_status = 0;  // 0 when no HTTP answer was received
  // A guard's "deadlock": the server's {"victim","cycle":[...]}, so that
  // the victim can say which sessions and resources formed the cycle.
  boost::json::value deadlock = nullptr;
};

template <typename T>
using Result = std::expected<T, Error>;

struct ClientOptions {
  // The server: "http://HOST:PORT" or "https://HOST[:PORT]" (TLS; port 443
  // by default), or the nodes of a cluster separated by commas, in any
  // order, the two schemes mixed as they come
  // ("https://a:7443,https://b:7443"; blanks around the commas are ignored,
  // a node named twice counts once). The first is asked first until a node
  // answers or names the leader. A redirect to a node not listed is
  // followed too (up to 32 nodes in all), to https:// always and to
  // http:// only from an http:// node; the token is sent to every node, so
  // list only nodes you trust with it.
  std::string url = "http://127.0.0.1:7070";
  std::string token;  // bearer token, if configured
  // Longest wait for any one answer, failovers included. Lock waits add
  // their own timeout_ms.
  Milliseconds io_timeout{30'000};

  // TLS, for https:// nodes. The server's certificate is always verified:
  // signed by a trusted CA, valid now, and issued for the URL's host (a
  // DNS name, also sent as SNI, or an IP address); TLS 1.2 at least. PEM
  // files, read once by Create (a file that cannot be used is "bad_url",
  // naming it; a CA or certificate replaced later takes a new Client). The
  // environment (LEASEHOLD_CA_FILE, LEASEHOLD_CERT, LEASEHOLD_KEY, which
  // the command line reads) is not read here: pass its values if wanted.
  //
  // The CA certificates that sign the servers' certificates; empty: the
  // system's trusted CAs (/etc/ssl/certs).
  std::string ca_file{};
  // This client's certificate chain (leaf first), presented when a server
  // asks for one (mutual TLS: a server may map it to a principal, instead
  // of a token); empty: none.
  std::string cert_file{};
  // Its private key, unencrypted; empty: in cert_file. Must match it.
  std::string key_file{};
};

// --- typed answers ---------------------------------------------------------

struct SessionInfo {
  std::string id;
  std::string name;
  Milliseconds ttl{0};
  std::string expires_at;  // RFC 3339
  std::int64_t locks = 0;
  bool waiting = false;
  std::optional<std::int64_t> transaction;  // open transaction id
};

// A lock, or a semaphore's permits, that the server took back from a
// session while it lived on (docs/api.md, "Hold limits and breaks").
struct LostHold {
  std::string ns, principal;
  std::string resource;  // a semaphore's name
  std::string kind;      // "applock" or "semaphore"
  std::string owner;     // "Session" or "Transaction"
  std::string reason;    // "expired" (its hold limit) or "broken"
  std::string at;        // RFC 3339
};

struct KeepaliveAnswer {
  std::string expires_at;  // RFC 3339
  // The server restarted and this session's locks in namespaces that keep
  // them in memory are gone (said once; docs/api.md, "Sessions").
  bool locks_lost = false;
  // What the session lost to hold limits and breaks since it was last told,
  // oldest first (said once).
  std::vector<LostHold> lost;
};

struct AcquireOptions {
  std::string mode = "Exclusive";  // Shared, Update, IntentShared, ...
  std::string owner = "Session";   // or "Transaction"
  Milliseconds timeout{-1};        // -1 waits forever, 0 never waits
  std::string principal = "public";
  // The longest the server lets it be held before taking it back; 0: the
  // namespace's limit (none unless configured). More than the namespace's
  // is Error "bad_request".
  Milliseconds max_hold{0};
};

// sp_getapplock's return value: 0 granted, 1 granted after waiting,
// -1 timeout, -2 cancelled, -3 deadlock.
struct AcquireOutcome {
  int result = 0;
  std::string status;       // "granted", "granted_after_wait", "timeout", ...
  std::uint64_t fence = 0;  // when granted
  boost::json::value deadlock;  // {"victim","cycle":[...]} when result -3
  bool granted() const { return result >= 0; }
};

// One lock of an acquire-all call.
struct LockSpec {
  std::string resource;
  std::string mode = "Exclusive";
};

struct AcquireAllOptions {
  std::string owner = "Session";  // or "Transaction"
  Milliseconds timeout{-1};       // one budget for the whole call
  std::string principal = "public";
  Milliseconds max_hold{0};  // each lock's, as AcquireOptions::max_hold
};

struct GrantedLock {
  std::string resource;
  std::string mode;  // held after the grant
  std::uint64_t fence = 0;
  std::int64_t count = 0;
};

// acquire-all's answer: every lock granted (in canonical order), or none
// taken by this call, with `failed_resource` the one that was refused.
struct AcquireAllOutcome {
  int result = 0;  // as AcquireOutcome::result
  std::string status;
  std::vector<GrantedLock> locks;  // when granted
  std::string failed_resource;     // when refused
  boost::json::value deadlock;     // when result -3
  bool granted() const { return result >= 0; }
};

struct LockHolder {
  std::string session, session_name, owner, mode, since;
  std::int64_t count = 0;
  std::uint64_t fence = 0;
  std::string hold_until;  // RFC 3339; "" without a hold limit
};
struct LockWaiter {
  std::string session, session_name, owner, mode, since, deadline;
  bool conversion = false;
};
struct LockInfo {
  std::string resource, principal;
  std::vector<LockHolder> granted;
  std::vector<LockWaiter> waiting;
};

// A semaphore request: `permits` of the `limit` that its holders share.
struct SemaphoreOptions {
  // Required, 1..1,000,000. The first request sets it; while anyone holds or
  // waits for the semaphore every request must give the same (else Error
  // "limit_mismatch").
  std::int64_t limit = 0;
  // 1..limit, counting what the owner holds there already (else Error
  // "bad_request"). Asking again while holding adds permits.
  std::int64_t permits = 1;
  std::string owner = "Session";  // or "Transaction"
  Milliseconds timeout{-1};       // -1 waits forever, 0 never waits
  std::string principal = "public";
  Milliseconds max_hold{0};  // as AcquireOptions::max_hold
};

// As AcquireOutcome, for a semaphore.
struct SemaphoreOutcome {
  int result = 0;      // 0, 1 granted; -1 timeout, -2 cancelled, -3 deadlock
  std::string status;  // "granted", "granted_after_wait", "timeout", ...
  std::uint64_t fence = 0;      // when granted
  std::int64_t permits = 0;     // when granted: all the owner holds there now
  boost::json::value deadlock;  // {"victim","cycle":[...]} when result -3
  bool granted() const { return result >= 0; }
};

struct SemaphoreHolder {
  std::string session, session_name, owner, since;
  std::int64_t permits = 0;
  std::uint64_t fence = 0;
  std::string hold_until;  // RFC 3339; "" without a hold limit
};
struct SemaphoreWaiter {
  std::string session, session_name, owner, since, deadline;
  std::int64_t permits = 0;  // wanted
  bool conversion = false;   // a holder asking for more
};
// A semaphore in use (held or waited for), as the server lists it.
struct SemaphoreInfo {
  std::string name, principal;
  std::int64_t limit = 0;
  std::int64_t held = 0;  // permits held in all
  std::vector<SemaphoreHolder> holders;
  std::vector<SemaphoreWaiter> waiting;  // in queue order
  // Permits a lock-delay holds back (granted to nobody) until
  // lock_delay_until (RFC 3339; empty when none).
  std::string lock_delay_until;
  std::int64_t lock_delay_permits = 0;
};

struct RecordInfo {
  std::string key;
  std::optional<std::string> body;  // absent in lists and for lease-only keys
  std::int64_t version = 0;
  std::optional<std::string> locked_by;
  std::optional<std::string> lock_expires_at;
  std::string state;              // "locked" or "free", computed by the server
  std::uint64_t fence = 0;        // of the latest checkout grant
  std::uint64_t write_fence = 0;  // the highest fence a write carried
};

struct RecordPage {
  std::vector<RecordInfo> records;
  std::optional<std::string> next;  // pass as ListOptions::after
};

struct ListOptions {
  std::string state;  // "", "locked" or "free"
  std::string prefix;
  std::string after;
  int limit = 0;  // 0: the server's default
};

struct CheckoutOptions {
  std::string owner;  // required: the name others will see
  Milliseconds ttl{300'000};
  std::string token;  // optional: makes a retried checkout idempotent
};

struct CheckoutOutcome {
  bool granted = false;
  bool renewed = false;
  std::string token;        // when granted
  std::uint64_t fence = 0;  // when granted
  std::string locked_by;    // the holder (refused) or the caller (granted)
  std::string expires_at;   // of the lease, either way
};

// Proof of ownership for save/checkin/delete: the token when set, else the
// owner name (refused by namespaces configured with require_token).
struct Proof {
  std::string owner = {};
  std::string token = {};
  // A fenced save or delete (docs/api.md, "Fenced writes"): the fence of a
  // lock or semaphore grant you hold; refused with Error "stale_fence" once
  // a higher fence has written the record. With no owner and no token it
  // is the whole proof (the key must not be checked out). 0: none; never
  // sent by Checkin.
  std::uint64_t fence = 0;
};

// Outcome of save / checkin / delete. `done` false carries the reason:
// "not_owner", "expired" (423) or "version_mismatch" (412).
struct WriteOutcome {
  bool done = false;
  std::string reason;
  std::int64_t version = 0;  // save: the new version
};

// An idempotent operation's record (docs/api.md, "Idempotent operations").
struct OperationStatus {
  bool completed = false;      // false: "new", do the work
  boost::json::value outcome;  // the stored outcome, when completed
  std::string completed_at;
};

struct EnqueueOutcome {
  std::int64_t id = 0;
  bool duplicate = false;  // the key was enqueued before: nothing new
  bool staged = false;     // in the session's transaction, until commit
};

struct OutboxMessage {
  std::int64_t id = 0;
  std::string key;
  boost::json::value payload;
  std::int64_t attempt = 0;  // 1 on the first delivery
  std::string claim_token;
  std::string lease_expires_at;
};

// Ack's answer: `acked` false carries the 423 reason ("expired",
// "not_owner").
struct AckOutcome {
  bool acked = false;
  bool already = false;  // acknowledged before with the same claim
  std::string reason;
};

struct OutboxCounts {
  std::int64_t pending = 0, claimed = 0, dead = 0;
  boost::json::array dead_letters;  // as the server lists them
};

struct Event {
  std::string type;         // "applock.granted", "checkout.expired", ...
  boost::json::value data;  // the event's JSON object
};

// --- the client --------------------------------------------------------------

class Session;
class LockGuard;
class SemaphoreGuard;
class CheckoutGuard;

class Client {
 public:
  // Checks the options (not the server); "bad_url" if the URL is unusable,
  // "bad_request" if io_timeout is not positive.
  static Result<Client> Create(ClientOptions options);

  // Any call, for what the typed methods do not cover: 2xx answers give the
  // parsed body (null for 204); 4xx/5xx give an Error with the API's code,
  // except that `accept_status` lists statuses whose body is returned as a
  // value too (e.g. {409, 423} for refusals that carry data) unless it is an
  // API error body. The deadline is io_timeout + `extra_wait`, none when
  // `extra_wait` is negative.
  //
  // Sending again, here and in every typed call: a request that reached no
  // server (no connection could be made, or the TLS handshake failed) or
  // was redirected (307: same method and body, to https://, or to http://
  // from http://) is sent where it should go.
  // Of the requests that may have reached a server, GET and HEAD (and the
  // typed calls said to be idempotent: keepalive, cancel, a checkout with
  // its own token) are sent again after a broken connection, to the same
  // node once when the connection was a stale one, or to the next node.
  // Other requests are not: their caller sees "unreachable". A request
  // answered 503 unavailable is sent to the next node too, while several
  // nodes are known, except the lock requests (Acquire and AcquireAll,
  // which read what the session holds instead, below). A 503 means that
  // the node acted on nothing, with one exception: a leader that lost its
  // database in the middle of a commit cannot know whether it committed,
  // so a write it answered so may be applied twice (Put then says
  // "exists", a second Release "not_held").
  // Clusters: a node that answers 307 or 503 shows a cluster that may have
  // a leader shortly, so the nodes are asked again after a pause (50 ms,
  // doubling up to 400 ms) until the deadline (for a call without one,
  // io_timeout after the first round that found no leader). When no node
  // answers at all, or only one is known, the call fails at once.
  Result<boost::json::value> Call(std::string_view method,
                                  std::string_view target,
                                  const boost::json::value* body = nullptr,
                                  std::vector<unsigned> accept_status = {},
                                  Milliseconds extra_wait = Milliseconds{0});

  // GET /healthz of each node in turn, the believed leader first: true at
  // the first 200 (a node that leads and can write; it is the leader from
  // then on), false when none did but one answered 503 (a standby, or a
  // node whose store is down), else the Error.
  Result<bool> Healthy();

  // The calls that take `boost::json::value* answer` also copy the answer's
  // body there, as the server sent it, when `answer` is not null and an
  // answer was received that is not an Error (for tools that show it, such
  // as the command line's --json).

  // Sessions and transactions.
  Result<SessionInfo> OpenSession(std::string_view name, Milliseconds ttl);
  Result<KeepaliveAnswer> Keepalive(std::string_view session);
  Result<void> EndSession(std::string_view session);
  Result<std::vector<SessionInfo>> ListSessions(
      boost::json::value* answer = nullptr);
  Result<bool> Cancel(std::string_view session);  // true if a wait ended
  Result<std::int64_t> BeginTransaction(std::string_view session);
  Result<void> Commit(std::string_view session);
  Result<void> Rollback(std::string_view session);

  // Application locks.
  //
  // Acquire and AcquireAll ride through a restart of the server (kill -9
  // included; docs/client.md, "Restarts") and a failover to another node
  // of a cluster. A request of owner Session with a timeout other than 0,
  // whose session held none of its locks when the call began, is sent again
  // when its connection breaks or a node answers it 503 unavailable, once a
  // node answers /healthz (the same server back, or the new leader), with
  // what is left of the timeout; a grant that reached the server's disk
  // before the break is adopted (result 1, fences and counts from the lock
  // listing), never taken twice. To know what the session held, such a
  // call first reads its mode on each lock (one GET .../mode per lock). Any
  // other request (owner Transaction: transactions do not survive a
  // restart; timeout 0; a lock the session holds already, re-acquired or
  // converted) is sent once, and a break is Error "unreachable" (or
  // "unavailable"): the server may or may not have granted it (ListLocks
  // tells). A server gone for longer than io_timeout past the lock timeout
  // is "unreachable" too. Nobody else may take or release this session's
  // locks on those resources while the call runs.
  Result<AcquireOutcome> Acquire(std::string_view ns, std::string_view session,
                                 std::string_view resource,
                                 const AcquireOptions& options);
  // Error "not_held" if the session does not hold it.
  Result<void> Release(std::string_view ns, std::string_view session,
                       std::string_view resource, std::string_view owner,
                       std::string_view principal = "public");
  Result<std::string> Mode(std::string_view ns, std::string_view session,
                           std::string_view resource, std::string_view owner,
                           std::string_view principal = "public");
  Result<bool> Test(std::string_view ns, std::string_view session,
                    std::string_view resource, const AcquireOptions& options);
  Result<std::vector<LockInfo>> ListLocks(std::string_view ns,
                                          boost::json::value* answer = nullptr);
  // Several locks in one canonical order (bytewise by name), all or nothing
  // within one timeout. Refusals (409) are outcomes, not Errors. The server
  // keeps each lock the call takes on disk as it takes it, so a restart
  // while the call waited for a later lock brings back the earlier ones;
  // a call that rides through the restart (above) releases them before it
  // asks again, and so stays all or nothing. One sent once does not: after
  // its "unreachable", the session may hold some of them.
  Result<AcquireAllOutcome> AcquireAll(std::string_view ns,
                                       std::string_view session,
                                       const std::vector<LockSpec>& locks,
                                       const AcquireAllOptions& options = {});

  // Semaphores (docs/api.md, "Semaphores"): a name whose holders share at
  // most `limit` permits; everything else is as for application locks.
  //
  // A refusal (409 timeout, cancelled, deadlock) is an outcome; a
  // "limit_mismatch", "wrong_kind" (the name is a lock in use) or
  // "bad_request" (more permits than the limit) is an Error. Rides through
  // a restart or failover as Acquire does, when owner Session, a timeout
  // other than 0 and the session held no permits of the semaphore when the
  // call began (read first with one GetSemaphore); a grant that reached the
  // disk before the break is adopted (result 1, the listing's fence and
  // permits). Otherwise a break is Error "unreachable" (or "unavailable").
  Result<SemaphoreOutcome> AcquireSemaphore(std::string_view ns,
                                            std::string_view session,
                                            std::string_view name,
                                            const SemaphoreOptions& options);
  // Gives back `permits` (0: all the owner holds) and answers how many the
  // owner still holds. Error "not_held" if it holds none, "bad_request" for
  // more than it holds, "wait_pending" while the session waits for more.
  Result<std::int64_t> ReleaseSemaphore(std::string_view ns,
                                        std::string_view session,
                                        std::string_view name,
                                        std::string_view owner,
                                        std::int64_t permits = 0,
                                        std::string_view principal = "public");
  // The semaphores in use in `ns` (held or waited for), by name.
  Result<std::vector<SemaphoreInfo>> ListSemaphores(
      std::string_view ns, boost::json::value* answer = nullptr);
  // One semaphore; Error "not_found" when nobody holds or waits for it.
  Result<SemaphoreInfo> GetSemaphore(std::string_view ns, std::string_view name,
                                     std::string_view principal = "public");

  // Idempotent operations and the outbox (docs/outbox.md). Begin and
  // Complete need the session's open transaction; Complete, and Enqueue with
  // a session, are applied at Commit. Ack refusals (423) are outcomes.
  Result<OperationStatus> BeginOperation(std::string_view ns,
                                         std::string_view op_id,
                                         std::string_view session);
  Result<void> CompleteOperation(std::string_view ns, std::string_view op_id,
                                 std::string_view session,
                                 const boost::json::value& outcome);
  // `session` empty: enqueued at once, outside any transaction.
  Result<EnqueueOutcome> Enqueue(std::string_view ns, std::string_view topic,
                                 std::string_view key,
                                 const boost::json::value& payload,
                                 std::string_view session = {});
  Result<std::vector<OutboxMessage>> Claim(std::string_view ns,
                                           std::string_view topic,
                                           std::string_view consumer, int max,
                                           Milliseconds lease);
  Result<AckOutcome> Ack(std::string_view ns, std::string_view topic,
                         std::int64_t id, std::string_view claim_token);
  Result<OutboxCounts> GetOutbox(std::string_view ns, std::string_view topic);

  // Records and checkouts. Refusals (423/412) are outcomes, not Errors.
  // The new record's version; Error "exists" if the key is taken,
  // "stale_fence" when `fence` (0: none; see Proof::fence) is below the
  // key's write fence.
  Result<std::int64_t> Put(std::string_view ns, std::string_view key,
                           std::string_view body, std::uint64_t fence = 0,
                           boost::json::value* answer = nullptr);
  Result<RecordInfo> Get(std::string_view ns, std::string_view key,
                         boost::json::value* answer = nullptr);
  Result<RecordPage> List(std::string_view ns, const ListOptions& options,
                          boost::json::value* answer = nullptr);
  Result<CheckoutOutcome> Checkout(std::string_view ns, std::string_view key,
                                   const CheckoutOptions& options,
                                   boost::json::value* answer = nullptr);
  Result<WriteOutcome> Save(std::string_view ns, std::string_view key,
                            const Proof& proof, std::string_view body,
                            std::optional<std::int64_t> if_version = {},
                            boost::json::value* answer = nullptr);
  Result<WriteOutcome> Checkin(std::string_view ns, std::string_view key,
                               const Proof& proof,
                               boost::json::value* answer = nullptr);
  Result<WriteOutcome> Delete(std::string_view ns, std::string_view key,
                              const Proof& proof,
                              boost::json::value* answer = nullptr);
  Result<std::int64_t> Purge(std::string_view ns, Milliseconds older_than,
                             boost::json::value* answer = nullptr);
  Result<bool> Break(std::string_view ns, std::string_view key,
                     boost::json::value* answer = nullptr);

  // Streams GET /v1/events?ns= (all namespaces when `ns` is empty) from the
  // leader (found as any call finds it), calling `on_event` for each event
  // until it returns false or the stream ends. Returns when the stream ends
  // (Error "unreachable" if it broke, as it does when the leader is lost,
  // or was silent for max(io_timeout, 45 s) despite the server's 15 s
  // heartbeat). Events before the subscription reaches the server are not
  // seen.
  Result<void> Watch(std::string_view ns,
                     const std::function<bool(const Event&)>& on_event);

  // GET /v1/admin/backup: a consistent snapshot of the server's durable
  // state, taken while it serves (a SQLite database file: docs/storage.md,
  // "Backup and restore"), streamed to `path` + ".tmp", fsynced, then
  // renamed to `path` (and the directory fsynced): `path` is whole or
  // untouched, never half-written. Returns the bytes written. Needs the
  // admin role for every namespace when tokens are configured. Errors: the
  // API's ("forbidden", "not_supported" on a PostgreSQL or memory store,
  // "unavailable"), the transport's, "exists" when `path` exists and not
  // `overwrite`, "file" when the local file cannot be written (the .tmp is
  // removed).
  struct BackupOptions {
    bool overwrite = false;
  };
  Result<std::uint64_t> Backup(const std::string& path,
                               const BackupOptions& options);

  // A session kept alive in the background (keepalive every ttl/3, each
  // given up after half that, at least 1 s, at most io_timeout).
  // `on_lost` is called once if a keepalive finds the session gone
  // (session_not_found), never for a failed keepalive: those are tried
  // again, on the next node and at the next period, so a session rides
  // through a failover (the new leader gives it a fresh ttl and a grace),
  // even from a leader that stopped answering without a word (paused, or
  // its host gone), when its ttl is a few leases long.
  // `on_locks_lost` is called once if a keepalive says the server restarted
  // and the session's locks in namespaces that keep them in memory are gone
  // (its durable locks are still held). `on_hold_lost` is called, from the
  // keepalive thread, for each lock or semaphore's permits the server took
  // back (a hold limit, a break) while the session lives on; the guards
  // holding it report held() false from then on, and their Release is
  // Error "lost" without a request (the session may hold the name again).
  Result<Session> StartSession(
      std::string_view name, Milliseconds ttl,
      std::function<void(const Error&)> on_lost = {},
      std::function<void()> on_locks_lost = {},
      std::function<void(const LostHold&)> on_hold_lost = {});

  // A checkout renewed in the background at a third of its TTL (each
  // renewal given up as a keepalive is) and checked in when the guard is
  // destroyed. Error "locked" (message names the
  // holder) when someone else holds it. Without options.token the guard
  // makes one, so renewals are idempotent. `on_lost` is called once if a
  // renewal is refused or finds the lease gone (broken or ran out); a lease
  // such a renewal was granted by accident is checked in at once.
  Result<CheckoutGuard> CheckoutKey(
      std::string ns, std::string key, CheckoutOptions options,
      std::function<void(const Error&)> on_lost = {});

  const ClientOptions& options() const;

 private:
  class Impl;
  explicit Client(std::shared_ptr<Impl> impl);
  // Acquire and AcquireAll as one request each: a break is "unreachable".
  Result<AcquireOutcome> AcquireOnce(std::string_view ns,
                                     std::string_view session,
                                     std::string_view resource,
                                     const AcquireOptions& options);
  Result<AcquireAllOutcome> AcquireAllOnce(std::string_view ns,
                                           std::string_view session,
                                           const std::vector<LockSpec>& locks,
                                           const AcquireAllOptions& options);
  Result<SemaphoreOutcome> AcquireSemaphoreOnce(
      std::string_view ns, std::string_view session, std::string_view name,
      const SemaphoreOptions& options);
  // Keepalive and Checkout with a deadline of their own, for the
  // background renewals.
  Result<KeepaliveAnswer> KeepaliveWithin(std::string_view session,
                                          Milliseconds wait);
  Result<CheckoutOutcome> CheckoutWithin(std::string_view ns,
                                         std::string_view key,
                                         const CheckoutOptions& options,
                                         Milliseconds wait,
                                         boost::json::value* answer);
  std::shared_ptr<Impl> impl_;
  friend class Session;
  friend class LockGuard;
  friend class SemaphoreGuard;
  friend class CheckoutGuard;
};

// A server session, ended (DELETE) when destroyed. Keepalives run on a
// background thread; locks taken through Lock() live as long as the session
// does. `on_lost` may destroy the Session it belongs to. A moved-from Session
// may only be destroyed or assigned to (the same holds for the guards).
class Session {
 public:
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  const std::string& id() const;
  const std::string& name() const;
  bool lost() const;  // a keepalive found the session gone

  // Takes a Session-owned application lock (options.owner is ignored), held
  // until the guard is destroyed or released. A refusal is an Error whose
  // code is the status ("timeout", "cancelled", "deadlock"). A wait whose
  // connection breaks (the server restarted, or the leader was lost) is
  // asked again once a server answers (the same one, or the new leader),
  // within the timeout; a grant that reached the server's disk before the
  // break is adopted, not taken twice (as Client::Acquire, but without
  // reading the mode first: the session knows its guards). That
  // needs this session's locks on the resource to be taken through its
  // guards only; where one of its guards holds the lock already, a break is
  // Error "unreachable" (or "unavailable").
  Result<LockGuard> Lock(std::string ns, std::string resource,
                         AcquireOptions options = {});

  // Takes Session-owned permits of a semaphore (options.owner is ignored),
  // held until the guard is destroyed or released; a refusal is an Error as
  // for Lock, and so is "limit_mismatch". A broken wait rides through a
  // restart or failover as Lock's does, where no guard of this session
  // holds permits of that semaphore already.
  Result<SemaphoreGuard> Permits(std::string ns, std::string name,
                                 SemaphoreOptions options);

  // Ends the session now (otherwise the destructor does). Error "lost" if
  // it was already gone; a second End does nothing.
  Result<void> End();

 private:
  friend class Client;
  friend class LockGuard;
  friend class SemaphoreGuard;
  class Impl;
  explicit Session(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// An application lock held by a Session; released when destroyed.
class LockGuard {
 public:
  LockGuard(LockGuard&&) noexcept;
  LockGuard& operator=(LockGuard&&) noexcept;
  ~LockGuard();

  std::uint64_t fence() const;
  bool waited() const;  // granted with result 1
  // False once released, once the session was lost, or once the server took
  // the lock back (a hold limit, a break; see StartSession's on_hold_lost).
  bool held() const;
  // Error "not_held" if already released, "lost" if the session or the lock
  // was lost.
  Result<void> Release();

 private:
  friend class Session;
  class Impl;
  explicit LockGuard(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Permits of a semaphore held by a Session; given back when destroyed. Loss
// is reported as for LockGuard: through the Session's on_lost (and
// on_locks_lost), and held() turning false.
class SemaphoreGuard {
 public:
  SemaphoreGuard(SemaphoreGuard&&) noexcept;
  SemaphoreGuard& operator=(SemaphoreGuard&&) noexcept;
  ~SemaphoreGuard();

  std::uint64_t fence() const;
  // The permits this guard holds and gives back (the session may hold more
  // through other guards).
  std::int64_t permits() const;
  bool waited() const;  // granted with result 1
  // False once released, once the session was lost, or once the server took
  // the permits back (a hold limit, a break).
  bool held() const;
  // Gives this guard's permits back. Error "not_held" if already released,
  // "lost" if the session or the permits were lost.
  Result<void> Release();

 private:
  friend class Session;
  class Impl;
  explicit SemaphoreGuard(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A checkout kept renewed in the background; checked in when destroyed.
class CheckoutGuard {
 public:
  CheckoutGuard(CheckoutGuard&&) noexcept;
  CheckoutGuard& operator=(CheckoutGuard&&) noexcept;
  ~CheckoutGuard();

  const std::string& token() const;
  std::uint64_t fence() const;
  bool held() const;  // false once checked in or lost

  // Save under this lease (proof by token). Error "lost" once lost.
  Result<WriteOutcome> Save(std::string_view body,
                            std::optional<std::int64_t> if_version = {});
  // Stops renewing and checks in. Error "lost" once lost or checked in;
  // a refused checkin is an Error whose code is the reason.
  Result<void> Checkin();

 private:
  friend class Client;
  class Impl;
  explicit CheckoutGuard(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace leasehold::client

#endif  // LEASEHOLD_CLIENT_H_
