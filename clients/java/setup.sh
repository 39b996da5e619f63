#!/bin/sh
# Fetches every dependency and plugin the build, the tests, check.sh and package_test.sh use,
# so that later runs can be offline (mvn -o). Idempotent.
set -eu
cd "$(dirname "$0")"
mvn -B -q -DskipTests install
mvn -B -q dependency:resolve dependency:resolve-plugins dependency:build-classpath \
  -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=test
mvn -B -q test-compile
