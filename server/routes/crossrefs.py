"""Cross-references: which public docs link to which, by `/{id}` URLs of this server.

Read as the public role: a link shows only while both of its docs are public."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import ApiError, not_found, unknown_hub
from ..web.openapi import NULLABLE_TEXT, TEXT, json_response, obj, operation
from ..store import docs as doc_store
from ..store import hubs as hub_store
from ..store import links as link_store
from ..tokens import looks_like_id
from ..web.validate import query_str
from ..web.state import app_state, doc_url, hub_url, own_hosts

PARAMS = ("doc", "hub")


_REF = obj(["id", "title", "url", "hub"], id=TEXT, title=TEXT, url=TEXT, hub=NULLABLE_TEXT)
CROSS_REFS = obj((), doc=_REF, outbound={"type": "array", "items": _REF}, inbound={"type": "array", "items": _REF},
                 hub=TEXT, url=TEXT, pairs={"type": "array", "items": obj(["source", "target"], source=_REF, target=_REF)})
CROSS_REFS["description"] = "?doc: {doc, outbound, inbound}; ?hub: {hub, url, pairs}"


def _entry(request: Request, doc_id: str, title: str, hub: str | None) -> dict[str, Any]:
    return {"id": doc_id, "title": title, "url": doc_url(request, doc_id), "hub": hub}


@operation("Which public docs link to which: for one doc (?doc=) or a whole hub (?hub=)", errors=(400, 404),
           query={"doc": TEXT, "hub": TEXT}, responses={200: json_response(CROSS_REFS, "The links")})
async def cross_refs(request: Request) -> Response:
    params = {name: query_str(request, name) for name in request.query_params}
    unknown = sorted(set(params) - set(PARAMS))
    given = [p for p in PARAMS if params.get(p)]
    if unknown or len(given) != 1:
        raise ApiError(400, "invalid_query", "give exactly one of ?doc={id} or ?hub={slug}"
                       + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
    hosts = own_hosts(request)
    async with app_state(request).db.public.connection() as conn:
        if given == ["doc"]:
            doc_id = params["doc"]
            doc = await doc_store.public_doc(conn, doc_id) if looks_like_id(doc_id) else None
            if doc is None:
                raise not_found("doc")
            outbound, inbound = await link_store.doc_cross_refs(conn, doc_id, hosts)
            return JSONResponse({
                "doc": _entry(request, doc_id, doc["title"], doc["hub_slug"]),
                "outbound": [_entry(request, d["id"], d["title"], d["hub_slug"]) for d in outbound],
                "inbound": [_entry(request, d["id"], d["title"], d["hub_slug"]) for d in inbound],
            })
        slug = params["hub"]
        hub = await hub_store.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        pairs = await link_store.hub_cross_refs(conn, hub["id"], hosts)
    return JSONResponse({
        "hub": slug, "url": hub_url(request, slug),
        "pairs": [{"source": _entry(request, p["source_id"], p["source_title"], p["source_hub"]),
                   "target": _entry(request, p["target_id"], p["target_title"], p["target_hub"])} for p in pairs],
    })


routes = [Route("/api/social/cross-refs", cross_refs, methods=["GET"])]
