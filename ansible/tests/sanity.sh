#!/bin/sh
# ansible-test sanity and ansible-lint on the collection, offline, with
# Debian's ansible-core 2.14, ansible-lint, pylint, pycodestyle, yamllint and
# python3-voluptuous (make ansible-sanity installs them). ansible-test wants
# the collection under ansible_collections/NAMESPACE/NAME: it is copied
# there. The changelog test needs antsibull-changelog, which Debian does not
# package: ansible/tests/repo_test.go checks the changelog's format instead.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
collection=$(dirname "$here")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
dest=$work/ansible_collections/kubeletcfg/kubelet
mkdir -p "$dest"
(cd "$collection" && tar cf - --exclude=__pycache__ --exclude=tests/output .) | (cd "$dest" && tar xf -)
python=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')

echo "== ansible-test sanity (ansible-core $(ansible --version | sed -n '1s/.*core \([0-9.]*\).*/\1/p'), Python $python, offline)"
(cd "$dest" && /usr/bin/python3 "$here/ansible_test_offline.py" sanity --skip-test changelog --python "$python" --color no)

echo "== ansible-lint $(ansible-lint --nocolor --version 2>/dev/null | sed -n '1s/^ansible-lint \([0-9.]*\).*/\1/p')"
(cd "$dest" && ANSIBLE_COLLECTIONS_PATH=$work ansible-lint --offline --nocolor -p roles/install playbooks/rollout.yml playbooks/kubeadm_configmap.yml)
