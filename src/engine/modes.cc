// Lock modes: compatibility, combination and names.
#include <array>
#include <cctype>

#include "engine/lock_types.h"
#include "engine/mode_masks.h"

namespace leasehold {
namespace {

constexpr std::array<std::string_view, kLockModeCount> kModeNames = {
    "NoLock",
    "IntentShared",
    "Shared",
    "Update",
    "IntentExclusive",
    "SharedIntentExclusive",
    "UpdateIntentExclusive",
    "Exclusive"};

// Component bits of a mode; SIX and UIX are unions of two components.
constexpr unsigned kBitIS = 1, kBitS = 2, kBitU = 4, kBitIX = 8, kBitX = 16;

constexpr unsigned Components(LockMode m) {
  switch (m) {
    case LockMode::kNoLock:
      return 0;
    case LockMode::kIntentShared:
      return kBitIS;
    case LockMode::kShared:
      return kBitS;
    case LockMode::kUpdate:
      return kBitU;
    case LockMode::kIntentExclusive:
      return kBitIX;
    case LockMode::kSharedIntentExclusive:
      return kBitS | kBitIX;
    case LockMode::kUpdateIntentExclusive:
      return kBitU | kBitIX;
    case LockMode::kExclusive:
      return kBitX;
  }
  return kBitX;
}

constexpr LockMode FromComponents(unsigned bits) {
  if (bits & kBitX) return LockMode::kExclusive;
  if ((bits & kBitU) && (bits & kBitIX))
    return LockMode::kUpdateIntentExclusive;
  if ((bits & kBitS) && (bits & kBitIX))
    return LockMode::kSharedIntentExclusive;
  if (bits & kBitU) return LockMode::kUpdate;
  if (bits & kBitS) return LockMode::kShared;
  if (bits & kBitIX) return LockMode::kIntentExclusive;
  if (bits & kBitIS) return LockMode::kIntentShared;
  return LockMode::kNoLock;
}

// Case-insensitive match of `text` without its trailing blanks against `word`.
bool MatchesWord(std::string_view text, std::string_view word) {
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.size() != word.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto a = static_cast<unsigned char>(text[i]);
    const auto b = static_cast<unsigned char>(word[i]);
    if (std::tolower(a) != std::tolower(b)) return false;
  }
  return true;
}

}  // namespace

bool Compatible(LockMode held, LockMode requested) {
  return engine::CompatibleMask(requested) & engine::ModeBit(held);
}

LockMode Combine(LockMode a, LockMode b) {
  return FromComponents(Components(a) | Components(b));
}

Result<LockMode> ParseLockMode(std::string_view text) {
  for (LockMode m :
       {LockMode::kShared, LockMode::kUpdate, LockMode::kIntentShared,
        LockMode::kIntentExclusive, LockMode::kExclusive}) {
    if (MatchesWord(text, LockModeName(m))) return m;
  }
  return Error(StatusCode::kBadMode,
               "mode must be one of Shared, Update, IntentShared, "
               "IntentExclusive, Exclusive (got \"" +
                   std::string(text.substr(0, 64)) + "\")");
}

Result<LockOwner> ParseLockOwner(std::string_view text) {
  if (MatchesWord(text, "Transaction")) return LockOwner::kTransaction;
  if (MatchesWord(text, "Session")) return LockOwner::kSession;
  return Error(StatusCode::kBadOwner,
               "owner must be Transaction or Session (got \"" +
                   std::string(text.substr(0, 64)) + "\")");
}

std::string_view LockModeName(LockMode mode) {
  return kModeNames[static_cast<std::size_t>(mode)];
}

std::string_view LockOwnerName(LockOwner owner) {
  return owner == LockOwner::kTransaction ? "Transaction" : "Session";
}

std::string_view AcquireResultName(AcquireResult result) {
  switch (result) {
    case AcquireResult::kGranted:
      return "granted";
    case AcquireResult::kGrantedAfterWait:
      return "granted_after_wait";
    case AcquireResult::kTimeout:
      return "timeout";
    case AcquireResult::kCancelled:
      return "cancelled";
    case AcquireResult::kDeadlock:
      return "deadlock";
  }
  return "unknown";
}

std::string_view LostReasonName(LostReason reason) {
  switch (reason) {
    case LostReason::kNone:
      return "";
    case LostReason::kHoldLimit:
      return "expired";
    case LostReason::kBroken:
      return "broken";
  }
  return "unknown";
}

}  // namespace leasehold
