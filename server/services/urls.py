"""The public URLs of pages, built from the server's base URL (the web layer knows it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Urls:
    base: str  # no trailing slash
    hosts: tuple[str, ...] = ("",)  # hosts a link to this server may name ('' is a relative link)

    def doc(self, doc_id: str) -> str:
        return f"{self.base}/{doc_id}"

    def hub(self, slug: str) -> str:
        return f"{self.base}/hub/{slug}"

    def bundle(self, bundle_id: str) -> str:
        return f"{self.base}/b/{bundle_id}"
