"""The HTTP contract as OpenAPI 3.1, built from the router itself.

Each route's schema lives beside its route: its endpoint is decorated with `@operation(...)`
(a summary, the request body, the responses, the error statuses it can answer). `build_spec`
walks the app's routes, so the document lists exactly what the app serves; an endpoint
without `@operation` is named by `undocumented()` and fails tests/test_openapi.py, which also
checks each JSON body schema against the fields the route really accepts. Adding a route =
decorating its endpoint; nothing else to register. Pages are operations too (tag "pages",
HTML and markdown answers); only the static files of the /static Mount are not.

Every operation answers 503 (database unavailable, with Retry-After) as well; one that checks
a credential (auth, a credential header or ?access) or is `limited` answers 429 (its client's
budget spent, server/web/ratelimit.py); every unsafe one that may change something answers 403
csrf_failed (a page post without its form's token, or an /api request carrying the session
cookie without X-CSRF-Token: server/web/csrf.py). Errors are the one shape of server/errors.py:
{"error": {"code", "message", ...}}, `code` one of the codes declared there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from starlette.routing import BaseRoute, Route

from ..errors import CODES
from .csrf import may_change

OPENAPI_VERSION = "3.1.0"

E = TypeVar("E", bound=Callable[..., Any])  # an endpoint

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {
                    "type": "string",
                    "enum": sorted(CODES),
                    "description": "stable: clients branch on it, never on the message (x-error-codes says what each means)",
                },
                "message": {"type": "string", "description": "for people"},
            },
            "additionalProperties": True,
        }
    },
    # every code with the status it comes with and what it means (server/errors.py CODES)
    "x-error-codes": [{"code": c.code, "status": c.status, "meaning": c.meaning} for c in CODES.values()],
}
ERROR = {"$ref": "#/components/schemas/Error"}

_ERROR_TEXT = {
    400: "Bad input: malformed JSON, an unknown or invalid field (named in the error)",
    401: "A token is needed (Authorization: Bearer ...)",
    403: "The token given does not allow this, or a CSRF check failed (csrf_failed)",
    404: "No such hub, doc, bundle or page (or not visible to this request)",
    405: "Method not allowed",
    409: "Conflict (a taken slug, a stale If-Match version, no embedder)",
    411: "Content-Length is required",
    413: "The body or file is over the configured limit",
    415: "A file type that cannot be captured",
    422: "Well-formed, but the content cannot be captured (a corrupt file, an empty page)",
    429: "Over this client's rate limit (refused tokens, wrong passwords, re-index requests); retry after Retry-After seconds",
    503: "The database (or the embedder, for /api/embed) is unavailable; retry after Retry-After seconds",
}

TEXT = {"type": "string"}
# Headers and query parameters that carry a credential: checking one spends the client's budget.
CREDENTIAL_PARAMS = frozenset({"x-edit-token", "x-doc-password", "x-doc-access", "access"})
NULLABLE_TEXT = {"type": ["string", "null"]}
# An embedding space, as /healthz and recall name it.
SPACE = {
    "type": ["object", "null"],
    "required": ["model", "dim"],
    "properties": {"model": {"type": "string"}, "dim": {"type": "integer"}},
}


def obj(required: Iterable[str] = (), /, **properties: dict[str, Any]) -> dict[str, Any]:
    """A JSON object schema with these properties; more may appear (responses grow)."""
    return {"type": "object", "required": list(required), "properties": properties}


def body_schema(required: Iterable[str] = (), /, **properties: dict[str, Any]) -> dict[str, Any]:
    """A request body schema: exactly these fields (the route refuses any other by name)."""
    return {**obj(required, **properties), "additionalProperties": False}


def json_response(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def page_response(description: str) -> dict[str, Any]:
    """A page: HTML for a browser, markdown for an AI fetcher (Accept: text/markdown)."""
    return {"description": description, "content": {"text/html": {"schema": TEXT}, "text/markdown": {"schema": TEXT}}}


def markdown_page(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/markdown": {"schema": TEXT}}}


@dataclass
class Operation:
    """What one endpoint documents. `body`: a JSON request body schema; `form`: a form body
    (media type, schema); `path`: schemas of path parameters (default: a string);
    `query`/`headers`: optional parameters; `page`: errors may come as pages too; `limited`:
    rate-limited without any credential (re-index requests)."""

    summary: str
    responses: dict[int, dict[str, Any]]
    errors: tuple[int, ...] = ()
    body: dict[str, Any] | None = None
    form: tuple[str, dict[str, Any]] | None = None
    path: dict[str, dict[str, Any]] = field(default_factory=dict[str, Any])
    query: dict[str, dict[str, Any]] = field(default_factory=dict[str, Any])
    headers: dict[str, dict[str, Any]] = field(default_factory=dict[str, Any])
    auth: bool = False
    limited: bool = False
    page: bool = False
    tag: str = "api"
    description: str = ""


def operation(summary: str, *, responses: dict[int, dict[str, Any]], **details: Any) -> Callable[[E], E]:
    """Decorate an endpoint with its part of the contract (see Operation)."""
    op = Operation(summary=summary, responses=responses, **details)

    def attach(endpoint: E) -> E:
        endpoint.openapi = op  # type: ignore[attr-defined]  # read back by build_spec
        return endpoint

    return attach


def _methods(route: Route) -> list[str]:
    return sorted(m for m in (route.methods or ()) if m != "HEAD")


def undocumented(routes: Iterable[BaseRoute]) -> list[str]:
    """ "METHOD /path" of every route whose endpoint carries no @operation."""
    return [
        f"{method} {route.path}"
        for route in routes
        if isinstance(route, Route)
        for method in _methods(route)
        if not isinstance(getattr(route.endpoint, "openapi", None), Operation)
    ]


def _error_response(status: int, page: bool) -> dict[str, Any]:
    content = {"application/json": {"schema": ERROR}}
    if page:
        content.update({"text/html": {"schema": TEXT}, "text/markdown": {"schema": TEXT}})
    response = {"description": _ERROR_TEXT.get(status, "Error"), "content": content}
    if status in (429, 503):
        response["headers"] = {
            "Retry-After": {"description": "seconds to wait before retrying", "schema": {"type": "integer"}}
        }
    return response


def _parameters(route: Route, op: Operation) -> list[dict[str, Any]]:
    params = [
        {"name": name, "in": "path", "required": True, "schema": op.path.get(name, TEXT)}
        for name in re.findall(r"{(\w+)(?::\w+)?}", route.path)
    ]
    params += [{"name": name, "in": "query", "required": False, "schema": schema} for name, schema in op.query.items()]
    params += [
        {"name": name, "in": "header", "required": False, "schema": schema} for name, schema in op.headers.items()
    ]
    return params


def _error_statuses(route: Route, method: str, op: Operation) -> set[int]:
    """The operation's own error statuses and those every operation of its kind can answer."""
    statuses = {*op.errors, 503}
    params = {name.lower() for name in (*op.headers, *op.query)}
    password_form = op.form is not None and "password" in op.form[1].get("properties", {})
    if op.auth or op.limited or params & CREDENTIAL_PARAMS or password_form:
        statuses.add(429)
    if may_change(method, route.path):
        statuses.add(403)
    return statuses


def _operation(route: Route, method: str, op: Operation, used_ids: set[str]) -> dict[str, Any]:
    op_id = base = route.endpoint.__name__
    n = 1
    while op_id in used_ids:  # one endpoint behind several paths (a page and its .md twin)
        n += 1
        op_id = f"{base}_{n}"
    used_ids.add(op_id)
    responses = {str(status): response for status, response in op.responses.items()}
    for status in sorted(_error_statuses(route, method, op)):
        responses.setdefault(str(status), _error_response(status, op.page))
    spec: dict[str, Any] = {"operationId": op_id, "summary": op.summary, "tags": [op.tag], "responses": responses}
    if op.description:
        spec["description"] = op.description
    params = _parameters(route, op)
    if params:
        spec["parameters"] = params
    if op.body is not None:
        spec["requestBody"] = {"required": True, "content": {"application/json": {"schema": op.body}}}
    elif op.form is not None:
        media_type, schema = op.form
        spec["requestBody"] = {"required": True, "content": {media_type: {"schema": schema}}}
    if op.auth:
        spec["security"] = [{}, {"bearer": []}]
    return spec


def build_spec(routes: Iterable[BaseRoute], *, version: str = "") -> dict[str, Any]:
    """The OpenAPI 3.1 document of these routes (undocumented ones are left out)."""
    paths: dict[str, dict[str, Any]] = {}
    used_ids: set[str] = set()
    for route in routes:
        if not isinstance(route, Route):
            continue
        op = getattr(route.endpoint, "openapi", None)
        if not isinstance(op, Operation):
            continue
        path = re.sub(r"{(\w+):\w+}", r"{\1}", route.path)
        for method in _methods(route):
            paths.setdefault(path, {})[method.lower()] = _operation(route, method, op, used_ids)
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Memory.Wiki",
            "version": version or "0",
            "description": "Markdown pages at permanent URLs, hubs, bundles and hybrid recall.",
        },
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR_SCHEMA},
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "a hub's owner token (mwo_...), a doc's edit token (mwe_...) or access token",
                }
            },
        },
    }
