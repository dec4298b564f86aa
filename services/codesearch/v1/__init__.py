"""Generated protobuf and gRPC code for codesearch.v1."""
