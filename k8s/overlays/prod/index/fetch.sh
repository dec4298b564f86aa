#!/bin/sh
# Init container of the indexing Job: shallow-clones this shard's repositories (repos.txt) into /src.
set -eu
shard="${JOB_COMPLETION_INDEX:?set by the Indexed Job}"
list=/etc/codesearch-index/repos.txt
mine=/tmp/repos-of-this-shard.txt
awk -v i="$shard" '$1 !~ /^#/ && NF >= 3 && $1 == i' "$list" > "$mine"
echo "shard $shard: $(wc -l < "$mine") repositories to fetch"
while read -r _ name url ref; do
  case "$name" in
    "" | .* | */*) echo "bad repository name: '$name'" >&2; exit 1 ;;
  esac
  # A restarted init container finds the emptyDir as it left it: start each clone afresh.
  rm -rf "/src/$name"
  echo "fetching $name from $url ${ref:-(default branch)}"
  git clone --quiet --depth 1 ${ref:+--branch "$ref"} "$url" "/src/$name"
done < "$mine"
