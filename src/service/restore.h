// Loading a Store into a new Engine: the start-up half of the write path
// (EngineService, src/service/).
#ifndef LEASEHOLD_SERVICE_RESTORE_H_
#define LEASEHOLD_SERVICE_RESTORE_H_

#include <memory>

#include "common/clock.h"
#include "engine/engine.h"
#include "store/store.h"

namespace leasehold {

// A new engine made with `options`, holding everything `store` holds, as of
// `clock`'s now. Each session gets a fresh ttl from the end of the load (a
// load of a million locks takes seconds, which must not count against
// the sessions' clients), plus `session_grace` (a takeover by another node
// gives clients that long to find it, as Chubby's grace period). Fails with
// kUnavailable, naming the store, when it cannot be read or holds a row the
// engine refuses.
Result<std::unique_ptr<Engine>> RestoreEngine(
    Store& store, const EngineOptions& options, const Clock& clock,
    Duration session_grace = Duration::zero());

}  // namespace leasehold

#endif  // LEASEHOLD_SERVICE_RESTORE_H_
