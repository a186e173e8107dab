#!/usr/bin/env bash
# Prepares the generator module for one kubelet release: a small module that
# requires k8s.io/kubernetes at that release, with the staging modules replaced by
# their published versions, as k8s.io/kubernetes' own go.mod asks.
# usage: prepare.sh RELEASE DIR   (e.g. prepare.sh v1.37.2 _build/schemagen/v1.37.2)
set -euo pipefail
release=$1 dir=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
info=$(go mod download -json "k8s.io/kubernetes@$release")
gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' <<<"$info")
srcdir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$info")
[ -n "$gomod" ] && [ -n "$srcdir" ] || { echo "prepare.sh: cannot download k8s.io/kubernetes@$release" >&2; exit 2; }
staging=v0.${release#v1.}
{
  echo "module kubeletcfg.local/schemagen"
  echo
  grep -E '^(go|godebug) ' "$gomod" || true
  echo
  echo "require k8s.io/kubernetes $release"
  echo
  sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#replace \1 => \1 '"$staging"'#p' "$gomod"
} > "$dir/go.mod"
cp "$here"/gen/*.go "$dir/"
"$here/linkname.sh" "$srcdir/cmd/kubelet/app/server.go" > "$dir/linkname.go"
cd "$dir"
go mod tidy >/dev/null
