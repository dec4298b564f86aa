"""Developer tools: protobuf code generation."""
