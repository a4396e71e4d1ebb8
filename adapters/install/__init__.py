"""`memorywiki install` / `uninstall`: the /memory.wiki files and the MCP registration for each
coding tool. installer.py orchestrates; manifest.py records what was written (and spots edits);
skill_files.py, aider_conf.py, mcp_config.py and hook_config.py write each kind of thing; launch.py says how an
outside process starts memorywiki."""

from .hook_config import SUPPORTS as HOOK_SUPPORT
from .hook_config import hooks_path, install_hooks
from .installer import detect_codex_version, install, list_installed, uninstall
from .locations import SCOPES
from .manifest import Action, InstallError, manifest_path
from .mcp_config import mcp_command, mcp_config_path, mcp_registration, write_mcp_registration

__all__ = [
    "HOOK_SUPPORT",
    "SCOPES",
    "Action",
    "InstallError",
    "detect_codex_version",
    "hooks_path",
    "install",
    "install_hooks",
    "list_installed",
    "manifest_path",
    "mcp_command",
    "mcp_config_path",
    "mcp_registration",
    "uninstall",
    "write_mcp_registration",
]
