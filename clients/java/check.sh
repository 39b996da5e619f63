#!/bin/sh
# The build's checks: checkstyle (checkstyle.xml, bound to validate) and javac -Xlint:all
# -Werror on main and test sources; javadoc's doclint on the public API.
set -eu
cd "$(dirname "$0")"
mvn -B -q -o checkstyle:check@checkstyle test-compile
mvn -B -q -o javadoc:javadoc
echo "check.sh: checkstyle, -Xlint:all -Werror and javadoc clean"
