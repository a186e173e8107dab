# Every task of the project. `make test` is what CI runs (.ci/run).
GO      ?= go
BIN     := bin/kubeletcfg
SAMPLE  := testdata/nodes/kubeadm-1.31
LEGACY_NODE := testdata/nodes/legacy-1.31

.PHONY: image all build test vet demo schema startup-words kubeadm-reference fuzz fuzz-ci bench bench-kubelet-code bench-fleet bench-rollout clean e2e e2e-parts e2e-builds e2e-env kubelet apiserver controller-manager etcd kubeadm containerd ansible-core ansible-test ansible-sanity ansible-demo ansible-bench

all: build

# Static, as the image and the Ansible collection ship it: no C library
# to load (a run is ~1.5 ms and 1.5 MiB less), and the pure-Go resolver
# and user lookups read the node's own files.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/kubeletcfg

# kubeletcfg's container image (what kubeletcfg rollout's Jobs run): the
# static binary packed as an OCI image archive by hack/image, without a
# registry or a container engine. Import it where the kubelet's containerd
# finds it (ctr -n k8s.io images import bin/kubeletcfg-image.tar), or publish
# it (README, "Publishing the image"); rollout --image names it.
IMAGE         ?= ghcr.io/kubeletcfg/kubeletcfg:dev
IMAGE_VERSION ?= dev
image:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/kubeletcfg-static ./cmd/kubeletcfg
	$(GO) run ./hack/image -bin bin/kubeletcfg-static -name $(IMAGE) -version $(IMAGE_VERSION) -o bin/kubeletcfg-image.tar

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

test: vet
	$(GO) test ./...

# The main job on an embedded sample node (testdata/nodes/kubeadm-1.31, an
# offline node image): its kubelet.service, kubeadm drop-in, kubeadm-flags.env
# and /etc/default/kubelet are read as systemd reads them. Validate the config
# file, show what the kubelet really runs and where each value comes from,
# migrate the flags into the file, audit it (and a flags-only node, before and
# after migration, with and without --secure), and diff a proposed change.
demo: build
	@echo "== kubeletcfg validate --kubelet-version 1.31 $(SAMPLE)/var/lib/kubelet/config.yaml"
	@$(BIN) validate --kubelet-version 1.31 $(SAMPLE)/var/lib/kubelet/config.yaml
	@echo
	@echo "== kubeletcfg validate --kubelet-version 1.31 $(SAMPLE)/broken-config.yaml   (exit 1 expected)"
	@$(BIN) validate --kubelet-version 1.31 $(SAMPLE)/broken-config.yaml || test $$? -eq 1
	@echo
	@echo "== kubeletcfg effective --kubelet-version 1.31 --root $(SAMPLE) --show-origin   (excerpt)"
	@$(BIN) effective --kubelet-version 1.31 --root $(SAMPLE) --show-origin | grep -E "^#|maxPods|evictionHard|containerRuntimeEndpoint|authentication.anonymous|syncFrequency"
	@echo
	@echo "== kubeletcfg migrate --kubelet-version 1.31 --root $(SAMPLE)"
	@$(BIN) migrate --kubelet-version 1.31 --root $(SAMPLE)
	@echo
	@echo "== kubeletcfg audit --kubelet-version 1.31 --root $(SAMPLE)   (CIS 4.1/4.2 and operational rules; exit 1: failures)"
	@$(BIN) audit --kubelet-version 1.31 --root $(SAMPLE) || test $$? -eq 1
	@echo
	@hack/audit-demo.sh $(BIN) $(SAMPLE) 1.31
	@hack/audit-demo.sh $(BIN) $(LEGACY_NODE) 1.31
	@echo "== kubeletcfg diff --kubelet-version 1.31 --root $(SAMPLE) $(SAMPLE)/new-config.yaml   (exit 1: changes)"
	@$(BIN) diff --kubelet-version 1.31 --root $(SAMPLE) $(SAMPLE)/new-config.yaml || test $$? -eq 1
	@echo
	@echo "== kubeletcfg diff --kubelet-version 1.31 --to-version 1.37 --root $(SAMPLE)   (upgrade preflight; exit 1: findings)"
	@$(BIN) diff --kubelet-version 1.31 --to-version 1.37 --root $(SAMPLE) || test $$? -eq 1
	@echo
	@echo "== kubeletcfg explain evictionHard --kubelet-version 1.31"
	@$(BIN) explain evictionHard --kubelet-version 1.31

# The Ansible collection (ansible/) with Debian's ansible-core: ansible-doc,
# and the rollout playbook run with the real ansible-playbook against four
# hosts on this machine (ansible_connection: local, a node tree each).
ansible-core:
	@command -v ansible-playbook >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ansible-core; }

ansible-test: ansible-core
	$(GO) test -tags ansible -count=1 -v ./ansible/tests/

# ansible-test sanity (--skip-test changelog) and ansible-lint on the
# collection, without network: Debian's packages, and ansible-test's virtual
# environments made with --system-site-packages (ansible/tests/sanity.sh).
ANSIBLE_SANITY_DEBS := ansible-core ansible-lint pylint pycodestyle yamllint python3-voluptuous python3-venv shellcheck
ansible-sanity:
	@dpkg -s $(ANSIBLE_SANITY_DEBS) >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(ANSIBLE_SANITY_DEBS); }
	ansible/tests/sanity.sh

# The module's cost per host where nothing changes, against kubeletcfg diff
# run directly, and the rollout playbook's over 1 and 20 hosts (wall and CPU).
ansible-bench: ansible-core
	$(GO) test -tags ansible -run '^$$' -bench NoChange -benchtime 3x ./ansible/tests/

# The rollout playbook in check and diff mode against the embedded sample node
# (its node tree as --root): the classified changes and the before/after of
# the effective configuration; nothing is written.
ansible-demo: build ansible-core
	ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/bin/collections ansible-galaxy collection install --force -p $(CURDIR)/bin/collections $(CURDIR)/ansible >/dev/null
	ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/bin/collections ANSIBLE_NOCOWS=1 ansible-playbook --check --diff \
	  -i node-1, -c local -e ansible_python_interpreter=/usr/bin/python3 \
	  -e kubeletcfg_binary=$(CURDIR)/$(BIN) -e kubelet_root=$(CURDIR)/$(SAMPLE) -e kubelet_version=1.31 \
	  -e kubelet_config_src=$(CURDIR)/$(SAMPLE)/new-config.yaml -e kubelet_nodes=all -e kubelet_drain=false -e kubelet_become=false \
	  kubeletcfg.kubelet.rollout

# Regenerate schema/data and testdata/reference from the kubelet's own code
# (builds a generator per release in schema/releases.txt; ~5 min each cold).
schema: legacy-flags startup-words
	hack/schemagen/generate.sh
	$(GO) run ./hack/schemagen/tables

# The kubelet's start-up messages of every release (the table of start-up
# refusals, package startup), read from each release's source.
startup-words:
	$(GO) run ./hack/startupsrc -out schema/data/startup.json
	$(GO) run ./hack/schemagen/tables

# What kubeadm's own code writes for testdata/kubeadm/corpus and reads of
# testdata/kubeadm/envfiles, for the kubeadm model's tests: a harness per
# release (hack/kubeadmref, never linked into kubeletcfg; ~5 min each cold).
KUBEADM_REFERENCE_RELEASES ?= v1.37.2 v1.34.4 v1.30.14
kubeadm-reference:
	hack/kubeadmref/generate.sh $(KUBEADM_REFERENCE_RELEASES)

# Every fuzzer for FUZZTIME; CI runs them briefly (fuzz-ci) after make test.
FUZZTIME ?= 30s
FUZZERS  := config:FuzzDecode criruntime:FuzzContainerd effective:FuzzMergeInto nodefile:FuzzHostPath nodefile:FuzzBeneathAsWalk units:FuzzUnitFile units:FuzzReadEnvFile units:FuzzSplitCommandLine units:FuzzGlobAsEachName flags:FuzzParse kubeadm:FuzzSplitDocuments kubeadm:FuzzFlagsEnv kubeadm:FuzzStrategicMerge
fuzz:
	@set -e; for f in $(FUZZERS); do \
	  echo "== $$f"; $(GO) test ./$${f%%:*}/ -run '^$$' -fuzz "^$${f#*:}$$" -fuzztime $(FUZZTIME); \
	done
fuzz-ci:
	$(MAKE) fuzz FUZZTIME=10s

clean:
	rm -rf bin _build

# Whole-process time and peak memory of every command on inputs of one size
# (a ~50-line config, 20 drop-ins, 30 flags: testdata/bench), each against the
# start-up floor: `kubeletcfg version` of the binary built from FLOOR_COMMIT,
# the commit the speed work started on, so the denominator does not move with
# the code measured. Each round runs the floor's version and every command
# under the floor binary (before) and under bin/kubeletcfg (after), shuffled.
# Target: after ≤ 1.5× the floor, peak RSS ≤ 20 MiB.
FLOOR_COMMIT ?= a6005cc
FLOOR    ?= $(CURDIR)/_build/floor/kubeletcfg
BENCH_N  ?= 30
BENCH_EFFECTIVE := $(shell cat testdata/bench/effective-node/args)
BENCH_MIGRATE   := $(shell cat testdata/bench/migrate-node/args)
bench: build $(FLOOR)
	$(GO) test ./config/ ./flags/ ./effective/ -run '^$$' -bench . -benchmem
	$(GO) run ./hack/bench -n $(BENCH_N) -floor $(FLOOR) -bin $(BIN) -dir testdata/bench \
	  'validate=validate --kubelet-version 1.37 ../../$(SAMPLE)/var/lib/kubelet/config.yaml' \
	  'effective@effective-node=effective --kubelet-version 1.37 -- $(BENCH_EFFECTIVE)' \
	  'migrate=migrate --kubelet-version 1.37 -- $(BENCH_MIGRATE)' \
	  'diff=diff --kubelet-version 1.37 --root node node/new-config.yaml' \
	  'audit=audit --kubelet-version 1.37 --root node' \
	  'apply=apply --dry-run --kubelet-version 1.37 --root node --node node-21 -f node/new-config.yaml ++ --persist patch'

# The floor binary: FLOOR_COMMIT checked out in a temporary worktree and built
# as `make build` builds. Made only when absent; never rebuilt over a floor
# that figures were measured against.
$(FLOOR):
	@mkdir -p $(dir $(FLOOR))
	rm -rf $(CURDIR)/_build/floor-src && git worktree add --detach $(CURDIR)/_build/floor-src $(FLOOR_COMMIT)
	cd $(CURDIR)/_build/floor-src && $(GO) build -o $(FLOOR) ./cmd/kubeletcfg
	git worktree remove --force $(CURDIR)/_build/floor-src

# The same jobs against a program built on k8s.io/kubernetes 1.37 doing them
# with the kubelet's own code (the schema generator: "case" loads, defaults
# and validates a config file; "scenario" layers a setup).
BASELINE := $(CURDIR)/_build/schemagen/$(shell awk '$$1=="1.37"{print $$2}' schema/releases.txt)/schemagen
bench-kubelet-code: build
	SCHEMAGEN_ONLY=build hack/schemagen/generate.sh 1.37
	@echo "== validate, a typical 57-line config"
	$(GO) run ./hack/bench -n $(BENCH_N) \
	  '$(BIN) validate --kubelet-version 1.37 $(SAMPLE)/var/lib/kubelet/config.yaml' \
	  '$(BASELINE) case $(SAMPLE)/var/lib/kubelet/config.yaml'
	@echo "== effective, a config, 20 drop-ins and 30 flags"
	$(GO) run ./hack/bench -n $(BENCH_N) -dir testdata/bench/effective-node \
	  '$(CURDIR)/$(BIN) effective --kubelet-version 1.37 -- $(BENCH_EFFECTIVE)' \
	  '$(BASELINE) scenario .'
	@echo "== migrate, a 40-flag kubeadm node"
	$(GO) run ./hack/bench -n $(BENCH_N) -dir testdata/bench/migrate-node \
	  '$(CURDIR)/$(BIN) migrate --kubelet-version 1.37 -- $(BENCH_MIGRATE)' \
	  '$(BASELINE) scenario .'

# Flags of kubelets older than the supported ones, read from their source, so
# that migrate knows flags (and feature gates) that went away before 1.28.
LEGACY := v1.27.16 v1.26.15 v1.25.16 v1.24.17 v1.23.17 v1.22.17 v1.21.14 v1.20.15 v1.19.16 v1.18.20 \
	v1.17.17 v1.16.15 v1.15.12 v1.14.10 v1.13.12 v1.12.10 v1.11.10 v1.10.13 v1.9.11 v1.8.15 v1.6.13
legacy-flags:
	$(GO) run ./hack/legacyflags -out schema/data/legacy-flags.json -gates-out schema/data/legacy-gates.json $(LEGACY)

# The real kubelet, built from k8s.io/kubernetes (~5 min cold, seconds warm),
# and containerd from Debian: the end-to-end tests run kubeletcfg against them.
E2E_MINOR   := 1.37
E2E_RELEASE := $(shell awk '$$1=="$(E2E_MINOR)"{print $$2}' schema/releases.txt)
KUBELET     := $(CURDIR)/_build/kubelet-$(E2E_RELEASE)
kubelet: $(KUBELET)
$(KUBELET):
	$(call k8s-kubelet,$(E2E_RELEASE),$(E2E_MINOR),$(KUBELET))

# The older kubelet the e2e runs where a class of the start-up table differs
# (why, preflight): 1.34, built the same way.
KUBELET_134_RELEASE := $(shell awk '$$1=="1.34"{print $$2}' schema/releases.txt)
KUBELET_134 := $(CURDIR)/_build/kubelet-$(KUBELET_134_RELEASE)
ifneq ($(KUBELET_134),$(KUBELET))
$(KUBELET_134):
	$(call k8s-kubelet,$(KUBELET_134_RELEASE),1.34,$(KUBELET_134))
endif

# k8s-kubelet builds the kubelet of release $(1) (minor $(2)) as $(3), in the
# schema generator's module of that release.
define k8s-kubelet
	hack/schemagen/prepare.sh $(1) _build/schemagen/$(1)
	cd _build/schemagen/$(1) && $(GO) build -o $(3) -ldflags "$(call k8s-ldflags,$(1),$(2))" k8s.io/kubernetes/cmd/kubelet
endef

# The version the built commands say, as a release build says it.
k8s-ldflags = -X k8s.io/component-base/version.gitVersion=$(1) -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(subst 1.,,$(2))
K8S_LDFLAGS = $(call k8s-ldflags,$(E2E_RELEASE),$(E2E_MINOR))

# k8s-command builds a command of k8s.io/kubernetes at the e2e release in a
# module of its own, _build/$(1), whose go.mod is the generator's (the
# release's versions): $(2) the binary, $(3) the command's package.
define k8s-command
	hack/schemagen/prepare.sh $(E2E_RELEASE) _build/schemagen/$(E2E_RELEASE)
	rm -rf _build/$(1) && mkdir -p _build/$(1)
	sed 's#^module .*#module kubeletcfg.local/$(1)#' _build/schemagen/$(E2E_RELEASE)/go.mod > _build/$(1)/go.mod
	printf '//go:build tools\n\npackage tools\n\nimport _ "$(3)/app"\n' > _build/$(1)/tools.go
	cd _build/$(1) && $(GO) mod tidy && $(GO) build -o $(2) -ldflags "$(K8S_LDFLAGS)" $(3)
endef

# The control plane of the same release: kube-apiserver, kube-controller-manager
# and the etcd that release requires (go.etcd.io/etcd/server/v3 at the version
# in k8s.io/kubernetes's go.mod; Debian's etcd is older than it supports).
# diff --live through the node proxy and the cluster-aware apply run on them.
APISERVER := $(CURDIR)/_build/kube-apiserver-$(E2E_RELEASE)
apiserver: $(APISERVER)
$(APISERVER):
	$(call k8s-command,apiserver,$(APISERVER),k8s.io/kubernetes/cmd/kube-apiserver)

CONTROLLER_MANAGER := $(CURDIR)/_build/kube-controller-manager-$(E2E_RELEASE)
controller-manager: $(CONTROLLER_MANAGER)
$(CONTROLLER_MANAGER):
	$(call k8s-command,controller-manager,$(CONTROLLER_MANAGER),k8s.io/kubernetes/cmd/kube-controller-manager)

# kubeadm of the same release: the fleet e2e has it write its
# kube-system/kubelet-config ConfigMap (init phase upload-config kubelet).
KUBEADM := $(CURDIR)/_build/kubeadm-$(E2E_RELEASE)
kubeadm: $(KUBEADM)
$(KUBEADM):
	$(call k8s-command,kubeadm,$(KUBEADM),k8s.io/kubernetes/cmd/kubeadm)

# etcd's main package is its server module's root, whose replace lines stop
# go install: a wrapper module requires it at the version the release pins.
ETCD := $(CURDIR)/_build/etcd-for-$(E2E_RELEASE)
etcd: $(ETCD)
$(ETCD):
	rm -rf _build/etcd && mkdir -p _build/etcd
	cd _build/etcd && printf 'module kubeletcfg.local/etcd\n\ngo 1.26\n' > go.mod && \
	  v=$$(awk '$$1=="go.etcd.io/etcd/server/v3"{print $$2}' "$$($(GO) mod download -json k8s.io/kubernetes@$(E2E_RELEASE) | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')") && \
	  test -n "$$v" && $(GO) get go.etcd.io/etcd/server/v3@$$v && $(GO) build -o $(ETCD) go.etcd.io/etcd/server/v3

# containerd 2, the runtime the e2e kit runs by default: built from its Go
# module without cgo (one static binary each; cold ~3 min of CPU, 5 on 2 busy
# cores with the module downloads), with its runc shim and ctr (the kit
# imports the pause image with it); runc is Debian's.
# Debian's own containerd 1.6 stays installed as the kit's runtime without the
# CRI RuntimeConfig call (unsupported with kubelet >= 1.35; see e2e/README.md).
CONTAINERD_VERSION := v2.4.2
CONTAINERD2_DIR    := $(CURDIR)/_build/containerd-$(CONTAINERD_VERSION)
CONTAINERD2        := $(CONTAINERD2_DIR)/containerd
containerd: $(CONTAINERD2)
$(CONTAINERD2):
	rm -rf $(CONTAINERD2_DIR).tmp && mkdir -p $(CONTAINERD2_DIR).tmp
	CGO_ENABLED=0 GOBIN=$(CONTAINERD2_DIR).tmp $(GO) install -tags "no_btrfs no_devmapper no_zfs" \
	  -ldflags "-X github.com/containerd/containerd/v2/version.Version=$(CONTAINERD_VERSION)" \
	  github.com/containerd/containerd/v2/cmd/containerd@$(CONTAINERD_VERSION) \
	  github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$(CONTAINERD_VERSION) \
	  github.com/containerd/containerd/v2/cmd/ctr@$(CONTAINERD_VERSION)
	rm -rf $(CONTAINERD2_DIR) && mv $(CONTAINERD2_DIR).tmp $(CONTAINERD2_DIR)

# A Debian tree with systemd, containerd and runc, booted with systemd-nspawn
# for the apply tests under a real systemd (~1 min to make, once).
NSPAWN_ROOTFS := $(CURDIR)/_build/nspawn/rootfs
$(NSPAWN_ROOTFS)/lib/systemd/systemd:
	@command -v debootstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }
	rm -rf $(NSPAWN_ROOTFS).tmp
	debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,containerd,runc,iproute2 bookworm $(NSPAWN_ROOTFS).tmp
	rm -rf $(NSPAWN_ROOTFS) && mv $(NSPAWN_ROOTFS).tmp $(NSPAWN_ROOTFS)

# The end-to-end tests (e2e/README.md): every part they run, then the tests
# in one `go test` run that shares kubeletcfg's build, the control plane and
# the nspawn boot. E2E_RUN narrows them (-run), e.g. make e2e E2E_RUN=TestApply$$.
E2E_ENV = NSPAWN_ROOTFS=$(NSPAWN_ROOTFS) KUBELET_BIN=$(KUBELET) APISERVER_BIN=$(APISERVER) CONTROLLER_MANAGER_BIN=$(CONTROLLER_MANAGER) \
	ETCD_BIN=$(ETCD) KUBEADM_BIN=$(KUBEADM) CONTAINERD2_DIR=$(CONTAINERD2_DIR) KUBELET_VERSION=$(E2E_MINOR) \
	KUBELET_134_BIN=$(KUBELET_134) KUBEADM134_REF=$(KUBEADM134_REF)
E2E_RUN ?= .
# Debian's packages first, in one apt-get (dpkg serves one at a time); then
# debootstrap (mostly network) beside the Go builds (CPU), which run one at a
# time: a cold machine saves the ~3 minutes debootstrap takes.
e2e-parts: ansible-core
	@command -v containerd >/dev/null && command -v runc >/dev/null && command -v systemd-nspawn >/dev/null && command -v ip >/dev/null && test -x /usr/lib/cni/bridge && command -v debootstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq containerd runc systemd-container iproute2 containernetworking-plugins debootstrap; }
	$(MAKE) -j2 $(NSPAWN_ROOTFS)/lib/systemd/systemd e2e-builds
e2e-builds:
	$(MAKE) -j1 $(KUBELET) $(KUBELET_134) $(APISERVER) $(CONTROLLER_MANAGER) $(ETCD) $(KUBEADM) $(CONTAINERD2) $(KUBEADM134_REF)

# kubeadm 1.34's own code (the kubeadm-flags.env parser that fails on an
# empty value), built by the kubeadm harness: the e2e reads a migrated file
# with it.
KUBEADM134_REF := $(CURDIR)/_build/kubeadmref/v1.34.4/kubeadmref
$(KUBEADM134_REF):
	hack/kubeadmref/prepare.sh v1.34.4 _build/kubeadmref/v1.34.4

e2e: e2e-parts
	$(E2E_ENV) $(GO) test -count=1 -run '^TestContainerdConfigDump$$' ./criruntime/
	$(E2E_ENV) $(GO) test -tags e2e -count=1 -v -timeout 60m -run '$(E2E_RUN)' ./e2e/

# The variables make e2e gives the tests, for running one by hand:
# eval "$$(make -s e2e-env)"; go test -tags e2e -count=1 -run TestX ./e2e/
e2e-env:
	@for v in $(E2E_ENV); do echo "export $$v"; done

# A rollout's wave of 500 nodes (ROLLOUT_BENCH_NODES) on the e2e control
# plane: the Jobs created by the rollout, their pods by the Job controller,
# one poll, the API server's and controller manager's CPU (~2 minutes; not
# in make e2e; the figures behind README's 5,000-node rollout model).
bench-rollout: $(APISERVER) $(CONTROLLER_MANAGER) $(ETCD)
	ROLLOUT_BENCH=1 $(E2E_ENV) \
	  $(GO) test -tags e2e -count=1 -v -timeout 30m -run '^TestRolloutWaveBenchmark$$' ./e2e/

# kubeletcfg fleet over 500, 5,000 and 20,000 simulated nodes (every node's
# answer its own, then all alike) on the e2e control plane, through the API
# server's node proxy and directly: per scan the wall time, kubeletcfg's peak
# RSS and CPU, the API server's CPU and its latency for other requests, and
# a model of 65,000 nodes. A benchmark run in the background (not in CI, not
# in make e2e), under the e2e lock: flock /work/e2e.lock make bench-fleet.
# FLEET_BENCH_NODES=5000 stops at 5,000 nodes. The API server takes ~1-2 GiB.
FLEET_BENCH_NODES ?= 20000
bench-fleet: $(APISERVER) $(CONTROLLER_MANAGER) $(ETCD)
	@command -v ip >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2; }
	FLEET_BENCH=1 FLEET_BENCH_NODES=$(FLEET_BENCH_NODES) $(E2E_ENV) \
	  $(GO) test -tags e2e -count=1 -v -timeout 90m -run '^TestFleetBenchmark$$' ./e2e/
