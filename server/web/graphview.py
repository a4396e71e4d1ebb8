"""The hub graph as data and as a picture: clusters (Louvain communities) and a force layout,
drawn server-side as SVG, so the page needs no script and every node is a plain link.

networkx does the graph work (seeded, so the same hub gives the same picture); the SVG is
small and styled only by classes from the stylesheet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import networkx as nx

SEED = 7
PALETTE = 8  # cluster colours in the stylesheet: .c0 ... .c7 (c7 is grey: loners)
WIDTH, HEIGHT, MARGIN = 1000, 680, 70
MAX_DRAWN = 300  # nodes in the picture; the JSON always has them all
LABELS = 30  # the best-connected nodes get a visible label; every node has a tooltip
LABEL_CHARS = 34  # a label's title is cut to this many characters
# The label's font size in the picture's units (the stylesheet's .graph text), and the width of
# a character at that size, to keep every label inside the picture: an estimate, generous.
LABEL_FONT, CHAR_WIDTH = 13, 0.62 * 13


def clusters(node_ids: list[str], edges: list[tuple[str, str, float]]) -> dict[str, int]:
    """Each node's cluster: Louvain communities numbered by size, largest first (0); a node
    with no neighbour is a cluster of its own."""
    graph = nx.Graph()
    graph.add_nodes_from(node_ids)
    graph.add_weighted_edges_from(edges)
    found = (
        nx.community.louvain_communities(graph, weight="weight", seed=SEED)
        if graph.number_of_edges()
        else [{n} for n in node_ids]
    )
    ordered = sorted(found, key=lambda c: (-len(c), min(c)))
    return {node: number for number, members in enumerate(ordered) for node in members}


@dataclass(frozen=True)
class Drawn:
    """A node placed in the picture."""

    id: str
    title: str
    url: str
    x: float
    y: float
    r: float
    colour: int
    label: bool

    @property
    def label_left(self) -> bool:
        """Near the right edge the label goes on the node's left, inside the picture."""
        return self.x > WIDTH - 220

    @property
    def label_text(self) -> str:
        return self.title if len(self.title) <= LABEL_CHARS else self.title[: LABEL_CHARS - 1].rstrip() + "…"

    def extent(self) -> tuple[float, float, float, float]:
        """The box the node and its label take: left, top, right, bottom."""
        left, right = self.x - self.r, self.x + self.r
        if self.label:
            width = len(self.label_text) * CHAR_WIDTH + self.r + 3
            left, right = (min(left, self.x - width), right) if self.label_left else (left, max(right, self.x + width))
        return left, self.y - max(self.r, LABEL_FONT), right, self.y + max(self.r, LABEL_FONT)


@dataclass(frozen=True)
class Picture:
    nodes: tuple[Drawn, ...]
    lines: tuple[tuple[float, float, float, float, float], ...]  # x1, y1, x2, y2, weight
    hulls: tuple[tuple[float, float, float, int], ...]  # cx, cy, radius, colour, per cluster of 2+
    total: int
    view: str = f"0 0 {WIDTH} {HEIGHT}"  # the SVG's viewBox: every ring, node and label inside it


def _radius(size: int) -> float:
    return round(5 + 2.2 * math.log1p(max(size, 0) / 400), 1)


@lru_cache(maxsize=16)
def _layout(node_ids: tuple[str, ...], edges: tuple[tuple[str, str, float], ...]) -> dict[str, tuple[float, float]]:
    graph = nx.Graph()
    graph.add_nodes_from(node_ids)
    graph.add_weighted_edges_from(edges)
    if len(node_ids) == 1:
        return {node_ids[0]: (0.0, 0.0)}
    pos = nx.spring_layout(graph, weight="weight", seed=SEED, iterations=80, k=1.6 / math.sqrt(len(node_ids)))
    return {node: (float(p[0]), float(p[1])) for node, p in pos.items()}


def picture(graph: dict[str, Any]) -> Picture:
    """Place the graph's nodes (the MAX_DRAWN best connected) in the SVG's box."""
    if not graph["nodes"]:
        return Picture((), (), (), 0)
    degree: dict[str, int] = {n["id"]: 0 for n in graph["nodes"]}
    for e in graph["edges"]:
        degree[e["source"]] += 1
        degree[e["target"]] += 1
    chosen = sorted(graph["nodes"], key=lambda n: (-degree[n["id"]], n["id"]))[:MAX_DRAWN]
    keep = {n["id"] for n in chosen}
    edges = tuple(
        sorted(
            (e["source"], e["target"], e["weight"])
            for e in graph["edges"]
            if e["source"] in keep and e["target"] in keep
        )
    )
    pos = _layout(tuple(sorted(keep)), edges)
    xs, ys = [p[0] for p in pos.values()], [p[1] for p in pos.values()]
    span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0

    def place(node: str) -> tuple[float, float]:
        x, y = pos[node]
        return (
            round(MARGIN + (x - min(xs)) / span_x * (WIDTH - 2 * MARGIN), 1),
            round(MARGIN + (y - min(ys)) / span_y * (HEIGHT - 2 * MARGIN), 1),
        )

    cluster_of = {n["id"]: n["cluster"] for n in chosen}
    sizes: dict[int, int] = {}
    for n in chosen:
        sizes[n["cluster"]] = sizes.get(n["cluster"], 0) + 1
    labelled = {n["id"] for n in chosen[:LABELS]}
    nodes = []
    for n in chosen:
        x, y = place(n["id"])
        colour = n["cluster"] % (PALETTE - 1) if sizes[n["cluster"]] > 1 else PALETTE - 1
        nodes.append(Drawn(n["id"], n["title"], n["url"], x, y, _radius(n["size"]), colour, n["id"] in labelled))
    at = {d.id: d for d in nodes}
    lines = tuple((at[a].x, at[a].y, at[b].x, at[b].y, w) for a, b, w in edges)
    hulls = []
    for cluster, count in sorted(sizes.items()):
        if count < 2:
            continue
        members = [d for d in nodes if cluster_of[d.id] == cluster]
        cx = sum(d.x for d in members) / len(members)
        cy = sum(d.y for d in members) / len(members)
        radius = max(math.hypot(d.x - cx, d.y - cy) + d.r for d in members) + 10
        hulls.append((round(cx, 1), round(cy, 1), round(radius, 1), members[0].colour))
    return Picture(tuple(nodes), lines, tuple(hulls), len(graph["nodes"]), _view(nodes, hulls))


def _view(nodes: list[Drawn], hulls: list[tuple[float, float, float, int]]) -> str:
    """A viewBox holding the whole picture: a cluster's ring reaches past its outermost node
    (by that node's size and a gap), so the largest one was cut off at the box's edge."""
    boxes = [d.extent() for d in nodes] + [(cx - r, cy - r, cx + r, cy + r) for cx, cy, r, _ in hulls]
    pad = 4
    left = min(0.0, *(b[0] for b in boxes)) - pad
    top = min(0.0, *(b[1] for b in boxes)) - pad
    right = max(float(WIDTH), *(b[2] for b in boxes)) + pad
    bottom = max(float(HEIGHT), *(b[3] for b in boxes)) + pad
    return f"{left:.0f} {top:.0f} {right - left:.0f} {bottom - top:.0f}"
