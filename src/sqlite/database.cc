#include "sqlite/database.h"

namespace leasehold::sqlite {

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
  message += db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
  return Status(StatusCode::kUnavailable, message);
}

}  // namespace leasehold::sqlite
