// The throwaway PostgreSQL cluster of the tests (scripts/pg-test-cluster,
// started by the CTest fixture pg_cluster, tests/CMakeLists.txt): its URL,
// statements run as its superuser, and a fresh database per test.
#ifndef LEASEHOLD_TESTS_TESTING_TEST_POSTGRES_H_
#define LEASEHOLD_TESTS_TESTING_TEST_POSTGRES_H_

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

namespace leasehold::testing {

// The cluster's URL (its "postgres" database), or "" when the tests were
// not started by CTest (LEASEHOLD_TEST_PG_URL_FILE unset).
inline std::string TestClusterUrl() {
  const char* file = std::getenv("LEASEHOLD_TEST_PG_URL_FILE");
  if (file == nullptr) return "";
  std::ifstream in(file);
  std::string url(std::istreambuf_iterator<char>(in), {});
  while (!url.empty() && std::isspace(static_cast<unsigned char>(url.back()))) {
    url.pop_back();
  }
  return url;
}

// The same server's URL for database `name`.
inline std::string DatabaseUrl(const std::string& cluster_url,
                               const std::string& name) {
  // The query (sslmode=verify-full&sslrootcert=/path/…) stays as it is.
  const std::size_t query = cluster_url.find('?');
  const std::string base = cluster_url.substr(0, query);
  const std::string rest =
      query == std::string::npos ? "" : cluster_url.substr(query);
  return base.substr(0, base.rfind('/') + 1) + name + rest;
}

// Runs `sql` on `url`; a test failure, naming it, when it fails.
inline bool PgExec(const std::string& url, const std::string& sql) {
  PGconn* conn = PQconnectdb(url.c_str());
  bool ok = PQstatus(conn) == CONNECTION_OK;
  if (ok) {
    PGresult* r = PQexec(conn, sql.c_str());
    const auto st = PQresultStatus(r);
    ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    if (!ok) ADD_FAILURE() << sql << ": " << PQerrorMessage(conn);
    PQclear(r);
  } else {
    ADD_FAILURE() << "cannot reach the test cluster at " << url << ": "
                  << PQerrorMessage(conn);
  }
  PQfinish(conn);
  return ok;
}

// The first column of the first row of `sql` on `url` ("" on failure,
// which also fails the test).
inline std::string PgValue(const std::string& url, const std::string& sql) {
  PGconn* conn = PQconnectdb(url.c_str());
  std::string value;
  PGresult* r = PQexec(conn, sql.c_str());
  if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0) {
    value = PQgetvalue(r, 0, 0);
  } else {
    ADD_FAILURE() << sql << ": " << PQerrorMessage(conn);
  }
  PQclear(r);
  PQfinish(conn);
  return value;
}

// A fresh database in the test cluster, named after `prefix`, the process
// and the running test, dropped (with its connections) when done.
class TestDatabase {
 public:
  explicit TestDatabase(const std::string& prefix) {
    cluster_url_ = TestClusterUrl();
    if (cluster_url_.empty()) {
      ADD_FAILURE() << "no PostgreSQL test cluster "
                       "(LEASEHOLD_TEST_PG_URL_FILE); run the tests through "
                       "CTest";
      return;
    }
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    name_ = prefix + "_" + std::to_string(::getpid()) + "_";
    const std::string test = info != nullptr ? info->name() : "";
    for (char c : test) {
      if (std::isalnum(static_cast<unsigned char>(c))) {
        name_ += static_cast<char>(std::tolower(c));
      }
    }
    name_ = name_.substr(0, 60);
    if (PgExec(cluster_url_, "CREATE DATABASE " + name_)) {
      url_ = DatabaseUrl(cluster_url_, name_);
    }
  }
  ~TestDatabase() {
    if (!url_.empty()) {
      (void)PgExec(cluster_url_, "DROP DATABASE " + name_ + " WITH (FORCE)");
    }
  }
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  // Empty when it could not be made (the test has failed, saying why).
  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }

 private:
  std::string cluster_url_, name_, url_;
};

// A PostgreSQL backend stopped with SIGSTOP (as a frozen VM or a paused
// process would leave it: its socket open, its answers never coming) and
// continued with SIGCONT at the latest when this ends, whatever the test
// did. Tests run as the server's user or as root (CI), so the signal is
// theirs to send.
class StoppedBackend {
 public:
  // Stops the one backend whose application_name is `application` on the
  // server at `url`; a test failure when there is none or it cannot be
  // stopped.
  StoppedBackend(const std::string& url, const std::string& application) {
    pid_ = PgValue(url,
                   "SELECT coalesce(min(pid)::text, '') FROM pg_stat_activity "
                   "WHERE application_name = '" +
                       application + "'");
    if (pid_.empty()) {
      ADD_FAILURE() << "no backend of " << application;
      return;
    }
    stopped_ = ::kill(std::stoi(pid_), SIGSTOP) == 0;
    if (!stopped_)
      ADD_FAILURE() << "SIGSTOP " << pid_ << ": " << std::strerror(errno);
  }
  ~StoppedBackend() { Continue(); }
  StoppedBackend(const StoppedBackend&) = delete;
  StoppedBackend& operator=(const StoppedBackend&) = delete;

  bool stopped() const { return stopped_; }
  const std::string& pid() const { return pid_; }
  void Continue() {
    if (stopped_) ::kill(std::stoi(pid_), SIGCONT);
    stopped_ = false;
  }

 private:
  std::string pid_;
  bool stopped_ = false;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_TEST_POSTGRES_H_
