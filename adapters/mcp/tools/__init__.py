"""The MCP tools, one module each: its title, annotations and handler, a thin layer over
memorywiki.client.operations. ``TOOLS`` is the order the server lists them in."""

from . import (
    capture,
    create_bundle,
    delete_bundle,
    digest,
    doc_history,
    hub_url,
    list_docs,
    read_doc,
    recall,
    related,
    restore_doc,
    suggest_bundles,
    update_doc,
)

TOOLS = (
    recall,
    capture,
    read_doc,
    update_doc,
    doc_history,
    restore_doc,
    list_docs,
    hub_url,
    create_bundle,
    delete_bundle,
    related,
    digest,
    suggest_bundles,
)
