"""`memorywiki install` / `uninstall`: the /memory.wiki files and the MCP registration for each
coding tool. installer.py orchestrates; manifest.py records what was written (and spots edits);
skill_files.py, aider_conf.py and mcp_config.py write each kind of thing; launch.py says how an
outside process starts memorywiki."""

from .installer import detect_codex_version, install, list_installed, uninstall
from .locations import SCOPES
from .manifest import Action, InstallError, manifest_path
from .mcp_config import mcp_command, mcp_config_path, mcp_registration, write_mcp_registration

__all__ = [
    "SCOPES",
    "Action",
    "InstallError",
    "detect_codex_version",
    "install",
    "list_installed",
    "manifest_path",
    "mcp_command",
    "mcp_config_path",
    "mcp_registration",
    "uninstall",
    "write_mcp_registration",
]
