"""The daemon lints for the hooks: same findings, refusals, and the hook's own fallback.

A real `memd run` subprocess serves its runtime dir's `hooks.sock`; the
clients are `memd.hook_lint.lint_by_daemon` and the real `memd hook
post-tool-use`. Expected findings are the codes lint reports for the files
written here (M008: `type` is not one of the four).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from memd.claude_code.paths import resolve_memory_location
from memd.config import load_config
from memd.config_keys import KEYS
from memd.daemon.hook_lint_server import HookLinter
from memd.hook_lint import LINT_ENV, SOCKET_NAME, lint_by_daemon, lint_settings
from memd.lint.targets import lint_findings
from tests.cli.commands.test_hook import (
    BAD_TOPIC,
    GOOD_TOPIC,
    age,
    modules_after_hook,
    run_hook,
    session_start,
    write_payload,
)
from tests.conftest import Home
from tests.daemon.conftest import Starter, wait_for

PROFILE = "2.1.332"


@pytest.fixture(name="memory_dir")
def _memory_dir(git_repo: Path) -> Path:
    """`git_repo`'s memory dir as the agent resolves it: one good and one bad file."""
    path = Path(resolve_memory_location(str(git_repo)).memory_dir)
    path.mkdir(parents=True)
    (path / "feedback_db.md").write_text(GOOD_TOPIC)
    (path / "feedback_bad.md").write_text(BAD_TOPIC)
    (path / "MEMORY.md").write_text(
        "- [Real database](feedback_db.md) — integration tests use it\n"
        "- [Bad](feedback_bad.md) — a typo in its type\n"
    )
    age(path)
    return path


def codes(findings: list[dict[str, object]] | None) -> list[tuple[object, object]]:
    assert findings is not None
    return sorted((f["code"], f["path"]) for f in findings)


class TestTheDaemonAnswers:
    def test_its_findings_are_the_hooks_own(
        self, start_daemon: Starter, memory_dir: Path, isolated_home: Home
    ) -> None:
        """Linted by the daemon or in-process, the findings are the same."""
        daemon = start_daemon()
        env = daemon.env

        by_daemon = lint_by_daemon(str(memory_dir) + os.sep, PROFILE, env)

        assert ("M008", "feedback_bad.md") in codes(by_daemon)
        assert by_daemon == lint_findings(str(memory_dir), load_config(env), PROFILE)
        socket_path = str(isolated_home.runtime / "memd" / SOCKET_NAME)
        assert {
            "socket": socket_path,
            "listening": True,
            "crashes": 0,
        } == daemon.status()["hook_lint"]
        said = daemon.memd("status").stdout
        assert "the agent's saves are linted by this daemon (fast)\n" in said, said
        assert socket_path not in said, said  # a socket is not a person's word

    def test_it_reads_the_write_the_hook_is_about(
        self, start_daemon: Starter, memory_dir: Path
    ) -> None:
        """Asked right after a save, the daemon lints what is on disk now."""
        daemon = start_daemon()
        assert ("M008", "feedback_bad.md") in codes(
            lint_by_daemon(str(memory_dir), PROFILE, daemon.env)
        )

        (memory_dir / "feedback_bad.md").write_text(GOOD_TOPIC)
        found = lint_by_daemon(str(memory_dir), PROFILE, daemon.env)

        assert ("M008", "feedback_bad.md") not in codes(found)

    def test_a_silent_peer_does_not_hold_up_the_next(
        self, start_daemon: Starter, memory_dir: Path, isolated_home: Home
    ) -> None:
        """A client that connects and says nothing is dropped; the next is answered."""
        daemon = start_daemon()
        path = isolated_home.runtime / "memd" / SOCKET_NAME
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
            silent.connect(str(path))

            found = lint_by_daemon(str(memory_dir), PROFILE, daemon.env)

        assert ("M008", "feedback_bad.md") in codes(found)
        daemon.assert_alive()

    def test_a_peer_that_drips_bytes_is_dropped(
        self, start_daemon: Starter, memory_dir: Path, isolated_home: Home
    ) -> None:
        """A byte every 0.2 s for 10 s would hold the one serving thread throughout;
        the whole request has 1 s, so others are answered while it drips."""
        daemon = start_daemon()
        path = isolated_home.runtime / "memd" / SOCKET_NAME
        dripping = threading.Event()

        def drip() -> None:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
                peer.connect(str(path))
                dripping.set()
                with contextlib.suppress(OSError):  # dropped: EPIPE
                    for _ in range(50):
                        peer.send(b" ")
                        time.sleep(0.2)

        dripper = threading.Thread(target=drip)
        dripper.start()
        try:
            dripping.wait(5)
            answers = []
            for _ in range(3):
                answers.append(lint_by_daemon(str(memory_dir), PROFILE, daemon.env))
                if answers[-1] is not None:
                    break
            assert answers[-1] is not None
        finally:
            dripper.join()

    @pytest.mark.parametrize(
        "line",
        [
            b"[" * 50_000,
            b'{"lint":' * 6_000,
            b'{"lint": "' + b"\\" * 1_000 + b'", "x": ' + b"[" * 40_000,
            b'["\xff\xfe", {"\\ud83d": 1}]',
        ],
    )
    def test_a_hostile_line_does_not_stop_the_server(
        self,
        start_daemon: Starter,
        memory_dir: Path,
        isolated_home: Home,
        line: bytes,
    ) -> None:
        """A line nested too deep for the parser is dropped; the next request is
        answered and the server never crashed."""
        daemon = start_daemon()
        path = isolated_home.runtime / "memd" / SOCKET_NAME
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
            peer.settimeout(10)
            peer.connect(str(path))
            peer.sendall(line + b"\n")
            with contextlib.suppress(OSError):
                assert b"" == peer.recv(100)  # closed without an answer

        found = lint_by_daemon(str(memory_dir), PROFILE, daemon.env)

        assert ("M008", "feedback_bad.md") in codes(found)
        assert (True, 0) == (
            daemon.status()["hook_lint"]["listening"],  # type: ignore[index]
            daemon.status()["hook_lint"]["crashes"],  # type: ignore[index]
        )
        daemon.assert_alive()

    def test_the_socket_is_private_and_gone_after_a_stop(
        self, start_daemon: Starter, memory_dir: Path, isolated_home: Home
    ) -> None:
        path = isolated_home.runtime / "memd" / SOCKET_NAME
        daemon = start_daemon()
        assert 0o600 == path.stat().st_mode & 0o777

        assert 0 == daemon.stop()

        assert not path.exists()
        assert lint_by_daemon(str(memory_dir), PROFILE, daemon.env) is None

    def test_a_killed_daemons_socket_is_taken_over(
        self, start_daemon: Starter, memory_dir: Path, isolated_home: Home
    ) -> None:
        path = isolated_home.runtime / "memd" / SOCKET_NAME
        first = start_daemon()
        first.stop(signal.SIGKILL)
        assert path.exists()  # left behind, nobody listening
        assert lint_by_daemon(str(memory_dir), PROFILE, first.env) is None

        second = start_daemon()

        assert ("M008", "feedback_bad.md") in codes(
            lint_by_daemon(str(memory_dir), PROFILE, second.env)
        )


class TestTheDaemonRefuses:
    def test_a_directory_it_does_not_watch(
        self, start_daemon: Starter, memory_dir: Path, tmp_path: Path
    ) -> None:
        """A path the caller names is not a licence to read it."""
        daemon = start_daemon()
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "feedback_bad.md").write_text(BAD_TOPIC)

        assert lint_by_daemon(str(elsewhere), PROFILE, daemon.env) is None
        assert lint_by_daemon(str(memory_dir / ".."), PROFILE, daemon.env) is None

    def test_other_lint_settings(self, start_daemon: Starter, memory_dir: Path) -> None:
        """A hook whose environment sets lint's severities lints by itself."""
        daemon = start_daemon()
        env = {**daemon.env, "MEMD_LINT_SEVERITIES": "M008=off"}

        assert lint_by_daemon(str(memory_dir), PROFILE, env) is None

    def test_answers_by_a_saved_config_once_it_has_read_it(
        self, start_daemon: Starter, memory_dir: Path, isolated_home: Home
    ) -> None:
        """The daemon watches its config file; after the reload it lints by it."""
        config = isolated_home.config / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text("[lint]\nmax_topic_file_bytes = 100000\n")
        daemon = start_daemon()
        assert {"error"} == severities(memory_dir, daemon.env)

        config.write_text('[lint]\nseverity = { M008 = "warning" }\n')

        wait_for(
            lambda: severities(memory_dir, daemon.env) == {"warning"},
            what="the daemon to lint by the saved config",
        )


def severities(memory_dir: Path, env: dict[str, str]) -> set[object] | None:
    found = lint_by_daemon(str(memory_dir), PROFILE, env)
    return (
        None if found is None else {f["severity"] for f in found if f["code"] == "M008"}
    )


def test_the_settings_name_every_lint_variable() -> None:
    """A new `lint.*` config key must join what the daemon and the hook compare."""
    assert {k.env for k in KEYS if k.toml.startswith("lint.")} == set(LINT_ENV)


class TestHookLinter:
    """The daemon's answer, without the socket: what it refuses and why."""

    def linter(self, memory_dir: Path, settings: list[object] | None) -> HookLinter:
        config = load_config()
        return HookLinter(lambda: (config, settings), {str(memory_dir)}.__contains__)

    def request(self, memory_dir: Path, settings: list[object]) -> dict[str, object]:
        return {
            "lint": str(memory_dir) + os.sep,
            "profile": PROFILE,
            "settings": settings,
        }

    def test_answers_matching_settings(self, memory_dir: Path) -> None:
        settings = lint_settings(os.environ)
        answer = self.linter(memory_dir, settings).answer(
            self.request(memory_dir, settings)
        )
        assert ("M008", "feedback_bad.md") in codes(answer["findings"])  # type: ignore[arg-type]

    def test_refuses_a_config_file_changed_since_it_was_read(
        self, memory_dir: Path, isolated_home: Home
    ) -> None:
        loaded_under = lint_settings(os.environ)
        config = isolated_home.config / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text('[lint]\nseverity = { M008 = "warning" }\n')

        answer = self.linter(memory_dir, loaded_under).answer(
            self.request(memory_dir, lint_settings(os.environ))
        )

        assert {"refused": "other lint settings"} == answer

    def test_refuses_while_the_config_on_disk_is_unreadable(
        self, memory_dir: Path
    ) -> None:
        settings = lint_settings(os.environ)
        answer = self.linter(memory_dir, None).answer(
            self.request(memory_dir, settings)
        )
        assert "refused" in answer

    @pytest.mark.parametrize(
        "request_",
        [None, [], {"lint": 3}, {"lint": "/x", "profile": 2}, {"profile": None}],
    )
    def test_refuses_what_is_not_a_request(
        self, memory_dir: Path, request_: object
    ) -> None:
        answer = self.linter(memory_dir, []).answer(request_)
        assert {"refused": "not a request"} == answer


class TestThePostToolUseHook:
    def test_blocks_a_bad_write_as_it_does_alone(
        self,
        start_daemon: Starter,
        git_repo: Path,
        memory_dir: Path,
        isolated_home: Home,
    ) -> None:
        """The same block with the daemon linting for the hook as without one."""
        env = isolated_home.env()
        target = memory_dir / "feedback_new.md"

        def write_bad(session: str) -> str:
            start = session_start(git_repo, "startup", session=session)
            assert 0 == run_hook(["session-start"], start, env).returncode
            payload = write_payload(git_repo, target, BAD_TOPIC, None)
            payload["session_id"] = session
            done = run_hook(["post-tool-use"], payload, env)
            target.unlink()
            age(memory_dir)
            return done.stdout

        alone = write_bad("a0000000-0000-4000-8000-000000000001")
        start_daemon()
        served = write_bad("a0000000-0000-4000-8000-000000000002")

        assert '"decision": "block"' in alone
        assert "feedback_new.md" in alone
        assert alone == served

    def test_loads_no_lint_engine_when_the_daemon_lints(
        self,
        start_daemon: Starter,
        git_repo: Path,
        memory_dir: Path,
        isolated_home: Home,
    ) -> None:
        """After a real write, the hook imports no config, YAML, lint or dataclasses.

        Only the secret scan (`memd.lint.secrets`, standard library `math` and
        `os`; `re` only once a rule's keyword is in the text) runs in the hook
        itself: the daemon's lint never reads the daily logs it also covers.
        """
        heavy = ("tomllib", "yaml", "structlog", "argparse", "dataclasses", "json")
        daemon = start_daemon()
        env = daemon.env
        run_hook(["session-start"], session_start(git_repo, "startup"), env)
        payload = write_payload(
            git_repo, memory_dir / "feedback_new.md", BAD_TOPIC, None
        )

        result = modules_after_hook(payload, heavy, env)

        assert '"decision": "block"' in result.stdout
        assert "[] 0 True memd.lint memd.lint.secrets" == result.stderr.strip()


def test_a_daemon_that_cannot_bind_still_runs(
    start_daemon: Starter, memory_dir: Path, isolated_home: Home
) -> None:
    """A directory where the socket should be: logged, and the hooks lint alone."""
    (isolated_home.runtime / "memd").mkdir(mode=0o700)
    (isolated_home.runtime / "memd" / SOCKET_NAME).mkdir()
    daemon = start_daemon()

    assert lint_by_daemon(str(memory_dir), PROFILE, daemon.env) is None
    assert daemon.events("hook_lint_unavailable")
    assert False is daemon.status()["hook_lint"]["listening"]  # type: ignore[index]
    assert "linted without the daemon (slower)" in daemon.memd("status").stdout
    daemon.assert_alive()


# The thread's death is the fault injected here, so its report is expected.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_server_that_dies_removes_its_socket(tmp_path: Path) -> None:
    """A serving thread that ends without `stop()` logs it and unlinks its socket,
    so hooks lint by themselves at once instead of waiting on a deaf socket."""
    import structlog
    from structlog.testing import capture_logs

    from memd.daemon.hook_lint_server import HookLintServer

    def answer(request: object) -> dict[str, object]:
        raise SystemExit  # escapes every guard, and threading prints nothing

    path = tmp_path / "hooks.sock"
    with capture_logs() as logs:
        server = HookLintServer(str(path), answer, structlog.get_logger())
        assert server.start()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
            peer.settimeout(10)
            peer.connect(str(path))
            peer.sendall(b'{"lint": "/x"}\n')
            with contextlib.suppress(OSError):
                peer.recv(100)
        wait_for(lambda: not server.listening, timeout=10)
        server.stop()

    assert not path.exists()
    assert ["hook_lint_stopped"] == [
        e["event"] for e in logs if e["event"].startswith("hook_lint_")
    ]
