// Online backups against real processes: a server under write load from
// several threads is backed up with `leasehold backup`; a fresh server
// started on the snapshot holds every write acknowledged before the backup
// began, and nothing that was never asked for. Also: the admin role, the
// memory store's refusal and the command's errors.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `leasehold backup ARGS`, stderr appended to `err`.
CommandRun Backup(std::uint16_t port, const std::string& args,
                  const std::string& err) {
  return RunShell(LeaseholdBinary() + " backup --url http://127.0.0.1:" +
                  std::to_string(port) + " " + args + " 2>>" + err);
}

// The first column of every row of `sql` on the database file at `path`.
std::vector<std::string> Query(const std::string& path,
                               const std::string& sql) {
  sqlite3* db = nullptr;
  std::vector<std::string> rows;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK) {
    sqlite3_close(db);
    ADD_FAILURE() << "cannot open " << path;
    return rows;
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      const auto* text = sqlite3_column_text(stmt, 0);
      rows.emplace_back(text != nullptr ? reinterpret_cast<const char*>(text)
                                        : "");
    }
  } else {
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

// What one writer thread asked for and what was acknowledged, when.
struct Writer {
  int id = 0;
  std::string session;
  struct Ack {
    std::string name;
    Clock::time_point at;
  };
  std::vector<std::string> requested_keys, requested_locks;
  std::vector<Ack> inserted;  // records, acknowledged
  std::vector<Ack> held;      // locks granted and kept (odd n)
  std::vector<Ack> released;  // locks granted, then released (even n)
  // Each answer's latency, with when it was asked.
  std::vector<std::pair<Clock::time_point, milliseconds>> latencies;
};

void RunWriter(std::uint16_t port, Writer& w, const std::atomic<bool>& stop) {
  HttpClient http(port);
  auto timed = [&](const std::string& method, const std::string& target,
                   const std::string& body) {
    const auto asked = Clock::now();
    HttpAnswer a = http.Request(method, target, body);
    w.latencies.emplace_back(
        asked, std::chrono::duration_cast<milliseconds>(Clock::now() - asked));
    return a;
  };
  for (int n = 0; !stop.load(); ++n) {
    const std::string key =
        "w" + std::to_string(w.id) + "-" + std::to_string(n);
    w.requested_keys.push_back(key);
    const std::string body =
        json::serialize(json::object{{"body", "v-" + key}});
    if (timed("PUT", "/v1/records/load/" + key, body).status / 100 == 2) {
      w.inserted.push_back({key, Clock::now()});
    }
    const std::string lock = "lock-" + key;
    w.requested_locks.push_back(lock);
    const std::string who = json::serialize(json::object{
        {"session", w.session}, {"resource", lock}, {"owner", "Session"}});
    json::object acquire = json::parse(who).as_object();
    acquire["mode"] = "Exclusive";
    acquire["timeout_ms"] = 0;
    HttpAnswer got =
        timed("POST", "/v1/applocks/load/acquire", json::serialize(acquire));
    if (got.status != 200 || got.json.at("result").as_int64() != 0) continue;
    if (n % 2 == 1) {
      w.held.push_back({lock, Clock::now()});
      continue;
    }
    if (timed("POST", "/v1/applocks/load/release", who).status == 200) {
      w.released.push_back({lock, Clock::now()});
    }
  }
}

TEST(BackupTest, ASnapshotTakenUnderLoadHoldsEveryAcknowledgedWrite) {
  TempDir dir;
  const std::string out = dir.File("snapshot.db");
  const std::string err = dir.File("stderr");
  std::vector<Writer> writers(4);
  Clock::time_point began, ended;
  {
    ServerProcess server(dir.File("data"));
    HttpClient setup(server.port());
    for (std::size_t i = 0; i < writers.size(); ++i) {
      writers[i].id = static_cast<int>(i);
      HttpAnswer s = setup.Request(
          "POST", "/v1/sessions",
          R"({"name":"writer-)" + std::to_string(i) + R"(","ttl_ms":600000})");
      ASSERT_EQ(s.status, 201) << s.body;
      writers[i].session = std::string(s.json.at("id").as_string());
    }
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (Writer& w : writers) {
      threads.emplace_back([&, p = server.port()] { RunWriter(p, w, stop); });
    }
    std::this_thread::sleep_for(milliseconds(800));
    began = Clock::now();
    const CommandRun run = Backup(server.port(), out, err);
    ended = Clock::now();
    std::this_thread::sleep_for(milliseconds(300));
    stop = true;
    for (auto& t : threads) t.join();
    ASSERT_EQ(run.code, 0) << run.out << ReadFile(err);
    EXPECT_NE(run.out.find("saved a snapshot to " + out), std::string::npos)
        << run.out;
    EXPECT_EQ(server.Terminate(), 0);
  }
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  ASSERT_EQ(Query(out, "PRAGMA integrity_check"),
            std::vector<std::string>{"ok"});

  // How long writes waited while the backup ran, beside before it (for the
  // report; a time is never asserted).
  milliseconds worst_before{0}, worst_during{0};
  std::size_t during = 0;
  for (const Writer& w : writers) {
    for (const auto& [asked, took] : w.latencies) {
      if (asked < began) worst_before = std::max(worst_before, took);
      if (asked >= began && asked < ended) {
        worst_during = std::max(worst_during, took);
        ++during;
      }
    }
  }
  std::cout << "backup took "
            << std::chrono::duration_cast<milliseconds>(ended - began).count()
            << " ms; " << during << " requests answered while it ran, the "
            << "slowest in " << worst_during.count()
            << " ms (before it: " << worst_before.count() << " ms)\n";

  // Restore: the snapshot is the new server's leasehold.db.
  std::filesystem::create_directories(dir.File("restored"));
  std::filesystem::copy_file(out, dir.File("restored/leasehold.db"));
  ServerProcess restored(dir.File("restored"));
  HttpClient http(restored.port());
  std::size_t checked = 0;
  for (const Writer& w : writers) {
    for (const Writer::Ack& a : w.inserted) {
      if (a.at >= began) continue;
      HttpAnswer r = http.Request("GET", "/v1/records/load/" + a.name);
      ASSERT_EQ(r.status, 200) << a.name << " acknowledged before the backup "
                               << "began is missing: " << r.body;
      EXPECT_EQ(r.json.at("body").as_string(), "v-" + a.name);
      ++checked;
    }
  }
  HttpAnswer locks = http.Request("GET", "/v1/applocks/load");
  ASSERT_EQ(locks.status, 200) << locks.body;
  std::set<std::string> held_now;
  for (const auto& l : locks.json.at("locks").as_array()) {
    held_now.insert(std::string(l.at("resource").as_string()));
  }
  std::set<std::string> requested_keys, requested_locks;
  for (const Writer& w : writers) {
    requested_keys.insert(w.requested_keys.begin(), w.requested_keys.end());
    requested_locks.insert(w.requested_locks.begin(), w.requested_locks.end());
    for (const Writer::Ack& a : w.held) {
      if (a.at >= began) continue;
      EXPECT_TRUE(held_now.contains(a.name))
          << a.name << " was granted before the backup began and never "
          << "released, but the restored server does not hold it";
      ++checked;
    }
    for (const Writer::Ack& a : w.released) {
      if (a.at >= began) continue;
      EXPECT_FALSE(held_now.contains(a.name))
          << a.name << " was released before the backup began";
      ++checked;
    }
  }
  EXPECT_GT(checked, 40u) << "too little was acknowledged before the backup";
  // Nothing never asked for.
  for (const std::string& lock : held_now) {
    EXPECT_TRUE(requested_locks.contains(lock)) << lock;
  }
  for (const std::string& key :
       Query(out, "SELECT key FROM keys WHERE ns = 'load'")) {
    EXPECT_TRUE(requested_keys.contains(key)) << key;
  }
  EXPECT_EQ(Query(out, "SELECT count(*) FROM keys WHERE ns <> 'load'"),
            std::vector<std::string>{"0"});
}

TEST(BackupTest, OnlyAnAdminOfEveryNamespaceMayTakeOne) {
  TempDir dir;
  const std::string config = dir.File("config.json");
  std::ofstream(config) << R"({"tokens": [
    {"token": "admin-of-all-token-01", "principal": "ops",
     "namespaces": ["*"], "role": "admin"},
    {"token": "admin-of-docs-token-01", "principal": "docs-admin",
     "namespaces": ["docs"], "role": "admin"},
    {"token": "writer-of-all-token-01", "principal": "app",
     "namespaces": ["*"], "role": "write"}]})";
  ServerProcess server(dir.File("data"), config);
  HttpClient http(server.port());
  EXPECT_EQ(http.Request("GET", "/v1/admin/backup").error_code(),
            "unauthorized");
  http.SetBearerToken("writer-of-all-token-01");
  HttpAnswer writer = http.Request("GET", "/v1/admin/backup");
  EXPECT_EQ(writer.status, 403) << writer.body;
  http.SetBearerToken("admin-of-docs-token-01");
  HttpAnswer docs = http.Request("GET", "/v1/admin/backup");
  EXPECT_EQ(docs.status, 403) << docs.body;
  EXPECT_NE(docs.body.find("every namespace"), std::string::npos);
  http.SetBearerToken("admin-of-all-token-01");
  HttpAnswer admin = http.Request("GET", "/v1/admin/backup");
  ASSERT_EQ(admin.status, 200) << admin.body;
  EXPECT_EQ(admin.body.substr(0, 16), std::string("SQLite format 3\0", 16));

  // The command line, with the token from the environment.
  const std::string err = dir.File("stderr");
  const CommandRun refused = RunShell(
      "LEASEHOLD_TOKEN=writer-of-all-token-01 " + LeaseholdBinary() +
      " backup --url http://127.0.0.1:" + std::to_string(server.port()) + " " +
      dir.File("w.db") + " 2>>" + err);
  EXPECT_EQ(refused.code, 3);
  EXPECT_NE(ReadFile(err).find("leasehold: forbidden: "), std::string::npos)
      << ReadFile(err);
  EXPECT_FALSE(std::filesystem::exists(dir.File("w.db")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("w.db.tmp")));
  // No scratch copy is left in the data directory.
  for (const auto& entry :
       std::filesystem::directory_iterator(dir.File("data"))) {
    EXPECT_EQ(entry.path().filename().string().find(".leasehold-backup"),
              std::string::npos)
        << entry.path();
  }
}

TEST(BackupTest, TheMemoryStoreSaysThereIsNothingToBackUp) {
  TempDir dir;
  auto server = ServerProcess::InMemoryWithManualClock(dir.path());
  HttpClient http(server->port());
  HttpAnswer a = http.Request("GET", "/v1/admin/backup");
  EXPECT_EQ(a.status, 501) << a.body;
  EXPECT_EQ(a.error_code(), "not_supported");
  EXPECT_NE(a.body.find("memory store"), std::string::npos) << a.body;
  const std::string err = dir.File("stderr");
  const CommandRun run = Backup(server->port(), dir.File("m.db"), err);
  EXPECT_EQ(run.code, 3);
  EXPECT_NE(ReadFile(err).find("leasehold: not_supported: "), std::string::npos)
      << ReadFile(err);
  EXPECT_FALSE(std::filesystem::exists(dir.File("m.db")));
}

// A server killed mid-backup leaves its scratch copy in the data
// directory; the next start on that directory removes it, and nothing
// else there.
TEST(BackupTest, AScratchCopyLeftByADeadServerIsRemovedAtTheNextStart) {
  TempDir dir;
  const std::string data = dir.File("data");
  std::filesystem::create_directories(data);
  const auto plant = [&](const std::string& name) {
    std::ofstream(data + "/" + name) << "a copy cut short";
  };
  plant(".leasehold-backup-Ab3xYz");  // a scratch copy
  plant(".leasehold-backup-notes");   // not one: wrong length
  plant("leasehold-backup-Ab3xYz");   // nor this
  std::filesystem::create_directory(data + "/.leasehold-backup-d1rXyz");
  {
    ServerProcess server(data);
    HttpClient http(server.port());
    EXPECT_EQ(http.Request("GET", "/healthz").status, 200);
  }
  EXPECT_FALSE(std::filesystem::exists(data + "/.leasehold-backup-Ab3xYz"));
  EXPECT_TRUE(std::filesystem::exists(data + "/.leasehold-backup-notes"));
  EXPECT_TRUE(std::filesystem::exists(data + "/leasehold-backup-Ab3xYz"));
  EXPECT_TRUE(
      std::filesystem::is_directory(data + "/.leasehold-backup-d1rXyz"));
}

TEST(BackupTest, TheCommandSaysWhatWentWrong) {
  TempDir dir;
  ServerProcess server(dir.File("data"));
  const std::string err = dir.File("stderr");
  const std::string out = dir.File("out.db");
  auto stderr_has = [&](const std::string& text) {
    return ReadFile(err).find(text) != std::string::npos;
  };
  const std::string bin = LeaseholdBinary();
  EXPECT_EQ(
      RunShell(bin + " backup --url ftp://127.0.0.1 " + out + " 2>>" + err)
          .code,
      3);
  EXPECT_TRUE(stderr_has("leasehold: bad_url: ")) << ReadFile(err);
  EXPECT_EQ(
      RunShell(bin + " backup --url http://127.0.0.1:1 " + out + " 2>>" + err)
          .code,
      3);
  EXPECT_TRUE(stderr_has("leasehold: unreachable: ")) << ReadFile(err);
  EXPECT_EQ(RunShell(bin + " backup 2>>" + err).code, 2);  // OUT is required
  EXPECT_FALSE(std::filesystem::exists(out));

  // An existing OUT is kept unless --force.
  std::ofstream(out) << "keep me";
  EXPECT_EQ(Backup(server.port(), out, err).code, 1);
  EXPECT_TRUE(stderr_has("leasehold: exists: " + out + " exists"))
      << ReadFile(err);
  EXPECT_EQ(ReadFile(out), "keep me");
  const CommandRun forced = Backup(server.port(), "--force --json " + out, err);
  EXPECT_EQ(forced.code, 0) << ReadFile(err);
  EXPECT_EQ(forced.json().at("bytes").as_int64(),
            static_cast<std::int64_t>(std::filesystem::file_size(out)));
  EXPECT_EQ(Query(out, "PRAGMA integrity_check"),
            std::vector<std::string>{"ok"});
  // A directory that does not exist.
  EXPECT_EQ(Backup(server.port(), dir.File("no/such/dir/x.db"), err).code, 3);
  EXPECT_TRUE(stderr_has("leasehold: file: cannot create")) << ReadFile(err);
}

}  // namespace
}  // namespace leasehold::testing
