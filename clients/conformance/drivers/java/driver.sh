#!/bin/sh
# The Java client's conformance driver (io.leasehold.conformance.Driver, in clients/java's test
# sources). Build it first: (cd clients/java && mvn -B -q -o test-compile dependency:build-classpath
#   -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=test)
# then: pytest clients/conformance/harness --driver "sh clients/conformance/drivers/java/driver.sh"
here=$(cd "$(dirname "$0")/../../../java" && pwd)
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
  -cp "$here/target/classes:$here/target/test-classes:$(cat "$here/target/classpath.txt")" \
  io.leasehold.conformance.Driver "$@"
