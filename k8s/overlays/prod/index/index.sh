#!/bin/sh
# Main container of the indexing Job: waits for shard $JOB_COMPLETION_INDEX, then indexes each repository
# fetch.sh cloned for it. `codesearch index --embedded` runs the indexer here, beside the source, and sends
# the indexed files to the shard that CODESEARCH_SHARDS' rendezvous hashing names: this one.
set -eu
shard="${JOB_COMPLETION_INDEX:?set by the Indexed Job}"
# Overridable for a run outside Kubernetes; the default is the Job's mount.
src="${CODESEARCH_SRC_DIR:-/src}"
mine="$src/.repos-of-this-shard"

python3 - "$shard" <<'PY'
"""Waits until the shard reports SERVING for its three legs (it may still be loading its model)."""
import sys
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from codesearch.config import Settings

WAIT_S = 1200  # a first start pulls the image and loads the model; longer means the shard is broken
LEGS = ("codesearch.v1.KeywordService", "codesearch.v1.VectorService", "codesearch.v1.GraphService")
address = Settings.from_env().shards[int(sys.argv[1])]
deadline = time.monotonic() + WAIT_S
stub = health_pb2_grpc.HealthStub(grpc.insecure_channel(address))
while True:
    try:
        if all(
            stub.Check(health_pb2.HealthCheckRequest(service=s), timeout=5).status
            == health_pb2.HealthCheckResponse.SERVING
            for s in LEGS
        ):
            print(f"{address} is serving", flush=True)
            break
    except grpc.RpcError as e:
        print(f"waiting for {address}: {e.code().name}", flush=True)
    if time.monotonic() > deadline:
        sys.exit(f"{address} not serving after {WAIT_S} s")
    time.sleep(5)
PY

failed=0
while read -r name _; do
  if codesearch index "$src/$name" --name "$name" --embedded --quiet; then
    :
  else
    echo "indexing $name failed" >&2
    failed=$((failed + 1))
  fi
done < "$mine"
echo "shard $shard: $(wc -l < "$mine") repositories, $failed failed"
# A failure fails this index; the Job retries it (backoffLimitPerIndex).
[ "$failed" -eq 0 ]
