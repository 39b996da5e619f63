// The phases of one HTTP connection (http_server.cc) and the moves between
// them, in one table. No sockets here, so the table is tested on its own.
#ifndef LEASEHOLD_SERVER_CONNECTION_STATE_H_
#define LEASEHOLD_SERVER_CONNECTION_STATE_H_

#include <cstdint>
#include <string_view>

namespace leasehold::server {

enum class ConnectionPhase : std::uint8_t {
  // Reading the next request (or waiting for its first byte). The only
  // phase in which Stop() closes the connection at once.
  kReading,
  // The request is with the Api; nothing is read meanwhile.
  kHandling,
  // The request is parked (a lock wait): a read watches for the client
  // hanging up, and keeps what it pipelines.
  kWatching,
  // The answer came while the watching read was outstanding; it is held
  // until that read, cancelled, ends.
  kAnswerHeld,
  // An answer is being sent.
  kWriting,
  // The last answer is sent: reading and dropping what the client still
  // sends, for a moment, so that it reads the answer rather than a reset.
  kLingering,
  // The socket belongs to an EventStream (event_stream.h) now.
  kStreaming,
  kClosed,
};

std::string_view ConnectionPhaseName(ConnectionPhase phase);

// Whether a connection in `from` may move to `to`.
bool IsLegalMove(ConnectionPhase from, ConnectionPhase to);

// A connection's phase; every change goes through MoveTo.
class ConnectionState {
 public:
  ConnectionPhase phase() const { return phase_; }
  bool Is(ConnectionPhase p) const { return phase_ == p; }

  // Moves to `next`. A move the table does not allow is a bug in the
  // connection: it is reported on stderr and the process aborts.
  void MoveTo(ConnectionPhase next);

 private:
  ConnectionPhase phase_ = ConnectionPhase::kReading;
};

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_CONNECTION_STATE_H_
