"""Suggested bundles: groups of related public docs that are not bundled together yet.

Docs are nodes of a k-nearest-neighbour graph over their vectors (edges weighted by cosine
similarity, weak ones dropped); without vectors the graph joins docs that share concepts
(Jaccard of their folded concept keys). Groups are Louvain communities of that graph
(networkx, seeded so the same hub gives the same groups). networkx rather than scikit-learn:
communities need no cluster count up front and leave loners out, and networkx is pure
Python and already installed with YAKE, where scikit-learn would add scipy (~100 MB).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import networkx as nx

MIN_SIZE = 3
MAX_SIZE = 12
SEED = 7


def vector_graph(vectors: dict[str, Sequence[float]], k: int = 5, min_similarity: float = 0.35) -> nx.Graph[str]:
    """Each doc joined to its k most similar docs at or above `min_similarity`. Similarities
    are computed a block of rows at a time (float32), so memory stays ~n x 1000 floats."""
    import numpy as np

    ids = sorted(vectors)
    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(ids)
    if len(ids) < 2:
        return graph
    matrix = np.asarray([vectors[i] for i in ids], dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True).clip(min=1e-12)
    take = min(k, len(ids) - 1)
    for start in range(0, len(ids), 1000):
        sims = matrix[start : start + 1000] @ matrix.T
        for offset in range(sims.shape[0]):
            sims[offset, start + offset] = -1.0
        nearest = np.argpartition(-sims, take - 1, axis=1)[:, :take]
        for offset, row in enumerate(nearest):
            for col in row:
                similarity = float(sims[offset, col])
                if similarity >= min_similarity:
                    graph.add_edge(ids[start + offset], ids[col], weight=similarity)
    return graph


def concept_graph(concepts: dict[str, set[str]], min_jaccard: float = 0.12, min_shared: int = 2) -> nx.Graph[str]:
    """Docs joined when they share at least `min_shared` concepts (weight: Jaccard)."""
    ids = sorted(concepts)
    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(ids)
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            shared = concepts[a] & concepts[b]
            if len(shared) >= min_shared:
                jaccard = len(shared) / len(concepts[a] | concepts[b])
                if jaccard >= min_jaccard:
                    graph.add_edge(a, b, weight=jaccard)
    return graph


def _split(graph: nx.Graph[str], nodes: set[str], resolution: float, depth: int = 0) -> list[list[str]]:
    """Louvain communities of `nodes`; oversized ones split again at a finer resolution, or
    trimmed to their most connected members."""
    sub = graph.subgraph(nodes)
    out: list[list[str]] = []
    for community in nx.community.louvain_communities(sub, weight="weight", resolution=resolution, seed=SEED):
        if len(community) < MIN_SIZE:
            continue
        if len(community) > MAX_SIZE:
            if depth < 2:
                finer = _split(graph, set(community), resolution * 1.6, depth + 1)
                if finer:
                    out.extend(finer)
                    continue
            strength = graph.subgraph(community).degree(weight="weight")
            community = {n for n, _ in sorted(strength, key=lambda t: (-t[1], t[0]))[:MAX_SIZE]}
        out.append(sorted(community))
    return out


def groups(graph: nx.Graph[str]) -> list[list[str]]:
    """Communities of at least three docs, the most tightly knit first."""
    connected = {n for n in graph.nodes if graph.degree(n) > 0}
    found = _split(graph, connected, 1.0) if len(connected) >= MIN_SIZE else []

    def cohesion(members: list[str]) -> float:
        sub = graph.subgraph(members)
        return sub.size(weight="weight") / max(1, len(members))

    return sorted(found, key=lambda g: (-cohesion(g), g))


def clusters(node_ids: list[str], edges: list[tuple[str, str, float]]) -> dict[str, int]:
    """Each node's cluster: Louvain communities numbered by size, largest first (0); a node
    with no neighbour is a cluster of its own."""
    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(node_ids)
    graph.add_weighted_edges_from(edges)
    found = (
        nx.community.louvain_communities(graph, weight="weight", seed=SEED)
        if graph.number_of_edges()
        else [{n} for n in node_ids]
    )
    ordered = sorted(found, key=lambda c: (-len(c), min(c)))
    return {node: number for number, members in enumerate(ordered) for node in members}


def not_yet_bundled(candidates: Iterable[list[str]], bundles: Iterable[set[str]]) -> list[list[str]]:
    """Drop groups an existing bundle already holds (all members, or all but one of a
    group whose other members it holds)."""
    bundles = [b for b in bundles if b]
    out = []
    for group in candidates:
        members = set(group)
        if any(len(members - b) <= (1 if len(members) > MIN_SIZE else 0) for b in bundles):
            continue
        out.append(group)
    return out


def signature(members: Iterable[str]) -> str:
    """A group's identity: the same docs give the same suggestion id across recomputations."""
    return hashlib.sha256("\n".join(sorted(members)).encode()).hexdigest()[:32]


def name_extractively(
    members: list[dict[str, Any]], hub_counts: Counter[str] | None = None, hub_size: int = 0
) -> tuple[str, str]:
    """A title from the concepts most members share (those in their titles first), then the
    one that sets the group apart from the rest of the hub; a one-line description naming
    them. members: {"title", "concepts": [names]}; hub_counts: docs per concept key in the
    whole hub (hub_size docs)."""
    from .concepts import concept_key

    counts: Counter[str] = Counter()
    display: dict[str, str] = {}
    for m in members:
        for name in dict.fromkeys(m.get("concepts") or []):
            key = concept_key(name)
            counts[key] += 1
            display.setdefault(key, name)
    titles = [m["title"].lower() for m in members]

    def score(key: str) -> float:
        in_titles = sum(key in t for t in titles) / len(titles)
        return counts[key] + 2 * in_titles

    shared = sorted((k for k, n in counts.items() if n >= 2), key=lambda k: (-score(k), k))
    top = [display[k] for k in shared[:2]] or [display[k] for k, _ in counts.most_common(2)]
    distinct = None
    outside = hub_size - len(members)
    if hub_counts is not None and outside > 0:

        def lift(key: str) -> float:  # share of the group minus share of the rest of the hub
            return counts[key] / len(members) - (hub_counts[key] - counts[key]) / outside

        rest = [k for k in shared if display[k] not in top and lift(k) > 0]
        distinct = display[max(rest, key=lambda k: (lift(k), counts[k], k))] if rest else None
    if top:
        title = " and ".join(top)
        title = title[:1].upper() + title[1:]
        named = top + ([distinct] if distinct else [])
        if distinct:
            title += f": {distinct}"
        description = (
            f"{len(members)} pages that share "
            + (", ".join(named[:-1]) + f" and {named[-1]}" if len(named) > 1 else named[0])
            + "."
        )
    else:
        title = members[0]["title"]
        description = f"{len(members)} pages close in meaning to “{members[0]['title']}”."
    return title[:120], description[:300]


def reading_order(ids: list[str], vectors: dict[str, Sequence[float]]) -> list[str]:
    """Overview first (the doc nearest the group's centre), then each next doc the one most
    similar to the last, so neighbours in the list are neighbours in meaning. Docs without a
    vector keep their given order at the end."""
    import numpy as np

    with_vec = [i for i in ids if i in vectors]
    rest = [i for i in ids if i not in vectors]
    if len(with_vec) < 3:
        return with_vec + rest
    matrix = np.asarray([vectors[i] for i in with_vec], dtype=float)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True).clip(min=1e-12)
    centre = matrix.mean(axis=0)
    current = int(np.argmax(matrix @ centre))
    order, left = [current], set(range(len(with_vec))) - {current}
    while left:
        sims = matrix[sorted(left)] @ matrix[current]
        current = sorted(left)[int(np.argmax(sims))]
        order.append(current)
        left.discard(current)
    return [with_vec[i] for i in order] + rest


def as_list(vector: Any) -> list[float] | None:
    """A stored vector (pgvector's Vector, a numpy array or a list) as a list of floats."""
    if vector is None:
        return None
    if hasattr(vector, "to_list"):
        listed: list[float] = vector.to_list()
        return listed
    return [float(x) for x in vector]
