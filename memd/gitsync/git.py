"""Run the real `git` CLI on one team directory, with a timeout and clear errors.

Every call names the repository explicitly (``--git-dir``/``--work-tree``), so
git never discovers a parent repository and nothing outside the team
directory can be staged. Git runs in its own session with stdin closed and
``GIT_TERMINAL_PROMPT=0``: a credential it cannot get from the ssh agent or a
credential helper fails fast instead of waiting for a password nobody types.

Nothing in the repository steers what git runs. Every call passes `-c`
settings, which beat every config file, for the keys that make git start a
program or read files memd did not choose (`HARDENING`): no fsmonitor, no
hooks, no attributes file, no submodule recursion, and neither the `ext::`
nor the `fd::` transport. The repository's own ``.git/config`` may hold only
the keys memd and git write (`check_local_config`): an ``include``, an
``sshCommand``, a ``filter`` or a ``credential`` helper there is refused,
since a remote that once wrote into ``.git/`` could have put it there. The
user's global config (their ``sshCommand``, credential helper, proxy) is
theirs and is kept, and so is the system config, which only root can write.
`check_remote_url` refuses a URL git would read as an option (``-oProxy…``)
or one that names a program to run (``ext::``, ``fd::``).

Credentials are git's own. A URL may still carry a token
(``https://x:TOKEN@host/...``); `redact` removes the userinfo from every text
memd prints, logs or stores, including git's own error output.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
from dataclasses import dataclass

from memd.config_keys import redact_credentials
from memd.errors import MemdError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

DEFAULT_TIMEOUT_SECONDS = 60.0
# Variables that would point git at another repository or another index.
_REPO_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
)


# `-c` beats every config file: git starts no program memd did not ask for.
HARDENING = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.attributesFile=/dev/null",
    "core.quotePath=false",
    "protocol.ext.allow=never",
    "protocol.fd.allow=never",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "gc.auto=0",  # no background gc child outliving the sync lock
)
# What `.git/config` may hold: what `git init`, `git remote add` and a person
# setting their name write. Anything else (include.path, core.sshcommand,
# filter.*, credential.*, remote.*.uploadpack) could run a program.
_LOCAL_CONFIG_ALLOWED = (
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "extensions.objectformat",
    "remote.origin.url",
    "remote.origin.fetch",
    "user.name",
    "user.email",
    "user.signingkey",
)
_HELPER_TRANSPORTS = ("ext::", "fd::")


class GitError(MemdError):
    """git failed, timed out or is missing; the message is redacted."""

    def __init__(self, message: str, *, is_network: bool = False):
        super().__init__(redact(message))
        self.is_network = is_network


def redact(text: str) -> str:
    """Return `text` with the userinfo of every URL in it replaced by ``***``."""
    return redact_credentials(text)


# What git prints when the remote, not the repository, is the problem.
_NETWORK_MARKERS = (
    "could not read from remote repository",
    "does not appear to be a git repository",
    "unable to access",
    "could not resolve host",
    "connection refused",
    "connection timed out",
    "repository not found",
    "authentication failed",
    "permission denied",
)


@dataclass(frozen=True, slots=True)
class Git:
    """The git commands of one team directory (its `.git` sits inside it)."""

    work_tree: str
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    # The sync lock's descriptor, handed to every git child: a git process that
    # outlives a killed memd keeps the lock, so no new sync starts under it.
    lock_fd: int | None = None

    # The control directory's name inside `work_tree`: `memd team init`
    # builds a new repository under a temp name and renames it into place.
    dot_git: str = ".git"

    @property
    def git_dir(self) -> str:
        return os.path.join(self.work_tree, self.dot_git)

    def check_local_config(self) -> None:
        """Refuse a repository whose own config sets a key memd does not allow.

        Raises:
            GitError: ``.git/config`` holds a key outside `_LOCAL_CONFIG_ALLOWED`
                (named in the message), or git cannot read it.
        """
        listed = self.run("config", "--local", "--null", "--list").stdout
        keys = sorted(
            {
                record.split(b"\n", 1)[0].decode("utf-8", "replace").lower()
                for record in listed.split(b"\0")
                if record
            }
        )
        refused = [
            key
            for key in keys
            if key not in _LOCAL_CONFIG_ALLOWED
            and not (key.startswith("branch.") and key.endswith((".remote", ".merge")))
        ]
        if refused:
            raise GitError(
                f"{self.git_dir}/config sets {', '.join(refused)}, which memd never "
                "runs git with (a program could start from it); remove it with "
                "`git config --local --unset`, or set it in ~/.gitconfig"
            )

    def run(
        self,
        *args: str,
        input_bytes: bytes | None = None,
        index_file: str | None = None,
        check: bool = True,
        is_network: bool = False,
        max_output_bytes: int | None = None,
        extra_config: tuple[str, ...] = (),
        literal_pathspecs: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``git <args>`` in this repository and return the finished process.

        `max_output_bytes` bounds what git may print: past it, git's process
        group is killed and GitError says so (a reader of someone else's
        repository cannot let a huge history fill memory). `extra_config`
        adds `-c` settings after `HARDENING`. `literal_pathspecs=False` is for
        ``check-ignore``, which refuses pathspec magic (it takes paths, not
        patterns, anyway).

        Raises:
            GitError: git is missing, timed out, printed more than
                `max_output_bytes`, or (with `check`) exited non-zero.
        """
        env = {k: v for k, v in os.environ.items() if k not in _REPO_VARIABLES}
        env["GIT_TERMINAL_PROMPT"] = "0"
        env["LC_ALL"] = "C"  # error texts are matched in English
        if index_file is not None:
            env["GIT_INDEX_FILE"] = index_file
        env["GIT_NO_REPLACE_OBJECTS"] = "1"  # objects are what their ids say
        command = [
            "git",
            "--git-dir",
            self.git_dir,
            "--work-tree",
            self.work_tree,
            *(("--literal-pathspecs",) if literal_pathspecs else ()),
            *(item for setting in HARDENING for item in ("-c", setting)),
            *(item for setting in extra_config for item in ("-c", setting)),
            # curl gives up by itself on a remote that stops answering, even
            # when the memd that started it was killed before its deadline.
            "-c",
            "http.lowSpeedLimit=1",
            "-c",
            f"http.lowSpeedTime={max(1, math.ceil(self.timeout_seconds))}",
            *args,
        ]
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE
                if input_bytes is not None
                else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self.work_tree,
                start_new_session=True,  # no terminal: ssh cannot prompt either
                pass_fds=(self.lock_fd,) if self.lock_fd is not None else (),
            )
        except FileNotFoundError:
            raise GitError("git is not installed (no `git` on PATH)") from None
        try:
            if max_output_bytes is None:
                stdout, stderr = process.communicate(input_bytes, self.timeout_seconds)
            else:
                stdout, stderr = _communicate_bounded(
                    process, input_bytes, self.timeout_seconds, max_output_bytes
                )
        except _OutputTooLarge:
            _kill_group(process)
            raise GitError(
                f"git {args[0]} printed more than {max_output_bytes:,} bytes; stopped"
            ) from None
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise GitError(
                f"git {args[0]} timed out after {self.timeout_seconds:g} s",
                is_network=is_network,
            ) from None
        except BaseException:
            _kill_group(process)  # SIGTERM or Ctrl-C in memd: git goes first
            raise
        done = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
        if check and done.returncode != 0:
            detail = _last_lines(done.stderr) or f"exit status {done.returncode}"
            lowered = detail.lower()
            raise GitError(
                f"git {args[0]} failed: {detail}",
                is_network=is_network
                and any(marker in lowered for marker in _NETWORK_MARKERS),
            )
        return done

    def text(self, *args: str, **kwargs: object) -> str:
        """Run git and return its stdout as text, without the final newline."""
        done = self.run(*args, **kwargs)  # type: ignore[arg-type]
        return done.stdout.decode("utf-8", "replace").rstrip("\n")

    def rev(self, name: str) -> str | None:
        """Return the commit `name` points at, or None when it does not exist."""
        done = self.run(
            "rev-parse", "--verify", "--quiet", name + "^{commit}", check=False
        )
        oid = done.stdout.decode("ascii", "replace").strip()
        return oid if done.returncode == 0 and oid else None


class _OutputTooLarge(GitError):
    """git printed more than the caller's bound (turned into a GitError's line)."""


_STDERR_KEPT = 64 * 1024


def _communicate_bounded(
    process: subprocess.Popen[bytes],
    input_bytes: bytes | None,
    timeout: float,
    limit: int,
) -> tuple[bytes, bytes]:
    """`communicate`, but raising `_OutputTooLarge` once stdout passes `limit`.

    One `select` loop over the pipes until both close or the deadline passes
    (subprocess.TimeoutExpired, as `communicate` raises); stderr keeps only
    its last `_STDERR_KEPT` bytes.
    """
    import selectors
    import time

    deadline = time.monotonic() + timeout
    out: list[bytes] = []
    err = bytearray()
    size = 0
    pending = memoryview(input_bytes or b"")
    stdin = process.stdin
    with selectors.DefaultSelector() as selector:
        for stream in (process.stdout, process.stderr):
            if stream is not None:  # always: Git.run asks for both pipes
                selector.register(stream, selectors.EVENT_READ)
        if stdin is not None and pending:
            os.set_blocking(stdin.fileno(), False)
            selector.register(stdin, selectors.EVENT_WRITE)
        elif stdin is not None:
            stdin.close()
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(process.args, timeout)
            for key, _ in selector.select(left):
                if stdin is not None and key.fileobj is stdin:
                    try:
                        written = os.write(key.fd, pending[:65536])
                    except BrokenPipeError:
                        written = len(pending)
                    pending = pending[written:]
                    if not pending:
                        selector.unregister(stdin)
                        stdin.close()
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.fileobj is process.stdout:
                    size += len(chunk)
                    if size > limit:
                        raise _OutputTooLarge("git printed more than its bound")
                    out.append(chunk)
                else:
                    err += chunk
                    del err[:-_STDERR_KEPT]
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()
    try:
        process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise subprocess.TimeoutExpired(process.args, timeout) from None
    return b"".join(out), bytes(err)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill git's whole process group (its ssh, its ``git remote-http``) and reap it.

    Each git runs in its own session (`start_new_session`), so its group is
    its own: nothing of memd's is in it.
    """
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()


def _last_lines(stderr: bytes, count: int = 3) -> str:
    lines = [
        line.strip()
        for line in stderr.decode("utf-8", "replace").splitlines()
        if line.strip() and not line.startswith("hint:")
    ]
    return " / ".join(lines[-count:])


def check_remote_url(url: str) -> None:
    """Refuse a remote URL that git would read as an option or as a program.

    Raises:
        GitError: `url` is empty, starts with ``-`` (``-oProxyCommand=…``),
            holds a control character, or uses the ``ext::``/``fd::``
            transports, which run a command or read a descriptor.
    """
    if not url.strip():
        raise GitError("the remote URL is empty")
    if url.startswith("-"):
        raise GitError(
            f"remote {url!r}: a URL starting with '-' is refused "
            "(git would read it as an option)"
        )
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in url):
        raise GitError(f"remote {url!r}: a control character in a URL is refused")
    if url.lower().startswith(_HELPER_TRANSPORTS):
        raise GitError(
            f"remote {url!r}: the ext:: and fd:: transports run a program; refused"
        )


def remote_location(url: str) -> str:
    """Return where `url` leads, so two spellings of one remote compare equal.

    A network URL in any form (scp-like, ``ssh://``, ``https://``, with or
    without credentials, a port or ``.git``) becomes its normalised
    ``host/path`` (`memd.claude_code.identity.normalize_remote_url`). A local
    path or a ``file://`` URL becomes the real path of the repository git
    would open there (symlinks resolved; ``X``, ``X.git`` and ``X/.git``
    tried in git's order).
    """
    from memd.claude_code.identity import normalize_remote_url

    text = url.strip()
    if text.lower().startswith("file://"):
        from urllib.parse import unquote, urlsplit

        return "local:" + _local_repository(unquote(urlsplit(text).path))
    named = normalize_remote_url(text)
    if named is not None:
        return "net:" + named
    return "local:" + _local_repository(text)


def _local_repository(path: str) -> str:
    real = os.path.realpath(os.path.expanduser(path))
    for candidate in (real, real + ".git"):
        dot_git = os.path.join(candidate, ".git")
        if os.path.isdir(dot_git):
            return os.path.realpath(dot_git)
        if os.path.isdir(candidate):
            return candidate
    return real


def is_same_remote(url: str, others: Iterable[str]) -> bool:
    """Return True when `url` leads where one of `others` does (`remote_location`)."""
    here = remote_location(url)
    return any(remote_location(other) == here for other in others if other.strip())
