#include "store/store.h"

namespace leasehold {

Result<DurableState> Store::LoadAll() {
  DurableState state;
  Visitors visit;
  visit.key = [&](KeyRow&& row) {
    state.rows.push_back(std::move(row));
    return Status::Ok();
  };
  visit.operation = [&](OperationRow&& row) {
    state.operations.push_back(std::move(row));
    return Status::Ok();
  };
  visit.message = [&](MessageRow&& row) {
    state.messages.push_back(std::move(row));
    return Status::Ok();
  };
  visit.session = [&](SessionRow&& row) {
    state.sessions.push_back(std::move(row));
    return Status::Ok();
  };
  visit.lock = [&](LockRow&& row) {
    state.locks.push_back(std::move(row));
    return Status::Ok();
  };
  auto reserved = Load(visit);
  if (!reserved) return std::unexpected(reserved.error());
  state.fences_reserved = reserved->fences;
  state.session_ids_reserved = reserved->session_ids;
  state.transaction_ids_reserved = reserved->transaction_ids;
  return state;
}

}  // namespace leasehold
