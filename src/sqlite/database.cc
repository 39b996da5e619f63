#include "sqlite/database.h"

#include <cstring>

namespace leasehold::sqlite {

namespace {

// The system call behind an I/O error SQLite reports, or nullptr.
const char* FailedCall(int extended_code) {
  switch (extended_code) {
    case SQLITE_IOERR_FSYNC:
    case SQLITE_IOERR_DIR_FSYNC:
      return "fsync";
    case SQLITE_IOERR_WRITE:
      return "write";
    case SQLITE_IOERR_READ:
    case SQLITE_IOERR_SHORT_READ:
      return "read";
    case SQLITE_IOERR_TRUNCATE:
      return "truncate";
    case SQLITE_IOERR_FSTAT:
      return "fstat";
    case SQLITE_CANTOPEN:
      return "open";
    default:
      return nullptr;
  }
}

// The errno of the last failed call on the database's WAL (or rollback
// journal), else on its main file; 0 if none failed. For errors whose
// errno SQLite does not keep on the connection (a failed fsync at COMMIT).
int LastFileErrno(sqlite3* db) {
  int error = 0;
  sqlite3_file* journal = nullptr;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER,
                           &journal) == SQLITE_OK &&
      journal != nullptr && journal->pMethods != nullptr &&
      journal->pMethods->xFileControl(journal, SQLITE_FCNTL_LAST_ERRNO,
                                      &error) == SQLITE_OK &&
      error != 0) {
    return error;
  }
  error = 0;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_LAST_ERRNO, &error) !=
      SQLITE_OK) {
    return 0;
  }
  return error;
}

// " (fsync failed: Input/output error)" for an I/O or open error, else "":
// SQLite says "disk I/O error", the operator needs the call and errno.
// (Both sources keep the errno of the last such error: only an I/O or open
// error now is this one's.)
std::string SystemCause(sqlite3* db) {
  const int code = sqlite3_extended_errcode(db);
  if ((code & 0xff) != SQLITE_IOERR && (code & 0xff) != SQLITE_CANTOPEN) {
    return "";
  }
  int os_errno = sqlite3_system_errno(db);
  if (os_errno == 0) os_errno = LastFileErrno(db);
  if (os_errno == 0) return "";
  const char* call = FailedCall(code);
  return std::string(" (") + (call != nullptr ? call : "system call") +
         " failed: " + std::strerror(os_errno) + ")";
}

}  // namespace

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = other.stmt_;
    other.stmt_ = nullptr;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::BindText(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()),
                    SQLITE_TRANSIENT);
}

void Statement::BindBlob(int i, std::string_view v) {
  sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()),
                    SQLITE_TRANSIENT);
}

void Statement::BindInt(int i, std::int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
}

void Statement::BindNull(int i) { sqlite3_bind_null(stmt_, i); }

int Statement::Step() { return sqlite3_step(stmt_); }

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t Statement::ColumnInt(int i) const {
  return sqlite3_column_int64(stmt_, i);
}

std::string Statement::ColumnText(int i) const {
  const void* p = sqlite3_column_blob(stmt_, i);
  const int n = sqlite3_column_bytes(stmt_, i);
  return p == nullptr ? std::string()
                      : std::string(static_cast<const char*>(p), n);
}

bool Statement::ColumnIsNull(int i) const {
  return sqlite3_column_type(stmt_, i) == SQLITE_NULL;
}

Database::~Database() { sqlite3_close_v2(db_); }

Status Database::Open(const std::string& path, int flags) {
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    return LastError("cannot open " + path);
  }
  sqlite3_extended_result_codes(db_, 1);
  return Status::Ok();
}

Status Database::Exec(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error != nullptr ? error : "unknown error";
    sqlite3_free(error);
    return Status(StatusCode::kUnavailable, message + " (in: " + sql + ")");
  }
  return Status::Ok();
}

Result<Statement> Database::Prepare(std::string_view sql) {
  Statement s;
  if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                         SQLITE_PREPARE_PERSISTENT, &s.stmt_,
                         nullptr) != SQLITE_OK) {
    return std::unexpected(LastError("cannot prepare statement"));
  }
  return s;
}

Result<std::int64_t> Database::QueryInt(const std::string& sql) {
  auto s = Prepare(sql);
  if (!s) return std::unexpected(s.error());
  const int rc = s->Step();
  if (rc == SQLITE_ROW) return s->ColumnInt(0);
  if (rc == SQLITE_DONE) return 0;
  return std::unexpected(LastError("query failed: " + sql));
}

Status Database::LastError(std::string_view what) const {
  std::string message(what);
  message += ": ";
  if (db_ == nullptr)
    return Status(StatusCode::kUnavailable, message + "out of memory");
  message += sqlite3_errmsg(db_);
  message += SystemCause(db_);
  return Status(StatusCode::kUnavailable, message);
}

}  // namespace leasehold::sqlite
