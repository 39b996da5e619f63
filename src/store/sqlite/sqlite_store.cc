#include "store/sqlite/sqlite_store.h"

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "sqlite/database.h"
#include "store/sqlite/migrations.h"

namespace leasehold {
namespace {

using sqlite::Database;
using sqlite::Statement;

Status Refuse(const std::string& path, const std::string& why) {
  return Status(
      StatusCode::kUnavailable,
      "refusing to use " + path + ": " + why + ". The file was not modified.");
}

// Reads the 16-byte header without SQLite, so that a file that is not a
// database is refused before anything could write to it.
bool HasSqliteHeader(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  return in.gcount() == sizeof header &&
         std::string_view(header, sizeof header) ==
             std::string_view("SQLite format 3\0", 16);
}

// Pages a backup copies per step, holding the connection: 512 KiB at the
// default page size, well under a millisecond from the page cache, so an
// Append waits at most that long for a backup.
constexpr int kBackupStepPages = 128;

std::int64_t ToMicros(Time t) { return t.time_since_epoch().count(); }
Time FromMicros(std::int64_t us) { return Time(Duration(us)); }

class SqliteStore final : public Store {
 public:
  explicit SqliteStore(std::string path) : path_(std::move(path)) {}

  Status Open(const SqliteStoreOptions& options) {
    if (options.synchronous != "FULL" && options.synchronous != "NORMAL") {
      return Status(StatusCode::kBadRequest,
                    "synchronous must be FULL or NORMAL");
    }
    std::error_code ec;
    const bool exists = std::filesystem::exists(path_, ec);
    if (!exists && !options.create_if_missing) {
      return Status(StatusCode::kUnavailable, path_ + " does not exist");
    }
    if (exists && std::filesystem::file_size(path_, ec) > 0 &&
        !HasSqliteHeader(path_)) {
      return Refuse(path_,
                    "it is not a SQLite database (corrupt or another "
                    "kind of file)");
    }
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
    if (!exists) flags |= SQLITE_OPEN_CREATE;
    if (Status st = db_.Open(path_, flags); !st.ok()) return st;
    // One process owns the file, from here until it closes it: a second
    // server on the same data would be a second lock service for the same
    // leases. Holding the lock also spares every commit the file-lock
    // system calls (six per commit before, docs/benchmarks.md).
    if (Status st = db_.Exec("PRAGMA locking_mode=EXCLUSIVE"); !st.ok()) {
      return st;
    }
    if (!db_.Exec("BEGIN EXCLUSIVE").ok()) {
      return Status(StatusCode::kUnavailable,
                    path_ +
                        " is in use by another process (is another leasehold "
                        "server running on the same data?)");
    }
    if (Status st = db_.Exec("COMMIT"); !st.ok()) return st;
    if (Status st = CheckIdentity(); !st.ok()) return st;
    if (options.verify_on_open) {
      if (Status st = Verify(); !st.ok()) return st;
    }
    // Only now may anything be written.
    if (Status st = db_.Exec("PRAGMA journal_mode=WAL"); !st.ok()) return st;
    if (Status st = db_.Exec("PRAGMA synchronous=" + options.synchronous);
        !st.ok()) {
      return st;
    }
    if (Status st = Migrate(); !st.ok()) return st;
    if (Status st = ProveWritable(); !st.ok()) return st;
    return PrepareStatements();
  }

  Result<Reservations> Load(const Visitors& visit) override {
    if (visit.key) {
      if (Status st = LoadKeys(visit.key); !st.ok()) {
        return std::unexpected(st);
      }
    }
    if (visit.operation) {
      if (Status st = LoadOperations(visit.operation); !st.ok()) {
        return std::unexpected(st);
      }
    }
    if (visit.message) {
      if (Status st = LoadMessages(visit.message); !st.ok()) {
        return std::unexpected(st);
      }
    }
    // The lock pass checks each row's session against the ids read here.
    std::vector<std::int64_t> session_ids;
    if (visit.session || visit.lock) {
      if (Status st = LoadSessions(visit.session, session_ids); !st.ok()) {
        return std::unexpected(st);
      }
    }
    if (visit.lock) {
      if (Status st = LoadLocks(visit.lock, session_ids); !st.ok()) {
        return std::unexpected(st);
      }
    }
    Reservations reserved;
    for (auto [name, value] : {
             std::pair{"fences_reserved", &reserved.fences},
             std::pair{"session_ids_reserved", &reserved.session_ids},
             std::pair{"transaction_ids_reserved", &reserved.transaction_ids},
             std::pair{"lock_delay_until_us", &reserved.lock_delay_until_us},
         }) {
      auto stored = db_.QueryInt(
          std::string("SELECT value FROM meta WHERE name = '") + name + "'");
      if (!stored) return std::unexpected(Corrupt("reading meta"));
      *value = static_cast<std::uint64_t>(*stored);
    }
    return reserved;
  }

  Status Append(const JournalBatch& batch) override {
    if (batch.empty()) return Status::Ok();
    const std::unique_lock<std::mutex> lock = LockForWriter();
    if (Status st = Run(begin_); !st.ok()) return st;
    for (const JournalEntry& e : batch) {
      if (Status st = Apply(e); !st.ok()) {
        (void)Run(rollback_);  // best effort; the error above matters
        return st;
      }
    }
    return Run(commit_);
  }

  // After a failed commit the WAL may hold the refused transaction whole:
  // its frames written, the fsync failed. SQLite's recovery at the next
  // open would replay it. A TRUNCATE checkpoint, on this connection, which
  // knows where the acknowledged frames end, copies those into the
  // database file, fsyncs it and empties the WAL; the WAL's new length is
  // then fsynced too, so that no crash brings the refused frames back.
  // Every step writes afresh what it syncs: nothing relies on a retried
  // fsync of data whose fsync once failed.
  Status Close() override {
    const std::unique_lock<std::mutex> lock = LockForWriter();
    closed_ = true;  // a backup under way ends at its next step
    if (sqlite3_wal_checkpoint_v2(db_.handle(), nullptr,
                                  SQLITE_CHECKPOINT_TRUNCATE, nullptr,
                                  nullptr) != SQLITE_OK) {
      return db_.LastError("cannot checkpoint " + path_);
    }
    sqlite3_file* wal = nullptr;
    if (sqlite3_file_control(db_.handle(), "main", SQLITE_FCNTL_JOURNAL_POINTER,
                             &wal) != SQLITE_OK ||
        wal == nullptr || wal->pMethods == nullptr) {
      return Status::Ok();  // no WAL open: nothing to sync
    }
    if (wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL) != SQLITE_OK) {
      int error = 0;  // the errno SQLite kept on the file
      (void)wal->pMethods->xFileControl(wal, SQLITE_FCNTL_LAST_ERRNO, &error);
      return Status(StatusCode::kUnavailable,
                    "cannot sync the WAL of " + path_ +
                        " (fsync failed: " + std::strerror(error) + ")");
    }
    return Status::Ok();
  }

  // SQLite's online backup, in steps on this connection: between steps
  // Appends go on, and SQLite writes each page they change into the copy
  // too (a write through the backup's own source connection updates it),
  // so the copy is the state at its last step, which holds every batch
  // appended before it began.
  Status Backup(const std::string& destination, std::stop_token stop) override {
    Database copy;
    if (Status st =
            copy.Open(destination, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                       SQLITE_OPEN_NOMUTEX);
        !st.ok()) {
      return st;
    }
    // A scratch file: whoever keeps it makes it durable.
    if (Status st =
            copy.Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF");
        !st.ok()) {
      return st;
    }
    sqlite3_backup* backup = nullptr;
    {
      std::lock_guard lock(connection_mu_);
      if (closed_) return ClosedDuringBackup();
      backup = sqlite3_backup_init(copy.handle(), "main", db_.handle(), "main");
    }
    if (backup == nullptr) {
      return copy.LastError("cannot start a backup of " + path_);
    }
    int rc = SQLITE_OK;
    bool closed = false;
    while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
      {
        std::lock_guard lock(connection_mu_);
        closed = closed_;
        if (closed || stop.stop_requested()) break;
        rc = sqlite3_backup_step(backup, kBackupStepPages);
      }
      // An Append waiting for the connection goes before the next step.
      while (writers_waiting_.load(std::memory_order_acquire) > 0) {
        std::this_thread::yield();
      }
    }
    {
      // Detaches the backup from this connection's pages: under the lock.
      std::lock_guard lock(connection_mu_);
      (void)sqlite3_backup_finish(backup);
    }
    if (closed) return ClosedDuringBackup();
    if (rc != SQLITE_DONE) {
      if (stop.stop_requested()) {
        return Status(StatusCode::kUnavailable,
                      "the backup was stopped: the server is stopping");
      }
      return copy.LastError("cannot write the backup of " + path_ + " to " +
                            destination);
    }
    return Status::Ok();
  }

  std::string Describe() const override { return "sqlite:" + path_; }

 private:
  static Status ClosedDuringBackup() {
    return Status(StatusCode::kUnavailable,
                  "the store failed during the backup and is being reopened; "
                  "try again once /healthz answers 200");
  }

  // The connection, for Append and Close: a backup between two steps lets
  // them go first (writers_waiting_).
  std::unique_lock<std::mutex> LockForWriter() {
    writers_waiting_.fetch_add(1, std::memory_order_acq_rel);
    std::unique_lock lock(connection_mu_);
    writers_waiting_.fetch_sub(1, std::memory_order_acq_rel);
    return lock;
  }

  // One durable write before the store serves: the schema version written
  // again (SQLite rewrites the header page even when the value is the
  // same), a WAL frame and its fsync. A disk that cannot take a write now
  // fails the open, so a recovery does not report the store up on a disk
  // that fails the next write.
  Status ProveWritable() {
    if (!db_.Exec("PRAGMA user_version=" + std::to_string(schema_version_))
             .ok()) {
      return db_.LastError("cannot write to " + path_);
    }
    return Status::Ok();
  }

  Status LoadKeys(const KeyVisitor& on_key) {
    auto rows = db_.Prepare(
        "SELECT ns, key, has_record, body, version, locked_by, token, "
        "lock_expires_us, fence, write_fence FROM keys ORDER BY ns, key");
    if (!rows) return rows.error();
    int rc;
    while ((rc = rows->Step()) == SQLITE_ROW) {
      KeyRow row;
      row.ns = rows->ColumnText(0);
      row.key = rows->ColumnText(1);
      row.has_record = rows->ColumnInt(2) != 0;
      row.body = rows->ColumnText(3);
      row.version = static_cast<std::uint64_t>(rows->ColumnInt(4));
      row.locked_by = rows->ColumnText(5);
      row.token = rows->ColumnText(6);
      if (!rows->ColumnIsNull(7)) {
        row.lock_expires_at = FromMicros(rows->ColumnInt(7));
      }
      row.fence = static_cast<Fence>(rows->ColumnInt(8));
      row.write_fence = static_cast<Fence>(rows->ColumnInt(9));
      if (Status st = on_key(std::move(row)); !st.ok()) return st;
    }
    if (rc != SQLITE_DONE) return Corrupt("reading keys");
    return Status::Ok();
  }

  Status LoadOperations(
      const std::function<Status(OperationRow&&)>& on_operation) {
    auto rows = db_.Prepare(
        "SELECT ns, op_id, outcome, completed_us FROM operations "
        "ORDER BY ns, op_id");
    if (!rows) return rows.error();
    int rc;
    while ((rc = rows->Step()) == SQLITE_ROW) {
      OperationRow row;
      row.ns = rows->ColumnText(0);
      row.op_id = rows->ColumnText(1);
      row.outcome = rows->ColumnText(2);
      row.completed_at = FromMicros(rows->ColumnInt(3));
      if (Status st = on_operation(std::move(row)); !st.ok()) return st;
    }
    if (rc != SQLITE_DONE) return Corrupt("reading operations");
    return Status::Ok();
  }

  Status LoadMessages(const std::function<Status(MessageRow&&)>& on_message) {
    auto rows = db_.Prepare(
        "SELECT ns, topic, id, key, payload, enqueued_us, attempts, acked, "
        "consumer, claim_token, lease_expires_us FROM outbox "
        "ORDER BY ns, topic, id");
    if (!rows) return rows.error();
    int rc;
    while ((rc = rows->Step()) == SQLITE_ROW) {
      MessageRow row;
      row.ns = rows->ColumnText(0);
      row.topic = rows->ColumnText(1);
      row.id = static_cast<std::uint64_t>(rows->ColumnInt(2));
      row.key = rows->ColumnText(3);
      row.payload = rows->ColumnText(4);
      row.enqueued_at = FromMicros(rows->ColumnInt(5));
      row.attempts = static_cast<std::uint32_t>(rows->ColumnInt(6));
      row.acked = rows->ColumnInt(7) != 0;
      row.consumer = rows->ColumnText(8);
      row.claim_token = rows->ColumnText(9);
      if (!rows->ColumnIsNull(10)) {
        row.lease_expires_at = FromMicros(rows->ColumnInt(10));
      }
      if (Status st = on_message(std::move(row)); !st.ok()) return st;
    }
    if (rc != SQLITE_DONE) return Corrupt("reading the outbox");
    return Status::Ok();
  }

  // Visits every session (when `on_session` is set) and collects the ids.
  Status LoadSessions(const std::function<Status(SessionRow&&)>& on_session,
                      std::vector<std::int64_t>& ids) {
    auto rows = db_.Prepare(
        "SELECT id, name, caller, ttl_ms, deadlock_priority, opened_us, "
        "transaction_id, transaction_started_us, memory_locks FROM sessions "
        "ORDER BY id");
    if (!rows) return rows.error();
    int rc;
    while ((rc = rows->Step()) == SQLITE_ROW) {
      ids.push_back(rows->ColumnInt(0));
      if (!on_session) continue;
      SessionRow row;
      row.id = static_cast<SessionId>(rows->ColumnInt(0));
      row.name = rows->ColumnText(1);
      row.caller = rows->ColumnText(2);
      row.ttl = std::chrono::milliseconds(rows->ColumnInt(3));
      row.deadlock_priority = static_cast<int>(rows->ColumnInt(4));
      row.opened_at = FromMicros(rows->ColumnInt(5));
      row.transaction = static_cast<TransactionId>(rows->ColumnInt(6));
      if (!rows->ColumnIsNull(7)) {
        row.transaction_started_at = FromMicros(rows->ColumnInt(7));
      }
      row.memory_locks = rows->ColumnInt(8) != 0;
      if (Status st = on_session(std::move(row)); !st.ok()) return st;
    }
    if (rc != SQLITE_DONE) return Corrupt("reading sessions");
    return Status::Ok();
  }

  // Visits every lock row, refusing one whose session is not among
  // `session_ids` (ascending, as the locks are by session).
  Status LoadLocks(const std::function<Status(LockRow&&)>& on_lock,
                   const std::vector<std::int64_t>& session_ids) {
    auto rows = db_.Prepare(
        "SELECT session, owner, ns, principal, resource, mode, count, fence, "
        "since_us, semaphore_limit, hold_until_us, lost FROM locks ORDER BY "
        "session, owner, ns, principal, resource");
    if (!rows) return rows.error();
    auto session = session_ids.begin();
    int rc;
    while ((rc = rows->Step()) == SQLITE_ROW) {
      const std::int64_t id = rows->ColumnInt(0);
      const std::int64_t owner = rows->ColumnInt(1);
      const std::int64_t mode = rows->ColumnInt(5);
      const std::int64_t count = rows->ColumnInt(6);
      const std::int64_t limit = rows->ColumnInt(9);
      const std::int64_t lost = rows->ColumnInt(11);
      LockRow row;
      row.session = static_cast<SessionId>(id);
      row.ns = rows->ColumnText(2);
      row.principal = rows->ColumnText(3);
      row.resource = rows->ColumnText(4);
      while (session != session_ids.end() && *session < id) ++session;
      const bool has_session = session != session_ids.end() && *session == id;
      const std::string_view why =
          LockRowProblem(has_session, owner, mode, count, limit, lost);
      if (!why.empty()) {  // named only when refused: there may be millions
        return Refuse(path_, LockRowName(id, owner, row) + " " +
                                 std::string(why) +
                                 "; restore the file from a backup");
      }
      row.owner = static_cast<LockOwner>(owner);
      row.mode = static_cast<LockMode>(mode);
      row.count = static_cast<std::uint32_t>(count);
      row.limit = static_cast<std::uint32_t>(limit);
      row.fence = static_cast<Fence>(rows->ColumnInt(7));
      row.since = FromMicros(rows->ColumnInt(8));
      if (!rows->ColumnIsNull(10)) {
        row.hold_until = FromMicros(rows->ColumnInt(10));
      }
      row.lost = static_cast<LostReason>(lost);
      if (Status st = on_lock(std::move(row)); !st.ok()) return st;
    }
    if (rc != SQLITE_DONE) return Corrupt("reading locks");
    return Status::Ok();
  }

  // Refuses files that are not leasehold databases or are too new.
  Status CheckIdentity() {
    auto app = db_.QueryInt("PRAGMA application_id");
    if (!app) return Corrupt("reading the header");
    auto version = db_.QueryInt("PRAGMA user_version");
    if (!version) return Corrupt("reading the header");
    auto tables = db_.QueryInt("SELECT count(*) FROM sqlite_schema");
    if (!tables) return Corrupt("reading the schema");
    const bool empty = *app == 0 && *version == 0 && *tables == 0;
    if (!empty && *app != sqlite::kApplicationId) {
      return Refuse(path_,
                    "it is a SQLite database of another application "
                    "(application_id " +
                        std::to_string(*app) + ")");
    }
    if (*version > SqliteSchemaVersion()) {
      return Refuse(path_, "its schema version " + std::to_string(*version) +
                               " is newer than this leasehold understands (" +
                               std::to_string(SqliteSchemaVersion()) +
                               "); run a newer leasehold");
    }
    schema_version_ = static_cast<int>(*version);
    return Status::Ok();
  }

  // Reads every page once (PRAGMA quick_check), so that a damaged file is
  // refused before anything is written to it.
  Status Verify() {
    auto check = db_.Prepare("PRAGMA quick_check(5)");
    if (!check) return Corrupt("checking the database");
    std::string problems;
    int rc;
    while ((rc = check->Step()) == SQLITE_ROW) {
      const std::string line = check->ColumnText(0);
      if (line != "ok") problems += (problems.empty() ? "" : "; ") + line;
    }
    if (rc != SQLITE_DONE) return Corrupt("checking the database");
    if (!problems.empty()) {
      return Refuse(path_, "the database is corrupt (" + problems +
                               "); restore it from a backup");
    }
    return Status::Ok();
  }

  Status Migrate() {
    for (const sqlite::Migration& m : sqlite::Migrations()) {
      if (m.version <= schema_version_) continue;
      const std::string sql =
          "BEGIN IMMEDIATE;" + std::string(m.sql) +
          "PRAGMA application_id=" + std::to_string(sqlite::kApplicationId) +
          ";PRAGMA user_version=" + std::to_string(m.version) + ";COMMIT;";
      if (Status st = db_.Exec(sql); !st.ok()) {
        (void)db_.Exec("ROLLBACK");
        return Status(StatusCode::kUnavailable, "migration to schema version " +
                                                    std::to_string(m.version) +
                                                    " failed: " + st.message());
      }
      schema_version_ = m.version;
    }
    return Status::Ok();
  }

  Status PrepareStatements() {
    struct {
      Statement* stmt;
      const char* sql;
    } const all[] = {
        {&begin_, "BEGIN IMMEDIATE"},
        {&commit_, "COMMIT"},
        {&rollback_, "ROLLBACK"},
        {&put_key_,
         "INSERT INTO keys (ns, key, has_record, body, version, locked_by, "
         "token, lock_expires_us, fence, write_fence) VALUES (?1, ?2, ?3, ?4, "
         "?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (ns, key) DO UPDATE SET "
         "has_record = excluded.has_record, body = excluded.body, "
         "version = excluded.version, locked_by = excluded.locked_by, "
         "token = excluded.token, lock_expires_us = excluded.lock_expires_us, "
         "fence = excluded.fence, write_fence = excluded.write_fence"},
        {&put_lease_,
         "INSERT INTO keys (ns, key, has_record, body, version, locked_by, "
         "token, lock_expires_us, fence) VALUES (?1, ?2, 0, x'', 0, ?3, ?4, "
         "?5, ?6) ON CONFLICT (ns, key) DO UPDATE SET "
         "locked_by = excluded.locked_by, token = excluded.token, "
         "lock_expires_us = excluded.lock_expires_us, fence = excluded.fence"},
        {&delete_key_, "DELETE FROM keys WHERE ns = ?1 AND key = ?2"},
        {&put_operation_,
         "INSERT OR REPLACE INTO operations (ns, op_id, outcome, "
         "completed_us) VALUES (?1, ?2, ?3, ?4)"},
        {&put_message_,
         "INSERT OR REPLACE INTO outbox (ns, topic, id, key, payload, "
         "enqueued_us, attempts, acked, consumer, claim_token, "
         "lease_expires_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
         "?11)"},
        {&reserve_, "UPDATE meta SET value = max(value, ?1) WHERE name = ?2"},
        {&put_session_,
         "INSERT OR REPLACE INTO sessions (id, name, caller, ttl_ms, "
         "deadlock_priority, opened_us, transaction_id, "
         "transaction_started_us, memory_locks) VALUES (?1, ?2, ?3, ?4, ?5, "
         "?6, ?7, ?8, ?9)"},
        {&delete_session_, "DELETE FROM sessions WHERE id = ?1"},
        {&delete_session_locks_, "DELETE FROM locks WHERE session = ?1"},
        {&put_lock_,
         "INSERT OR REPLACE INTO locks (session, owner, ns, principal, "
         "resource, mode, count, fence, since_us, semaphore_limit, "
         "hold_until_us, lost) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
         "?10, ?11, ?12)"},
        {&delete_lock_,
         "DELETE FROM locks WHERE session = ?1 AND owner = ?2 AND ns = ?3 AND "
         "principal = ?4 AND resource = ?5"},
    };
    for (const auto& [stmt, sql] : all) {
      auto s = db_.Prepare(sql);
      if (!s) return s.error();
      *stmt = std::move(*s);
    }
    return Status::Ok();
  }

  Status Apply(const JournalEntry& e) {
    const KeyRow& r = e.row;
    switch (e.kind) {
      case JournalEntry::Kind::kPutKey:
        put_key_.BindText(1, r.ns);
        put_key_.BindText(2, r.key);
        put_key_.BindInt(3, r.has_record ? 1 : 0);
        put_key_.BindBlob(4, r.body);
        put_key_.BindInt(5, static_cast<std::int64_t>(r.version));
        put_key_.BindText(6, r.locked_by);
        put_key_.BindText(7, r.token);
        BindTime(put_key_, 8, r.lock_expires_at);
        put_key_.BindInt(9, static_cast<std::int64_t>(r.fence));
        put_key_.BindInt(10, static_cast<std::int64_t>(r.write_fence));
        return Run(put_key_);
      case JournalEntry::Kind::kPutLease:
        put_lease_.BindText(1, r.ns);
        put_lease_.BindText(2, r.key);
        put_lease_.BindText(3, r.locked_by);
        put_lease_.BindText(4, r.token);
        BindTime(put_lease_, 5, r.lock_expires_at);
        put_lease_.BindInt(6, static_cast<std::int64_t>(r.fence));
        return Run(put_lease_);
      case JournalEntry::Kind::kDeleteKey:
        delete_key_.BindText(1, r.ns);
        delete_key_.BindText(2, r.key);
        return Run(delete_key_);
      case JournalEntry::Kind::kReserveFences:
        return Reserve("fences_reserved", e.fences_reserved);
      case JournalEntry::Kind::kPutOperation:
        return PutOperation(e.operation);
      case JournalEntry::Kind::kPutMessage:
        return PutMessage(e.message);
      case JournalEntry::Kind::kPutSession:
        return PutSession(e.session);
      case JournalEntry::Kind::kDeleteSession:
        return DeleteSession(e.session.id);
      case JournalEntry::Kind::kPutLock:
        return PutLock(e.lock);
      case JournalEntry::Kind::kDeleteLock:
        return DeleteLock(e.lock);
      case JournalEntry::Kind::kReserveSessionIds:
        return Reserve("session_ids_reserved", e.session_ids_reserved);
      case JournalEntry::Kind::kReserveTransactionIds:
        return Reserve("transaction_ids_reserved", e.transaction_ids_reserved);
      case JournalEntry::Kind::kReserveLockDelay:
        return Reserve("lock_delay_until_us", e.lock_delay_until_us);
    }
    return Status(StatusCode::kInternal, "unknown journal entry");
  }

  Status PutOperation(const OperationRow& o) {
    put_operation_.BindText(1, o.ns);
    put_operation_.BindText(2, o.op_id);
    put_operation_.BindBlob(3, o.outcome);
    put_operation_.BindInt(4, ToMicros(o.completed_at));
    return Run(put_operation_);
  }

  Status PutMessage(const MessageRow& m) {
    put_message_.BindText(1, m.ns);
    put_message_.BindText(2, m.topic);
    put_message_.BindInt(3, static_cast<std::int64_t>(m.id));
    put_message_.BindText(4, m.key);
    put_message_.BindBlob(5, m.payload);
    put_message_.BindInt(6, ToMicros(m.enqueued_at));
    put_message_.BindInt(7, static_cast<std::int64_t>(m.attempts));
    put_message_.BindInt(8, m.acked ? 1 : 0);
    put_message_.BindText(9, m.consumer);
    put_message_.BindText(10, m.claim_token);
    BindTime(put_message_, 11, m.lease_expires_at);
    return Run(put_message_);
  }

  Status Reserve(std::string_view name, std::uint64_t value) {
    reserve_.BindInt(1, static_cast<std::int64_t>(value));
    reserve_.BindText(2, name);
    return Run(reserve_);
  }

  Status PutSession(const SessionRow& r) {
    put_session_.BindInt(1, static_cast<std::int64_t>(r.id));
    put_session_.BindText(2, r.name);
    put_session_.BindText(3, r.caller);
    put_session_.BindInt(4, r.ttl.count());
    put_session_.BindInt(5, r.deadlock_priority);
    put_session_.BindInt(6, ToMicros(r.opened_at));
    put_session_.BindInt(7, static_cast<std::int64_t>(r.transaction));
    BindTime(put_session_, 8, r.transaction_started_at);
    put_session_.BindInt(9, r.memory_locks ? 1 : 0);
    return Run(put_session_);
  }

  Status DeleteSession(SessionId id) {
    delete_session_locks_.BindInt(1, static_cast<std::int64_t>(id));
    if (Status st = Run(delete_session_locks_); !st.ok()) return st;
    delete_session_.BindInt(1, static_cast<std::int64_t>(id));
    return Run(delete_session_);
  }

  Status PutLock(const LockRow& r) {
    BindLockKey(put_lock_, r);
    put_lock_.BindInt(6, static_cast<std::int64_t>(r.mode));
    put_lock_.BindInt(7, r.count);
    put_lock_.BindInt(8, static_cast<std::int64_t>(r.fence));
    put_lock_.BindInt(9, ToMicros(r.since));
    put_lock_.BindInt(10, r.limit);
    BindTime(put_lock_, 11, r.hold_until);
    put_lock_.BindInt(12, static_cast<std::int64_t>(r.lost));
    return Run(put_lock_);
  }

  Status DeleteLock(const LockRow& r) {
    BindLockKey(delete_lock_, r);
    return Run(delete_lock_);
  }

  // (session, owner, ns, principal, resource) as ?1 to ?5.
  static void BindLockKey(Statement& s, const LockRow& r) {
    s.BindInt(1, static_cast<std::int64_t>(r.session));
    s.BindInt(2, static_cast<std::int64_t>(r.owner));
    s.BindText(3, r.ns);
    s.BindText(4, r.principal);
    s.BindText(5, r.resource);
  }

  static void BindTime(Statement& s, int i, const std::optional<Time>& t) {
    if (t) {
      s.BindInt(i, ToMicros(*t));
    } else {
      s.BindNull(i);
    }
  }

  Status Run(Statement& s) {
    const int rc = s.Step();
    s.Reset();
    if (rc == SQLITE_DONE || rc == SQLITE_ROW) return Status::Ok();
    return db_.LastError("write to " + path_ + " failed");
  }

  Status Corrupt(const std::string& what) {
    const int rc = sqlite3_errcode(db_.handle());
    if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) {
      return Refuse(path_, "the database is corrupt (" + what + ": " +
                               sqlite3_errmsg(db_.handle()) +
                               "); restore it from a backup");
    }
    return db_.LastError(what + " in " + path_);
  }

  std::string path_;
  // Append, Close and each step of a Backup (another thread) take turns on
  // the connection.
  std::mutex connection_mu_;
  std::atomic<int> writers_waiting_{0};
  bool closed_ = false;  // guarded by connection_mu_
  Database db_;
  int schema_version_ = 0;
  Statement begin_, commit_, rollback_, put_key_, put_lease_, delete_key_,
      reserve_, put_operation_, put_message_, put_session_, delete_session_,
      delete_session_locks_, put_lock_, delete_lock_;
};

}  // namespace

int SqliteSchemaVersion() { return sqlite::Migrations().back().version; }

Result<std::unique_ptr<Store>> OpenSqliteStore(
    const std::string& path, const SqliteStoreOptions& options) {
  auto store = std::make_unique<SqliteStore>(path);
  if (Status st = store->Open(options); !st.ok()) return std::unexpected(st);
  return store;
}

}  // namespace leasehold
