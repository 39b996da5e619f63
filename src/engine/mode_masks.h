// Lock modes as bits, so that "does this mode conflict with any mode in a
// set" is one AND. Internal to the engine.
#ifndef LEASEHOLD_ENGINE_MODE_MASKS_H_
#define LEASEHOLD_ENGINE_MODE_MASKS_H_

#include <array>
#include <cstdint>

#include "engine/lock_types.h"

namespace leasehold::engine {

using ModeMask = std::uint8_t;  // bit i set: LockMode(i) is present

constexpr ModeMask ModeBit(LockMode m) {
  return static_cast<ModeMask>(1u << static_cast<unsigned>(m));
}

// For each mode, the set of modes another session may hold beside it
// (DESIGN.md's compatibility table; symmetric; NoLock fits everything).
constexpr ModeMask CompatibleMask(LockMode m) {
  constexpr ModeMask kNo = ModeBit(LockMode::kNoLock);
  constexpr ModeMask kIS = ModeBit(LockMode::kIntentShared);
  constexpr ModeMask kS = ModeBit(LockMode::kShared);
  constexpr ModeMask kU = ModeBit(LockMode::kUpdate);
  constexpr ModeMask kIX = ModeBit(LockMode::kIntentExclusive);
  constexpr ModeMask kSIX = ModeBit(LockMode::kSharedIntentExclusive);
  constexpr ModeMask kUIX = ModeBit(LockMode::kUpdateIntentExclusive);
  constexpr ModeMask kAll = 0xff;
  switch (m) {
    case LockMode::kNoLock:
      return kAll;
    case LockMode::kIntentShared:
      return kNo | kIS | kS | kU | kIX | kSIX | kUIX;
    case LockMode::kShared:
      return kNo | kIS | kS | kU;
    case LockMode::kUpdate:
      return kNo | kIS | kS;
    case LockMode::kIntentExclusive:
      return kNo | kIS | kIX;
    case LockMode::kSharedIntentExclusive:
      return kNo | kIS;
    case LockMode::kUpdateIntentExclusive:
      return kNo | kIS;
    case LockMode::kExclusive:
      return kNo;
  }
  return kNo;
}

// True when `m` conflicts with at least one mode in `present`.
constexpr bool ConflictsWithAny(LockMode m, ModeMask present) {
  return (present & static_cast<ModeMask>(~CompatibleMask(m))) != 0;
}

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_MODE_MASKS_H_
