"""Retrieval-quality evaluation: run query sets through the server (or ripgrep), score, compare, plot, mine."""
