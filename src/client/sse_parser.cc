#include "client/sse_parser.h"

#include <boost/json/parse.hpp>

namespace leasehold::client::detail {

SseParser::SseParser(std::function<bool(const Event&)> on_event)
    : on_event_(std::move(on_event)) {}

bool SseParser::Feed(std::string_view bytes) {
  while (!stopped_ && !bytes.empty()) {
    const std::size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(bytes);
      break;
    }
    partial_.append(bytes.substr(0, nl));
    bytes.remove_prefix(nl + 1);
    std::string line = std::move(partial_);
    partial_.clear();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!Line(line)) stopped_ = true;
  }
  return !stopped_;
}

bool SseParser::Line(std::string_view line) {
  if (line.empty()) return Dispatch();
  if (line.front() == ':') return true;  // a comment: the heartbeat
  const std::size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value =
      colon == std::string_view::npos ? "" : line.substr(colon + 1);
  if (value.starts_with(' ')) value.remove_prefix(1);
  if (field == "event") {
    type_ = std::string(value);
  } else if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  }
  return true;  // "retry", "id" and unknown fields are ignored
}

bool SseParser::Dispatch() {
  if (!has_data_) {  // e.g. the "retry:" preamble: not an event
    type_.clear();
    return true;
  }
  Event event;
  event.type = type_.empty() ? "message" : std::move(type_);
  boost::system::error_code ec;
  event.data = boost::json::parse(data_, ec);
  if (ec) event.data = boost::json::string(data_);  // not JSON: keep the text
  type_.clear();
  data_.clear();
  has_data_ = false;
  return on_event_(event);
}

}  // namespace leasehold::client::detail
