#include "store/store.h"

namespace leasehold {

Result<DurableState> Store::LoadAll() {
  DurableState state;
  auto fences = Load([&](KeyRow&& row) {
    state.rows.push_back(std::move(row));
    return Status::Ok();
  });
  if (!fences) return std::unexpected(fences.error());
  state.fences_reserved = *fences;
  return state;
}

}  // namespace leasehold
