"""The app's state as the routes reach it."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from ..services.context import Context
from .csrf import CsrfTokens
from .sessions import SessionCookies


@dataclass(kw_only=True)
class AppState(Context):
    csrf: CsrfTokens
    sessions: SessionCookies


def app_state(request: Request) -> AppState:
    state: AppState = request.app.state.mw
    return state
