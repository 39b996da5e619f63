// The store backends the restart and kill -9 tests run over, and a fresh
// place for one test's store: a SQLite file in a temporary directory, or a
// fresh database of the throwaway PostgreSQL cluster (fixture pg_cluster).
// Children get the place as one argument (any_store.h opens either).
#ifndef LEASEHOLD_TESTS_STORE_BACKENDS_H_
#define LEASEHOLD_TESTS_STORE_BACKENDS_H_

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <thread>

#include "tests/store/any_store.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_postgres.h"

namespace leasehold {

enum class Backend { kSqlite, kPostgres };

inline std::string BackendName(Backend backend) {
  return backend == Backend::kSqlite ? "Sqlite" : "Postgres";
}
inline void PrintTo(Backend backend, std::ostream* out) {
  *out << BackendName(backend);
}
inline std::string BackendTestName(
    const ::testing::TestParamInfo<Backend>& info) {
  return BackendName(info.param);
}

// How many times the kill -9 tests start a writer and kill it: fewer on
// PostgreSQL, whose writers connect and load over the network, so that the
// suite's time stays modest.
inline int KillRounds(Backend backend) {
  return backend == Backend::kSqlite ? 50 : 20;
}

// Before the random 0-300 ms after which a writer is killed: until the
// writer has logged a new line to `acks` (at most 10 s), so that the kill
// lands while it writes. A fixed delay from its start (60 ms, as SQLite
// runs had) proved too short on a loaded machine: the writers now link
// libpq too, and a PostgreSQL writer connects and loads first.
inline void WaitForWriting(const std::string& acks) {
  std::error_code ec;
  const auto size = [&] { return std::filesystem::file_size(acks, ec); };
  const auto before = size();
  const std::uintmax_t start = ec ? 0 : before;
  for (int i = 0; i < 1000; ++i) {
    const auto now = size();
    if (!ec && now > start) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// A fresh, empty place for a store, removed when done.
class StoreLocation {
 public:
  explicit StoreLocation(Backend backend) {
    if (backend == Backend::kSqlite) {
      where_ = dir_.File("leasehold.db");
      return;
    }
    database_ = std::make_unique<testing::TestDatabase>("store");
    where_ = database_->url();
  }

  // A path or a URL; empty when the database could not be made (the test
  // has failed, saying why).
  const std::string& where() const { return where_; }
  // A scratch file beside it (the crash tests' acknowledgement logs).
  std::string File(const std::string& name) const { return dir_.File(name); }

  // After a writer was killed: waits (at most 30 s) until no connection to
  // the database is left. A killed writer's backend may still commit the
  // batch it was sent, after a check had loaded the store without it. A
  // leasehold node is kept from that by its epoch (a takeover waits for
  // the old leader's fenced transaction); the bare store of these tests
  // has none, so the check waits instead. Nothing to wait for on SQLite.
  void AwaitWritersGone() const {
    if (database_ == nullptr) return;
    const std::string count =
        "SELECT count(*) FROM pg_stat_activity WHERE datname = '" +
        database_->name() + "'";
    for (int i = 0; i < 3000; ++i) {
      if (testing::PgValue(testing::TestClusterUrl(), count) == "0") return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "a killed writer's connection to " << database_->name()
                  << " outlived it by 30 s";
  }

 private:
  testing::TempDir dir_;
  std::unique_ptr<testing::TestDatabase> database_;
  std::string where_;
};

}  // namespace leasehold

#endif  // LEASEHOLD_TESTS_STORE_BACKENDS_H_
