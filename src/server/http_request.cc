#include "server/http_request.h"

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <string>

#include "server/routes.h"

namespace leasehold::server {

namespace beast = boost::beast;
namespace http = beast::http;

void ApplyLimits(RequestParser& parser, const HttpOptions& options) {
  parser.body_limit(options.body_limit);
  parser.header_limit(static_cast<std::uint32_t>(options.header_limit));
}

beast::error_code FeedParser(RequestParser& parser, beast::flat_buffer& buffer,
                             const HttpOptions& options,
                             std::size_t& header_bytes) {
  while (buffer.size() > 0 && !parser.is_done()) {
    beast::error_code ec;
    const bool in_header = !parser.is_header_done();
    const std::size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (in_header) header_bytes += used;
    if (ec == http::error::need_more) break;
    if (ec) return ec;
    if (used == 0) break;
  }
  const bool too_long =
      parser.is_header_done()
          ? header_bytes > options.header_limit
          : header_bytes + buffer.size() > options.header_limit;
  if (too_long) return http::error::header_limit;
  return {};
}

bool IsHttpError(const beast::error_code& ec) {
  static const beast::error_category& http_errors =
      beast::error_code(http::error::partial_message).category();
  return ec.category() == http_errors;
}

ApiResponse RefusedRequestResponse(const beast::error_code& ec,
                                   const HttpOptions& options) {
  if (ec == http::error::body_limit) {
    return ErrorResponse(Status(StatusCode::kBodyTooLarge,
                                "the request body is larger than " +
                                    std::to_string(options.body_limit) +
                                    " bytes"));
  }
  if (ec == http::error::header_limit) {
    return ErrorResponse(Status(StatusCode::kBadRequest,
                                "the request line and headers are larger "
                                "than " +
                                    std::to_string(options.header_limit) +
                                    " bytes in all"));
  }
  return ErrorResponse(Status(StatusCode::kBadRequest,
                              "malformed HTTP request: " + ec.message()));
}

RequestRoute RouteRequest(const Api& api, bool has_event_hub, HttpRequest& req,
                          const std::shared_ptr<const PeerCertificate>& peer) {
  const std::string_view target = req.target();
  const std::string_view path = target.substr(0, target.find('?'));
  const std::string_view authorization = req[http::field::authorization];
  if (has_event_hub && IsEventStreamTarget(req.method_string(), path)) {
    if (auto elsewhere = api.ToLeader(target)) return std::move(*elsewhere);
    auto access = api.AuthorizeEvents(authorization, target, peer.get());
    if (!access) return ErrorResponse(access.error());
    return std::move(*access);
  }
  // The dashboard's own files hold no data: served without a token.
  if (req.method() == http::verb::get) {
    if (const DashboardAsset* asset = FindDashboardAsset(path)) return asset;
  }
  return ApiRequest{std::string(req.method_string()),
                    std::string(target),
                    std::move(req.body()),
                    std::string(authorization),
                    nullptr,
                    peer};
}

}  // namespace leasehold::server
