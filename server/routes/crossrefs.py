"""Cross-references: which public docs link to which, by `/{id}` URLs of this server.

Read as the public role: a link shows only while both of its docs are public."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import BadRequest
from ..services import crossrefs
from ..web.openapi import NULLABLE_TEXT, TEXT, json_response, obj, operation
from ..web.state import app_state
from ..web.urls import urls
from ..web.validate import query_str

PARAMS = ("doc", "hub")


_REF = obj(["id", "title", "url", "hub"], id=TEXT, title=TEXT, url=TEXT, hub=NULLABLE_TEXT)
CROSS_REFS = obj(
    (),
    doc=_REF,
    outbound={"type": "array", "items": _REF},
    inbound={"type": "array", "items": _REF},
    hub=TEXT,
    url=TEXT,
    pairs={"type": "array", "items": obj(["source", "target"], source=_REF, target=_REF)},
)
CROSS_REFS["description"] = "?doc: {doc, outbound, inbound}; ?hub: {hub, url, pairs}"


@operation(
    "Which public docs link to which: for one doc (?doc=) or a whole hub (?hub=)",
    errors=(400, 404),
    query={"doc": TEXT, "hub": TEXT},
    responses={200: json_response(CROSS_REFS, "The links")},
)
async def cross_refs(request: Request) -> Response:
    params = {name: query_str(request, name) for name in request.query_params}
    unknown = sorted(set(params) - set(PARAMS))
    given = [p for p in PARAMS if params.get(p)]
    if unknown or len(given) != 1:
        raise BadRequest(
            "invalid_query",
            "give exactly one of ?doc={id} or ?hub={slug}" + (f" (unknown: {', '.join(unknown)})" if unknown else ""),
        )
    if given == ["doc"]:
        return JSONResponse(await crossrefs.of_doc(app_state(request), urls(request), params["doc"]))
    return JSONResponse(await crossrefs.of_hub(app_state(request), urls(request), params["hub"]))


routes = [Route("/api/social/cross-refs", cross_refs, methods=["GET"])]
