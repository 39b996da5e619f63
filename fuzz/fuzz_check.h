// Violated: how a fuzz target reports an input that breaks what it checks.
// Header-only, so that every target can use it.
#ifndef LEASEHOLD_FUZZ_FUZZ_CHECK_H_
#define LEASEHOLD_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace leasehold::fuzz {

// Prints `what` and the start of `detail`, and aborts: libFuzzer then
// saves the input as a crash.
[[noreturn]] inline void Violated(std::string_view what,
                                  std::string_view detail) {
  const int shown =
      static_cast<int>(detail.size() > 2000 ? 2000 : detail.size());
  std::fprintf(stderr, "fuzz invariant violated: %.*s\n  %.*s\n",
               static_cast<int>(what.size()), what.data(), shown,
               detail.data());
  std::abort();
}

}  // namespace leasehold::fuzz

#endif  // LEASEHOLD_FUZZ_FUZZ_CHECK_H_
