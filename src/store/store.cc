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
  auto fences = Load(visit);
  if (!fences) return std::unexpected(fences.error());
  state.fences_reserved = *fences;
  return state;
}

}  // namespace leasehold
