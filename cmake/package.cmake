# The Debian packages, built by CPack's DEB generator (scripts/package),
# one per install component:
#   leasehold             (component `server`) /usr/bin/leasehold, its
#                         systemd unit, system user, config (a conffile),
#                         man page and documentation; the files it adds
#                         are in packaging/.
#   leasehold-client-dev  (components `client`, cmake/client_install.cmake,
#                         and `client_docs`) the C++ client's header,
#                         static library, CMake package and pkg-config file.
# cpack installs only those components. The target leasehold_package_files
# makes the man page and the changelog, which must be built before cpack
# runs.
set(package_out ${CMAKE_BINARY_DIR}/packaging)
set(version_file ${CMAKE_BINARY_DIR}/src/common/version.txt)

set(CPACK_PACKAGE_CONTACT
    "leasehold maintainers <maintainers@users.noreply.a-seed-5384a5c1.example>"
    CACHE STRING "The package's maintainer (Debian's Maintainer field)")

# The man page (help2man, from --help and --version) and the Debian
# changelog, for the version this build has; gzipped as Debian wants. A new
# version relinks leasehold, and so remakes them.
add_custom_command(
  OUTPUT ${package_out}/leasehold.1.gz ${package_out}/changelog.gz
  COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:leasehold>
    -DVERSION_FILE=${version_file} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DOUT_DIR=${package_out} "-DMAINTAINER=${CPACK_PACKAGE_CONTACT}"
    -P ${PROJECT_SOURCE_DIR}/cmake/package_docs.cmake
  DEPENDS leasehold ${PROJECT_SOURCE_DIR}/cmake/package_docs.cmake
  COMMENT "Writing the man page and the Debian changelog" VERBATIM)
add_custom_target(leasehold_package_files
  DEPENDS ${package_out}/leasehold.1.gz ${package_out}/changelog.gz)

configure_file(packaging/copyright ${package_out}/copyright @ONLY)

install(TARGETS leasehold RUNTIME DESTINATION bin COMPONENT server)
install(FILES ${package_out}/leasehold.1.gz DESTINATION share/man/man1
        COMPONENT server)
install(FILES packaging/leasehold.service DESTINATION lib/systemd/system
        COMPONENT server)
install(FILES packaging/sysusers.conf DESTINATION lib/sysusers.d
        RENAME leasehold.conf COMPONENT server)
install(FILES packaging/leasehold.json DESTINATION /etc/leasehold
        COMPONENT server)
# What an operator reads: the tour, the HTTP contract, every option, and
# backups, reloads, logs and metrics.
set(package_docs README.md docs/api.md docs/configuration.md
                 docs/operations.md)
install(FILES ${package_docs} ${package_out}/copyright
              ${package_out}/changelog.gz
        DESTINATION share/doc/leasehold COMPONENT server)
# What Debian wants in leasehold-client-dev beside the client's own files
# (component `client_docs`, so that `cmake --install --component client`
# needs no changelog built): its copyright and changelog, and the guide
# to the client.
install(FILES docs/client.md ${package_out}/copyright
              ${package_out}/changelog.gz
        DESTINATION share/doc/leasehold-client-dev COMPONENT client_docs)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME leasehold)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL server client client_docs)
set(CPACK_COMPONENT_CLIENT_GROUP client_dev)
set(CPACK_COMPONENT_CLIENT_DOCS_GROUP client_dev)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# leasehold, the server. Each description's first line is its synopsis;
# Debian's extended description: lines of at most 80 characters.
set(CPACK_DEBIAN_SERVER_PACKAGE_NAME leasehold)
string(JOIN "\n" CPACK_DEBIAN_SERVER_DESCRIPTION
  "coordination server: application locks, checkouts, semaphores"
  "leasehold makes who is working on what explicit, safe and visible:"
  "application locks with SQL Server sp_getapplock semantics and deadlock"
  "detection, record checkouts with visible leases, semaphores and a"
  "transactional outbox, over an HTTP/JSON API with a live dashboard. Its"
  "data is kept in SQLite, or in PostgreSQL with a fenced leader and"
  "standbys."
  "."
  "This package runs it as a systemd service.")
set(CPACK_DEBIAN_SERVER_PACKAGE_SECTION net)
set(CPACK_DEBIAN_SERVER_PACKAGE_SHLIBDEPS ON)
# postinst makes the user with systemd-sysusers; the maintainer scripts use
# deb-systemd-helper and deb-systemd-invoke.
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS
    "systemd | systemd-standalone-sysusers")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/conffiles
    ${PROJECT_SOURCE_DIR}/packaging/postinst
    ${PROJECT_SOURCE_DIR}/packaging/prerm
    ${PROJECT_SOURCE_DIR}/packaging/postrm)

# leasehold-client-dev, the C++ client: a static library, so its
# dependencies are the development packages of what it links (the Boost
# it was compiled with, exactly: Boost keeps no ABI between releases), and
# nothing of the server.
set(CPACK_DEBIAN_CLIENT_DEV_PACKAGE_NAME leasehold-client-dev)
set(CPACK_DEBIAN_CLIENT_DEV_PACKAGE_SOURCE leasehold)
string(JOIN "\n" CPACK_DEBIAN_CLIENT_DEV_DESCRIPTION
  "C++ client of the leasehold coordination server"
  "The C++ client of leasehold: sessions kept alive in the background,"
  "application locks, semaphores and checkouts as RAII guards that report"
  "their loss, errors as values, and calls that ride through a restart of"
  "the server or a failover to another node, over HTTP or HTTPS."
  "."
  "This package holds its header, its static library, a CMake package"
  "(find_package(leasehold CONFIG), target leasehold::client) and a"
  "pkg-config file (leasehold-client).")
set(CPACK_DEBIAN_CLIENT_DEV_PACKAGE_SECTION libdevel)
set(boost_dev "${Boost_VERSION_MAJOR}.${Boost_VERSION_MINOR}-dev")
set(CPACK_DEBIAN_CLIENT_DEV_PACKAGE_DEPENDS
    "libboost${boost_dev}, libboost-json${boost_dev}, libssl-dev")
# The version is the build's (src/common/version.txt), read when cpack
# runs, so that a commit after configuring is in the package's name too.
set(CPACK_LEASEHOLD_VERSION_FILE ${version_file})
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/cpack_version.cmake)
include(CPack)
