// GET /v1/openapi.json: docs/openapi.yaml as the server was built with it.
#include "server/handlers_openapi.h"

#include "server/openapi_document.h"

namespace leasehold::server {

bool IsOpenApiRequest(std::string_view method,
                      const std::vector<std::string>& segments) {
  return method == "GET" && segments.size() == 2 && segments[0] == "v1" &&
         segments[1] == "openapi.json";
}

void ServeOpenApi(const Call& c) {
  c.respond(
      ApiResponse{200, std::string(OpenApiDocument()), "application/json"});
}

}  // namespace leasehold::server
