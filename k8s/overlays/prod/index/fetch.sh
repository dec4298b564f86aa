#!/bin/sh
# Init container of the indexing Job: picks the repositories of repos.txt that rendezvous hashing assigns to
# shard $JOB_COMPLETION_INDEX, and shallow-clones them into /src.
set -eu
shard="${JOB_COMPLETION_INDEX:?set by the Indexed Job}"
# Overridable for a run outside Kubernetes; the defaults are the Job's mounts.
list="${CODESEARCH_REPOS_FILE:-/etc/codesearch-index/repos.txt}"
src="${CODESEARCH_SRC_DIR:-/src}"
mine="$src/.repos-of-this-shard"
python3 - "$list" "$shard" > "$mine" <<'PY'
"""Lines of repos.txt whose repository this shard owns, by the orchestrator's own rendezvous function."""
import sys

from codesearch.common.errors import check_repo_name
from codesearch.config import Settings
from codesearch.orchestrator.sharding import rendezvous_shard

shards = list(Settings.from_env().shards)
if not shards:
    sys.exit("CODESEARCH_SHARDS is empty")
for line in open(sys.argv[1]):
    fields = line.split()
    if len(fields) < 2 or fields[0].startswith("#"):
        continue
    check_repo_name(fields[0])
    if rendezvous_shard(fields[0], shards) == int(sys.argv[2]):
        print(" ".join(fields))
PY
echo "shard $shard: $(wc -l < "$mine") repositories to fetch"
while read -r name url ref; do
  # A restarted init container finds the emptyDir as it left it: start each clone afresh.
  rm -rf "${src:?}/$name"
  echo "fetching $name from $url ${ref:-(default branch)}"
  git clone --quiet --depth 1 ${ref:+--branch "$ref"} "$url" "$src/$name"
done < "$mine"
