#include "server/json_io.h"

#include "engine/lock_types.h"

namespace leasehold::server {

namespace json = boost::json;

namespace {

// A monotonic arena whose first block is part of the object.
class RequestArena final : public json::memory_resource {
 private:
  void* do_allocate(std::size_t n, std::size_t align) override {
    return arena_.allocate(n, align);
  }
  void do_deallocate(void*, std::size_t, std::size_t) override {}
  bool do_is_equal(const json::memory_resource& other) const noexcept override {
    return this == &other;
  }

  unsigned char first_[1024];
  json::monotonic_resource arena_{first_, sizeof first_};
};

}  // namespace

json::storage_ptr MakeRequestArena() {
  return json::make_shared_resource<RequestArena>();
}

Result<json::object> ParseBodyObject(std::string_view body,
                                     json::storage_ptr storage) {
  if (body.empty()) return json::object(storage);
  if (!IsValidUtf8(body)) {
    return Error(StatusCode::kBadRequest,
                 "the request body is not valid UTF-8");
  }
  boost::system::error_code ec;
  json::value v = json::parse(body, ec, storage);
  if (ec) {
    return Error(StatusCode::kBadJson,
                 "the request body is not valid JSON (" + ec.message() + ")");
  }
  if (!v.is_object()) {
    return Error(StatusCode::kBadJson,
                 "the request body must be a JSON object");
  }
  return std::move(v.as_object());
}

Result<std::string> Fields::RequiredString(std::string_view name) const {
  auto v = OptionalString(name);
  if (!v) return std::unexpected(v.error());
  if (!*v) {
    return Error(StatusCode::kBadRequest,
                 "field \"" + std::string(name) + "\" is required");
  }
  return std::move(**v);
}

Result<std::optional<std::string>> Fields::OptionalString(
    std::string_view name) const {
  const json::value* v = object_.if_contains(name);
  if (v == nullptr || v->is_null()) return std::optional<std::string>();
  if (!v->is_string()) {
    return Error(StatusCode::kBadRequest,
                 "field \"" + std::string(name) + "\" must be a string");
  }
  return std::optional<std::string>(std::string(v->as_string()));
}

Result<std::optional<std::int64_t>> Fields::OptionalInt(
    std::string_view name) const {
  const json::value* v = object_.if_contains(name);
  if (v == nullptr || v->is_null()) return std::optional<std::int64_t>();
  if (v->is_int64()) return std::optional<std::int64_t>(v->as_int64());
  if (v->is_uint64() && v->as_uint64() <= INT64_MAX) {
    return std::optional<std::int64_t>(
        static_cast<std::int64_t>(v->as_uint64()));
  }
  if (v->is_double()) {
    // In range before the cast: converting 1e4001 (inf) or 1e30 to an
    // integer is undefined behaviour (found by fuzz_api_body).
    const double d = v->as_double();
    if (d >= -9.2e18 && d <= 9.2e18 &&
        d == static_cast<double>(static_cast<std::int64_t>(d))) {
      return std::optional<std::int64_t>(static_cast<std::int64_t>(d));
    }
  }
  return Error(StatusCode::kBadRequest,
               "field \"" + std::string(name) + "\" must be an integer");
}

std::optional<json::value> Fields::Raw(std::string_view name) const {
  const json::value* v = object_.if_contains(name);
  if (v == nullptr) return std::nullopt;
  return *v;
}

json::value TimeJson(Time t) { return json::value(FormatTime(t)); }

json::value TimeJson(const std::optional<Time>& t) {
  return t ? TimeJson(*t) : json::value(nullptr);
}

std::string Serialize(const json::value& v) { return json::serialize(v); }

}  // namespace leasehold::server
