// sp_getapplock's lock modes as the history checks see them, written out
// here rather than taken from the engine: a checker that shared the
// engine's table would share its mistakes. lock_history_modes_test.cc
// compares the two.
#ifndef LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_MODES_H_
#define LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_MODES_H_

#include <optional>
#include <string_view>

#include "engine/lock_types.h"

namespace leasehold::testing {

// True when two different sessions may not hold `a` and `b` on one resource
// at once. Symmetric; NoLock conflicts with nothing; the combined modes
// (SharedIntentExclusive, UpdateIntentExclusive) conflict with whatever one
// of their parts does.
bool ModesConflict(LockMode a, LockMode b);

// The mode a session holds after being granted `b` while holding `a`
// (Shared + IntentExclusive = SharedIntentExclusive, anything +
// Exclusive = Exclusive). It stays until the last reference is released.
LockMode CombinedMode(LockMode a, LockMode b);

// True for the five modes a client may ask for.
bool IsRequestable(LockMode mode);

// The requestable modes by their API names ("Exclusive", ...), ignoring
// case as the server does; nullopt for anything else.
std::optional<LockMode> RequestedLockMode(std::string_view name);

// APPLOCK_MODE's names, "NoLock" to "Exclusive".
std::string_view ModeName(LockMode mode);

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_MODES_H_
