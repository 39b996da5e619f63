// Fuzz target http (and http_tokens, built with LEASEHOLD_FUZZ_TOKENS):
// the bytes one client sends on a connection, read as the server reads
// them (src/server/http_request.h: Beast's parser with the server's
// limits), routed and answered by the real Api over a fresh engine
// (FuzzServer). Pipelined requests are answered in order; a request that
// parks leaves the next to be handled meanwhile, as if sent on another
// connection. Every answer, and every event frame the requests cause, is
// checked (fuzz_server.h).
#include <boost/beast/http/error.hpp>
#include <cstddef>
#include <cstdint>
#include <variant>

#include "fuzz/fuzz_server.h"
#include "server/http_request.h"

namespace {

namespace http = boost::beast::http;
using leasehold::fuzz::Auth;
using leasehold::fuzz::CheckAnswer;
using leasehold::fuzz::FuzzServer;
using leasehold::fuzz::Violated;
using namespace leasehold::server;

#ifdef LEASEHOLD_FUZZ_TOKENS
constexpr Auth kAuth = Auth::kWithTokens;
#else
constexpr Auth kAuth = Auth::kOff;
#endif

// More requests than this on one input add little but time.
constexpr int kMaxRequests = 32;

// Reads one request from `buffer`; false when the connection ends here (a
// hang-up between requests, a refusal, a stream, or no keep-alive).
bool OneRequest(FuzzServer& server, const HttpOptions& options,
                boost::beast::flat_buffer& buffer) {
  RequestParser parser;
  ApplyLimits(parser, options);
  std::size_t header_bytes = 0;
  boost::beast::error_code ec =
      FeedParser(parser, buffer, options, header_bytes);
  if (!ec && !parser.is_done()) {
    // The input ends: between requests a hang-up, inside one a torn one.
    if (!parser.got_some()) return false;
    ec = http::error::partial_message;
  }
  if (ec) {
    if (!IsHttpError(ec)) Violated("the parser failed", ec.message());
    CheckAnswer(RefusedRequestResponse(ec, options));
    return false;
  }
  HttpRequest& req = parser.get();
  const bool keep_alive = req.keep_alive();
  RequestRoute route = RouteRequest(server.api(), true, req, nullptr);
  if (auto* answer = std::get_if<ApiResponse>(&route)) {
    CheckAnswer(*answer);
  } else if (std::holds_alternative<EventAccess>(route)) {
    return false;  // the connection streams events from here on
  } else if (auto* asset = std::get_if<const DashboardAsset*>(&route)) {
    if (*asset == nullptr) Violated("a null dashboard asset", req.target());
  } else {
    server.Send(std::move(std::get<ApiRequest>(route)));
  }
  return keep_alive;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  FuzzServer server(kAuth);
  const HttpOptions options;  // the server's default limits
  boost::beast::flat_buffer buffer;
  auto space = buffer.prepare(size);
  if (size > 0) std::memcpy(space.data(), data, size);
  buffer.commit(size);
  for (int i = 0; i < kMaxRequests && OneRequest(server, options, buffer);
       ++i) {
  }
  server.Finish();
  return 0;
}
