#!/usr/bin/env bash
# make kubeadm-reference: build the kubeadm harness for each release and write
# what kubeadm's own code does with the corpus into testdata/kubeadm/
# (reference-vMINOR.json: the kubelet-config phase; env-vMINOR.json:
# kubeadm-flags.env through kubeadm's parser, 1.32 on).
# usage: generate.sh [RELEASE ...]   (default: v1.37.2 v1.34.4 v1.30.14)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
releases=${*:-v1.37.2 v1.34.4 v1.30.14}
for release in $releases; do
  minor=${release#v}; minor=${minor%.*}
  dir=$root/_build/kubeadmref/$release
  echo "kubeadmref: $release" >&2
  "$root/hack/kubeadmref/prepare.sh" "$release" "$dir"
  "$dir/kubeadmref" render "$root/testdata/kubeadm/corpus" > "$root/testdata/kubeadm/reference-v$minor.json.tmp" 2>"$dir/render.log"
  mv "$root/testdata/kubeadm/reference-v$minor.json.tmp" "$root/testdata/kubeadm/reference-v$minor.json"
  if [ "$(cat "$dir/TAGS")" != api128 ]; then
    "$dir/kubeadmref" env "$root/testdata/kubeadm/envfiles" > "$root/testdata/kubeadm/env-v$minor.json.tmp" 2>"$dir/env.log"
    mv "$root/testdata/kubeadm/env-v$minor.json.tmp" "$root/testdata/kubeadm/env-v$minor.json"
  fi
done
