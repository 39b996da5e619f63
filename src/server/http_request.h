// The HTTP layer's handling of one request, without a socket: Beast's
// parser with the server's limits, the answer to bytes it refuses, and what
// a parsed request is for (the event stream, a dashboard file, or the Api).
// http_server.cc's connections read from sockets through these functions,
// and fuzz/http_request_fuzz.cc feeds them bytes, so both take the same
// path. Internal to the server; includes Beast (slow to compile).
#ifndef LEASEHOLD_SERVER_HTTP_REQUEST_H_
#define LEASEHOLD_SERVER_HTTP_REQUEST_H_

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <variant>

#include "server/api.h"
#include "server/dashboard_assets.h"
#include "server/http_server.h"

namespace leasehold::server {

using HttpRequest =
    boost::beast::http::request<boost::beast::http::string_body>;
using RequestParser =
    boost::beast::http::request_parser<boost::beast::http::string_body>;

// Sets `parser`'s body and header limits from `options`. Call on a fresh
// parser, before its first bytes.
void ApplyLimits(RequestParser& parser, const HttpOptions& options);

// Feeds `buffer`'s bytes to `parser`, consuming what it takes, until the
// request is whole (parser.is_done()), every byte is used and it needs
// more, or it refuses them. Returns the refusal (an http::error), or no
// error otherwise. `header_bytes` counts the request's header section
// across calls (0 for a fresh parser): past options.header_limit in all,
// request line included, the request is refused (http::error::
// header_limit). Beast bounds each header line it parses, not all of them
// together.
boost::beast::error_code FeedParser(RequestParser& parser,
                                    boost::beast::flat_buffer& buffer,
                                    const HttpOptions& options,
                                    std::size_t& header_bytes);

// Whether `ec` is the parser's verdict on the request (answered with 400 or
// 413) rather than a failure of the socket (which just closes it).
bool IsHttpError(const boost::beast::error_code& ec);

// The answer to a request the parser refused with `ec` (IsHttpError):
// 413 body_too_large past the body limit, else 400 bad_request (naming the
// header limit past it). The connection closes after it.
ApiResponse RefusedRequestResponse(const boost::beast::error_code& ec,
                                   const HttpOptions& options);

// Where a parsed request goes, decided in this order:
// - an ApiResponse to write at once: the event stream refused (bad query,
//   no token, not the leader);
// - an EventAccess: start an event stream with it (only with an EventHub);
// - a DashboardAsset: GET of one of the dashboard's files (no token);
// - an ApiRequest for Api::Handle (its on_parked left empty), with the
//   body moved out of `req`.
// `peer`: the connection's verified client certificate (may be null).
using RequestRoute =
    std::variant<ApiResponse, EventAccess, const DashboardAsset*, ApiRequest>;
RequestRoute RouteRequest(const Api& api, bool has_event_hub, HttpRequest& req,
                          const std::shared_ptr<const PeerCertificate>& peer);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_HTTP_REQUEST_H_
