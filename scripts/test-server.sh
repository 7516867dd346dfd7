#!/usr/bin/env bash
# Provisions Temporal's time-skipping test server (Java, in memory), which the workflow unit tests
# run on. The SDK would download it at run time from temporal.download; this fetches the same
# server from Maven Central (io.temporal:temporal-test-server and its dependencies) with Maven, so
# only package registries are needed. It lands in the per-user tool cache with a launcher that
# takes the port as its one argument; a second run costs nothing.
#
#   scripts/test-server.sh --print-path   print the launcher's path (provision it first if missing)
#
# Exit codes: 0 ok, 2 usage, 3 cannot provision (no java or mvn, Maven Central unreachable).
# Override the pinned version with REELFLOW_TEST_SERVER_VERSION (a release of Temporal's Java SDK).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

VERSION="${REELFLOW_TEST_SERVER_VERSION:-1.38.0}"
dest_dir="$REELFLOW_TOOL_CACHE/temporal-test-server-$VERSION"
launcher="$dest_dir/temporal-test-server"

provision() {
  if [ -x "$launcher" ]; then return 0; fi
  command -v java >/dev/null 2>&1 || die "cannot provide the time-skipping test server: no java on PATH (install a JRE >= 11, e.g. Debian's openjdk-17-jre-headless)" 3
  command -v mvn >/dev/null 2>&1 || die "cannot provide the time-skipping test server: no mvn on PATH (install Maven, e.g. Debian's maven)" 3
  mkdir -p "$dest_dir"
  lock_tool "$dest_dir"
  if [ -x "$launcher" ]; then return 0; fi
  say "fetching Temporal's test server $VERSION and its dependencies from Maven Central into $dest_dir (once)..."
  local tmp
  tmp="$(mktemp -d "$dest_dir/.fetch.XXXXXX")"
  cat >"$tmp/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>reelflow</groupId>
  <artifactId>test-server-fetch</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>$VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
  if ! mvn -B -q -f "$tmp/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/lib" >"$tmp/mvn.log" 2>&1; then
    sed 's/^/reelflow: mvn: /' "$tmp/mvn.log" >&2
    rm -rf "$tmp"
    die "cannot provide the time-skipping test server: Maven could not fetch io.temporal:temporal-test-server:$VERSION (see above); is Maven Central reachable?" 3
  fi
  rm -rf "$dest_dir/lib"
  mv "$tmp/lib" "$dest_dir/lib"
  rm -rf "$tmp"
  # The launcher is written last, under its final name only once complete: its presence means done.
  cat >"$launcher.tmp" <<'EOF'
#!/bin/sh
# Temporal's time-skipping test server; the one argument is the port.
exec java -cp "$(dirname "$0")/lib/*" io.temporal.testserver.TestServer "$@"
EOF
  chmod +x "$launcher.tmp"
  mv -f "$launcher.tmp" "$launcher"
  say "test server ready: $launcher"
}

tool_main provision "$launcher" 11 "$@"
