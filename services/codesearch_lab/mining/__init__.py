"""Mined (description, code) pairs for a code-trained embedding model (issue 43, item 1).

    python -m codesearch_lab.mining run [--out DIR]     # start or resume; see the README's recipe
    python -m codesearch_lab.mining status [--out DIR]
    python -m codesearch_lab.mining choose              # rewrite packages/*.tsv from the package lists

Modules: `comments` (comment syntax, description cleaning), `extract` (pairs of one file or README), `dedup`
(exact and MinHash/LSH near-duplicates), `sources` (local and registry units, file bounds), `choose` (the
registry package lists, by name), `run` (the resumable run, shards, progress and manifest).
"""
