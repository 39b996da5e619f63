#include "service/service_state.h"

#include "common/log.h"

#include <cstdlib>
#include <string>

namespace leasehold {
namespace {

using M = ServiceMode;
constexpr int kModes = static_cast<int>(M::kStopping) + 1;

constexpr int Bit(M m) { return 1 << static_cast<int>(m); }

// For each mode, the modes it may move to. Any mode but kStopping may stop
// or stand by (a leader steps down whatever its store does; a standby may
// be told again why it stands by); only a recovery or an attach serves.
constexpr int kMoves[kModes] = {
    /* kServing    */ Bit(M::kFailed) | Bit(M::kRecovering) |
        Bit(M::kStandingBy) | Bit(M::kStopping),
    /* kFailed     */ Bit(M::kStandingBy) | Bit(M::kStopping),
    /* kRecovering */ Bit(M::kServing) | Bit(M::kStandingBy) |
        Bit(M::kStopping),
    /* kStandingBy */ Bit(M::kServing) | Bit(M::kStandingBy) |
        Bit(M::kStopping),
    /* kStopping   */ 0,
};

}  // namespace

std::string_view ServiceModeName(ServiceMode mode) {
  switch (mode) {
    case M::kServing:
      return "serving";
    case M::kFailed:
      return "failed";
    case M::kRecovering:
      return "recovering";
    case M::kStandingBy:
      return "standing-by";
    case M::kStopping:
      return "stopping";
  }
  return "?";
}

bool IsLegalMove(ServiceMode from, ServiceMode to) {
  return (kMoves[static_cast<int>(from)] & Bit(to)) != 0;
}

void ServiceState::MoveTo(ServiceMode next) {
  if (!IsLegalMove(mode_, next)) {
    log::Error("engine service moved illegally; aborting",
               {{"from", std::string(ServiceModeName(mode_))},
                {"to", std::string(ServiceModeName(next))}});
    std::abort();
  }
  mode_ = next;
  ++epoch_;
}

}  // namespace leasehold
