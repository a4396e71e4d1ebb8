"""A stand-in reranker for the latency benchmark: the Cohere-style `/rerank` API, answered at
once with word-overlap scores. It measures what the rerank stage itself adds (the candidates'
text fetched and sent, one HTTP round trip, the re-sort), not a cross-encoder's inference time,
which depends on the model and the hardware behind a real reranker: no reranker model is
available offline here, so neither its speed nor its quality can be measured on this machine.
"""

from __future__ import annotations

import re
import socket
import threading
import time

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

_WORD = re.compile(r"[a-z0-9]+")


async def _rerank(request: Request) -> JSONResponse:
    body = await request.json()
    words = set(_WORD.findall(body["query"].lower()))
    results = [
        {"index": i, "relevance_score": len(words & set(_WORD.findall(t.lower()))) / (len(words) or 1)}
        for i, t in enumerate(body["documents"])
    ]
    return JSONResponse({"results": sorted(results, key=lambda r: -r["relevance_score"])})


class RerankStub:
    def __enter__(self) -> str:
        sock = socket.socket()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("127.0.0.1", 0))
        app = Starlette(routes=[Route("/rerank", _rerank, methods=["POST"])])
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        return f"http://127.0.0.1:{sock.getsockname()[1]}/rerank"

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
