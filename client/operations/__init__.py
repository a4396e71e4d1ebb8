"""The use cases of the CLI and the MCP server, written once: typed arguments in, the server's
data (or a small dataclass around it) out, failures as the client's error tree
(:mod:`memorywiki.client.errors`). Each surface keeps only its own formatting."""

from .bundles import CreatedBundle, accept_suggestion, create_bundle, dismiss_suggestion, pages_on_topic, suggestions
from .capture import (BINARY_KINDS, EXISTS, Captured, capture_agent_session, capture_file, capture_markdown,
                      capture_url, first_h1, read_agent_session)
from .curation import digest, digest_markdown, related
from .docs import (Deleted, Restored, Updated, delete_doc, doc_markdown, history, index_bundle, index_doc, read_doc,
                   restore, undelete, update_doc, version)
from .hubs import (CreatedHub, HubUrls, add_member, all_pages, create_hub, hub_info, hub_markdown, hub_urls, members,
                   remove_member, set_hub, trash, use_hub)
from .export import ExportedHub, export_hub
from .folder_import import FolderImport, import_folder
from .imports import import_export, wait_indexed
from .recall import Level, recall
from .wiki import Wiki

__all__ = [
    "BINARY_KINDS", "EXISTS", "Captured", "CreatedBundle", "CreatedHub", "Deleted", "ExportedHub", "FolderImport",
    "HubUrls", "Level", "Restored",
    "Updated", "Wiki", "accept_suggestion", "add_member", "all_pages", "capture_agent_session", "capture_file",
    "capture_markdown", "capture_url", "create_bundle", "create_hub", "delete_doc", "digest", "digest_markdown",
    "dismiss_suggestion", "doc_markdown", "export_hub", "first_h1", "history", "hub_info", "hub_markdown", "hub_urls",
    "import_export", "import_folder", "index_bundle", "index_doc", "members", "pages_on_topic", "read_agent_session",
    "read_doc", "recall", "related", "remove_member", "restore", "set_hub",
    "suggestions", "trash", "undelete", "update_doc", "use_hub", "version", "wait_indexed",
]
