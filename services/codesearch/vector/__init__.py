"""Vector leg: chunk embeddings in a usearch index per repository."""
