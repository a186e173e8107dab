#!/usr/bin/env bash
# Prepares the generator module for one kubelet release: a small module that
# requires k8s.io/kubernetes at that release, with the staging modules replaced by
# their published versions, as k8s.io/kubernetes' own go.mod asks.
# usage: prepare.sh RELEASE DIR   (e.g. prepare.sh v1.37.2 build/schemagen/v1.37.2)
set -euo pipefail
release=$1 dir=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
src=$(go mod download -json "k8s.io/kubernetes@$release" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[ -n "$src" ] || { echo "prepare.sh: cannot download k8s.io/kubernetes@$release" >&2; exit 2; }
staging=v0.${release#v1.}
{
  echo "module kubeletcfg.local/schemagen"
  echo
  grep -E '^(go|godebug) ' "$src" || true
  echo
  echo "require k8s.io/kubernetes $release"
  echo
  sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#replace \1 => \1 '"$staging"'#p' "$src"
} > "$dir/go.mod"
cp "$here"/gen/*.go "$dir/"
cd "$dir"
go mod tidy >/dev/null
