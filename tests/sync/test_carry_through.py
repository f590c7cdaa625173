"""Personal sync carries through what it does not take (#41 class 10).

One machine allows bigger topic files than another (`lint.max_topic_file_bytes`);
the file the second one leaves out stays on the remote through its pushes.
Real machines, a real bare remote, real git.
"""

from __future__ import annotations

from tests.sync.conftest import FOLDER, Machines, git, synced, topic_text

BIG_CAP = str(4 * 1024 * 1024)


def test_a_file_one_machine_leaves_out_stays_on_the_remote(machines: Machines) -> None:
    linux, mac, _ = machines.all
    big = topic_text("big", "A long note. " + "x" * 400_000)
    linux.write("big.md", big)
    linux.write("MEMORY.md", "- [Big](big.md) — a long note\n")
    for machine, extra in ((linux, {"MEMD_MAX_TOPIC_FILE_BYTES": BIG_CAP}), (mac, {})):
        done = machine.memd("sync", "init", "--remote", machines.url, **extra)
        assert 0 == done.returncode, done.stdout + done.stderr
    blob = git("rev-parse", f"main:{FOLDER}big.md", cwd=machines.remote).strip()

    mac.write("mine.md", topic_text("mine", "Written on the mac."))
    synced(mac)
    synced(mac)

    assert blob == git("rev-parse", f"main:{FOLDER}big.md", cwd=machines.remote).strip()
    assert "Written on the mac." in machines.remote_files()[f"{FOLDER}mine.md"]
