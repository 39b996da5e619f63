#include "service/restore.h"

namespace leasehold {

Result<std::unique_ptr<Engine>> RestoreEngine(Store& store,
                                              const EngineOptions& options,
                                              const Clock& clock,
                                              Duration session_grace) {
  const Time now = clock.Now();
  auto engine = std::make_unique<Engine>(options);
  Store::Visitors visit;
  visit.key = [&](KeyRow&& row) {
    return engine->RestoreKey(now, std::move(row));
  };
  visit.operation = [&](OperationRow&& row) {
    return engine->RestoreOperation(std::move(row));
  };
  visit.message = [&](MessageRow&& row) {
    return engine->RestoreMessage(std::move(row));
  };
  // Restored sessions get a fresh ttl (and the grace), started again once
  // the load is done; their locks follow them.
  visit.session = [&](SessionRow&& row) {
    return engine->RestoreSession(now + session_grace, std::move(row));
  };
  visit.lock = [&](LockRow&& row) {
    return engine->RestoreLock(std::move(row));
  };
  auto reserved = store.Load(visit);
  Status st =
      reserved ? engine->RestoreFences(reserved->fences) : reserved.error();
  if (st.ok()) st = engine->RestoreSessionIds(reserved->session_ids);
  if (st.ok()) st = engine->RestoreTransactionIds(reserved->transaction_ids);
  if (st.ok()) st = engine->RestoreLockDelay(reserved->lock_delay_until_us);
  if (st.ok()) {
    st = engine->RestartRestoredSessions(clock.Now() + session_grace);
  }
  if (!st.ok()) {
    return std::unexpected(
        Status(StatusCode::kUnavailable,
               "cannot load " + store.Describe() + ": " + st.message()));
  }
  return engine;
}

}  // namespace leasehold
