"""One error model: the tree, its one handler, and converter errors mapped in one place."""

from __future__ import annotations

import io
import zipfile

import pytest
from memorywiki.formats import FormatError
from memorywiki.server import errors
from memorywiki.server.errors import ApiError
from memorywiki.server.web.errors import EXCEPTION_HANDLERS
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient


def app_raising(exc: Exception) -> TestClient:
    async def endpoint(request):
        raise exc

    app = Starlette(routes=[Route("/boom", endpoint)], exception_handlers=EXCEPTION_HANDLERS)
    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize(
    "exc, status, body",
    [
        (
            ApiError(409, "hub_taken", "hub 'a' already exists"),
            409,
            {"code": "hub_taken", "message": "hub 'a' already exists"},
        ),
        (
            ApiError(400, "unknown_field", "unknown field 'top_k'", unknown=["top_k"], accepted=["k"]),
            400,
            {"code": "unknown_field", "message": "unknown field 'top_k'", "unknown": ["top_k"], "accepted": ["k"]},
        ),
        (
            errors.NotFound("unknown_hub", "hub 'x' does not exist"),
            404,
            {"code": "unknown_hub", "message": "hub 'x' does not exist"},
        ),
        (
            errors.TooLarge("too_large", "upload is over 50 MB"),
            413,
            {"code": "too_large", "message": "upload is over 50 MB"},
        ),
        (
            FormatError("bad_json", "conversations.json is not JSON."),
            422,
            {"code": "bad_json", "message": "conversations.json is not JSON."},
        ),
        (RuntimeError("secret detail"), 500, {"code": "internal", "message": "internal server error"}),
    ],
)
def test_every_error_is_one_json_shape(exc, status, body):
    response = app_raising(exc).get("/boom")
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": body}


def test_the_tree_fixes_each_status():
    expected = {
        "BadRequest": 400,
        "Unauthorized": 401,
        "Forbidden": 403,
        "NotFound": 404,
        "Conflict": 409,
        "LengthRequired": 411,
        "TooLarge": 413,
        "UnsupportedType": 415,
        "Unprocessable": 422,
        "Unavailable": 503,
    }
    for name, status in expected.items():
        error = getattr(errors, name)("some_code", "words")
        assert isinstance(error, ApiError) and (error.status, error.code, error.message) == (
            status,
            "some_code",
            "words",
        )


def test_a_converter_error_during_an_import_keeps_its_code(client):
    """A broken export inside a zip: the pure converter's FormatError reaches the client as 422."""
    token = client.post("/api/hubs", json={"slug": "imp"}).json()["owner_token"]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("conversations.json", "[{not json")
    response = client.post(
        "/api/import/chatgpt",
        data={"hub": "imp"},
        files={"file": ("export.zip", buf.getvalue(), "application/zip")},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "bad_json" and "0 conversations were saved before this" in error["message"]
