"""What the tool modules share: the hub argument, the result shape, and how a tool becomes
one the SDK can register (bound to the server's MemoryWiki, every failure a tool error)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from memorywiki.client import ApiError, MemoryWikiError
from pydantic import Field

from ..context import MemoryWiki

HubArg = Annotated[
    str | None,
    Field(description="Hub slug. Omit to use the user's default hub from their Memory.Wiki config."),
]


def result(text: str, data: Mapping[str, Any]) -> CallToolResult:
    """Readable text for the model plus the same facts as structured content."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=dict(data))


def tool_error(exc: Exception) -> ToolError:
    """The message the model reads: the server's code and status for an HTTP error."""
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, ApiError):
        code = f" {exc.code}" if exc.code else ""
        return ToolError(f"HTTP {exc.status}{code}: {exc.message}")
    if isinstance(exc, MemoryWikiError):
        return ToolError(exc.message)
    return ToolError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


def bind(handler: Callable[..., CallToolResult], mw: MemoryWiki, annotations: ToolAnnotations) -> Callable[..., Any]:
    """``handler(mw, **arguments)`` as the SDK's tool: its signature without ``mw`` (the SDK
    builds the input schema from it), its docstring the description. A tool that is not
    read-only needs the write token (over HTTP), checked with the ``ctx`` the SDK passes."""
    signature = inspect.signature(handler, eval_str=True)
    params = list(signature.parameters.values())[1:]
    writes = not annotations.read_only_hint
    if writes and "ctx" not in signature.parameters:
        raise TypeError(f"{handler.__name__} writes, so it takes the SDK's ctx for the write token check")

    @functools.wraps(handler)
    def tool(**kwargs: Any) -> Any:
        try:
            if writes:
                mw.require_write_token(kwargs.get("ctx"))
            return handler(mw, **kwargs)
        except Exception as exc:
            raise tool_error(exc) from None

    del tool.__wrapped__  # the SDK reads the signature below, not the handler's
    tool.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in params} | {"return": signature.return_annotation}
    tool.__doc__ = inspect.cleandoc(handler.__doc__ or "")
    return tool
