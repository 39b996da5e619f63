// Reading request bodies and writing answers as JSON, with docs/api.md's error
// codes for every way a body can be wrong.
#ifndef LEASEHOLD_SERVER_JSON_IO_H_
#define LEASEHOLD_SERVER_JSON_IO_H_

#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace leasehold::server {

// Memory for one request's JSON: a counted arena with its first kilobyte
// inline, so that a small body costs one allocation instead of one per
// key and string. Freed whole when the last value using it is gone.
boost::json::storage_ptr MakeRequestArena();

// Parses a request body that must be a JSON object, into `storage`. An
// empty body is an empty object. kBadRequest for invalid UTF-8, kBadJson
// for anything that is not a JSON object.
Result<boost::json::object> ParseBodyObject(
    std::string_view body, boost::json::storage_ptr storage = {});

// Typed access to a request object's fields; each error names the field.
class Fields {
 public:
  explicit Fields(const boost::json::object& object) : object_(object) {}

  Result<std::string> RequiredString(std::string_view name) const;
  Result<std::optional<std::string>> OptionalString(
      std::string_view name) const;
  Result<std::optional<std::int64_t>> OptionalInt(std::string_view name) const;
  // A JSON value of any type, or nullopt when absent.
  std::optional<boost::json::value> Raw(std::string_view name) const;

 private:
  const boost::json::object& object_;
};

// The JSON for an instant: RFC 3339 UTC with milliseconds.
boost::json::value TimeJson(Time t);
boost::json::value TimeJson(const std::optional<Time>& t);  // null if empty

std::string Serialize(const boost::json::value& v);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_JSON_IO_H_
