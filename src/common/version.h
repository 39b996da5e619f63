// The version of this build, taken from git when it was built
// (cmake/version.cmake): `git describe --tags --always --dirty`, e.g.
// "0.3.0-12-gabc1234"; "0.1.0-385-gabc1234" (project version, commits,
// hash) when no tag is reachable; the project version alone without git.
// Always starts with a digit. Defined by a source generated at build time
// into its own library, leasehold_version, so that a new commit recompiles
// one file.
#ifndef LEASEHOLD_COMMON_VERSION_H_
#define LEASEHOLD_COMMON_VERSION_H_

#include <string_view>

namespace leasehold {

std::string_view Version();

}  // namespace leasehold

#endif  // LEASEHOLD_COMMON_VERSION_H_
