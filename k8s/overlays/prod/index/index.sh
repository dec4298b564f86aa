#!/bin/sh
# Main container of the indexing Job: waits for shard $JOB_COMPLETION_INDEX, then indexes each of its
# repositories from /src through the orchestrator sidecar of this pod (127.0.0.1:50551), whose legs are that
# shard's keyword, vector and graph services. The sidecar reads /src; the shard receives the indexed files.
set -eu
shard="${JOB_COMPLETION_INDEX:?set by the Indexed Job}"
list=/etc/codesearch-index/repos.txt
mine=/tmp/repos-of-this-shard.txt
awk -v i="$shard" '$1 !~ /^#/ && NF >= 3 && $1 == i' "$list" > "$mine"

python3 - "$CODESEARCH_KEYWORD_ADDR" <<'PY'
"""Waits until the shard reports SERVING for its three legs (it may still be loading its model)."""
import sys
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

WAIT_S = 1200  # a first start pulls the image and loads the model; longer means the shard is broken
LEGS = ("codesearch.v1.KeywordService", "codesearch.v1.VectorService", "codesearch.v1.GraphService")
address = sys.argv[1]
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
while read -r _ name _; do
  if codesearch index "/src/$name" --name "$name" --address 127.0.0.1:50551 --quiet; then
    :
  else
    echo "indexing $name failed" >&2
    failed=$((failed + 1))
  fi
done < "$mine"
echo "shard $shard: $(wc -l < "$mine") repositories, $failed failed"
# A failure fails this index; the Job retries it (backoffLimitPerIndex).
[ "$failed" -eq 0 ]
