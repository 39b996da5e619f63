// GET /v1/openapi.json: docs/openapi.yaml as the server was built with it.
#include "server/handlers_openapi.h"

#include "server/openapi_document.h"

namespace leasehold::server {

void ServeOpenApi(Call& c) {
  c.respond(
      ApiResponse{200, std::string(OpenApiDocument()), "application/json"});
}

}  // namespace leasehold::server
