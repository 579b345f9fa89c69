# dtq — see README.md. `make test` is the whole suite, as CI runs it.

GO ?= go

.PHONY: test deps vet build bench serve

test: deps vet
	$(GO) test -race -count=1 -timeout 25m ./...

deps:
	@scripts/ensure-redis.sh

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

build:
	CGO_ENABLED=0 $(GO) build -o bin/dtq ./cmd/dtq

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 3x ./queue

serve:
	$(GO) run ./cmd/dtq serve
