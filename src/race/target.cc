#include "race/target.h"

#include "race/leasehold_target.h"
#include "race/postgres_target.h"
#include "race/sqlite_target.h"

namespace leasehold::race {

std::string_view VariantName(Variant variant) {
  return variant == Variant::kNaive ? "naive" : "atomic";
}

Result<std::unique_ptr<Target>> MakeTarget(std::string_view spec,
                                           std::string token) {
  if (spec.starts_with("sqlite:")) {
    std::string path(spec.substr(7));
    if (path.empty()) {
      return Error(StatusCode::kBadRequest,
                   "target sqlite: needs a file path, e.g. sqlite:race.db");
    }
    return MakeSqliteTarget(std::move(path));
  }
  if (spec.starts_with("postgresql://") || spec.starts_with("postgres://")) {
    return MakePostgresTarget(std::string(spec));
  }
  if (spec.starts_with("http://")) {
    return MakeLeaseholdTarget(std::string(spec), std::move(token));
  }
  return Error(StatusCode::kBadRequest,
               "unknown target '" + std::string(spec) +
                   "': use sqlite:PATH, a postgresql:// URL, or the http:// "
                   "URL of a leasehold server");
}

}  // namespace leasehold::race
