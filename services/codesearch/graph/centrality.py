"""PageRank over the call and import graph, normalised so the mean over all nodes is 1."""

from __future__ import annotations

import rustworkx

DAMPING = 0.85  # the usual PageRank damping: 15% teleport keeps sinks from hoarding rank
MAX_ITER = 100  # power iterations; converges in far fewer on code graphs
TOLERANCE = 1e-6  # rustworkx's default convergence threshold


def pagerank(n_nodes: int, edges: dict[tuple[int, int], float]) -> list[float]:
    """Scores for nodes 0..n_nodes-1 given weighted directed edges; mean 1. Empty graph -> all 1."""
    if n_nodes == 0:
        return []
    if not edges:
        return [1.0] * n_nodes
    graph = rustworkx.PyDiGraph(multigraph=False)
    graph.add_nodes_from(range(n_nodes))
    graph.add_edges_from([(a, b, w) for (a, b), w in edges.items() if a != b])
    try:
        ranks = rustworkx.pagerank(graph, alpha=DAMPING, weight_fn=float, max_iter=MAX_ITER, tol=TOLERANCE)
    except rustworkx.FailedToConverge:
        ranks = rustworkx.pagerank(
            graph, alpha=DAMPING, weight_fn=float, max_iter=MAX_ITER * 10, tol=TOLERANCE * 10
        )
    scores = [float(ranks[i]) if i in ranks else 0.0 for i in range(n_nodes)]
    total = sum(scores)
    if total <= 0:
        return [1.0] * n_nodes
    scale = n_nodes / total
    return [s * scale for s in scores]
