#!/bin/sh
# Packages the client (jar, sources jar, javadoc jar), installs it into a temporary Maven
# repository, and builds and runs a separate project that depends on
# io.leasehold:leasehold-client:0.1.0 from there: the quick start against a spawned server.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${LEASEHOLD_BINARY:?LEASEHOLD_BINARY must name the server binary}"
tmp=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM

cd "$here"
mvn -B -q -o -DskipTests package
for f in target/leasehold-client-0.1.0.jar target/leasehold-client-0.1.0-sources.jar \
         target/leasehold-client-0.1.0-javadoc.jar; do
  test -s "$f" || { echo "missing $f" >&2; exit 1; }
done
# The artifact's own repository (a file:// one), beside the usual cache for the rest.
mvn -B -q -o install:install-file -Dfile=target/leasehold-client-0.1.0.jar -DpomFile=pom.xml \
  -Dsources=target/leasehold-client-0.1.0-sources.jar -Djavadoc=target/leasehold-client-0.1.0-javadoc.jar \
  -DlocalRepositoryPath="$tmp/repo"
test -s "$tmp/repo/io/leasehold/leasehold-client/0.1.0/leasehold-client-0.1.0.jar"

mkdir -p "$tmp/app/src/main/java/example"
cat > "$tmp/app/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId><artifactId>quickstart</artifactId><version>1</version>
  <properties><maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <repositories>
    <repository><id>leasehold-built</id><url>file://$tmp/repo</url></repository>
    <repository><id>cache</id><url>file://$HOME/.m2/repository</url></repository>
  </repositories>
  <pluginRepositories>
    <pluginRepository><id>cache</id><url>file://$HOME/.m2/repository</url></pluginRepository>
  </pluginRepositories>
  <dependencies><dependency><groupId>io.leasehold</groupId><artifactId>leasehold-client</artifactId>
    <version>0.1.0</version></dependency></dependencies>
  <build><plugins>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.14.0</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version></plugin>
  </plugins></build>
</project>
POM
cat > "$tmp/app/src/main/java/example/QuickStart.java" <<'JAVA'
package example;

import io.leasehold.Checkout;
import io.leasehold.LeaseholdClient;
import io.leasehold.Lock;
import io.leasehold.LockMode;
import io.leasehold.LockTimeoutException;
import io.leasehold.Session;
import java.time.Duration;

public class QuickStart {
  public static void main(String[] args) {
    try (var client = LeaseholdClient.create(args[0]);
         var s = client.session("worker", Duration.ofSeconds(10));
         var lk = s.lock("app", "invoice:481", LockMode.EXCLUSIVE, Duration.ofSeconds(5))) {
      client.put("billing", "481", "open");
      long v = client.save("billing", "481", "paid", lk.fence());
      try (Session other = client.session("other", Duration.ofSeconds(10))) {
        try (Lock never = other.lock("app", "invoice:481", LockMode.EXCLUSIVE, Duration.ZERO)) {
          throw new IllegalStateException("granted twice: " + never.fence());
        } catch (LockTimeoutException expected) {
          System.out.println("second holder refused: " + expected.code());
        }
      }
      try (Checkout doc = client.checkout("billing", "481", "asha", Duration.ofSeconds(30))) {
        doc.save("paid, with a note");
      }
      System.out.println("quick start ok: fence " + lk.fence() + ", version " + v + ", lost " + lk.lost().isDone());
    }
  }
}
JAVA
mkdir -p "$tmp/data"
"$LEASEHOLD_BINARY" serve --listen 127.0.0.1:0 --port-file "$tmp/port" --data "$tmp/data" >"$tmp/server.log" 2>&1 &
server_pid=$!
i=0; while [ ! -s "$tmp/port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
cd "$tmp/app"
mvn -B -q -Dmaven.repo.local="$tmp/m2" compile dependency:build-classpath -Dmdep.outputFile=cp.txt
java -cp "target/classes:$(cat cp.txt)" example.QuickStart "http://127.0.0.1:$(cat "$tmp/port")"
echo "package_test.sh: ok (jar, sources and javadoc installed and used by a separate project)"
