#!/usr/bin/env bash
# Fails when the documentation names a repository path that does not exist, so that
# docs/ and README.md cannot drift from the code they point a reader to.
#
# Checked: every inline code span (`...`, outside fenced code blocks) of README.md,
# CONTRIBUTING.md, CHANGELOG.md and docs/*.md whose text starts with one of the repository's top-level directories below.
# The span's first word is the path; a trailing `:line`, `#anchor` or punctuation is
# dropped. `dir/{a,b}.rs` stands for both files, `dir/*.go` for at least one match. Paths
# that .gitignore covers (build output, fuzz artifacts, `<placeholder>` paths under them)
# are what a run creates, not what a clone holds, and are skipped.
#
# Usage: hack/check-doc-paths.sh [FILE.md ...]   (default: README.md CONTRIBUTING.md CHANGELOG.md docs/*.md;
# run by `make verify-docs`). Prints each missing path with where it is named; exit 1
# when there is one.
set -euo pipefail
cd "$(dirname "$0")/.."

roots='loader-image|operator|charts|config|hack|e2e|docs|bench|examples'

if [ $# -gt 0 ]; then
  files=("$@")
else
  files=(README.md CONTRIBUTING.md CHANGELOG.md docs/*.md)
fi

# file:line<TAB>span, one per inline code span outside ``` / ~~~ fences.
spans() {
  awk '
    /^[ \t]*(```|~~~)/ { fenced = !fenced; next }
    fenced { next }
    {
      line = $0
      while (match(line, /`[^`]+`/)) {
        printf "%s:%d\t%s\n", FILENAME, FNR, substr(line, RSTART + 1, RLENGTH - 2)
        line = substr(line, RSTART + RLENGTH)
      }
    }
  ' "$@"
}

# The paths a span's first word stands for (brace alternatives expanded, one level).
expand() {
  local word=$1
  if [[ $word =~ ^([^{]*)\{([^}]*)\}(.*)$ ]]; then
    local head=${BASH_REMATCH[1]} alts=${BASH_REMATCH[2]} tail=${BASH_REMATCH[3]} alt
    local -a list
    IFS=, read -r -a list <<<"$alts"
    for alt in "${list[@]}"; do
      printf '%s\n' "$head$alt$tail"
    done
  else
    printf '%s\n' "$word"
  fi
}

in_git=0
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then in_git=1; fi

exists() {
  local p=$1
  if [[ $p == *[*?]* ]]; then
    compgen -G "$p" >/dev/null
  else
    [ -e "$p" ]
  fi
}

ignored() {
  [ "$in_git" = 1 ] && git check-ignore -q --no-index -- "$1" 2>/dev/null
}

missing=0
checked=0
while IFS=$'\t' read -r where span; do
  word=${span%%[[:space:]]*}
  [[ $word =~ ^($roots)/ ]] || continue
  word=${word%%#*}
  word=$(sed -E 's/:[0-9]+(-[0-9]+)?$//; s/[.,;:)]+$//' <<<"$word")
  while IFS= read -r path; do
    checked=$((checked + 1))
    if exists "$path"; then continue; fi
    # A <placeholder> path: its part before the placeholder must exist, unless ignored.
    if [[ $path == *'<'* ]]; then
      stem=${path%%<*}
      if ignored "$stem" || exists "$stem"; then continue; fi
    elif ignored "$path"; then
      continue
    fi
    echo "$where: \`$path\` does not exist" >&2
    missing=$((missing + 1))
  done < <(expand "$word")
done < <(spans "${files[@]}")

if [ "$missing" -gt 0 ]; then
  echo "check-doc-paths: $missing of $checked paths named in ${files[*]} do not exist" >&2
  exit 1
fi
echo "check-doc-paths: all $checked paths named in ${files[*]} exist"
