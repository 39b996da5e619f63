#include "common/token.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace leasehold {

namespace {

// Kernel randomness fetched a page at a time for this thread: one
// getrandom() per 256 tokens instead of one per token (a system call per
// checkout showed in the profile). The bytes are as unpredictable as the
// kernel's; each is handed out once.
void FillRandom(unsigned char* out, std::size_t size) {
  thread_local unsigned char pool[4096];
  thread_local std::size_t used = sizeof pool;
  while (size > 0) {
    if (used == sizeof pool) {
      std::size_t filled = 0;
      while (filled < sizeof pool) {
        const ssize_t n = getrandom(pool + filled, sizeof pool - filled, 0);
        if (n < 0) {
          if (errno == EINTR) continue;
          std::abort();  // no randomness: handing out guessable tokens is worse
        }
        filled += static_cast<std::size_t>(n);
      }
      used = 0;
    }
    const std::size_t take = std::min(size, sizeof pool - used);
    std::memcpy(out, pool + used, take);
    std::memset(pool + used, 0, take);  // handed out: not kept in memory
    used += take;
    out += take;
    size -= take;
  }
}

}  // namespace

std::string NewLeaseToken() {
  unsigned char bytes[16];
  FillRandom(bytes, sizeof bytes);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(32, '0');
  for (std::size_t i = 0; i < sizeof bytes; ++i) {
    out[2 * i] = kHex[bytes[i] >> 4];
    out[2 * i + 1] = kHex[bytes[i] & 0xf];
  }
  return out;
}

}  // namespace leasehold
