"""The `codesearch` command line: a gRPC client of the server (and `serve`, which runs it)."""
