#include "store/store.h"

#include <limits>

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
  state.lock_delay_until_us = reserved->lock_delay_until_us;
  return state;
}

Status Store::Backup(const std::string& /*destination*/,
                     std::stop_token /*stop*/) {
  return Status(StatusCode::kNotSupported,
                Describe() + " keeps no files of its own to copy");
}

std::string_view LockRowProblem(bool has_session, std::int64_t owner,
                                std::int64_t mode, std::int64_t count,
                                std::int64_t limit, std::int64_t lost) {
  constexpr std::int64_t kMaxCount = std::numeric_limits<std::uint32_t>::max();
  if (!has_session) return "has no session row";
  if (owner < 0 || owner > 1 || mode < 0 || mode >= kLockModeCount ||
      count < 0 || count > kMaxCount || limit < 0 || limit > kMaxCount ||
      lost < 0 || lost > static_cast<std::int64_t>(LostReason::kBroken)) {
    return "has an owner, mode, count, semaphore limit or loss out of range";
  }
  return {};
}

std::string LockRowName(std::int64_t session, std::int64_t owner,
                        const LockRow& row) {
  return "the lock row (session " + std::to_string(session) + ", owner " +
         std::to_string(owner) + ", \"" + row.ns + "\", \"" + row.principal +
         "\", \"" + row.resource + "\")";
}

}  // namespace leasehold
