// pg::Watchdog: a limit on how long a blocking libpq call waits for the
// server.
//
// libpq's blocking calls (PQexec, PQgetResult, ...) wait for an answer
// without a limit. TCP keepalives and tcp_user_timeout notice a server that
// vanished, but not one whose socket is alive while it does not answer: a
// backend stopped (SIGSTOP, a frozen VM) or waiting for a lock, or a COMMIT
// waiting for a synchronous standby that is gone. While a Watch is held, the
// watchdog's thread shuts the connection's socket down once the limit has
// passed; the blocked call then returns as on a lost connection (PQstatus
// says CONNECTION_BAD), and the caller's handling of a lost connection
// applies. The server's backend may live on, and a transaction it was sent
// may still commit: a caller that must know (PostgresStore::Close) asks the
// server until the backend is gone.
//
// The watchdog keeps its own duplicate of the socket while watching, so a
// socket that libpq closes meanwhile is never confused with another one
// reusing its number. A watch fires between `limit` and 1.25 x `limit`
// after it was armed (the thread looks every quarter limit: arming costs a
// lock and a dup(), never a wake-up).
#ifndef LEASEHOLD_PG_WATCHDOG_H_
#define LEASEHOLD_PG_WATCHDOG_H_

#include <libpq-fe.h>

#include <chrono>
#include <condition_variable>
#include <list>
#include <mutex>
#include <string_view>
#include <thread>

#include "common/status.h"

namespace leasehold::pg {

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;

  // `limit` above zero. Starts the watchdog's thread.
  explicit Watchdog(std::chrono::milliseconds limit);
  // Stops the thread. Every Watch must have ended.
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  struct Entry {
    int socket;  // the watchdog's duplicate; -1 when none could be made
    Clock::time_point deadline;
    bool fired = false;
  };

  // One connection watched, from Arm() until it ends (movable, ends once).
  class Watch {
   public:
    Watch(Watch&& other) noexcept;
    Watch& operator=(Watch&&) = delete;
    ~Watch();
    // The limit passed and the socket was shut down: the connection is
    // broken because the server did not answer in time.
    bool fired() const;
    // `st` as it is, unless it failed because this watch fired: then
    // kUnavailable saying so ("PostgreSQL did not answer within N ms
    // (`during`), …"), with the first line of `st` (libpq's account of the
    // broken connection, whose further lines guess at a crash).
    Status Explain(std::string_view during, Status st) const;
    // The limit counts again from now: for a long task made of many round
    // trips (a load), each within the limit.
    void Restart();

   private:
    friend class Watchdog;
    Watch(Watchdog* dog, std::list<Entry>::iterator entry)
        : dog_(dog), entry_(entry) {}
    Watchdog* dog_;
    std::list<Entry>::iterator entry_;
  };

  // Watches `conn` (connected) from now on. The Watch must end before the
  // connection is closed or reset.
  [[nodiscard]] Watch Arm(PGconn* conn);
  // The same for a socket of the caller's (what Arm(conn) does with the
  // connection's).
  [[nodiscard]] Watch ArmSocket(int fd);

  std::chrono::milliseconds limit() const { return limit_; }

 private:
  void Loop();

  const std::chrono::milliseconds limit_;
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  std::list<Entry> entries_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace leasehold::pg

#endif  // LEASEHOLD_PG_WATCHDOG_H_
