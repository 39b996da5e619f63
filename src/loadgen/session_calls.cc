#include "loadgen/session_calls.h"

#include <boost/json/parse.hpp>

#include "client/api_codec.h"

namespace leasehold::loadgen {

namespace asio = boost::asio;
namespace json = boost::json;
namespace api = client::api;

asio::awaitable<std::optional<std::string>> OpenSession(
    Worker& w, std::string name, std::chrono::milliseconds ttl) {
  std::string answer;
  const Verdict v =
      co_await w.Call(http::Method::kPost, api::SessionsPath(),
                      api::OpenSessionBody(name, ttl), 201, 0, &answer);
  if (v != Verdict::kOk) co_return std::nullopt;
  boost::system::error_code ec;
  const json::value parsed = json::parse(answer, ec);
  auto session = api::ParseSession(parsed, "POST /v1/sessions");
  if (ec || !session) {
    w.Error("POST /v1/sessions: no \"id\" in " + answer);
    co_return std::nullopt;
  }
  co_return std::move(session->id);
}

asio::awaitable<void> EndSession(Worker& w, const std::string& id) {
  co_await w.Call(http::Method::kDelete, api::SessionPath(id), "", 204);
}

std::chrono::milliseconds TtlForPhase(const BenchOptions& o) {
  return o.warmup + o.duration + std::chrono::milliseconds(60'000);
}

}  // namespace leasehold::loadgen
