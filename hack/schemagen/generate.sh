#!/usr/bin/env bash
# make schema: for every release in schema/releases.txt, build the generator
# against that k8s.io/kubernetes release and write what the kubelet knows into
# schema/data/, and the kubelet's verdicts on the validation corpus into
# testdata/reference/.
# usage: generate.sh [MINOR ...]   (default: every release)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${SCHEMAGEN_BUILD:-$root/_build/schemagen}
want=" $* "
only=${SCHEMAGEN_ONLY:-} # "verdicts": only the references; "schema": only schema/data; "credprov": only the credential provider references; "build": only build
while read -r minor release; do
  case "$minor" in ''|\#*) continue ;; esac
  [ -n "${want// /}" ] && [[ "$want" != *" $minor "* ]] && continue
  dir=$build/$release
  echo "schemagen: $release" >&2
  "$root/hack/schemagen/prepare.sh" "$release" "$dir"
  # Stamp the version, as a released kubelet is (it shapes some messages).
  minorno=${minor#1.}
  ldflags="-X k8s.io/component-base/version.gitVersion=$release -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minorno"
  (cd "$dir" && go build -tags schemagen -ldflags "$ldflags" -o schemagen .)
  [ "$only" = build ] && continue
  if [ -z "$only" ] || [ "$only" = credprov ]; then
    # The kubelet's verdicts on the credential provider configuration corpus.
    mkdir -p "$root/testdata/credprov"
    (cd "$dir" && ./schemagen credprov "$root/testdata/credprov/cases") > "$root/testdata/credprov/reference-v$minor.json.tmp"
    mv "$root/testdata/credprov/reference-v$minor.json.tmp" "$root/testdata/credprov/reference-v$minor.json"
  fi
  [ "$only" = credprov ] && continue
  types=$(cd "$dir" && go list -m -f '{{.Dir}}' k8s.io/kubelet)/config/v1beta1/types.go
  if [ "$only" != verdicts ]; then
    (cd "$dir" && ./schemagen schema "$types") > "$root/schema/data/v$minor.json.tmp"
    mv "$root/schema/data/v$minor.json.tmp" "$root/schema/data/v$minor.json"
    (cd "$dir" && ./schemagen docs "$types") > "$root/schema/data/docs/v$minor.json.tmp"
    mv "$root/schema/data/docs/v$minor.json.tmp" "$root/schema/data/docs/v$minor.json"
  fi
  [ "$only" = schema ] && continue
  mkdir -p "$root/testdata/reference"
  (cd "$dir" && ./schemagen verdicts "$root/testdata/validate") > "$root/testdata/reference/verdicts-v$minor.json.tmp"
  mv "$root/testdata/reference/verdicts-v$minor.json.tmp" "$root/testdata/reference/verdicts-v$minor.json"
  (cd "$dir" && ./schemagen scenarios "$root/testdata/effective/scenarios") > "$root/testdata/effective/reference-v$minor.json.tmp"
  mv "$root/testdata/effective/reference-v$minor.json.tmp" "$root/testdata/effective/reference-v$minor.json"
  if [ -d "$root/testdata/migrate/out/v$minor" ]; then
    (cd "$dir" && ./schemagen scenarios "$root/testdata/migrate/out/v$minor") > "$root/testdata/migrate/reference-v$minor.json.tmp"
    mv "$root/testdata/migrate/reference-v$minor.json.tmp" "$root/testdata/migrate/reference-v$minor.json"
  fi
done < "$root/schema/releases.txt"
