// SseParser: Server-Sent Events from a byte stream fed in arbitrary pieces.
// Lines "event: X" and "data: ..." build an event that a blank line ends;
// ":" comment lines (heartbeats), "retry:" and "id:" are ignored.
#ifndef LEASEHOLD_SRC_CLIENT_SSE_PARSER_H_
#define LEASEHOLD_SRC_CLIENT_SSE_PARSER_H_

#include <functional>
#include <string>
#include <string_view>

#include "leasehold/client.h"

namespace leasehold::client::detail {

class SseParser {
 public:
  // Called for each complete event; returning false stops the parse.
  explicit SseParser(std::function<bool(const Event&)> on_event);

  // Feeds bytes; false once `on_event` has asked to stop.
  bool Feed(std::string_view bytes);

 private:
  bool Line(std::string_view line);
  bool Dispatch();

  std::function<bool(const Event&)> on_event_;
  std::string partial_;  // an unfinished line
  std::string type_;
  std::string data_;
  bool has_data_ = false;
  bool stopped_ = false;
};

}  // namespace leasehold::client::detail

#endif  // LEASEHOLD_SRC_CLIENT_SSE_PARSER_H_
