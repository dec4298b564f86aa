"""codesearch: hybrid code search over gRPC."""

__version__ = "0.1.0"
