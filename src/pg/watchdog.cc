#include "pg/watchdog.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace leasehold::pg {

Watchdog::Watchdog(std::chrono::milliseconds limit)
    : limit_(std::max(limit, std::chrono::milliseconds(1))),
      thread_([this] { Loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_one();
  thread_.join();
}

Watchdog::Watch Watchdog::Arm(PGconn* conn) {
  return ArmSocket(PQsocket(conn));
}

Watchdog::Watch Watchdog::ArmSocket(int fd) {
  const int copy = fd >= 0 ? ::dup(fd) : -1;
  std::lock_guard lock(mu_);
  entries_.push_back({.socket = copy, .deadline = Clock::now() + limit_});
  return Watch(this, std::prev(entries_.end()));
}

Watchdog::Watch::Watch(Watch&& other) noexcept
    : dog_(other.dog_), entry_(other.entry_) {
  other.dog_ = nullptr;
}

Watchdog::Watch::~Watch() {
  if (dog_ == nullptr) return;
  int socket = -1;
  {
    std::lock_guard lock(dog_->mu_);
    socket = entry_->socket;
    dog_->entries_.erase(entry_);
  }
  if (socket >= 0) ::close(socket);
}

bool Watchdog::Watch::fired() const {
  std::lock_guard lock(dog_->mu_);
  return entry_->fired;
}

Status Watchdog::Watch::Explain(std::string_view during, Status st) const {
  if (st.ok() || !fired()) return st;
  const std::string& why = st.message();
  return Status(StatusCode::kUnavailable,
                "PostgreSQL did not answer within " +
                    std::to_string(dog_->limit_.count()) + " ms (" +
                    std::string(during) +
                    "), so its connection was given up: " +
                    why.substr(0, why.find('\n')));
}

void Watchdog::Watch::Restart() {
  std::lock_guard lock(dog_->mu_);
  if (!entry_->fired) entry_->deadline = Clock::now() + dog_->limit_;
}

void Watchdog::Loop() {
  const auto tick = std::max(limit_ / 4, std::chrono::milliseconds(1));
  std::unique_lock lock(mu_);
  while (!stopping_) {
    stop_cv_.wait_for(lock, tick);
    const auto now = Clock::now();
    for (Entry& e : entries_) {
      if (e.fired || e.socket < 0 || now < e.deadline) continue;
      // Both directions: a call blocked reading returns at once (EOF), and
      // one blocked writing fails.
      ::shutdown(e.socket, SHUT_RDWR);
      e.fired = true;
    }
  }
}

}  // namespace leasehold::pg
