#!/usr/bin/env bash
# Prints the path of golangci-lint at the version .golangci.yml is written
# for, installing it with `go install` (from the Go module proxy, into
# $(go env GOPATH)/bin) when that version is missing. Nothing else changes.
set -euo pipefail
version=v2.15.0
go=${GO:-go}
bin="$($go env GOPATH)/bin/golangci-lint"
if [ -x "$bin" ] && "$bin" version 2>/dev/null | grep -q "version ${version#v} "; then
  echo "$bin"
  exit 0
fi
echo "ensure-golangci-lint: installing golangci-lint $version (a few minutes, once)" >&2
"$go" install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version" >&2
echo "$bin"
