# Writes the man page and the Debian changelog of the package
# (cmake/package.cmake), gzipped with -9n as Debian policy asks:
#   OUT_DIR/leasehold.1.gz   help2man of BINARY's --help and --version
#   OUT_DIR/changelog.gz     one entry, for this build's version
# Inputs: BINARY, VERSION_FILE, SOURCE_DIR, OUT_DIR, MAINTAINER.
find_program(HELP2MAN help2man REQUIRED)
find_program(GZIP gzip REQUIRED)
file(MAKE_DIRECTORY "${OUT_DIR}")
file(STRINGS "${VERSION_FILE}" version LIMIT_COUNT 1)
string(REPLACE "-" "+" debian_version "${version}")

execute_process(
  COMMAND ${HELP2MAN} --no-info --section=1
    "--name=coordination server: application locks, checkouts, semaphores"
    --output=${OUT_DIR}/leasehold.1 ${BINARY}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man ${BINARY} failed: ${rc}")
endif()

# The entry's date is the commit's, so that the same commit gives the same
# package; now, without git.
set(date "")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} log -1 --format=%cD
                  WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE date OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET)
endif()
if(date STREQUAL "")
  string(TIMESTAMP date "%a, %d %b %Y %H:%M:%S +0000" UTC)
endif()
file(WRITE "${OUT_DIR}/changelog" "leasehold (${debian_version}) unstable; urgency=medium

  * leasehold ${version}; the changes are in its git log.

 -- ${MAINTAINER}  ${date}
")

foreach(name leasehold.1 changelog)
  execute_process(COMMAND ${GZIP} -9nf "${OUT_DIR}/${name}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${name} failed: ${rc}")
  endif()
endforeach()
