// docs/openapi.yaml as JSON, compiled into the binary at build time
// (cmake/yaml_to_json.cc, cmake/embed_openapi.cmake). Internal to the server.
#ifndef LEASEHOLD_SERVER_OPENAPI_DOCUMENT_H_
#define LEASEHOLD_SERVER_OPENAPI_DOCUMENT_H_

#include <string_view>

namespace leasehold::server {

// The document's JSON text, as GET /v1/openapi.json serves it.
std::string_view OpenApiDocument();

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_OPENAPI_DOCUMENT_H_
