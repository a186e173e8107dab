# Every task of the project. `make test` is what CI runs (.ci/run).
GO      ?= go
BIN     := bin/kubeletcfg
SAMPLE  := testdata/nodes/kubeadm-1.31

.PHONY: all build test vet demo schema fuzz bench clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/kubeletcfg

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

test: vet
	$(GO) test ./...

# The main job on an embedded sample node: validate its configuration for its
# kubelet version and show what that version defaults.
demo: build
	@echo "== kubeletcfg validate --kubelet-version 1.31 $(SAMPLE)/var/lib/kubelet/config.yaml"
	@$(BIN) validate --kubelet-version 1.31 $(SAMPLE)/var/lib/kubelet/config.yaml
	@echo
	@echo "== kubeletcfg validate --kubelet-version 1.31 $(SAMPLE)/broken-config.yaml   (exit 1 expected)"
	@$(BIN) validate --kubelet-version 1.31 $(SAMPLE)/broken-config.yaml || test $$? -eq 1
	@echo
	@echo "== kubeletcfg explain evictionHard --kubelet-version 1.31"
	@$(BIN) explain evictionHard --kubelet-version 1.31
	@echo
	@echo "== kubeletcfg defaults --kubelet-version 1.31 --flags-baseline   (what the node ran on before it had a config file)"
	@$(BIN) defaults --kubelet-version 1.31 --flags-baseline | head -30

# Regenerate schema/data and testdata/reference from the kubelet's own code
# (builds a generator per release in schema/releases.txt; ~5 min each cold).
schema: legacy-flags
	hack/schemagen/generate.sh

fuzz:
	$(GO) test ./config/ -run '^$$' -fuzz FuzzDecode -fuzztime 30s

clean:
	rm -rf bin _build

# Whole-process time and peak memory of validate on a typical 60-line config,
# against a program built on k8s.io/kubernetes 1.37 that loads, defaults and
# validates the same file (the schema generator's "case" command), in one run.
BASELINE := _build/schemagen/$(shell awk '$$1=="1.37"{print $$2}' schema/releases.txt)/schemagen
bench: build
	SCHEMAGEN_ONLY=build hack/schemagen/generate.sh 1.37
	$(GO) test ./config/ -run '^$$' -bench . -benchmem
	$(GO) run ./hack/bench -n 30 \
	  '$(BIN) validate --kubelet-version 1.37 $(SAMPLE)/var/lib/kubelet/config.yaml' \
	  '$(BASELINE) case $(SAMPLE)/var/lib/kubelet/config.yaml'

# Flags of kubelets older than the supported ones, read from their source, so
# that migrate knows flags that went away before 1.28.
LEGACY := v1.27.16 v1.26.15 v1.25.16 v1.24.17 v1.23.17 v1.22.17 v1.21.14 v1.20.15 v1.19.16 v1.18.20 \
	v1.17.17 v1.16.15 v1.15.12 v1.14.10 v1.13.12 v1.12.10 v1.11.10 v1.10.13 v1.9.11 v1.8.15 v1.6.13
legacy-flags:
	$(GO) run ./hack/legacyflags -out schema/data/legacy-flags.json $(LEGACY)
