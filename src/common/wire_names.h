// The JSON field names of the HTTP API (docs/api.md; docs/openapi.yaml is
// the contract), named once for the server's handlers and the C++ client's
// codec, so that the two cannot drift apart by a typo. Grouped by the
// section of docs/api.md that first uses each; a name used again in a later
// section is not repeated. tests/contract/wire_names_test.py checks that
// every name here is a property or parameter of docs/openapi.yaml.
// Header only; may use the standard library only.
#ifndef LEASEHOLD_COMMON_WIRE_NAMES_H_
#define LEASEHOLD_COMMON_WIRE_NAMES_H_

#include <string_view>

namespace leasehold::wire {

using Name = std::string_view;

// "Conventions": an error answer, {"error": {"code", "message"}}, and the
// leader's address on a follower's not_leader.
inline constexpr Name kError = "error";
inline constexpr Name kCode = "code";
inline constexpr Name kMessage = "message";
inline constexpr Name kLeader = "leader";

// "Sessions": a session, its keepalive and cancel answers, the listing.
inline constexpr Name kSessions = "sessions";
inline constexpr Name kSession = "session";  // a session's id, as a string
inline constexpr Name kId = "id";
inline constexpr Name kName = "name";
inline constexpr Name kTtlMs = "ttl_ms";
inline constexpr Name kExpiresAt = "expires_at";
inline constexpr Name kLocks = "locks";
inline constexpr Name kWaiting = "waiting";
inline constexpr Name kOpenedBy = "opened_by";
inline constexpr Name kDeadlockPriority = "deadlock_priority";
inline constexpr Name kLocksLost = "locks_lost";
inline constexpr Name kCancelled = "cancelled";

// "Transactions": begin, commit, rollback, and the writes staged in one.
inline constexpr Name kTransaction = "transaction";
inline constexpr Name kStartedAt = "started_at";
inline constexpr Name kStagedWrites = "staged_writes";
inline constexpr Name kOp = "op";
inline constexpr Name kCommitted = "committed";
inline constexpr Name kRolledBack = "rolled_back";
inline constexpr Name kApplied = "applied";

// "Application locks" and "Semaphores": who asks, for what, how long.
inline constexpr Name kNs = "ns";
inline constexpr Name kPrincipal = "principal";
inline constexpr Name kOwner = "owner";
inline constexpr Name kResource = "resource";
inline constexpr Name kMode = "mode";
inline constexpr Name kTimeoutMs = "timeout_ms";
inline constexpr Name kLimit = "limit";
inline constexpr Name kPermits = "permits";

// "Acquire" (locks, semaphores) and "Acquire several at once": the answer.
inline constexpr Name kResult = "result";
inline constexpr Name kStatus = "status";
inline constexpr Name kFence = "fence";
inline constexpr Name kCount = "count";  // a lock's re-entrant count
inline constexpr Name kDeadlock = "deadlock";
inline constexpr Name kReleased = "released";  // also a checkin's answer

// A deadlock report: {"victim", "cycle": [edges]}.
inline constexpr Name kVictim = "victim";
inline constexpr Name kCycle = "cycle";
inline constexpr Name kWaiter = "waiter";
inline constexpr Name kWaiterName = "waiter_name";
inline constexpr Name kHolder = "holder";
inline constexpr Name kHolderName = "holder_name";
inline constexpr Name kWanted = "wanted";

// "Release, mode, test, list" and "Release and list": holdings and queues.
// A lock lists its holders as "granted", a semaphore as "holders".
inline constexpr Name kGrantable = "grantable";
inline constexpr Name kGranted = "granted";  // also a checkout's answer
inline constexpr Name kHolders = "holders";
inline constexpr Name kHeld = "held";
inline constexpr Name kSessionName = "session_name";
inline constexpr Name kSince = "since";
inline constexpr Name kDeadline = "deadline";
inline constexpr Name kConversion = "conversion";
inline constexpr Name kSemaphores = "semaphores";
// "Lock-delay".
inline constexpr Name kLockDelayUntil = "lock_delay_until";
inline constexpr Name kLockDelayPermits = "lock_delay_permits";
// "Hold limits and breaks": the limit asked and held, a break's answer, and
// a keepalive's news of what the session lost.
inline constexpr Name kMaxHoldMs = "max_hold_ms";
inline constexpr Name kHoldUntil = "hold_until";
inline constexpr Name kTaken = "taken";
inline constexpr Name kLost = "lost";
inline constexpr Name kKind = "kind";  // "applock" or "semaphore"

// "Records and checkouts" and "Fenced writes".
inline constexpr Name kRecords = "records";
inline constexpr Name kKey = "key";
inline constexpr Name kBody = "body";
inline constexpr Name kVersion = "version";
inline constexpr Name kState = "state";
inline constexpr Name kLockedBy = "locked_by";
inline constexpr Name kLockExpiresAt = "lock_expires_at";
inline constexpr Name kWriteFence = "write_fence";
inline constexpr Name kHasRecord = "has_record";
inline constexpr Name kToken = "token";
inline constexpr Name kRenewed = "renewed";
inline constexpr Name kIfVersion = "if_version";
inline constexpr Name kInserted = "inserted";
inline constexpr Name kSaved = "saved";
inline constexpr Name kDeleted = "deleted";
inline constexpr Name kReason = "reason";
inline constexpr Name kStaged = "staged";
inline constexpr Name kNext = "next";
inline constexpr Name kPrefix = "prefix";  // query of GET records
inline constexpr Name kAfter = "after";    // query of GET records
inline constexpr Name kOlderThanMs = "older_than_ms";
inline constexpr Name kPurged = "purged";
inline constexpr Name kBroken = "broken";

// "Idempotent operations and the outbox".
inline constexpr Name kOutcome = "outcome";
inline constexpr Name kCompletedAt = "completed_at";
inline constexpr Name kTopic = "topic";
inline constexpr Name kPayload = "payload";
inline constexpr Name kDuplicate = "duplicate";
inline constexpr Name kConsumer = "consumer";
inline constexpr Name kMax = "max";
inline constexpr Name kLeaseMs = "lease_ms";
inline constexpr Name kMessages = "messages";
inline constexpr Name kAttempt = "attempt";
inline constexpr Name kClaimToken = "claim_token";
inline constexpr Name kLeaseExpiresAt = "lease_expires_at";
inline constexpr Name kAcked = "acked";
inline constexpr Name kAlready = "already";
inline constexpr Name kPending = "pending";
inline constexpr Name kClaimed = "claimed";
inline constexpr Name kDead = "dead";
inline constexpr Name kDeadLetters = "dead_letters";
inline constexpr Name kAttempts = "attempts";
inline constexpr Name kEnqueuedAt = "enqueued_at";
inline constexpr Name kLastLeaseExpiredAt = "last_lease_expired_at";

// "Watching and operating": an event's frame, health, the cluster, reload.
inline constexpr Name kType = "type";
inline constexpr Name kAt = "at";
inline constexpr Name kUntil = "until";
inline constexpr Name kEpoch = "epoch";
inline constexpr Name kRole = "role";
inline constexpr Name kNode = "node";
inline constexpr Name kNodes = "nodes";
inline constexpr Name kLeaderNode = "leader_node";
inline constexpr Name kUrl = "url";
inline constexpr Name kSeenMsAgo = "seen_ms_ago";
inline constexpr Name kReloaded = "reloaded";
inline constexpr Name kSteppedDown = "stepped_down";
inline constexpr Name kTookOver = "took_over";

// "Testing: the manual clock".
inline constexpr Name kNow = "now";
inline constexpr Name kAdvanceMs = "advance_ms";

// "The dashboard": GET /v1/dashboard (web/app.js).
inline constexpr Name kNamespaces = "namespaces";
inline constexpr Name kAllNamespaces = "all_namespaces";
inline constexpr Name kAuthentication = "authentication";
inline constexpr Name kApplocks = "applocks";
inline constexpr Name kLockResources = "lock_resources";
inline constexpr Name kGrantedLocks = "granted_locks";
inline constexpr Name kOpenTransactions = "open_transactions";
inline constexpr Name kCheckouts = "checkouts";
inline constexpr Name kActiveCheckouts = "active_checkouts";
inline constexpr Name kKeys = "keys";
inline constexpr Name kTopics = "topics";
inline constexpr Name kDeadlocks = "deadlocks";
inline constexpr Name kVictimName = "victim_name";
inline constexpr Name kFirstAt = "first_at";
inline constexpr Name kRate = "rate";
inline constexpr Name kIntervalMs = "interval_ms";
inline constexpr Name kDeadlocksLastHour = "deadlocks_last_hour";
inline constexpr Name kDeadlocksSinceStart = "deadlocks_since_start";
inline constexpr Name kTimeoutsLastHour = "timeouts_last_hour";
inline constexpr Name kTimeoutsSinceStart = "timeouts_since_start";

}  // namespace leasehold::wire

#endif  // LEASEHOLD_COMMON_WIRE_NAMES_H_
