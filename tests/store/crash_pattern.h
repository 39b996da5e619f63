// What the crash test's writer writes, so that the checker can tell a whole
// write from a torn one: a key's body is a function of (key, version), and
// the two keys of a pair are always written in one command.
#ifndef LEASEHOLD_TESTS_STORE_CRASH_PATTERN_H_
#define LEASEHOLD_TESTS_STORE_CRASH_PATTERN_H_

#include <cstdint>
#include <string>

namespace leasehold::crash {

inline constexpr const char* kNamespace = "crash";

inline std::string PairKey(int thread, int pair, char side) {
  return "t" + std::to_string(thread) + "-p" + std::to_string(pair) + "-" +
         side;
}

inline std::string BodyFor(const std::string& key, std::uint64_t version) {
  const std::string unit = key + "@" + std::to_string(version) + ";";
  std::string body;
  const std::size_t length = 64 + (version % 7) * 150;
  while (body.size() < length) body += unit;
  return body;
}

}  // namespace leasehold::crash

#endif  // LEASEHOLD_TESTS_STORE_CRASH_PATTERN_H_
