#!/usr/bin/env bash
# The shell linter from Debian (package shellcheck), installed with apt-get when missing, as
# hack/install-cluster-components.sh installs its Debian packages: `apt-get update` only when
# apt knows no candidate or the install fails. Prints the binary's path on stdout.
#
# Usage: hack/install-shellcheck.sh      Needs: root (or sudo) when the package is missing.
set -euo pipefail
if ! command -v shellcheck >/dev/null 2>&1; then
  sudo=(); [ "$(id -u)" = 0 ] || sudo=(sudo)
  aptinstall() { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck >&2; }
  echo "install-shellcheck: apt-get install shellcheck" >&2
  if ! apt-cache policy shellcheck 2>/dev/null | grep -q 'Candidate: [0-9]' || ! aptinstall; then
    "${sudo[@]}" apt-get update -qq >&2
    aptinstall
  fi
fi
command -v shellcheck
