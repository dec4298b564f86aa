"""Builders of the vector leg's shipped static artifacts: the `+stdlib` delta (train.py, delta.py) and the query
map for it (query_map.py). The product only reads them (codesearch/vector/static_delta.py, query_map.py); RECIPES.md
says how each shipped file is rebuilt."""
