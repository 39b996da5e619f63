#include "server/connection_state.h"

#include "common/log.h"

#include <cstdio>
#include <cstdlib>

namespace leasehold::server {
namespace {

using P = ConnectionPhase;
constexpr int kPhases = static_cast<int>(P::kClosed) + 1;

constexpr int Bit(P p) { return 1 << static_cast<int>(p); }

// For each phase, the phases it may move to. Any phase but kStreaming may
// close (a failed socket, the deadline, Stop()); closing twice is allowed,
// since a close ends the operations still outstanding with errors that
// close again.
constexpr int kMoves[kPhases] = {
    /* kReading    */ Bit(P::kHandling) | Bit(P::kWriting) |
        Bit(P::kStreaming) | Bit(P::kClosed),
    /* kHandling   */ Bit(P::kWatching) | Bit(P::kWriting) | Bit(P::kClosed),
    /* kWatching   */ Bit(P::kHandling) | Bit(P::kAnswerHeld) | Bit(P::kClosed),
    /* kAnswerHeld */ Bit(P::kWriting) | Bit(P::kClosed),
    /* kWriting    */ Bit(P::kReading) | Bit(P::kLingering) | Bit(P::kClosed),
    /* kLingering  */ Bit(P::kClosed),
    /* kStreaming  */ 0,
    /* kClosed     */ Bit(P::kClosed),
};

}  // namespace

std::string_view ConnectionPhaseName(ConnectionPhase phase) {
  switch (phase) {
    case P::kReading:
      return "reading";
    case P::kHandling:
      return "handling";
    case P::kWatching:
      return "watching";
    case P::kAnswerHeld:
      return "answer-held";
    case P::kWriting:
      return "writing";
    case P::kLingering:
      return "lingering";
    case P::kStreaming:
      return "streaming";
    case P::kClosed:
      return "closed";
  }
  return "?";
}

bool IsLegalMove(ConnectionPhase from, ConnectionPhase to) {
  return (kMoves[static_cast<int>(from)] & Bit(to)) != 0;
}

void ConnectionState::MoveTo(ConnectionPhase next) {
  if (!IsLegalMove(phase_, next)) {
    log::Error("HTTP connection moved illegally; aborting",
               {{"from", std::string(ConnectionPhaseName(phase_))},
                {"to", std::string(ConnectionPhaseName(next))}});
    std::abort();
  }
  phase_ = next;
}

}  // namespace leasehold::server
