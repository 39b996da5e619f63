// GET /v1/openapi.json: the machine-readable contract (docs/openapi.yaml).
// Public like /healthz: it describes the API and holds no data. Internal to
// the server.
#ifndef LEASEHOLD_SERVER_HANDLERS_OPENAPI_H_
#define LEASEHOLD_SERVER_HANDLERS_OPENAPI_H_

#include <string>
#include <string_view>
#include <vector>

#include "server/handlers.h"

namespace leasehold::server {

// Whether `method` and the decoded path `segments` (from the root, "v1"
// first) ask for the document.
bool IsOpenApiRequest(std::string_view method,
                      const std::vector<std::string>& segments);

// Answers 200 with the document as application/json.
void ServeOpenApi(const Call& c);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_HANDLERS_OPENAPI_H_
