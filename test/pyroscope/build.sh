#!/usr/bin/env bash
# Builds the real Grafana Pyroscope server (v1.12.0, single binary) that the
# upload tests start on loopback, from the Go module proxy only, into DIR
# (cached: nothing is done when DIR/pyroscope exists). ~5 min and ~1 GB of
# module downloads on a fresh machine.
#
# Why this pairing: the server module's go.mod replaces its `api` submodule
# with a local path the module download lacks; the published api v1.2.0
# (tagged two days after server v1.12.0) is the code it was built with.
# Replace directives of a dependency are ignored, so the server's own
# (memberlist, yaml) are repeated in server/go.mod. Two pseudo-versions it
# needs are missing from sum.golang.org (404): GONOSUMDB skips the checksum
# database for those two only; go.sum pins their hashes all the same.
#   bash test/pyroscope/build.sh DIR
set -euo pipefail
dir=$(mkdir -p "${1:?usage: build.sh DIR}" && cd "$1" && pwd)
[ -x "$dir/pyroscope" ] && exit 0
here=$(cd "$(dirname "$0")" && pwd)
go=$(command -v go || echo /usr/local/go/bin/go)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/server/go.mod" "$here/server/go.sum" "$here/server/tools.go" "$work/"
cd "$work"
export GOWORK=off GOFLAGS="-mod=mod -buildvcs=false" GONOSUMDB=github.com/hashicorp/raft,github.com/grafana/jfr-parser
"$go" build -o "$dir/pyroscope.tmp" github.com/grafana/pyroscope/cmd/pyroscope
mv "$dir/pyroscope.tmp" "$dir/pyroscope"
