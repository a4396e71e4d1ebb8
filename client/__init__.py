"""The one client of the Memory.Wiki HTTP contract: the HTTP client, the config file with its
tokens, the error model, section editing and the operations (operations/) the CLI and the MCP
server both call. It never imports the server."""

from .config import Config, Credential
from .errors import ApiError, MemoryWikiError
from .http import Client
from .refs import access_from, doc_id_from

__all__ = ["ApiError", "Client", "Config", "Credential", "MemoryWikiError", "access_from", "doc_id_from"]
