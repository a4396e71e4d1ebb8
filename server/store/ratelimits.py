"""SQL for the rate limits every server on one database shares (migrations/0170_shared_limits.sql):
a moving window of counted attempts per (kind, key), kept in the unlogged table rate_hits."""

from __future__ import annotations

from .connection import Conn, one_row

# The key's attempts within the window, and when the oldest of them leaves it (NULL: none).
WINDOW = """
SELECT count(*) AS used, extract(epoch FROM min(at) + make_interval(secs => %(window)s) - clock_timestamp()) AS frees_in
FROM rate_hits WHERE kind = %(kind)s AND key = %(key)s AND at > clock_timestamp() - make_interval(secs => %(window)s)
"""


async def used(conn: Conn, kind: str, key: str, window: float) -> tuple[int, float]:
    """Attempts counted in the window, and seconds until the oldest of them leaves it (0: none)."""
    row = await one_row(conn, WINDOW, {"kind": kind, "key": key, "window": window})
    return int(row["used"]), float(row["frees_in"] or 0.0)


async def hit(conn: Conn, kind: str, key: str, window: float, amount: int) -> tuple[bool, float]:
    """Count one attempt if the window has room: (whether it had, seconds until it has room
    again). Must run in a transaction: the advisory lock on the key is held until it ends, so
    servers racing on one key take turns and never both spend the last unit."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 170))", (f"{kind} {key}",))
    await conn.execute(
        "DELETE FROM rate_hits WHERE kind = %s AND key = %s AND at <= clock_timestamp() - make_interval(secs => %s)",
        (kind, key, window),
    )
    count, frees_in = await used(conn, kind, key, window)
    if count >= amount:
        return False, frees_in
    await conn.execute("INSERT INTO rate_hits (kind, key) VALUES (%s, %s)", (kind, key))
    return True, 0.0


async def prune(conn: Conn, longest_window: float) -> int:
    """Drop attempts older than every window (keys never hit again keep none for long)."""
    cur = await conn.execute(
        "DELETE FROM rate_hits WHERE at <= clock_timestamp() - make_interval(secs => %s)", (longest_window,)
    )
    return cur.rowcount
