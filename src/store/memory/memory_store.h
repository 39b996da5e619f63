// MemoryStore: a Store that keeps everything in this process's memory, for
// `leasehold serve --store memory` and the in-process test server
// (src/testing/test_server.h): nothing on disk, nothing survives the
// process. "Durable" here means only "held for as long as the process
// lives", which is all a test needs.
#ifndef LEASEHOLD_STORE_MEMORY_MEMORY_STORE_H_
#define LEASEHOLD_STORE_MEMORY_MEMORY_STORE_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "store/store.h"

namespace leasehold {

// The rows a memory store holds, shared by every MemoryStore opened on it:
// opening it again (a recovery, a test's reopen) sees what was appended.
struct MemoryStoreData {
  std::mutex mu;  // guards everything below
  std::map<std::pair<std::string, std::string>, KeyRow> keys;  // (ns, key)
  std::map<std::pair<std::string, std::string>, OperationRow> operations;
  // (ns, topic, id)
  std::map<std::tuple<std::string, std::string, std::uint64_t>, MessageRow>
      messages;
  std::map<SessionId, SessionRow> sessions;
  // (session, owner, ns, principal, resource): a session's rows together.
  std::map<
      std::tuple<SessionId, LockOwner, std::string, std::string, std::string>,
      LockRow>
      locks;
  Store::Reservations reserved;
  // For tests: a batch with an entry this refuses fails whole, as a
  // database refusing a row would fail it. Empty: nothing is refused.
  std::function<Status(const JournalEntry&)> refuse = {};
};

// A store over `data` (a new, empty one when null). Never fails.
std::unique_ptr<Store> OpenMemoryStore(
    std::shared_ptr<MemoryStoreData> data = nullptr);

}  // namespace leasehold

#endif  // LEASEHOLD_STORE_MEMORY_MEMORY_STORE_H_
