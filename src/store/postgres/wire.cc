#include "store/postgres/wire.h"

#include <cstdlib>
#include <utility>

namespace leasehold::postgres {

int Params::Next() {
  if (count_ >= kMax) std::abort();
  formats_[count_] = 1;  // binary
  held_[count_] = Held::kView;
  return count_++;
}

const char* const* Params::values() const {
  for (int i = 0; i < count_; ++i) {
    if (held_[i] == Held::kScratch) values_[i] = scratch_[i].data();
    if (held_[i] == Held::kOwned) values_[i] = owned_[i].data();
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
  held_[i] = Held::kScratch;
  lengths_[i] = 8;
  return *this;
}

Params& Params::Bool(bool v) {
  const int i = Next();
  scratch_[i][0] = static_cast<char>(v ? 1 : 0);
  held_[i] = Held::kScratch;
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

Params& Params::Owned(std::string v) {
  const int i = Next();
  owned_[i] = std::move(v);
  held_[i] = Held::kOwned;
  lengths_[i] = static_cast<int>(owned_[i].size());
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

namespace {

// Appends `v` as 4 bytes, big-endian (network order, as the protocol).
void Append32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

}  // namespace

void ArrayWriter::Length(std::int32_t n) {
  Append32(elements_, static_cast<std::uint32_t>(n));
  ++count_;
}

ArrayWriter& ArrayWriter::Int(std::int64_t v) {
  Length(8);
  const auto u = static_cast<std::uint64_t>(v);
  Append32(elements_, static_cast<std::uint32_t>(u >> 32));
  Append32(elements_, static_cast<std::uint32_t>(u));
  return *this;
}

ArrayWriter& ArrayWriter::Bool(bool v) {
  Length(1);
  elements_.push_back(static_cast<char>(v ? 1 : 0));
  return *this;
}

ArrayWriter& ArrayWriter::Bytes(std::string_view v) {
  Length(static_cast<std::int32_t>(v.size()));
  elements_.append(v);
  return *this;
}

ArrayWriter& ArrayWriter::OptionalInt(std::optional<std::int64_t> v) {
  if (v) return Int(*v);
  Length(-1);
  has_null_ = true;
  return *this;
}

std::string ArrayWriter::Take() {
  std::string out;
  out.reserve(20 + elements_.size());
  Append32(out, count_ == 0 ? 0 : 1);  // dimensions: none when empty
  Append32(out, has_null_ ? 1 : 0);
  Append32(out, element_);
  if (count_ != 0) {
    Append32(out, count_);  // the dimension's length
    Append32(out, 1);       // and lower bound
  }
  out.append(elements_);
  elements_.clear();
  count_ = 0;
  has_null_ = false;
  return out;
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
