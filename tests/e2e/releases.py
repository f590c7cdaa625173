"""The real Claude Code releases, installed from the npm registry and cached.

One release per profile in `memd.claude_code.profile.PROFILES`, so adding a profile
adds its release to the e2e suite. Releases up to 2.1.112 ship `cli.js` in
`@anthropic-ai/claude-code` (run on node); later ones are the native binary
in `@anthropic-ai/claude-code-linux-x64` (about 190 MB packed).

The cache is `$MEMD_E2E_CACHE`, else `~/.cache/memd-e2e` of the real user
(from the password database, not `$HOME`, which every test replaces). Each
release lives in `<package>@<version>-<sha1>/`, keyed by version and the
tarball's checksum, and is checked against the SHA-256 recorded at install.
It is never inside the repository. `npm pack` fetches the tarball (npm checks
its integrity against the registry); it is unpacked with `tarfile`, safely.

Usage, with tests/e2e/model_server.py:

    release = install_release("2.1.332")
    with ScriptedModel([tool_use("Bash", {"command": "ls"}), text("ok")]) as model:
        run = run_claude(release, "list it", env=model.env(), cwd=repo)
    assert run.returncode == 0, run.stderr
    model.requests[0].user_text()
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memd.claude_code.profile import PROFILES, parse_version
from tests.machine_lock import held

NODE_PACKAGE = "@anthropic-ai/claude-code"
NATIVE_PACKAGE = "@anthropic-ai/claude-code-linux-x64"
LAST_NODE_RELEASE = (2, 1, 112)  # the newest release whose package holds cli.js


class ReleaseUnavailable(RuntimeError):
    """A release could not be installed (no npm, no registry, bad checksum)."""


@dataclass(frozen=True, slots=True)
class Release:
    """One installed Claude Code release."""

    version: str
    package: str
    root: Path  # the unpacked package directory

    @property
    def is_native(self) -> bool:
        return self.package == NATIVE_PACKAGE

    @property
    def entry(self) -> Path:
        return self.root / ("claude" if self.is_native else "cli.js")

    def argv(self) -> list[str]:
        """Return the command that starts this release."""
        if self.is_native:
            return [str(self.entry)]
        node = shutil.which("node")
        if node is None:
            raise ReleaseUnavailable(f"node is needed to run {self.version}")
        return [node, str(self.entry)]


def profile_versions() -> tuple[str, ...]:
    """Return the release of every profile memd knows, oldest first."""
    return tuple(profile.version for profile in PROFILES)


def package_for(version: str) -> str:
    """Return the npm package that ships `version` as something this machine runs."""
    parsed = parse_version(version)
    if parsed is not None and parsed <= LAST_NODE_RELEASE:
        return NODE_PACKAGE
    return NATIVE_PACKAGE


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Return the release cache: `$MEMD_E2E_CACHE` or the real user's ~/.cache."""
    env = os.environ if env is None else env
    configured = env.get("MEMD_E2E_CACHE")
    if configured:
        return Path(configured)
    return Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "memd-e2e"


def _npm_env(cache: Path) -> dict[str, str]:
    """Return an environment in which npm uses the real user's npm cache."""
    real_home = pwd.getpwuid(os.getuid()).pw_dir
    env = {k: v for k, v in os.environ.items() if not k.startswith("npm_")}
    env["HOME"] = real_home
    env.setdefault("npm_config_cache", os.path.join(real_home, ".npm"))
    env["npm_config_update_notifier"] = "false"
    env["npm_config_fund"] = "false"
    env["npm_config_audit"] = "false"
    return env


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


_VERIFIED: dict[Path, Release] = {}  # within one process: hash 400 MB once


def _cached(package: str, version: str, cache: Path) -> Release | None:
    prefix = f"{package.replace('/', '+')}@{version}-"
    for record in sorted(cache.glob(f"{prefix}*/release.json")):
        root = record.parent / "package"
        if root in _VERIFIED:
            return _VERIFIED[root]
        try:
            facts = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        release = Release(version=version, package=package, root=root)
        if release.entry.is_file() and _sha256(release.entry) == facts.get("sha256"):
            _VERIFIED[root] = release
            return release
    return None


def install_release(version: str, *, env: Mapping[str, str] | None = None) -> Release:
    """Return `version` installed in the cache, fetching it with `npm pack` if needed.

    Raises:
        ReleaseUnavailable: npm is missing, the registry refused, or the
            unpacked entry point is not there.
    """
    package = package_for(version)
    cache = cache_dir(env)
    found = _cached(package, version, cache)
    if found is not None:
        return found
    cache.mkdir(parents=True, exist_ok=True)
    # pytest-xdist's workers may all want the release at once: one downloads.
    with held(cache / ".install.lock"):
        found = _cached(package, version, cache)
        if found is not None:
            return found
        return _install(package, version, cache)


def _install(package: str, version: str, cache: Path) -> Release:
    entry = Release(version=version, package=package, root=Path()).entry
    install_from_npm(
        f"{package}@{version}",
        str(entry),
        f"{package.replace('/', '+')}@{version}",
        cache,
        {"package": package, "version": version},
    )
    found = _cached(package, version, cache)
    if found is None:
        raise ReleaseUnavailable(f"{package}@{version} did not verify after install")
    return found


def install_from_npm(
    spec: str, entry: str, key: str, cache: Path, record: Mapping[str, str]
) -> None:
    """`npm pack SPEC`, unpacked as `cache/<key>-<shasum>/package`, beside a
    release.json: `record`, the tarball's shasum and integrity, and the sha256
    of `entry` (made executable). A racing install of the same tarball is fine.

    Raises:
        ReleaseUnavailable: npm is missing, the registry refused, or the
            package has no `entry`.
    """
    npm = shutil.which("npm")
    if npm is None:
        raise ReleaseUnavailable("npm is not installed (apt-get install npm)")
    with tempfile.TemporaryDirectory(dir=cache, prefix=".incoming-") as incoming:
        packed = subprocess.run(
            [npm, "pack", spec, "--json", "--pack-destination", incoming],
            capture_output=True,
            text=True,
            env=_npm_env(cache),
            timeout=900,
            check=False,
        )
        if packed.returncode != 0:
            raise ReleaseUnavailable(
                f"npm pack {spec} failed: {packed.stderr.strip()[-500:]}"
            )
        facts = json.loads(packed.stdout)[0]
        target = cache / f"{key}-{facts['shasum']}"
        unpacked = Path(incoming) / "unpacked"
        with tarfile.open(Path(incoming) / facts["filename"]) as archive:
            archive.extractall(unpacked, filter="data")
        path = unpacked / "package" / entry
        if not path.is_file():
            raise ReleaseUnavailable(f"{spec} has no {entry}")
        path.chmod(0o755)
        described = {
            **record,
            "shasum": facts["shasum"],
            "integrity": facts.get("integrity", ""),
            "sha256": _sha256(path),
        }
        (unpacked / "release.json").write_text(json.dumps(described, indent=1) + "\n")
        try:
            unpacked.rename(target)
        except OSError:
            if not (target / "release.json").is_file():  # not a racing install
                raise


@dataclass(frozen=True, slots=True)
class ClaudeRun:
    """What one `claude -p` run left behind."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def result(self) -> dict[str, object]:
        """The `--output-format json` object (empty when stdout is not JSON)."""
        try:
            value = json.loads(self.stdout)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


def run_claude(
    release: Release,
    prompt: str,
    *,
    env: Mapping[str, str],
    cwd: Path | str,
    args: Sequence[str] = (),
    timeout: float = 180,
) -> ClaudeRun:
    """Run `claude -p prompt --output-format json` in `cwd`; stdin is closed.

    `args` adds flags (`--allowedTools`, `--permission-mode`, `--mcp-config`).
    """
    completed = subprocess.run(
        [*release.argv(), "-p", prompt, "--output-format", "json", *args],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return ClaudeRun(completed.returncode, completed.stdout, completed.stderr)
