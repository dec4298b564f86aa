"""Pieces every service shares: validation, snapshots on disk, index update streams, the file walk."""
