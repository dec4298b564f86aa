"""Developer benchmarks, run as `python -m codesearch_lab.bench.<module>`: each prints a ratio against a baseline
measured in the same run. The commands users run (`codesearch bench load|soak|scale`) stay in codesearch/bench/."""
