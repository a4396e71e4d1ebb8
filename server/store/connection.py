"""The connection the store's functions take: psycopg's, its rows as dicts (the pools' row factory)."""

from __future__ import annotations

from typing import Any, TypeAlias

import psycopg
from psycopg import sql
from psycopg.abc import Params
from psycopg.rows import DictRow

Conn: TypeAlias = psycopg.AsyncConnection[DictRow]
# a connection opened outside the pools, rows as tuples, which a few functions take as well
AnyConn: TypeAlias = psycopg.AsyncConnection[Any]


async def one_row(conn: Conn, query: str | sql.SQL | sql.Composed, params: Params | None = None) -> DictRow:
    """The row a statement always returns (an aggregate, `INSERT ... RETURNING` of a row it
    inserts): a missing one is a bug, not an answer."""
    row = await (await conn.execute(query, params)).fetchone()
    if row is None:
        raise RuntimeError("the statement returned no row")
    return row
