"""The hub graph: JSON for programs, an SVG page for people, markdown for AIs. Everything is
read as the public role, so private docs are neither nodes nor the end of any edge."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..curation.markdown import markdown_twin
from ..services import graph as graph_service
from ..web.graphview import picture
from ..web.negotiate import markdown_response, wants_markdown
from ..web.openapi import TEXT, json_response, markdown_page, obj, operation, page_response
from ..web.state import app_state
from ..web.templating import templates
from ..web.urls import urls


async def load_graph(request: Request) -> dict[str, Any]:
    return await graph_service.hub_graph(app_state(request), urls(request), request.path_params["slug"])


GRAPH = obj(
    ["hub", "url", "nodes", "edges"],
    hub=TEXT,
    url=TEXT,
    nodes={
        "type": "array",
        "items": obj(
            ["id", "title", "url", "size", "cluster"],
            id=TEXT,
            title=TEXT,
            url=TEXT,
            size={"type": "integer", "description": "characters"},
            cluster={"type": "integer"},
        ),
    },
    edges={
        "type": "array",
        "items": obj(
            ["source", "target", "weight"],
            source=TEXT,
            target=TEXT,
            weight={"type": "number", "description": "cosine similarity"},
        ),
    },
)


def neighbours_rule(graph: dict[str, Any]) -> str:
    """Which pages the graph joins, in a sentence."""
    limit = f"cosine distance below {graph['max_distance']:g}"
    if not graph["relative"]:
        return f"pages at a {limit} are neighbours"
    return (
        f"each page is joined to the pages that stand out as near it in this hub (at a {limit}, "
        f"its {graph['max_neighbours']} nearest at most)"
    )


def graph_markdown(graph: dict[str, Any]) -> str:
    """Clusters of related pages, then every edge: what the picture shows, for an AI."""
    titles = {n["id"]: n["title"] for n in graph["nodes"]}
    groups: dict[int, list[dict[str, Any]]] = {}
    for n in graph["nodes"]:
        groups.setdefault(n["cluster"], []).append(n)
    lines = [
        f"# {graph['hub']}: graph",
        "",
        f"> Pages of the hub {graph['hub']} grouped by meaning: "
        f"{neighbours_rule(graph)}; clusters are communities of neighbours.",
        "",
    ]
    for number, members in sorted(groups.items()):
        if len(members) < 2:
            continue
        lines += [f"## Cluster {number + 1}", ""]
        lines += [f"- [{n['title']}]({markdown_twin(n['url'])})" for n in members]
        lines.append("")
    loners = [n for members in groups.values() if len(members) == 1 for n in members]
    if loners:
        lines += ["## Pages with no close neighbour", ""] + [f"- [{n['title']}]({markdown_twin(n['url'])})" for n in loners] + [""]
    if graph["edges"]:
        lines += ["## Neighbours", ""]
        lines += [f"- {titles[e['source']]} ↔ {titles[e['target']]} (similarity {e['weight']})" for e in graph["edges"]]
    return "\n".join(lines).rstrip() + "\n"


@operation(
    "The hub graph: its public docs joined by meaning",
    errors=(404,),
    responses={200: json_response(GRAPH, "Nodes and edges")},
)
async def graph_api(request: Request) -> Response:
    graph = await load_graph(request)
    for key in ("max_distance", "relative", "max_neighbours"):
        graph.pop(key)
    return JSONResponse(graph)


@operation(
    "The hub graph as markdown: clusters and neighbours (for an AI)",
    tag="pages",
    page=True,
    errors=(404,),
    responses={200: markdown_page("The graph")},
)
async def graph_twin(request: Request) -> Response:
    return markdown_response(graph_markdown(await load_graph(request)))


@operation(
    "The hub graph as a picture (SVG, no script)",
    tag="pages",
    page=True,
    errors=(404,),
    responses={200: page_response("The graph")},
)
async def graph_page(request: Request) -> Response:
    if wants_markdown(request):
        return await graph_twin(request)
    graph = await load_graph(request)
    groups: dict[int, list[dict[str, Any]]] = {}
    for n in graph["nodes"]:
        groups.setdefault(n["cluster"], []).append(n)
    return templates.TemplateResponse(
        request,
        "graph.html",
        {
            "slug": graph["hub"],
            "graph": graph,
            "picture": picture(graph),
            "groups": sorted((number, members) for number, members in groups.items() if len(members) > 1),
            "loners": [m for members in groups.values() if len(members) == 1 for m in members],
            "twin_url": f"/hub/{graph['hub']}/graph.md",
        },
        headers={"Vary": "Accept"},
    )


routes = [
    Route("/api/hub/{slug}/graph", graph_api, methods=["GET"]),
    Route("/hub/{slug}/graph.md", graph_twin, methods=["GET"]),
    Route("/hub/{slug}/graph", graph_page, methods=["GET"]),
]
