#include "store/postgres/wire.h"

#include <cstdlib>

namespace leasehold::postgres {

int Params::Next() {
  if (count_ >= kMax) std::abort();
  formats_[count_] = 1;  // binary
  in_scratch_[count_] = false;
  return count_++;
}

const char* const* Params::values() const {
  for (int i = 0; i < count_; ++i) {
    if (in_scratch_[i]) values_[i] = scratch_[i].data();
  }
  return values_.data();
}

Params& Params::Int(std::int64_t v) {
  const int i = Next();
  auto u = static_cast<std::uint64_t>(v);
  for (int b = 7; b >= 0; --b) {
    scratch_[i][b] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  in_scratch_[i] = true;
  lengths_[i] = 8;
  return *this;
}

Params& Params::Bool(bool v) {
  const int i = Next();
  scratch_[i][0] = static_cast<char>(v ? 1 : 0);
  in_scratch_[i] = true;
  lengths_[i] = 1;
  return *this;
}

Params& Params::Bytes(std::string_view v) {
  const int i = Next();
  // A null pointer would mean SQL NULL: an empty value needs a real one.
  values_[i] = v.empty() ? "" : v.data();
  lengths_[i] = static_cast<int>(v.size());
  return *this;
}

Params& Params::Null() {
  const int i = Next();
  values_[i] = nullptr;
  lengths_[i] = 0;
  return *this;
}

Params& Params::OptionalInt(std::optional<std::int64_t> v) {
  return v ? Int(*v) : Null();
}

bool RowReader::IsNull(int column) const {
  return PQgetisnull(result_, row_, column) != 0;
}

std::int64_t RowReader::Int(int column) {
  if (IsNull(column) || PQgetlength(result_, row_, column) != 8) {
    bad_ = true;
    return 0;
  }
  const auto* p =
      reinterpret_cast<const unsigned char*>(PQgetvalue(result_, row_, column));
  std::uint64_t u = 0;
  for (int b = 0; b < 8; ++b) u = (u << 8) | p[b];
  return static_cast<std::int64_t>(u);
}

std::optional<std::int64_t> RowReader::OptionalInt(int column) {
  if (IsNull(column)) return std::nullopt;
  return Int(column);
}

bool RowReader::Bool(int column) {
  if (IsNull(column) || PQgetlength(result_, row_, column) != 1) {
    bad_ = true;
    return false;
  }
  return PQgetvalue(result_, row_, column)[0] != 0;
}

std::string RowReader::Bytes(int column) {
  if (IsNull(column)) {
    bad_ = true;
    return {};
  }
  return std::string(
      PQgetvalue(result_, row_, column),
      static_cast<std::size_t>(PQgetlength(result_, row_, column)));
}

}  // namespace leasehold::postgres
