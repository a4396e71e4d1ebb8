"""The HTTP contract: /openapi.json (OpenAPI 3.1, built from the router) and /api/reference, a short
page of it for people, rendered here (no script, nothing from a CDN)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..web.negotiate import markdown_response, wants_markdown
from ..web.openapi import build_spec, json_response, obj, operation, page_response
from ..web.templating import templates


def _version() -> str:
    try:
        return version("memorywiki")
    except PackageNotFoundError:
        return "0"


def spec(request: Request) -> dict[str, Any]:
    """Built once per app from its own routes (they do not change while it runs)."""
    state = request.app.state
    if getattr(state, "openapi", None) is None:
        state.openapi = build_spec(request.app.routes, version=_version())
    document: dict[str, Any] = state.openapi
    return document


def _fields(schema: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not schema:
        return []
    required = set(schema.get("required", ()))
    out = []
    for name, field in schema.get("properties", {}).items():
        kind = field.get("type", "enum" if "enum" in field else "")
        kind = " or ".join(k for k in kind if k != "null") if isinstance(kind, list) else kind
        out.append(
            {
                "name": name,
                "type": kind or "value",
                "required": name in required,
                "description": field.get("description", ""),
            }
        )
    return out


def operations(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The document flattened for the page: one entry per method and path, in order."""
    ops = []
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            body = op.get("requestBody", {}).get("content", {})
            media_type, content = next(iter(body.items()), (None, None))
            ops.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "summary": op["summary"],
                    "tag": op["tags"][0],
                    "auth": "security" in op,
                    "media_type": media_type,
                    "fields": _fields(content.get("schema") if content else None),
                    "responses": [(status, r["description"]) for status, r in op["responses"].items()],
                }
            )
    return ops


def _markdown(document: dict[str, Any]) -> str:
    lines = [f"# {document['info']['title']} HTTP API", "", "OpenAPI 3.1: /openapi.json", ""]
    for op in operations(document):
        lines.append(f"## {op['method']} {op['path']}\n\n{op['summary']}\n")
        for field in op["fields"]:
            lines.append(
                f"- `{field['name']}` ({field['type']}{', required' if field['required'] else ''})"
                + (f": {field['description']}" if field["description"] else "")
            )
        lines.append("\n" + ", ".join(f"{status}: {text}" for status, text in op["responses"]) + "\n")
    return "\n".join(lines)


@operation(
    "This contract as OpenAPI 3.1",
    tag="operations",
    responses={200: json_response(obj(["openapi", "info", "paths"]), "The OpenAPI document")},
)
async def openapi_json(request: Request) -> Response:
    return JSONResponse(spec(request))


@operation("This contract as a page for people", tag="operations", responses={200: page_response("The API page")})
async def api_page(request: Request) -> Response:
    document = spec(request)
    if wants_markdown(request):
        return markdown_response(_markdown(document))
    return templates.TemplateResponse(
        request, "api.html", {"info": document["info"], "ops": operations(document)}, headers={"Vary": "Accept"}
    )


routes = [
    Route("/openapi.json", openapi_json, methods=["GET"]),
    Route("/api/reference", api_page, methods=["GET"]),
]
