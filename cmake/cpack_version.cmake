# Read by cpack as it starts (CPACK_PROJECT_CONFIG_FILE, cmake/package.cmake):
# the package's version is the version the build has (version.txt,
# written at every build by cmake/version.cmake). A Debian version with a
# hyphen would declare a Debian revision, which a package built from its
# own sources has none of: 0.1.0-385-gabc1234 is packaged as
# 0.1.0+385+gabc1234.
if(NOT EXISTS "${CPACK_LEASEHOLD_VERSION_FILE}")
  message(FATAL_ERROR "no ${CPACK_LEASEHOLD_VERSION_FILE}: build the "
                      "leasehold_package_files target first (scripts/package)")
endif()
file(STRINGS "${CPACK_LEASEHOLD_VERSION_FILE}" CPACK_PACKAGE_VERSION LIMIT_COUNT 1)
string(REPLACE "-" "+" CPACK_DEBIAN_PACKAGE_VERSION "${CPACK_PACKAGE_VERSION}")
