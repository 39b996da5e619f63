// Vocabulary of application locks: modes, owners, results and identifiers.
// The semantics follow SQL Server's sp_getapplock (see docs/lock-manager.md).
#ifndef LEASEHOLD_ENGINE_LOCK_TYPES_H_
#define LEASEHOLD_ENGINE_LOCK_TYPES_H_

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace leasehold {

using SessionId = std::uint64_t;      // 0 is never a valid session
using TransactionId = std::uint64_t;  // 0 is never a valid transaction
using WaitId = std::uint64_t;         // identifies one parked lock request
using Fence = std::uint64_t;          // strictly increasing across all grants

// Lock modes. kSharedIntentExclusive and kUpdateIntentExclusive arise only as
// the combination of modes held by one owner; they cannot be requested.
enum class LockMode : std::uint8_t {
  kNoLock = 0,
  kIntentShared,
  kShared,
  kUpdate,
  kIntentExclusive,
  kSharedIntentExclusive,
  kUpdateIntentExclusive,
  kExclusive,
};
inline constexpr int kLockModeCount = 8;

enum class LockOwner : std::uint8_t { kTransaction = 0, kSession = 1 };

// sp_getapplock's return codes.
enum class AcquireResult : std::int8_t {
  kGranted = 0,
  kGrantedAfterWait = 1,
  kTimeout = -1,
  kCancelled = -2,
  kDeadlock = -3,
};

// Why a session lost a lock or permits it had not given back, while it
// lived on (docs/api.md, "Hold limits and breaks"): told in the answer to
// its next keep-alive.
enum class LostReason : std::uint8_t {
  kNone = 0,
  kHoldLimit = 1,  // held past its hold limit (NamespaceOptions::max_hold)
  kBroken = 2,     // an administrator broke it
};

// True when one session may hold `held` while another holds `requested`.
// kNoLock is compatible with everything.
bool Compatible(LockMode held, LockMode requested);

// The mode an owner holds after asking for `b` while holding `a`
// (IS+S=S, S+IX=SIX, U+IX=UIX, anything+X=X, ...). Commutative, associative.
LockMode Combine(LockMode a, LockMode b);

// Parses a requestable mode name ("Shared", "Update", "IntentShared",
// "IntentExclusive", "Exclusive"), ignoring case and trailing blanks.
// Fails with kBadMode for anything else, including the combined modes.
Result<LockMode> ParseLockMode(std::string_view text);

// Parses "Transaction" or "Session", ignoring case and trailing blanks.
// Fails with kBadOwner.
Result<LockOwner> ParseLockOwner(std::string_view text);

// APPLOCK_MODE's names: "NoLock", "IntentShared", "Shared", "Update",
// "IntentExclusive", "SharedIntentExclusive", "UpdateIntentExclusive",
// "Exclusive".
std::string_view LockModeName(LockMode mode);
std::string_view LockOwnerName(LockOwner owner);  // "Transaction", "Session"
// "granted", "granted_after_wait", "timeout", "cancelled", "deadlock".
std::string_view AcquireResultName(AcquireResult result);
// "expired" (the hold limit), "broken"; "" for kNone.
std::string_view LostReasonName(LostReason reason);

// Checks a resource, key, topic or namespace name: 1 to 255 Unicode
// characters of valid UTF-8. Fails with kNameEmpty, kNameTooLong (never
// truncates) or kBadRequest (invalid UTF-8). `what` names the field in the
// message, e.g. "resource".
Status ValidateName(std::string_view name, std::string_view what);

// True when `bytes` is strict UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool IsValidUtf8(std::string_view bytes);
// A lock's principal scope as locks compare it: ASCII letters lower-cased,
// every other byte as it is. SQL Server resolves sp_getapplock's
// @DbPrincipal ignoring case, so "dbo" and "DBO" are one scope; resource
// names, unlike principals, compare byte for byte.
std::string PrincipalScope(std::string_view principal);
// `bytes` as valid UTF-8: each byte that starts no valid sequence written
// as the four characters \xNN (lower-case hex), the rest as it is. For
// messages that quote what a client sent.
std::string EscapeInvalidUtf8(std::string_view bytes);

}  // namespace leasehold

#endif  // LEASEHOLD_ENGINE_LOCK_TYPES_H_
