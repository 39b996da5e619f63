#include "store/restore.h"

namespace leasehold {

Result<std::unique_ptr<Engine>> RestoreEngine(Store& store,
                                              const EngineOptions& options,
                                              Time now) {
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
  // Sessions, locks and the id reservations are restored with issue 15's
  // engine side; until then their visitors stay empty.
  auto reserved = store.Load(visit);
  const Status st =
      reserved ? engine->RestoreFences(reserved->fences) : reserved.error();
  if (!st.ok()) {
    return std::unexpected(
        Status(StatusCode::kUnavailable,
               "cannot load " + store.Describe() + ": " + st.message()));
  }
  return engine;
}

}  // namespace leasehold
