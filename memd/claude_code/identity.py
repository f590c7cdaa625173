"""A project's identity across machines: the same repository, the same name.

The agent keys memory by the munged absolute path of the git root, so one
repository has unrelated memory directories on a Linux box, a Mac and in a
container. Personal sync (`memd.sync`) stores a project's memory under
``projects/<identity>/`` instead, where the identity is, in this order:

1. an explicit ``[sync.projects]`` entry for the project (pins or renames);
2. the remote URL (``origin``, else the first remote by name), normalised by
   `normalize_remote_url`: ``git@host:org/app.git``, ``ssh://git@host/org/app``
   and ``https://user:token@host/org/app.git`` all become ``host/org/app``;
3. the root commit: ``commit/<hash>`` (the smallest, when history has several);
4. none: the project is not synced, and `memd sync status` says why.

Normalisation rules (documented in docs/sync.md): credentials and the user
name are dropped, never kept; the host and the path are lower-cased (GitHub,
GitLab and Bitbucket treat them case-insensitively); the port is dropped (it
picks a protocol's endpoint, not a repository); trailing slashes and one
``.git`` suffix go; characters outside ``[a-z0-9._-]`` become ``-``. Local
paths and ``file://`` URLs name a directory on one machine, not a repository,
and give no identity. Every identity passes `is_identity`, the path rule of a
folder under ``projects/``: no empty, ``.`` or ``..`` component, none that
starts with a dot, nothing outside the charset.

Pure: the caller (`memd.sync.identity`) runs git and reads config.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

_ALLOWED = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")
_URL_SCHEMES = frozenset(
    {"ssh", "git+ssh", "ssh+git", "git", "http", "https", "ftp", "ftps"}
)
MAX_IDENTITY_CHARS = 200
MAX_COMPONENTS = 12
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True)
class ProjectIdentity:
    """A project's identity and where it came from.

    `source` is ``config`` (a ``[sync.projects]`` entry), ``remote:<name>``
    or ``root-commit``; `detail` is what it was derived from (the remote URL
    with its credentials removed, the commit hash, the config key).
    """

    identity: str
    source: str
    detail: str


def is_identity(text: str) -> bool:
    """Return True when `text` is usable as the folder ``projects/<text>/``."""
    if not text or len(text) > MAX_IDENTITY_CHARS:
        return False
    parts = text.split("/")
    return len(parts) <= MAX_COMPONENTS and all(
        part and not part.startswith(".") and set(part) <= _ALLOWED for part in parts
    )


def _component(text: str) -> str:
    return "".join(c if c in _ALLOWED else "-" for c in text.lower())


def _split_url(url: str) -> tuple[str, str] | None:
    """Return (host, path) of a remote URL, or None for a local path."""
    scheme, sep, rest = url.partition("://")
    if sep:
        if scheme.lower() not in _URL_SCHEMES:
            return None  # file://, a remote helper (`hg::...`): not a repository name
        authority, _, path = rest.partition("/")
        host = authority.rpartition("@")[2]  # userinfo never kept
        if host.startswith("["):  # [::1]:22
            host = host[1:].partition("]")[0]
        else:
            host = host.partition(":")[0]
        return host, path
    if url.startswith(("/", ".", "~", "\\")) or ":" not in url:
        return None
    # scp-like [user@]host:path; "C:\\x" and "C:/x" are Windows paths.
    before, _, path = url.partition(":")
    if "/" in before or "\\" in before or len(before) == 1:
        return None
    return before.rpartition("@")[2], path


def normalize_remote_url(url: str) -> str | None:
    """Return ``host/org/app`` for a remote URL, or None when it names no repository.

    >>> normalize_remote_url("https://user:token@GitHub.com:443/Org/App.git/")
    'github.com/org/app'
    """
    split = _split_url(url.strip())
    if split is None:
        return None
    host, path = split
    path = path.replace("\\", "/").strip("/")
    path = path.removeprefix("~/").strip("/")
    if path.lower().endswith(".git"):
        path = path[:-4].rstrip("/")
    parts = [_component(part) for part in path.split("/") if part]
    host = _component(host)
    identity = "/".join([host, *parts])
    return identity if parts and host and is_identity(identity) else None


def choose_identity(
    *,
    configured: str | None,
    configured_key: str = "",
    remotes: Mapping[str, str],
    root_commits: tuple[str, ...],
) -> ProjectIdentity | None:
    """Return the identity the rules above give, or None when nothing does.

    `remotes` maps remote name -> URL; `root_commits` are the hashes
    ``git rev-list --max-parents=0 HEAD`` printed. A configured identity that
    breaks `is_identity` is ignored here (config loading reports it).
    """
    if configured is not None and is_identity(configured):
        return ProjectIdentity(configured, "config", configured_key)
    names = sorted(remotes, key=lambda name: (name != "origin", name))
    for name in names:
        identity = normalize_remote_url(remotes[name])
        if identity is not None:
            return ProjectIdentity(identity, f"remote:{name}", _redact(remotes[name]))
    commits = sorted(c for c in root_commits if len(c) == 40 and set(c) <= _HEX)
    if commits:
        return ProjectIdentity(f"commit/{commits[0]}", "root-commit", commits[0])
    return None


def _redact(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest.partition("/")[0]:
        return url
    authority, slash, path = rest.partition("/")
    return f"{scheme}://***@{authority.rpartition('@')[2]}{slash}{path}"
