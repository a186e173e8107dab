#!/usr/bin/env bash
# Prepares the kubeadm reference harness for one release: a small module that
# requires k8s.io/kubernetes at that release (the staging modules replaced by
# their published versions, as k8s.io/kubernetes' go.mod asks) and builds
# gen/ with the build tags of that release's kubeadm API. The harness runs
# kubeadm's own code; it is never linked into kubeletcfg.
# usage: prepare.sh RELEASE DIR   (e.g. prepare.sh v1.37.2 _build/kubeadmref/v1.37.2)
set -euo pipefail
release=$1 dir=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
info=$(go mod download -json "k8s.io/kubernetes@$release")
gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' <<<"$info")
[ -n "$gomod" ] || { echo "prepare.sh: cannot download k8s.io/kubernetes@$release" >&2; exit 2; }
staging=v0.${release#v1.}
{
  echo "module kubeletcfg.local/kubeadmref"
  echo
  grep -E '^(go|godebug) ' "$gomod" || true
  echo
  echo "require k8s.io/kubernetes $release"
  echo
  sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#replace \1 => \1 '"$staging"'#p' "$gomod"
} > "$dir/go.mod"
rm -f "$dir"/*.go
cp "$here"/gen/*.go "$dir/"
minor=${release#v1.}; minor=${minor%%.*}
# The kubeadm API the harness calls changed signature over the releases.
if   [ "$minor" -le 31 ]; then api=api128
elif [ "$minor" -le 34 ]; then api=api132
elif [ "$minor" -le 35 ]; then api=api135
else                           api=api136
fi
echo "$api" > "$dir/TAGS"
printf 'package main\n\nconst release = "%s"\n' "$release" > "$dir/release.go"
cd "$dir"
go mod tidy >/dev/null
minorno=$minor
go build -tags "kubeadmref $api" -ldflags "-X k8s.io/component-base/version.gitVersion=$release -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minorno" -o kubeadmref .
