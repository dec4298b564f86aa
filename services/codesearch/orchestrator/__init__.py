"""The orchestrator: fans a query out to the retrieval legs and fuses their rankings."""
