"""The graph leg: definitions, call sites and imports from tree-sitter, stored per repository in SQLite."""
