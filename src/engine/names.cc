// Validation of names (resources, keys, topics, namespaces).
#include <cstdint>
#include <cstring>
#include <string>

#include "engine/lock_types.h"

namespace leasehold {
namespace {

constexpr std::size_t kMaxNameCharacters = 255;

// The length of the strict UTF-8 sequence (no overlong forms, no
// surrogates, nothing above U+10FFFF) that starts at s[i], or 0 when none
// does.
std::size_t Utf8SequenceAt(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t len;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c < 0x80) {
    return 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    const unsigned min = k == 1 ? lo : 0x80, max = k == 1 ? hi : 0xBF;
    if (b < min || b > max) return 0;
  }
  return len;
}

// Counts the code points of strict UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF). Returns -1 when `s` is not valid UTF-8.
long CountUtf8CodePoints(std::string_view s) {
  long count = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    // ASCII, the usual case, eight bytes at a time.
    if (std::uint64_t word; i + sizeof word <= s.size()) {
      std::memcpy(&word, s.data() + i, sizeof word);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += sizeof word;
        count += sizeof word;
        continue;
      }
    }
    const std::size_t len = Utf8SequenceAt(s, i);
    if (len == 0) return -1;
    i += len;
    ++count;
  }
  return count;
}

}  // namespace

bool IsValidUtf8(std::string_view bytes) {
  return CountUtf8CodePoints(bytes) >= 0;
}

std::string PrincipalScope(std::string_view principal) {
  std::string folded(principal);
  for (char& c : folded) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return folded;
}

std::string EscapeInvalidUtf8(std::string_view bytes) {
  if (IsValidUtf8(bytes)) return std::string(bytes);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() + 16);
  for (std::size_t i = 0; i < bytes.size();) {
    if (const std::size_t len = Utf8SequenceAt(bytes, i); len > 0) {
      out.append(bytes.substr(i, len));
      i += len;
      continue;
    }
    const auto b = static_cast<unsigned char>(bytes[i++]);
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
  }
  return out;
}

Status ValidateName(std::string_view name, std::string_view what) {
  if (name.empty()) {
    return Status(StatusCode::kNameEmpty,
                  std::string(what) + " must not be empty");
  }
  // Fast path: ASCII names (the usual case) are valid; one char per byte.
  bool ascii = true;
  for (char ch : name) ascii &= static_cast<unsigned char>(ch) < 0x80;
  if (ascii && name.size() <= kMaxNameCharacters) return Status::Ok();
  const long chars = CountUtf8CodePoints(name);
  if (chars < 0) {
    return Status(StatusCode::kBadRequest,
                  std::string(what) + " is not valid UTF-8");
  }
  if (static_cast<std::size_t>(chars) > kMaxNameCharacters) {
    return Status(StatusCode::kNameTooLong,
                  std::string(what) + " has " + std::to_string(chars) +
                      " characters; the limit is 255 (names are never "
                      "truncated)");
  }
  return Status::Ok();
}

}  // namespace leasehold
