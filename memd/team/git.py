"""Run the real `git` CLI on one team directory, with a timeout and clear errors.

Every call names the repository explicitly (``--git-dir``/``--work-tree``), so
git never discovers a parent repository and nothing outside the team
directory can be staged. Git runs in its own session with stdin closed and
``GIT_TERMINAL_PROMPT=0``: a credential it cannot get from the ssh agent or a
credential helper fails fast instead of waiting for a password nobody types.

Credentials are git's own. A URL may still carry a token
(``https://x:TOKEN@host/...``); `redact` removes the userinfo from every text
memd prints, logs or stores, including git's own error output.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass

from memd.config_keys import redact_credentials
from memd.errors import MemdError

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

    @property
    def git_dir(self) -> str:
        return os.path.join(self.work_tree, ".git")

    def run(
        self,
        *args: str,
        input_bytes: bytes | None = None,
        index_file: str | None = None,
        check: bool = True,
        is_network: bool = False,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``git <args>`` in this repository and return the finished process.

        Raises:
            GitError: git is missing, timed out, or (with `check`) exited non-zero.
        """
        env = {k: v for k, v in os.environ.items() if k not in _REPO_VARIABLES}
        env["GIT_TERMINAL_PROMPT"] = "0"
        env["LC_ALL"] = "C"  # error texts are matched in English
        if index_file is not None:
            env["GIT_INDEX_FILE"] = index_file
        command = [
            "git",
            "--git-dir",
            self.git_dir,
            "--work-tree",
            self.work_tree,
            "--literal-pathspecs",
            "-c",
            "core.quotePath=false",
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
            stdout, stderr = process.communicate(input_bytes, self.timeout_seconds)
        except subprocess.TimeoutExpired:
            # The whole group: git's ssh or remote helper must not linger either.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise GitError(
                f"git {args[0]} timed out after {self.timeout_seconds:g} s",
                is_network=is_network,
            ) from None
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


def _last_lines(stderr: bytes, count: int = 3) -> str:
    lines = [
        line.strip()
        for line in stderr.decode("utf-8", "replace").splitlines()
        if line.strip() and not line.startswith("hint:")
    ]
    return " / ".join(lines[-count:])
