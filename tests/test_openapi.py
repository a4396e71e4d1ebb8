"""The HTTP contract at /openapi.json is true to the router.

Each route documents itself with `@operation` (server/web/openapi.py); these tests fail when a
route has none, when a JSON body schema lists other fields than the route accepts, or when
a real answer does not fit its documented schema. Schema-driven fuzzing of the live server
is tests/test_fuzz.py.
"""

from __future__ import annotations

import re

import pytest
from jsonschema import Draft202012Validator
from memorywiki.server.app import create_app
from memorywiki.server.web.openapi import undocumented
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from starlette.routing import Route


def _router_operations(app) -> set[tuple[str, str]]:
    return {
        (method.lower(), route.path)
        for route in app.routes
        if isinstance(route, Route)
        for method in route.methods or ()
        if method != "HEAD"
    }


def test_every_route_is_in_the_document_and_nothing_else(client):
    app = create_app()
    assert undocumented(app.routes) == [], (
        "decorate these endpoints with @operation (server/web/openapi.py), beside the route"
    )
    spec = client.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.1")
    documented = {(method, path) for path, methods in spec["paths"].items() for method in methods}
    assert documented == _router_operations(app)
    ids = [op["operationId"] for methods in spec["paths"].values() for op in methods.values()]
    assert len(ids) == len(set(ids))
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            assert op["summary"], (method, path)
            named = {p["name"] for p in op.get("parameters", ()) if p["in"] == "path"}
            assert named == set(re.findall(r"{(\w+)}", path)), (method, path)
            errors = {status for status in op["responses"] if status.startswith(("4", "5"))}
            assert "503" in errors, (method, path)  # the database can always be down
            for status in errors:
                content = op["responses"][status]["content"]
                if "application/json" in content or "text/html" not in content:  # not the password form
                    assert content["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}


def test_the_document_is_valid_openapi_3_1(client):
    import schemathesis

    schema = schemathesis.openapi.from_dict(client.get("/openapi.json").json())
    assert len(list(schema.get_all_operations())) == len(_router_operations(create_app()))


@pytest.fixture
def world(client):
    r = client.post("/api/hubs", json={"slug": "main"})
    owner = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    doc = client.post(
        "/api/docs",
        json={"title": "Kept", "markdown": "narwhal tusk\n", "hub": "main", "allowed_emails": ["a@b.co"]},
        headers=owner,
    ).json()
    bundle = client.post(
        "/api/bundles", json={"hub": "main", "title": "B", "doc_ids": [doc["id"]]}, headers=owner
    ).json()
    return {"owner": owner, "doc": doc["id"], "bundle": bundle["id"]}


def _fill(path: str, world: dict) -> str:
    """Real ids for the path parameters this world has; a well-formed unknown id for any other."""
    known = {"slug": "main", "doc_id": world["doc"], "bundle_id": world["bundle"], "kind": "chatgpt"}
    return re.sub(r"{(\w+)}", lambda m: known.get(m.group(1), "zzzzzzzzzz"), path)


def test_json_body_schemas_list_exactly_the_fields_each_route_accepts(client, world):
    """The route's own refusal of an unknown field names what it accepts: the schema must agree."""
    spec = client.get("/openapi.json").json()
    # signing in is CSRF-checked whatever the request carries: send a page's token, as the page does
    page = client.get("/hub/main/signin", headers={"Accept": "text/html"}).text
    csrf = re.search(r'<meta name="csrf-token" content="([^"]+)"', page).group(1)
    checked = 0
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body is None:
                continue
            r = client.request(
                method.upper(),
                _fill(path, world),
                json={"zz_not_a_field": 1},
                headers={**world["owner"], "X-CSRF-Token": csrf},
            )
            assert r.status_code == 400 and r.json()["error"]["code"] == "unknown_field", (method, path, r.text)
            schema = body["schema"]
            assert set(r.json()["error"]["accepted"]) == set(schema["properties"]), (method, path)
            assert schema["additionalProperties"] is False
            checked += 1
    assert checked >= 8


def _validator(spec: dict, path: str, method: str, status: int, media_type: str) -> Draft202012Validator:
    registry = Registry().with_resource("urn:mw", Resource.from_contents(spec, default_specification=DRAFT202012))
    pointer = "/".join(
        part.replace("~", "~0").replace("/", "~1")
        for part in ("paths", path, method, "responses", str(status), "content", media_type, "schema")
    )
    return Draft202012Validator({"$ref": f"urn:mw#/{pointer}"}, registry=registry)


def test_real_answers_fit_their_documented_schemas(client, world):
    spec = client.get("/openapi.json").json()
    doc = world["doc"]
    calls = [
        ("get", "/healthz", "/healthz", None, {}),
        ("post", "/api/hubs", "/api/hubs", {"slug": "second"}, {}),
        ("get", "/api/hub/{slug}", "/api/hub/main", None, {}),
        ("get", "/api/hub/{slug}", "/api/hub/main?per_page=1", None, {}),
        ("get", "/api/hub/{slug}", "/api/hub/main?per_page=0", None, {}),
        ("patch", "/api/hub/{slug}", "/api/hub/main", {"listed": True, "description": "d"}, world["owner"]),
        ("get", "/api/hub/{slug}/graph", "/api/hub/main/graph", None, {}),
        ("get", "/api/social/cross-refs", f"/api/social/cross-refs?doc={doc}", None, {}),
        ("get", "/api/social/cross-refs", "/api/social/cross-refs?hub=main", None, {}),
        ("get", "/api/social/cross-refs", "/api/social/cross-refs", None, {}),
        ("post", "/api/render", "/api/render", {"markdown": "# T\n\n## Part\n\ntext\n"}, {}),
        ("post", "/api/docs", "/api/docs", {"hub": "main", "markdown": "# Fresh\n\nnew text\n"}, world["owner"]),
        ("post", "/api/docs", "/api/docs", {"hub": "main", "markdown": "# Fresh\n\nnew text\n"}, world["owner"]),
        ("get", "/api/docs/{doc_id}", f"/api/docs/{doc}", None, world["owner"]),
        ("patch", "/api/docs/{doc_id}", f"/api/docs/{doc}", {"title": "Renamed"}, world["owner"]),
        ("post", "/api/docs/{doc_id}/access", f"/api/docs/{doc}/access", {"email": "a@b.co"}, world["owner"]),
        ("get", "/api/docs/{doc_id}/versions", f"/api/docs/{doc}/versions", None, world["owner"]),
        ("get", "/api/docs/{doc_id}/versions/{version}", f"/api/docs/{doc}/versions/1", None, world["owner"]),
        ("get", "/api/docs/{doc_id}/versions/{version}", f"/api/docs/{doc}/versions/x1", None, world["owner"]),
        ("post", "/api/docs/{doc_id}/restore", f"/api/docs/{doc}/restore", {"version": 1}, world["owner"]),
        ("post", "/api/docs/{doc_id}/restore", f"/api/docs/{doc}/restore", {"version": 99}, world["owner"]),
        ("post", "/api/hub/{slug}/recall", "/api/hub/main/recall", {"question": "narwhal", "level": "doc"}, {}),
        ("post", "/api/bundles", "/api/bundles", {"hub": "main", "title": "Second"}, world["owner"]),
        ("get", "/api/docs/{doc_id}", "/api/docs/zzzzzzzzzzzz", None, {}),
        ("post", "/api/hub/{slug}/recall", "/api/hub/nowhere/recall", {"question": "x"}, {}),
        ("delete", "/api/docs/{doc_id}", f"/api/docs/{doc}", None, world["owner"]),
        ("post", "/api/docs/{doc_id}/restore", f"/api/docs/{doc}/restore", {"version": 2}, world["owner"]),
    ]
    for method, template, url, body, headers in calls:
        r = client.request(method.upper(), url, json=body, headers=headers)
        documented = spec["paths"][template][method]["responses"]
        assert str(r.status_code) in documented, (method, url, r.status_code)
        errors = sorted(
            _validator(spec, template, method, r.status_code, "application/json").iter_errors(r.json()), key=str
        )
        assert not errors, (method, url, [e.message for e in errors])


def test_rate_limit_and_csrf_refusals_are_documented_where_they_happen(make_client, world):
    """A 429 (a client that spent its refused-token budget) and a 403 csrf_failed (an API post
    carrying the session cookie but no X-CSRF-Token) are answers of the routes that give them, in the spec."""
    client = make_client(rate_token_failures="2/minute")
    spec = client.get("/openapi.json").json()
    owner = client.post("/api/hubs", json={"slug": "limits"}).json()["owner_token"]
    doc = client.post(
        "/api/docs",
        json={"hub": "limits", "markdown": "# Held\n\ntext\n", "is_draft": True},
        headers={"Authorization": f"Bearer {owner}"},
    ).json()["id"]
    wrong = {"Authorization": "Bearer mwe_wrong"}
    statuses = [client.get(f"/api/docs/{doc}/versions", headers=wrong).status_code for _ in range(3)]
    assert statuses[-1] == 429, statuses
    limited = client.post(f"/api/docs/{doc}/restore", json={"version": 1}, headers=wrong)
    assert limited.status_code == 429 and limited.headers["retry-after"]
    for template, method, r in [
        ("/api/docs/{doc_id}/versions", "get", client.get(f"/api/docs/{doc}/versions", headers=wrong)),
        ("/api/docs/{doc_id}/restore", "post", limited),
    ]:
        documented = spec["paths"][template][method]["responses"]
        assert str(r.status_code) in documented and "Retry-After" in documented["429"]["headers"]
        assert not list(_validator(spec, template, method, 429, "application/json").iter_errors(r.json()))
    forged = client.post("/api/hubs", json={"slug": "forged"}, headers={"Cookie": "mw_session=" + "a" * 40})
    assert forged.status_code == 403 and forged.json()["error"]["code"] == "csrf_failed"
    assert "403" in spec["paths"]["/api/hubs"]["post"]["responses"]
    assert "429" not in spec["paths"]["/healthz"]["get"]["responses"]  # nothing there checks a credential


def test_the_api_page_lists_every_route_with_no_script(client):
    page = client.get("/api/reference", headers={"Accept": "text/html"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    spec = client.get("/openapi.json").json()
    for path, methods in spec["paths"].items():
        for method in methods:
            assert f"{method.upper()} {path}" in page.text
    assert "<script" not in page.text.lower()
    assert not re.search(r"""(src|href)=["']https?://""", page.text)  # nothing from a CDN
    markdown = client.get("/api/reference", headers={"Accept": "text/markdown"})
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert "## POST /api/hub/{slug}/recall" in markdown.text and "`question` (string, required)" in markdown.text
