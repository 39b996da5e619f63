// Thin RAII wrappers over SQLite's C API: a connection and prepared
// statements, the one way the project talks to SQLite (the store and the
// SQLite peer of leasehold-peers). Errors come back as Status values with
// SQLite's message.
#ifndef LEASEHOLD_SQLITE_DATABASE_H_
#define LEASEHOLD_SQLITE_DATABASE_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace leasehold::sqlite {

class Statement {
 public:
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept : stmt_(other.stmt_) {
    other.stmt_ = nullptr;
  }
  Statement& operator=(Statement&& other) noexcept;
  ~Statement();

  // Bind by 1-based index. Text and blobs are copied by SQLite.
  void BindText(int i, std::string_view v);
  void BindBlob(int i, std::string_view v);
  void BindInt(int i, std::int64_t v);
  void BindNull(int i);

  // SQLITE_ROW, SQLITE_DONE, or an error code.
  int Step();
  void Reset();

  std::int64_t ColumnInt(int i) const;
  std::string ColumnText(int i) const;  // text or blob bytes
  bool ColumnIsNull(int i) const;

 private:
  friend class Database;
  sqlite3_stmt* stmt_ = nullptr;
};

class Database {
 public:
  Database() = default;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  Status Open(const std::string& path, int flags);
  Status Exec(const std::string& sql);
  Result<Statement> Prepare(std::string_view sql);
  // The first column of the first row of `sql`, as an integer.
  Result<std::int64_t> QueryInt(const std::string& sql);
  // A Status (kUnavailable) for the connection's last error, prefixed with
  // `what`; an I/O error names the failed call and its errno: "…: disk I/O
  // error (fsync failed: Input/output error)".
  Status LastError(std::string_view what) const;
  // Rows changed by the last INSERT, UPDATE or DELETE.
  int Changes() const { return sqlite3_changes(db_); }
  sqlite3* handle() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace leasehold::sqlite

#endif  // LEASEHOLD_SQLITE_DATABASE_H_
