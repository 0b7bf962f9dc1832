#!/usr/bin/env bash
# Assembles the two images as OCI archives from locally built binaries, without a container
# engine (the same contents as Dockerfile and loader-image/Dockerfile):
#
#   OUT/rdf-bulkload-operator.tar  /manager + /usr/local/bin/rdf-bulkload-fetch (static Go), CA
#                                  bundle, passwd/group; no shell; user 65532; entrypoint /manager
#   OUT/rdf-bulkload-loader.tar    /usr/local/bin/rdf-bulkload (+ -validate), a jlink'd Java runtime
#                                  (/opt/java), Jena's jars (/opt/jena/lib), the Fuseki server jar
#                                  (/opt/fuseki/fuseki-server.jar), glibc/libstdc++/zlib and busybox
#                                  (sh, sed, ...: rdf-bulkload-validate is a POSIX sh script);
#                                  user 65532; entrypoint rdf-bulkload
#
# Base files come from Debian packages only (apt-get download + dpkg-deb -x, cached in
# $RDF_BULKLOAD_CACHE/debs), Jena from Maven Central (hack/install-jena.sh), the Java runtime
# from the local JDK's jmods (jlink), cached by JDK version + module list.
# Usage: hack/build-oci-images.sh [OUT]   (default out/images). Needs: the loader built
# (make loader), go, jlink (a JDK with jmods), apt-get, dpkg-deb, python3.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/out/images}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
CACHE=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
TAG=${IMAGE_TAG:-0.1.0}
OPERATOR_REF=${OPERATOR_IMAGE:-ghcr.io/rdf-bulkload/rdf-bulkload-operator:$TAG}
LOADER_REF=${LOADER_IMAGE:-ghcr.io/rdf-bulkload/rdf-bulkload-loader:$TAG}
LOADER_BIN=${RDF_BULKLOAD_LOADER:-$ROOT/loader-image/target/release/rdf-bulkload}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0)}
# Java modules Jena's command-line tools and Fuseki need (jdeps --print-module-deps on
# jena-cmds + lib/ and on the Fuseki server jar, plus crypto/zipfs providers); the image test
# runs tdbquery and Fuseki on this runtime. java.desktop is there for java.beans (Jena needs it);
# its native AWT/sound/font/image libraries, which link X11, ALSA, freetype..., are left out:
# nothing headless loads them.
AWT_NATIVE_LIBS="libawt_xawt.so libjawt.so libsplashscreen.so libjsound.so libfontmanager.so liblcms.so libjavajpeg.so"
# (runs tdbquery and Fuseki on this runtime)
JAVA_MODULES=${JAVA_MODULES:-java.base,java.compiler,java.datatransfer,java.desktop,java.instrument,java.logging,java.management,java.naming,java.net.http,java.prefs,java.rmi,java.scripting,java.security.jgss,java.security.sasl,java.sql,java.transaction.xa,java.xml,java.xml.crypto,jdk.crypto.ec,jdk.management,jdk.net,jdk.unsupported,jdk.zipfs}
LOADER_DEBS=(libc6 libgcc-s1 libstdc++6 zlib1g busybox-static)
OPERATOR_DEBS=(ca-certificates)
BUSYBOX_APPLETS="sh mkdir cat ls rm cp mv ln sed grep cut head tail tr wc paste env sleep du df find"

[ -x "$LOADER_BIN" ] || { echo "no loader binary at $LOADER_BIN: run 'make loader'" >&2; exit 2; }
# one build at a time: make test's two lanes both assemble the images (test-images and the cluster
# suite), and the Java runtime and Debian packages are cached under fixed names
mkdir -p "$CACHE"; exec 9>"$CACHE/images.lock"; flock 9
eval "$(bash "$ROOT/hack/install-jena.sh")"   # JENA_HOME, RDF_BULKLOAD_FUSEKI_JAR
work=$(mktemp -d "${TMPDIR:-/tmp}/rdf-bulkload-images.XXXXXX")
trap 'rm -rf "$work"' EXIT

# --- Debian packages (candidate versions of this machine's apt sources), cached by file name
debs=$CACHE/debs; mkdir -p "$debs"
deb_path() { # deb_path PKG: download if needed, print the .deb path
  local pkg=$1 ver f
  ver=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2}')
  if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
    echo "apt knows no candidate for $pkg; running apt-get update" >&2
    apt-get update -qq >&2
    ver=$(apt-cache policy "$pkg" | awk '/Candidate:/ {print $2}')
  fi
  local found=("$debs/${pkg}_${ver//:/%3a}_"*.deb)   # unmatched: the pattern itself
  if [ ! -e "${found[0]}" ]; then
    (cd "$debs" && apt-get download -qq -o APT::Sandbox::User=root "$pkg=$ver" >&2)
    found=("$debs/${pkg}_${ver//:/%3a}_"*.deb)
    [ -e "${found[0]}" ] || { echo "apt-get download $pkg=$ver left no .deb in $debs" >&2; return 1; }
  fi
  echo "${found[0]}"
}
extract_debs() { # extract_debs ROOTFS PKG...: unpack, keep libraries/binaries, record versions
  local rootfs=$1; shift
  mkdir -p "$rootfs/usr/share/rdf-bulkload"
  for pkg in "$@"; do
    local f; f=$(deb_path "$pkg")
    dpkg-deb -x "$f" "$rootfs"
    echo "$pkg $(dpkg-deb -f "$f" Version)" >>"$rootfs/usr/share/rdf-bulkload/debian-packages.txt"
  done
  rm -rf "$rootfs"/usr/share/doc "$rootfs"/usr/share/man "$rootfs"/usr/share/lintian "$rootfs"/usr/share/locale \
         "$rootfs"/usr/share/info "$rootfs"/usr/share/gdb "$rootfs"/usr/share/bug "$rootfs"/etc/init.d
}
base_files() { # base_files ROOTFS: nonroot user 65532, /tmp
  local rootfs=$1
  mkdir -p "$rootfs/etc" "$rootfs/tmp" "$rootfs/home/nonroot"
  chmod 1777 "$rootfs/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$rootfs/etc/group"
}

# --- operator image: static Go binaries, CA bundle, no shell
op=$work/operator-rootfs
base_files "$op"
(cd "$ROOT/operator" && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0 nice go build -trimpath -ldflags "-s -w" \
  -o "$work/bin/" ./cmd/manager ./cmd/fetch)
install -D -m 0755 "$work/bin/manager" "$op/manager"
install -D -m 0755 "$work/bin/fetch" "$op/usr/local/bin/rdf-bulkload-fetch"
certs=$work/certs; extract_debs "$certs" "${OPERATOR_DEBS[@]}"
mkdir -p "$op/etc/ssl/certs"
find "$certs/usr/share/ca-certificates" -name '*.crt' | sort | xargs cat >"$op/etc/ssl/certs/ca-certificates.crt"
mkdir -p "$op/usr/share/rdf-bulkload"; cp "$certs/usr/share/rdf-bulkload/debian-packages.txt" "$op/usr/share/rdf-bulkload/"
python3 "$ROOT/hack/oci-image.py" --rootfs "$op" --out "$OUT/rdf-bulkload-operator.tar" --ref "$OPERATOR_REF" \
  --entrypoint '["/manager"]' --user 65532:65532 --owner home/nonroot=65532:65532 \
  --env PATH=/usr/local/bin:/usr/bin:/bin --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
  --label org.opencontainers.image.title=rdf-bulkload-operator --label "org.opencontainers.image.version=$TAG" \
  --label org.opencontainers.image.source=https://github.com/rdf-bulkload/rdf-bulkload

# --- loader image
ld=$work/loader-rootfs
base_files "$ld"
extract_debs "$ld" "${LOADER_DEBS[@]}"
rm -rf "${ld:?}/usr/bin" "$ld/usr/sbin" "$ld/sbin" "$ld/usr/lib/x86_64-linux-gnu/gconv" "$ld/usr/libexec" \
       "$ld/usr/share/gcc" "$ld/usr/share/busybox"   # keep libraries and busybox only
mkdir -p "$ld/bin"
for a in $BUSYBOX_APPLETS; do ln -sf busybox "$ld/bin/$a"; done
install -D -m 0755 "$LOADER_BIN" "$ld/usr/local/bin/rdf-bulkload"
install -D -m 0755 "$ROOT/loader-image/validate/rdf-bulkload-validate" "$ld/usr/local/bin/rdf-bulkload-validate"
# the validate step's index check, compiled against the image's Jena for its Java 17 runtime
javac --release 17 -nowarn -cp "$JENA_HOME/lib/*" -d "$ld/usr/local/lib/rdf-bulkload-validate" \
  "$ROOT/loader-image/validate/IndexCheck.java"
jdk_ver=$(java -XshowSettings:properties -version 2>&1 | awk -F' = ' '/java.runtime.version/ {print $2}')
jre=$CACHE/jlink-jre-$jdk_ver-$(echo "$JAVA_MODULES" | sha256sum | cut -c1-12)
if [ ! -x "$jre/bin/java" ]; then
  echo "jlink: a Java $jdk_ver runtime with $JAVA_MODULES" >&2
  rm -rf "$jre.tmp"
  nice jlink --add-modules "$JAVA_MODULES" --strip-debug --no-header-files --no-man-pages \
    --compress=2 --output "$jre.tmp"
  mv "$jre.tmp" "$jre"
fi
mkdir -p "$ld/opt"; cp -a "$jre" "$ld/opt/java"
for l in $AWT_NATIVE_LIBS; do rm -f "$ld/opt/java/lib/$l"; done
mkdir -p "$ld/opt/jena"; cp -a "$JENA_HOME/lib" "$ld/opt/jena/lib"
cp "$JENA_HOME/LICENSE" "$JENA_HOME/NOTICE" "$ld/opt/jena/" 2>/dev/null || true
install -D -m 0644 "$RDF_BULKLOAD_FUSEKI_JAR" "$ld/opt/fuseki/fuseki-server.jar"
# every shared library the binaries need must be in the image (checked again by the test)
missing=$(for f in "$ld/usr/local/bin/rdf-bulkload" "$ld/opt/java/bin/java" "$ld/opt/java/lib/server/libjvm.so" "$ld"/opt/java/lib/*.so; do
  ldd "$f" 2>/dev/null | awk '/=>/ {print $1}'; done | sort -u | while read -r lib; do
  [ -n "$(find "$ld/lib" "$ld/lib64" "$ld/usr/lib" "$ld/opt/java/lib" -name "$lib" 2>/dev/null | head -1)" ] || echo "$lib"; done)
[ -z "$missing" ] || { echo "libraries missing from the loader image: $missing" >&2; exit 1; }
python3 "$ROOT/hack/oci-image.py" --rootfs "$ld" --out "$OUT/rdf-bulkload-loader.tar" --ref "$LOADER_REF" \
  --entrypoint '["/usr/local/bin/rdf-bulkload"]' --user 65532:65532 --owner home/nonroot=65532:65532 \
  --env PATH=/usr/local/bin:/opt/java/bin:/usr/bin:/bin --env JAVA_HOME=/opt/java --env JENA_HOME=/opt/jena \
  --label org.opencontainers.image.title=rdf-bulkload-loader --label "org.opencontainers.image.version=$TAG" \
  --label org.opencontainers.image.source=https://github.com/rdf-bulkload/rdf-bulkload
ls -la "$OUT"/*.tar >&2
