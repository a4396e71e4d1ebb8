"""llms.txt for AIs (the llms.txt convention: an H1 name, a blockquote summary, H2 sections of
`[name](url): note` links, and an `## Optional` section an AI may skip).

`/llms.txt` names the listed hubs; `/hub/{slug}/llms.txt` links every public page and bundle
of a hub to its markdown twin; `/hub/{slug}/llms-full.txt` is all of those pages in one file,
streamed a batch at a time so a large hub never sits in memory. All of it is read as the
public role.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from memorywiki.formats.doclinks import markdown_twin
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ..services import hubs
from ..web.negotiate import MARKDOWN, markdown_response
from ..web.openapi import markdown_page, operation
from ..web.render import member_body
from ..web.state import app_state
from ..web.urls import base_url, urls


def _note(text: str) -> str:
    return f": {' '.join(text.split())}" if text and text.strip() else ""


@operation(
    "llms.txt: this server's listed hubs, for an AI",
    tag="pages",
    page=True,
    responses={200: markdown_page("The index")},
)
async def site_llms(request: Request) -> Response:
    base = base_url(request)
    listed = await hubs.listed(app_state(request))
    lines = [
        "# Memory.Wiki",
        "",
        "> An AI-memory hub: markdown pages at permanent URLs, grouped into hubs and bundles. "
        "Every page is markdown at its URL plus `.md`; each hub has its own llms.txt.",
        "",
        f"This server lists {len(listed)} hub{'' if len(listed) == 1 else 's'}. Ask a hub a question with "
        f'`POST {base}/api/hub/<slug>/recall` and a JSON body `{{"question": "..."}}`.',
        "",
        "## Hubs",
        "",
    ]
    lines += [
        f"- [{h['slug']}]({base}/hub/{h['slug']}/llms.txt)"
        + _note(h["description"] or f"{h['docs']} public page{'' if h['docs'] == 1 else 's'}")
        for h in listed
    ]
    lines += [
        "",
        "## Optional",
        "",
        f"- [Hub indexes]({base}/hub/<slug>.md): a hub's pages and bundles as one markdown index",
        f"- [Home]({base}/): the same list of hubs for people",
    ]
    return markdown_response("\n".join(lines) + "\n")


def hub_llms_text(request: Request, hub: hubs.HubContents) -> str:
    url = hub["url"]
    summary = hub["description"] or (
        f"The public pages of the Memory.Wiki hub {hub['slug']}, each as markdown at its URL plus .md."
    )
    lines = [
        f"# {hub['slug']}",
        "",
        f"> {' '.join(summary.split())}",
        "",
        f"{hub['total_docs']} public page{'' if hub['total_docs'] == 1 else 's'}, newest first. "
        f"To ask this hub a question: `POST {base_url(request)}/api/hub/{hub['slug']}/recall` "
        'with `{"question": "..."}`.',
        "",
    ]
    if hub["bundles"]:
        lines += ["## Bundles", ""]
        lines += [f"- [{b['title']}]({markdown_twin(b['url'])}){_note(b['description'])}" for b in hub["bundles"]]
        lines.append("")
    lines += ["## Pages", ""]
    lines += [f"- [{d['title']}]({markdown_twin(d['url'])}){_note(d['summary'])}" for d in hub["docs"]]
    lines += [
        "",
        "## Optional",
        "",
        f"- [All pages in one file]({url}/llms-full.txt): every public page's full markdown",
        f"- [Markdown index]({url}.md): the hub as one index with front matter",
        f"- [Graph]({base_url(request)}/api/hub/{hub['slug']}/graph): semantic neighbours as JSON",
    ]
    return "\n".join(lines) + "\n"


@operation(
    "A hub's llms.txt: its public pages, one line each",
    tag="pages",
    page=True,
    errors=(404,),
    responses={200: markdown_page("The hub's index")},
)
async def hub_llms(request: Request) -> Response:
    hub = await hubs.contents(app_state(request), urls(request), request.path_params["slug"])
    return markdown_response(hub_llms_text(request, hub))


@operation(
    "A hub's llms-full.txt: every public page in full, streamed",
    tag="pages",
    page=True,
    errors=(404,),
    responses={200: markdown_page("The hub's pages")},
)
async def hub_llms_full(request: Request) -> Response:
    slug = request.path_params["slug"]
    docs = await hubs.full_text(app_state(request), slug)
    page_urls = urls(request)

    async def pages() -> AsyncIterator[str]:
        yield (
            f"# {slug}\n\n> Every public page of the hub {slug} in full, oldest first: each under its own "
            "`## Title`, its headings one level down.\n"
        )
        async for doc in docs:
            url = markdown_twin(page_urls.doc(doc["id"]))
            yield (
                f"\n---\n\n## {' '.join(doc['title'].split())}\n\n<{url}> · updated "
                f"{doc['updated_at'].date().isoformat()}\n\n{member_body(doc).strip()}\n"
            )

    return StreamingResponse(pages(), media_type=MARKDOWN, headers={"Vary": "Accept"})


routes = [
    Route("/llms.txt", site_llms, methods=["GET"]),
    Route("/hub/{slug}/llms.txt", hub_llms, methods=["GET"]),
    Route("/hub/{slug}/llms-full.txt", hub_llms_full, methods=["GET"]),
]
