#include "loadgen/session_calls.h"

#include <fmt/format.h>
#include <boost/json.hpp>

namespace leasehold::loadgen {

namespace asio = boost::asio;
namespace json = boost::json;

asio::awaitable<std::optional<std::string>> OpenSession(
    Worker& w, std::string name, std::chrono::milliseconds ttl) {
  const std::string body =
      fmt::format(R"({{"name":"{}","ttl_ms":{}}})", name, ttl.count());
  std::string answer;
  const Verdict v =
      co_await w.Call(Method::kPost, "/v1/sessions", body, 201, 0, &answer);
  if (v != Verdict::kOk) co_return std::nullopt;
  boost::system::error_code ec;
  const json::value parsed = json::parse(answer, ec);
  const json::value* id = nullptr;
  if (!ec && parsed.is_object()) id = parsed.as_object().if_contains("id");
  if (id == nullptr || !id->is_string()) {
    w.Error("POST /v1/sessions: no \"id\" in " + answer);
    co_return std::nullopt;
  }
  co_return std::string(id->as_string());
}

asio::awaitable<void> EndSession(Worker& w, const std::string& id) {
  co_await w.Call(Method::kDelete, "/v1/sessions/" + id, "", 204);
}

std::chrono::milliseconds TtlForPhase(const BenchOptions& o) {
  return o.warmup + o.duration + std::chrono::milliseconds(60'000);
}

}  // namespace leasehold::loadgen
