#!/usr/bin/env bash
# Starts the Pyroscope server built by build.sh on loopback, in the
# foreground (exec), everything under DATA, HTTP on PORT and its other
# listeners on PORT+1..PORT+2; it is ready when GET /ready answers "ready"
# (~20 s). Every *instance-addr is pinned to 127.0.0.1: by default the
# server advertises the machine's first address and its parts cannot
# reach each other.
#   bash test/pyroscope/run.sh BIN DATA PORT
set -euo pipefail
bin=${1:?usage: run.sh BIN DATA PORT} data=${2:?} port=${3:?}
a=127.0.0.1
mkdir -p "$data/shared" "$data/local"
cd "$data"      # it writes some state (data-compactor/) to its working directory
exec "$bin" -target=all \
	-server.http-listen-address=$a -server.http-listen-port="$port" \
	-server.grpc-listen-address=$a -server.grpc-listen-port=$((port + 1)) \
	-memberlist.bind-addr=$a -memberlist.bind-port=$((port + 2)) -memberlist.advertise-addr=$a \
	-distributor.ring.instance-addr=$a -ingester.lifecycler.addr=$a \
	-query-frontend.instance-addr=$a -query-scheduler.ring.instance-addr=$a \
	-store-gateway.sharding-ring.instance-addr=$a -compactor.ring.instance-addr=$a \
	-overrides-exporter.ring.instance-addr=$a \
	-self-profiling.disable-push=true -usage-stats.enabled=false \
	-storage.backend=filesystem -storage.filesystem.dir="$data/shared" \
	-pyroscopedb.data-path="$data/local"
