// The modes of an EngineService and the moves between them, in one table
// (the model: server/connection_state.h). No store and no engine here, so
// the table is tested on its own.
#ifndef LEASEHOLD_SERVICE_SERVICE_STATE_H_
#define LEASEHOLD_SERVICE_SERVICE_STATE_H_

#include <cstdint>
#include <string_view>

namespace leasehold {

enum class ServiceMode : std::uint8_t {
  // The store accepts writes; commands run on the engine.
  kServing,
  // The store failed and nothing recovers it: every write answers the
  // failure (reads may come from the last acknowledged state).
  kFailed,
  // The store failed and EnableRecovery() is on: the store is closed,
  // opened and loaded again, backing off, while commands answer
  // kUnavailable (reads as in kFailed).
  kRecovering,
  // No store: a standby, or a leader that stepped down. Every command
  // answers kUnavailable until Attach().
  kStandingBy,
  // Shutdown() was called: no recovery, no attach, no backup.
  kStopping,
};

std::string_view ServiceModeName(ServiceMode mode);

// Whether a service in `from` may move to `to`.
bool IsLegalMove(ServiceMode from, ServiceMode to);

// A service's mode; every change goes through MoveTo.
class ServiceState {
 public:
  explicit ServiceState(ServiceMode initial) : mode_(initial) {}

  ServiceMode mode() const { return mode_; }
  bool Is(ServiceMode m) const { return mode_ == m; }
  // Counts the moves made. Work begun off the service's mutex (a recovery's
  // reload, the load of the engine for outage reads) keeps the epoch it
  // began in, and drops its result when the service has moved since.
  std::uint64_t epoch() const { return epoch_; }

  // Moves to `next`. A move the table does not allow is a bug in the
  // service: it is reported on stderr and the process aborts.
  void MoveTo(ServiceMode next);

 private:
  ServiceMode mode_;
  std::uint64_t epoch_ = 0;
};

}  // namespace leasehold

#endif  // LEASEHOLD_SERVICE_SERVICE_STATE_H_
