"""The blind development set: pinned registry packages, questions written by reading their code, and the fetch."""
