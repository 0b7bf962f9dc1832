#!/usr/bin/env bash
# Apache Jena 5.6.0 binary distribution + Fuseki server jar, from Maven Central only.
#
#   org.apache.jena:apache-jena:5.6.0:tar.gz      -> $DEST/apache-jena-5.6.0/   (JENA_HOME)
#   org.apache.jena:jena-fuseki-server:5.6.0      -> $DEST/jena-fuseki-server-5.6.0.jar
#
# Jena 6 (JENA_VERSION=6.x.y) is not published as an apache-jena tar.gz on Central. Its JENA_HOME
# is assembled instead: lib/ holds the Fuseki server jar of that version (a shaded jar with all of
# Jena's modules, the command classes of jena-cmds included, and their dependencies), bin/ and
# log4j2.properties are the 5.6.0 distribution's (installed first by this script): the scripts
# are unchanged between the tags jena-5.6.0 and jena-6.2.0 (apache-jena/bin). Jena 6 needs a
# Java 21+ runtime: put one first on PATH (or set JAVA for bin/ scripts) to run it.
#
# Usage: hack/install-jena.sh            (JENA_VERSION=6.2.0 hack/install-jena.sh for Jena 6)
#   DEST = ${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}/jena-<version>.
#   Idempotent: a second run downloads nothing and only prints the paths.
#   Every download is checked against the .sha1 that Central publishes beside it AND against
#   the digest pinned below (Central publishes no .sha512 for these artifacts).
#   Prints `export JENA_HOME=...` and `export RDF_BULKLOAD_FUSEKI_JAR=...` on stdout.
# Needs: curl, tar, sha1sum, a Java 17+ runtime on PATH (checked, not installed).
set -euo pipefail
JENA_VERSION=${JENA_VERSION:-5.6.0}
CENTRAL=${MAVEN_CENTRAL:-https://repo1.maven.org/maven2}
CACHE=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
DEST=$CACHE/jena-$JENA_VERSION
mkdir -p "$DEST"; DEST=$(cd "$DEST" && pwd)

# Pinned SHA-1 digests (as published on Central) for the default version and Jena 6.2.0.
declare -A PINNED=(
  [apache-jena-5.6.0.tar.gz]=7cdef2b9425061db8c557e967edf369086ca3d20
  [jena-fuseki-server-5.6.0.jar]=d926f976adb590bb6a727c6ecb4919ddd69f4c71
  [jena-fuseki-server-6.2.0.jar]=d3490295a2b95677c1227d25bca8564d40f993a7
)

fetch() { # fetch <central path> <file name>: download into $DEST/<file name>, verified, atomically
  local path=$1 name=$2 tmp want got
  [ -s "$DEST/$name" ] && return 0
  echo "downloading $CENTRAL/$path" >&2
  tmp=$(mktemp "$DEST/.dl.XXXXXX")
  trap 'rm -f "$tmp"' RETURN
  curl -fsSL --retry 3 -o "$tmp" "$CENTRAL/$path"
  want=$(curl -fsSL --retry 3 "$CENTRAL/$path.sha1" | awk '{print $1}')
  got=$(sha1sum "$tmp" | awk '{print $1}')
  if [ "$got" != "$want" ]; then
    echo "checksum mismatch for $name: got $got, Central says $want" >&2; return 1
  fi
  if [ -n "${PINNED[$name]:-}" ] && [ "$got" != "${PINNED[$name]}" ]; then
    echo "checksum mismatch for $name: got $got, pinned ${PINNED[$name]}" >&2; return 1
  fi
  mv "$tmp" "$DEST/$name"
}

DIST=apache-jena-$JENA_VERSION
FUSEKI=jena-fuseki-server-$JENA_VERSION.jar
if [ "${JENA_VERSION%%.*}" -ge 6 ]; then
  fetch "org/apache/jena/jena-fuseki-server/$JENA_VERSION/$FUSEKI" "$FUSEKI"
  if [ ! -x "$DEST/$DIST/bin/tdb2.xloader" ]; then
    # bin/ and log4j2.properties from the 5.6.0 distribution (see the header).
    base=$(JENA_VERSION=5.6.0 bash "$0" | sed -n 's/^export JENA_HOME=//p')
    [ -x "$base/bin/tdb2.xloader" ] || { echo "no Jena 5.6.0 distribution to take bin/ from" >&2; exit 1; }
    tmpd=$(mktemp -d "$DEST/.assemble.XXXXXX")
    mkdir "$tmpd/lib"
    cp -r "$base/bin" "$base/log4j2.properties" "$tmpd/"
    ln "$DEST/$FUSEKI" "$tmpd/lib/$FUSEKI" 2>/dev/null || cp "$DEST/$FUSEKI" "$tmpd/lib/$FUSEKI"
    rm -rf "${DEST:?}/$DIST"
    mv "$tmpd" "$DEST/$DIST"
  fi
elif [ ! -x "$DEST/$DIST/bin/tdb2.xloader" ]; then
  fetch "org/apache/jena/apache-jena/$JENA_VERSION/$DIST.tar.gz" "$DIST.tar.gz"
  tmpd=$(mktemp -d "$DEST/.unpack.XXXXXX")
  tar -xzf "$DEST/$DIST.tar.gz" -C "$tmpd"
  rm -rf "${DEST:?}/$DIST"
  mv "$tmpd/$DIST" "$DEST/$DIST"; rmdir "$tmpd"
  rm -f "$DEST/$DIST.tar.gz"           # the unpacked tree is the cache
fi
fetch "org/apache/jena/jena-fuseki-server/$JENA_VERSION/$FUSEKI" "$FUSEKI"

if ! command -v java >/dev/null 2>&1; then
  echo "warning: no 'java' on PATH; Jena $JENA_VERSION needs Java 17+ (Jena 6: 21+; Debian: apt-get install openjdk-17-jre-headless)" >&2
fi
echo "export JENA_HOME=$DEST/$DIST"
echo "export RDF_BULKLOAD_FUSEKI_JAR=$DEST/$FUSEKI"
