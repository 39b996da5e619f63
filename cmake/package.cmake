# The Debian package, built by CPack's DEB generator (scripts/package):
# /usr/bin/leasehold, its systemd unit, system user, config (a conffile),
# man page and documentation; the files it adds are in packaging/.
# cpack installs only what install() names here. The target
# leasehold_package_files makes the man page and the changelog, which
# must be built before cpack runs.
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

install(TARGETS leasehold RUNTIME DESTINATION bin)
install(FILES ${package_out}/leasehold.1.gz DESTINATION share/man/man1)
install(FILES packaging/leasehold.service DESTINATION lib/systemd/system)
install(FILES packaging/sysusers.conf DESTINATION lib/sysusers.d
        RENAME leasehold.conf)
install(FILES packaging/leasehold.json DESTINATION /etc/leasehold)
# What an operator reads: the tour, the HTTP contract, every option, and
# backups, reloads, logs and metrics.
set(package_docs README.md docs/api.md docs/configuration.md
                 docs/operations.md)
install(FILES ${package_docs} ${package_out}/copyright
              ${package_out}/changelog.gz
        DESTINATION share/doc/leasehold)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME leasehold)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "coordination server: application locks, checkouts, semaphores")
# Debian's extended description: lines of at most 80 characters.
string(JOIN "\n" CPACK_PACKAGE_DESCRIPTION
  "leasehold makes who is working on what explicit, safe and visible:"
  "application locks with SQL Server sp_getapplock semantics and deadlock"
  "detection, record checkouts with visible leases, semaphores and a"
  "transactional outbox, over an HTTP/JSON API with a live dashboard. Its"
  "data is kept in SQLite, or in PostgreSQL with a fenced leader and"
  "standbys."
  "."
  "This package runs it as a systemd service.")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# postinst makes the user with systemd-sysusers; the maintainer scripts use
# deb-systemd-helper and deb-systemd-invoke.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "systemd | systemd-standalone-sysusers")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/conffiles
    ${PROJECT_SOURCE_DIR}/packaging/postinst
    ${PROJECT_SOURCE_DIR}/packaging/prerm
    ${PROJECT_SOURCE_DIR}/packaging/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The version is the build's (src/common/version.txt), read when cpack
# runs, so that a commit after configuring is in the package's name too.
set(CPACK_LEASEHOLD_VERSION_FILE ${version_file})
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/cpack_version.cmake)
include(CPack)
