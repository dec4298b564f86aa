"""Keyword leg: BM25 (tantivy) and trigram literal/regex search."""
