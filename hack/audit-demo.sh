#!/bin/sh
# The audit of a flags-only node before migration, after it, and after a
# migration with --secure: each migration is laid into a copy of the node
# (the new config file at /var/lib/kubelet/config.yaml, the remaining flags
# from the env file it writes), then audited as the node would run it.
# Usage: hack/audit-demo.sh BIN NODE VERSION
set -eu
bin=$1 node=$2 version=$3
show() { # the notes, the checks legacy defaults fail, and the summary
	awk '/^# note/ || / pass, / { print; next }
	     /^[A-Z]+ +4\.2\.[124] / { print; getline; print }'
	echo
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== kubeletcfg audit --kubelet-version $version --root $node --section cis   (before migration; excerpt)"
"$bin" audit --kubelet-version "$version" --root "$node" --section cis 2>/dev/null | show

for mode in plain secure; do
	tree=$work/$mode
	mkdir -p "$tree"
	cp -R "$node"/. "$tree"
	flag=""
	[ "$mode" = secure ] && flag="--secure "
	echo "== kubeletcfg migrate $flag--kubelet-version $version --root NODE --output-dir NODE/migrated, laid onto the node"
	"$bin" migrate $flag --kubelet-version "$version" --root "$tree" --output-dir "$tree/migrated" >/dev/null 2>&1
	grep -E '(security|secure): ' "$tree/migrated/report.txt" | sed 's/^/   /' || true
	mkdir -p "$tree/var/lib/kubelet"
	cp "$tree/migrated/config.yaml" "$tree/var/lib/kubelet/config.yaml"
	echo "== kubeletcfg audit --kubelet-version $version --root NODE --from /migrated/kubelet-flags.env --section cis   (after; excerpt)"
	"$bin" audit --kubelet-version "$version" --root "$tree" --from /migrated/kubelet-flags.env --section cis 2>/dev/null | show
done
