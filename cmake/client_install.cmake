# The C++ client, installed for programs built outside this tree (install
# component `client`; docs/client.md, "Building outside this tree"):
#   INCLUDEDIR/leasehold/client.h
#   LIBDIR/libleasehold_client.a          src/client's leasehold_client_dist
#   LIBDIR/cmake/leasehold/               find_package(leasehold CONFIG)
#                                         gives the target leasehold::client
#   LIBDIR/pkgconfig/leasehold-client.pc  pkg-config --cflags --libs
#                                         leasehold-client
# The CMake package finds the files relative to where it lies, and the
# pkg-config file is written as it is installed, with the prefix it is
# installed to, so that `cmake --install BUILD --component client --prefix
# DIR` and the Debian package leasehold-client-dev (prefix /usr,
# cmake/package.cmake) are both right without another configure.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(client_out ${CMAKE_BINARY_DIR}/client-install)
set(client_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/leasehold)

install(TARGETS leasehold_client_dist EXPORT leaseholdTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT client
  FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT client)
install(EXPORT leaseholdTargets NAMESPACE leasehold::
  DESTINATION ${client_cmake_dir} COMPONENT client)

# The CMake package. Its version is the project's; 0.x releases are
# compatible within a minor version.
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/leaseholdConfig.cmake.in
  ${client_out}/leaseholdConfig.cmake
  INSTALL_DESTINATION ${client_cmake_dir})
write_basic_package_version_file(${client_out}/leaseholdConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${client_out}/leaseholdConfig.cmake
              ${client_out}/leaseholdConfigVersion.cmake
  DESTINATION ${client_cmake_dir} COMPONENT client)

# The pkg-config file: prefix= is the prefix it is installed to (known
# only then: `--prefix DIR`, or /usr in the Debian package), as pkg-config
# expects. Boost's directories are named only where the compiler does not
# search anyway.
function(client_pc_dir out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
client_pc_dir(pc_includedir "${CMAKE_INSTALL_INCLUDEDIR}")
client_pc_dir(pc_libdir "${CMAKE_INSTALL_LIBDIR}")
set(pc_prefix "@CMAKE_INSTALL_PREFIX@")  # filled in when installed

set(pc_cflags "")
get_target_property(boost_includes Boost::headers INTERFACE_INCLUDE_DIRECTORIES)
foreach(dir IN LISTS boost_includes)
  if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    string(APPEND pc_cflags " -I${dir}")
  endif()
endforeach()
get_target_property(boost_json_file Boost::json LOCATION)
get_filename_component(boost_json_dir "${boost_json_file}" DIRECTORY)
get_filename_component(boost_json_name "${boost_json_file}" NAME)
string(REGEX REPLACE "^lib([^.]+)\\..*$" "\\1" boost_json_name
       "${boost_json_name}")
set(pc_libs "-l${boost_json_name} -pthread")
if(NOT boost_json_dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
  set(pc_libs "-L${boost_json_dir} ${pc_libs}")
endif()
foreach(option IN LISTS LEASEHOLD_SANITIZER_LINK_OPTIONS)
  string(APPEND pc_libs " ${option}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/leasehold-client.pc.in
  ${client_out}/leasehold-client.pc.in @ONLY)
install(CODE "configure_file(\"${client_out}/leasehold-client.pc.in\"
  \"${client_out}/pc/leasehold-client.pc\" @ONLY)" COMPONENT client)
install(FILES ${client_out}/pc/leasehold-client.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT client)
