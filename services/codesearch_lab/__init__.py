"""The laboratory: what builds development sets and artifacts. Not shipped in the wheel; the product never imports it."""
