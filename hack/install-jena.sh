#!/usr/bin/env bash
# Apache Jena 5.6.0 binary distribution + Fuseki server jar, from Maven Central only.
#
#   org.apache.jena:apache-jena:5.6.0:tar.gz      -> $DEST/apache-jena-5.6.0/   (JENA_HOME)
#   org.apache.jena:jena-fuseki-server:5.6.0      -> $DEST/jena-fuseki-server-5.6.0.jar
#
# Usage: hack/install-jena.sh
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

# Pinned SHA-1 digests (as published on Central) for the default version.
declare -A PINNED=(
  [apache-jena-5.6.0.tar.gz]=7cdef2b9425061db8c557e967edf369086ca3d20
  [jena-fuseki-server-5.6.0.jar]=d926f976adb590bb6a727c6ecb4919ddd69f4c71
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
if [ ! -x "$DEST/$DIST/bin/tdb2.xloader" ]; then
  fetch "org/apache/jena/apache-jena/$JENA_VERSION/$DIST.tar.gz" "$DIST.tar.gz"
  tmpd=$(mktemp -d "$DEST/.unpack.XXXXXX")
  tar -xzf "$DEST/$DIST.tar.gz" -C "$tmpd"
  rm -rf "${DEST:?}/$DIST"
  mv "$tmpd/$DIST" "$DEST/$DIST"; rmdir "$tmpd"
  rm -f "$DEST/$DIST.tar.gz"           # the unpacked tree is the cache
fi
FUSEKI=jena-fuseki-server-$JENA_VERSION.jar
fetch "org/apache/jena/jena-fuseki-server/$JENA_VERSION/$FUSEKI" "$FUSEKI"

if ! command -v java >/dev/null 2>&1; then
  echo "warning: no 'java' on PATH; Jena $JENA_VERSION needs Java 17+ (Debian: apt-get install openjdk-17-jre-headless)" >&2
fi
echo "export JENA_HOME=$DEST/$DIST"
echo "export RDF_BULKLOAD_FUSEKI_JAR=$DEST/$FUSEKI"
