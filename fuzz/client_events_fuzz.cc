// Fuzz target client_events: the bytes of a GET /v1/events stream as the
// client's SseParser (src/client/sse_parser.h) reads them. The input is
// fed whole, then again in pieces whose sizes come from the input itself
// (as reads from a socket cut it anywhere): both must give the same
// events. A third pass stops at the second event, as Watch does when its
// callback says so, and must give the first two.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/serialize.hpp>

#include "client/sse_parser.h"
#include "fuzz/fuzz_check.h"

namespace {

using leasehold::client::Event;
using leasehold::client::detail::SseParser;
using leasehold::fuzz::Violated;

// Each event as "type\ndata-as-JSON".
using Seen = std::vector<std::string>;

std::string Describe(const Event& e) {
  return e.type + "\n" + boost::json::serialize(e.data);
}

Seen Whole(std::string_view bytes) {
  Seen seen;
  SseParser parser([&](const Event& e) {
    seen.push_back(Describe(e));
    return true;
  });
  parser.Feed(bytes);
  return seen;
}

Seen InPieces(std::string_view bytes) {
  Seen seen;
  SseParser parser([&](const Event& e) {
    seen.push_back(Describe(e));
    return true;
  });
  std::size_t i = 0;
  while (i < bytes.size()) {
    // The piece's size from the byte it starts at: 1 to 16.
    const std::size_t n = 1 + static_cast<unsigned char>(bytes[i]) % 16;
    const std::string_view piece = bytes.substr(i, n);
    if (!parser.Feed(piece)) Violated("the parser stopped by itself", "");
    i += piece.size();
  }
  return seen;
}

Seen UntilSecond(std::string_view bytes) {
  Seen seen;
  SseParser parser([&](const Event& e) {
    seen.push_back(Describe(e));
    return seen.size() < 2;
  });
  const bool going = parser.Feed(bytes);
  if (going != (seen.size() < 2)) Violated("Feed's answer is wrong", "");
  if (!going && parser.Feed("data: {}\n\n")) {
    Violated("a stopped parser went on", "");
  }
  return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const Seen whole = Whole(bytes);
  if (InPieces(bytes) != whole) {
    Violated("the events depend on how the stream was cut", bytes);
  }
  const Seen first = UntilSecond(bytes);
  if (first.size() > std::min<std::size_t>(2, whole.size()) ||
      !std::equal(first.begin(), first.end(), whole.begin(),
                  whole.begin() + static_cast<std::ptrdiff_t>(first.size()))) {
    Violated("stopping changed the events before it", bytes);
  }
  return 0;
}
