// Values on libpq's wire in PostgreSQL's binary format, for the store's
// prepared statements (Params) and its results (RowReader): int8 is 8
// bytes big-endian, bool 1 byte, bytea and text the bytes as they are.
// Binary spares escaping every body and name, and keeps NUL bytes intact.
#ifndef LEASEHOLD_STORE_POSTGRES_WIRE_H_
#define LEASEHOLD_STORE_POSTGRES_WIRE_H_

#include <libpq-fe.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace leasehold::postgres {

// Type OIDs of the built-in types the store uses (pg_type.h's values, fixed
// since PostgreSQL 7).
inline constexpr Oid kBoolOid = 16;
inline constexpr Oid kByteaOid = 17;
inline constexpr Oid kInt8Oid = 20;
inline constexpr Oid kTextOid = 25;
// ... and of their one-dimensional arrays.
inline constexpr Oid kBoolArrayOid = 1000;
inline constexpr Oid kByteaArrayOid = 1001;
inline constexpr Oid kTextArrayOid = 1009;
inline constexpr Oid kInt8ArrayOid = 1016;

// The parameters of one statement, in order. Bytes() keeps a view: the
// bytes must live until the statement is sent (libpq copies them then).
// Copyable: numbers live inside, and values() points at the copy asked.
class Params {
 public:
  static constexpr int kMax = 17;  // the lock rows' delete-and-put

  Params& Int(std::int64_t v);
  Params& Uint(std::uint64_t v) { return Int(static_cast<std::int64_t>(v)); }
  Params& Bool(bool v);
  Params& Bytes(std::string_view v);
  // Bytes the parameters keep themselves (an array's, ArrayWriter).
  Params& Owned(std::string v);
  Params& Null();
  // An integer, or NULL when absent.
  Params& OptionalInt(std::optional<std::int64_t> v);

  int count() const { return count_; }
  const char* const* values() const;
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

 private:
  int Next();  // the next slot; aborts past kMax (a programming error)

  int count_ = 0;
  enum class Held : std::uint8_t { kView, kScratch, kOwned };

  // For Bytes() the view's data, for NULL nullptr; numbers are in scratch_
  // and owned bytes in owned_ (held_ says which), and values() points there.
  mutable std::array<const char*, kMax> values_{};
  std::array<Held, kMax> held_{};
  std::array<int, kMax> lengths_{};
  std::array<int, kMax> formats_{};
  std::array<std::array<char, 8>, kMax> scratch_{};
  std::array<std::string, kMax> owned_{};
};

// A one-dimensional array parameter in PostgreSQL's binary format (what
// array_recv reads): a header (dimensions, whether any element is NULL,
// the element type, the length and lower bound), then each element as its
// length (-1: NULL) and its bytes, in the element type's binary format.
class ArrayWriter {
 public:
  ArrayWriter() = default;
  explicit ArrayWriter(Oid element) : element_(element) {}

  ArrayWriter& Int(std::int64_t v);
  ArrayWriter& Uint(std::uint64_t v) {
    return Int(static_cast<std::int64_t>(v));
  }
  ArrayWriter& Bool(bool v);
  ArrayWriter& Bytes(std::string_view v);
  ArrayWriter& OptionalInt(std::optional<std::int64_t> v);

  std::size_t size() const { return count_; }
  // Bytes written so far, to bound a statement's parameters.
  std::size_t bytes() const { return elements_.size(); }
  // The whole array, for Params::Owned; the writer is left empty.
  std::string Take();

 private:
  void Length(std::int32_t n);

  Oid element_ = kInt8Oid;
  std::string elements_;
  std::uint32_t count_ = 0;
  bool has_null_ = false;
};

// Reads the columns of one row of a binary result. A value of the wrong
// size (a column altered behind leasehold's back) reads as 0 or empty and
// sets bad(), so the caller refuses the row instead of misreading memory.
class RowReader {
 public:
  RowReader(const PGresult* result, int row) : result_(result), row_(row) {}

  std::int64_t Int(int column);
  std::optional<std::int64_t> OptionalInt(int column);
  bool Bool(int column);
  std::string Bytes(int column);
  bool bad() const { return bad_; }

 private:
  bool IsNull(int column) const;

  const PGresult* result_;
  int row_;
  bool bad_ = false;
};

}  // namespace leasehold::postgres

#endif  // LEASEHOLD_STORE_POSTGRES_WIRE_H_
