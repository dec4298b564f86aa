"""Model Context Protocol server: codesearch's API as tools for agents."""
