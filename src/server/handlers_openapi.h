// GET /v1/openapi.json: the machine-readable contract (docs/openapi.yaml).
// Public like /healthz: it describes the API and holds no data. Internal to
// the server.
#ifndef LEASEHOLD_SERVER_HANDLERS_OPENAPI_H_
#define LEASEHOLD_SERVER_HANDLERS_OPENAPI_H_

#include "server/handlers.h"

namespace leasehold::server {

// Answers 200 with the document as application/json.
void ServeOpenApi(Call& c);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_HANDLERS_OPENAPI_H_
