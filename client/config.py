"""The client config file shared by the CLI and the MCP server: server URL, default hub,
owner and edit tokens.

Location: ``$MEMORYWIKI_CONFIG`` if set, else ``$XDG_CONFIG_HOME/memorywiki/config.toml``,
else ``$HOME/.config/memorywiki/config.toml``. Format::

    server = "http://127.0.0.1:8000"
    hub = "myhub"            # default hub
    [hubs.myhub]
    owner_token = "..."
    url = "http://127.0.0.1:8000/hub/myhub"
    [docs."<doc id>"]
    edit_token = "..."
    url = "..."
    hub = "myhub"

The file holds secrets, so it is written with mode 0600 (atomically, via a temp file).
Precedence for the server URL: ``--url`` flag > ``$MEMORYWIKI_URL`` > ``server`` > default;
``hub create`` and ``hub use`` record the server they talked to as ``server``.
``$MEMORYWIKI_TOKEN`` overrides any token read from the file; ``$MEMORYWIKI_HUB`` overrides
the default hub.
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from .errors import NO_HUB, MemoryWikiError

DEFAULT_SERVER = "http://127.0.0.1:8000"


def config_path() -> Path:
    explicit = os.environ.get("MEMORYWIKI_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG spec says relative values are ignored
        base = Path(xdg)
    else:
        home = os.environ.get("HOME")
        base = (Path(home) if home else Path.home()) / ".config"
    return base / "memorywiki" / "config.toml"


@dataclass(frozen=True)
class Credential:
    """A token to send and where it came from, so a refusal can say which token was tried.

    ``guess`` marks the default hub's owner token tried for a doc the config knows nothing
    about: when the server refuses it, the truth is that no token for that doc is configured.
    """

    token: str | None
    origin: str | None = None
    guess: bool = False


NO_CREDENTIAL = Credential(None)


@dataclass
class Config:
    path: Path
    data: dict[str, Any] = field(default_factory=dict)

    # ---- load / save -------------------------------------------------------------------

    @classmethod
    def load(cls, path: Path | None = None) -> Config:
        path = path or config_path()
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return cls(path, {})
        except OSError as exc:
            raise MemoryWikiError(f"cannot read config file {path}: {exc.strerror or exc}") from None
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise MemoryWikiError(f"config file {path} is not valid TOML: {exc}") from None
        return cls(path, data)

    def save(self) -> None:
        path = self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".toml", dir=path.parent)
            try:
                os.fchmod(fd, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(tomli_w.dumps(self.data).encode("utf-8"))
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
            os.chmod(path, 0o600)
        except OSError as exc:
            raise MemoryWikiError(f"cannot write config file {path}: {exc.strerror or exc}") from None

    # ---- server ------------------------------------------------------------------------

    def server(self, flag: str | None = None) -> tuple[str, str]:
        """The server URL and where it came from (the flag, the environment, this file or the
        default), so an unreachable server can be named with the setting to change."""
        if flag:
            url, origin = flag, "from --server"
        elif os.environ.get("MEMORYWIKI_URL"):
            url, origin = os.environ["MEMORYWIKI_URL"], "from $MEMORYWIKI_URL"
        elif self.data.get("server"):
            url, origin = self.data["server"], f"from `server` in {self.path}"
        else:
            url, origin = DEFAULT_SERVER, "the default: no --server, $MEMORYWIKI_URL or `server` in the config"
        url = str(url).strip().rstrip("/")
        if "://" not in url:
            url = "http://" + url
        return url, origin

    def server_url(self, flag: str | None = None) -> str:
        return self.server(flag)[0]

    def remember_server(self, url: str) -> None:
        """Keep the server a hub was created or chosen on, so later commands in any shell talk
        to it without the flag or the variable."""
        self.data["server"] = url

    # ---- hubs --------------------------------------------------------------------------

    @property
    def hubs(self) -> dict[str, Any]:
        hubs = self.data.get("hubs")
        return hubs if isinstance(hubs, dict) else {}

    @property
    def docs(self) -> dict[str, Any]:
        docs = self.data.get("docs")
        return docs if isinstance(docs, dict) else {}

    def default_hub(self) -> str | None:
        return os.environ.get("MEMORYWIKI_HUB") or self.data.get("hub") or None

    def resolve_hub(self, flag: str | None) -> str | None:
        return (flag or "").strip() or self.default_hub()

    def require_hub(self, flag: str | None) -> str:
        hub = self.resolve_hub(flag)
        if not hub:
            raise MemoryWikiError(
                "no hub given: pass a hub slug, create one with `memorywiki hub create SLUG`, "
                "or use one you hold the owner token of with `memorywiki hub use SLUG --token TOKEN`",
                NO_HUB,
            )
        return hub

    def hub_credential(self, slug: str | None) -> Credential:
        """$MEMORYWIKI_TOKEN, else the owner token stored for hub ``slug``."""
        env = os.environ.get("MEMORYWIKI_TOKEN")
        if env:
            return Credential(env, "$MEMORYWIKI_TOKEN")
        entry = self.hubs.get(slug) if slug else None
        if isinstance(entry, dict) and entry.get("owner_token"):
            return Credential(entry["owner_token"], f"the owner token saved for hub {slug!r} in {self.path}")
        return NO_CREDENTIAL

    def hub_token(self, slug: str | None) -> str | None:
        return self.hub_credential(slug).token

    def remember_hub(self, slug: str, owner_token: str | None, url: str | None) -> bool:
        """Store a hub (its owner token when given; values not given keep what was stored);
        make it the default hub if there is none. True if it became the default."""
        hubs = self.data.setdefault("hubs", {})
        old = hubs.get(slug)
        entry: dict[str, str] = dict(old) if isinstance(old, dict) else {}
        if owner_token:
            entry["owner_token"] = owner_token
        if url:
            entry["url"] = url
        hubs[slug] = entry
        if not self.data.get("hub"):
            self.data["hub"] = slug
            return True
        return False

    def set_default_hub(self, slug: str) -> None:
        self.data["hub"] = slug

    # ---- docs --------------------------------------------------------------------------

    def remember_doc(self, doc_id: str, edit_token: str | None, url: str | None, hub: str | None) -> None:
        """Record a doc; values not given (e.g. no edit token on a re-capture) keep what was stored."""
        docs = self.data.setdefault("docs", {})
        old = docs.get(str(doc_id))
        entry: dict[str, str] = dict(old) if isinstance(old, dict) else {}
        if edit_token:
            entry["edit_token"] = edit_token
        if url:
            entry["url"] = url
        if hub:
            entry["hub"] = hub
        docs[str(doc_id)] = entry

    def forget_doc(self, doc_id: str) -> bool:
        docs = self.data.get("docs")
        if isinstance(docs, dict) and str(doc_id) in docs:
            del docs[str(doc_id)]
            return True
        return False

    def doc_entry(self, doc_id: str) -> dict[str, Any]:
        entry = self.docs.get(str(doc_id))
        return entry if isinstance(entry, dict) else {}

    def doc_credential(self, doc_id: str) -> Credential:
        """The token to act on a doc: $MEMORYWIKI_TOKEN, its edit token, its hub's owner token,
        else (a guess) the default hub's owner token."""
        env = os.environ.get("MEMORYWIKI_TOKEN")
        if env:
            return Credential(env, "$MEMORYWIKI_TOKEN")
        entry = self.doc_entry(doc_id)
        if entry.get("edit_token"):
            return Credential(entry["edit_token"], f"the edit token saved for doc {doc_id} in {self.path}")
        if entry.get("hub"):
            cred = self.hub_credential(entry["hub"])
            if cred.token:
                return cred
        default = self.default_hub()
        cred = self.hub_credential(default)
        if cred.token:
            return Credential(cred.token, f"the owner token of your default hub {default!r}", guess=True)
        return NO_CREDENTIAL

    def restore_credential(self, doc_id: str) -> Credential:
        """The token to restore a doc's version: like doc_credential, but its hub's owner
        token before its edit token, since only the owner may bring back a deleted doc."""
        entry = self.doc_entry(doc_id)
        if not os.environ.get("MEMORYWIKI_TOKEN") and entry.get("hub"):
            cred = self.hub_credential(entry["hub"])
            if cred.token:
                return cred
        return self.doc_credential(doc_id)

    def doc_token(self, doc_id: str) -> str | None:
        return self.doc_credential(doc_id).token
