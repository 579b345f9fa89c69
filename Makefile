# dtq — see README.md. `make test` is the whole suite, as CI runs it.

GO ?= go

.PHONY: test deps vet lint build bench serve fuzz faults

# FUZZTIME is the budget of `make fuzz`: a count of executions (10-35 s
# on two cores), not a duration. Go 1.26's fuzz coordinator can fail a run
# with a bare "context deadline exceeded" when a duration ends while a
# starved worker is mid-call (go.dev/issue/75804, fixed in Go 1.27); a
# count has no deadline to race.
FUZZTIME ?= 100000x

test: deps vet lint
	$(GO) test -race -count=1 -timeout 25m ./...
	@$(MAKE) --no-print-directory fuzz

# fuzz explores the submit path (api.FuzzSubmit) for FUZZTIME, from its
# seeds and api/testdata/fuzz/. A failing input is written there: commit it,
# it becomes a regression seed of every `go test`.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzSubmit$$' -fuzztime $(FUZZTIME) ./api

deps:
	@scripts/ensure-redis.sh
	@scripts/ensure-postgres.sh
	@scripts/ensure-chromium.sh
	@scripts/ensure-runtimes.sh

vet:
	$(GO) vet ./...
	$(GO) vet -tags faults ./faults
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# lint runs golangci-lint with the linters of .golangci.yml (installed at
# the version that file is written for, once, by scripts/ensure-golangci-lint.sh).
lint:
	@lint=$$(GO=$(GO) scripts/ensure-golangci-lint.sh) && "$$lint" run ./...

build:
	CGO_ENABLED=0 $(GO) build -o bin/dtq ./cmd/dtq

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 3x ./queue

serve:
	$(GO) run ./cmd/dtq serve

# faults runs the fault-injection suite (faults/, build tag faults): real
# api and worker processes (built without -race, so they keep up with the
# load on two cores) under worker kills, Redis crashes, pauses, network
# faults, data loss, full memory, and Cluster and Sentinel failovers. It
# writes the results table to $$DTQ_FAULTS_REPORT (default
# faults/last-run.md); docs/failure-modes.md shows the last one.
faults: deps
	$(GO) test -tags faults -count=1 -timeout 20m -v ./faults
