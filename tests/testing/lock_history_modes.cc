// sp_getapplock's compatibility matrix, as SQL Server documents it.
#include "tests/testing/lock_history_modes.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace leasehold::testing {
namespace {

// The requestable modes, and the parts of a combined one.
enum Part : unsigned {
  kIS = 1u << 0,
  kS = 1u << 1,
  kU = 1u << 2,
  kIX = 1u << 3,
  kX = 1u << 4,
};

constexpr unsigned PartsOf(LockMode mode) {
  switch (mode) {
    case LockMode::kNoLock:
      return 0;
    case LockMode::kIntentShared:
      return kIS;
    case LockMode::kShared:
      return kS;
    case LockMode::kUpdate:
      return kU;
    case LockMode::kIntentExclusive:
      return kIX;
    case LockMode::kSharedIntentExclusive:
      return kS | kIX;
    case LockMode::kUpdateIntentExclusive:
      return kU | kIX;
    case LockMode::kExclusive:
      return kX;
  }
  return kX;
}

// The parts each part lets another session hold beside it:
//        IS  S   U   IX  X
//   IS   Y   Y   Y   Y   N
//   S    Y   Y   Y   N   N
//   U    Y   Y   N   N   N
//   IX   Y   N   N   Y   N
//   X    N   N   N   N   N
constexpr unsigned AllowedBeside(unsigned part) {
  switch (part) {
    case kIS:
      return kIS | kS | kU | kIX;
    case kS:
      return kIS | kS | kU;
    case kU:
      return kIS | kS;
    case kIX:
      return kIS | kIX;
    default:
      return 0;
  }
}

constexpr std::array<std::string_view, kLockModeCount> kNames = {
    "NoLock",
    "IntentShared",
    "Shared",
    "Update",
    "IntentExclusive",
    "SharedIntentExclusive",
    "UpdateIntentExclusive",
    "Exclusive"};

}  // namespace

bool ModesConflict(LockMode a, LockMode b) {
  const unsigned b_parts = PartsOf(b);
  for (unsigned part = kIS; part <= kX; part <<= 1) {
    if ((PartsOf(a) & part) != 0 && (b_parts & ~AllowedBeside(part)) != 0) {
      return true;
    }
  }
  return false;
}

LockMode CombinedMode(LockMode a, LockMode b) {
  const unsigned parts = PartsOf(a) | PartsOf(b);
  if ((parts & kX) != 0) return LockMode::kExclusive;
  if ((parts & kU) != 0 && (parts & kIX) != 0) {
    return LockMode::kUpdateIntentExclusive;
  }
  if ((parts & kS) != 0 && (parts & kIX) != 0) {
    return LockMode::kSharedIntentExclusive;
  }
  if ((parts & kU) != 0) return LockMode::kUpdate;
  if ((parts & kS) != 0) return LockMode::kShared;
  if ((parts & kIX) != 0) return LockMode::kIntentExclusive;
  if ((parts & kIS) != 0) return LockMode::kIntentShared;
  return LockMode::kNoLock;
}

bool IsRequestable(LockMode mode) {
  switch (mode) {
    case LockMode::kIntentShared:
    case LockMode::kShared:
    case LockMode::kUpdate:
    case LockMode::kIntentExclusive:
    case LockMode::kExclusive:
      return true;
    default:
      return false;
  }
}

std::optional<LockMode> RequestedLockMode(std::string_view name) {
  const auto same_letters = [](std::string_view a, std::string_view b) {
    return std::ranges::equal(a, b, [](char x, char y) {
      return std::tolower(static_cast<unsigned char>(x)) ==
             std::tolower(static_cast<unsigned char>(y));
    });
  };
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    const auto mode = static_cast<LockMode>(i);
    if (IsRequestable(mode) && same_letters(kNames[i], name)) return mode;
  }
  return std::nullopt;
}

std::string_view ModeName(LockMode mode) {
  const auto i = static_cast<std::size_t>(mode);
  return i < kNames.size() ? kNames[i] : "?";
}

}  // namespace leasehold::testing
