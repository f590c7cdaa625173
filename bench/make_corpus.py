"""Generate a realistic memory corpus: N projects x M topic files, with an index each.

Layout follows the agent's: `<base>/projects/<project>/memory/{MEMORY.md,*.md}`.
About a third of the files use the nested frontmatter dialect (as in public
repositories), the rest the classic one; feedback and project files carry the
**Why:** and **How to apply:** lines. Deterministic for a given seed.

Usage: python bench/make_corpus.py DIR [--projects 100] [--files 100]
"""

from __future__ import annotations

import argparse
import os
import random

TYPES = ("user", "feedback", "project", "reference")
WORDS = (  # noqa: SIM905 -- one string reads better than 44 quoted words
    "database integration tests mock real schema migration deploy staging review "
    "branch commit release cache latency timeout retry queue worker config secret "
    "token endpoint client server docs style lint format types async thread lock "
    "index snapshot prompt memory agent session hook daemon service log dream"
).split()


# Words any note is made of; the recall query drops most of them as stopwords.
FILLER = (  # noqa: SIM905 -- as WORDS
    "the a an and or of to in on for with when before after always never not is "
    "are was be it this that we our use run keep add check new old first next only "
    "every each all some more less than then so but if because from by at as"
).split()
_SYLLABLES = "ka ro mi te su na lo vi de pa ze ku bo ri ta no fe gu li sa".split()  # noqa: SIM905


def vocabulary(size: int = 3000, *, seed: int = 7) -> tuple[str, ...]:
    """Return `size` made-up words standing in for a project's own terms.

    Service, tool and library names, identifiers: the words that make a real
    memory about one thing. Syllable strings, so they never collide with
    WORDS, FILLER or a stopword.
    """
    rng = random.Random(seed)
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return tuple(words)


class _Words:
    """Draws a file's words: from WORDS alone, or like a real note (see below)."""

    def __init__(self, rng: random.Random, terms: tuple[str, ...] | None) -> None:
        self.rng = rng
        # A real memory is about one thing: most of its words are that topic's
        # few terms, a few are the shared dev words, the rest filler. With
        # WORDS alone every query word is in most files, and a search scores
        # nearly every row, which no real memory directory makes it do.
        self.topic = tuple(rng.sample(terms, 8)) if terms else ()

    def __call__(self) -> str:
        rng = self.rng
        if not self.topic:
            return rng.choice(WORDS)
        roll = rng.random()
        if roll < 0.55:
            return rng.choice(self.topic)
        return rng.choice(WORDS if roll < 0.63 else FILLER)


def _sentence(pick: _Words, low: int, high: int) -> str:
    words = [pick() for _ in range(pick.rng.randint(low, high))]
    return " ".join(words).capitalize()


def _topic(
    rng: random.Random, number: int, terms: tuple[str, ...] | None = None
) -> tuple[str, str, str, bytes]:
    """Return (relpath, name, description, file bytes) for one topic file."""
    pick = _Words(rng, terms)
    kind = TYPES[number % len(TYPES)]
    name = f"{kind}_{pick.topic[0] if pick.topic else rng.choice(WORDS)}_{number:03d}"
    description = _sentence(pick, 6, 14)
    body_lines = [_sentence(pick, 8, 20) + "."]
    if kind in ("feedback", "project"):
        body_lines += [
            "",
            f"**Why:** {_sentence(pick, 6, 16)}.",
            f"**How to apply:** {_sentence(pick, 6, 16)}.",
        ]
    body_lines += [
        "",
        *(f"- {_sentence(pick, 4, 12)}" for _ in range(rng.randint(1, 6))),
    ]
    if number % 3 == 0:  # the current release's nested dialect
        front = (
            f"name: {name}\n"
            f"description: {description}\n"
            "metadata:\n"
            "  node_type: memory\n"
            f"  type: {kind}\n"
            f"  originSessionId: {rng.getrandbits(64):016x}\n"
            f"  modified: 2026-11-{1 + number % 28:02d}T10:14:00Z\n"
        )
    else:
        front = f"name: {name}\ndescription: {description}\ntype: {kind}\n"
    text = f"---\n{front}---\n" + "\n".join(body_lines) + "\n"
    return f"{name}.md", name, description, text.encode("utf-8")


def make_memory_dir(
    memory_dir: str,
    files: int,
    *,
    seed: int = 0,
    terms: tuple[str, ...] | None = None,
) -> None:
    """Fill `memory_dir` with `files` topic files and a MEMORY.md linking each.

    `terms` (from `vocabulary()`): write each file about its own topic, as
    real memory is, instead of from the 44 shared WORDS.
    """
    rng = random.Random(seed)
    os.makedirs(memory_dir, exist_ok=True)
    index = ["# Memory index", ""]
    for number in range(files):
        relpath, name, description, data = _topic(rng, number, terms)
        with open(os.path.join(memory_dir, relpath), "wb") as handle:
            handle.write(data)
        title = name.replace("_", " ")
        index.append(f"- [{title}]({relpath}) — {description[:80]}")
    with open(os.path.join(memory_dir, "MEMORY.md"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(index) + "\n")


def make_corpus(
    base: str,
    *,
    projects: int = 100,
    files: int = 100,
    terms: tuple[str, ...] | None = None,
) -> list[str]:
    """Create `projects` memory dirs of `files` topic files in `base`; return them."""
    dirs = []
    for number in range(projects):
        memory_dir = os.path.join(
            base, "projects", f"-home-dev-src-project{number:03d}", "memory"
        )
        make_memory_dir(memory_dir, files, seed=number, terms=terms)
        dirs.append(memory_dir)
    return dirs


def isolated_env(root: str) -> dict[str, str]:
    """Return os.environ without CLAUDE_/MEMD_/XDG_ names; HOME and XDG dirs in root."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CLAUDE_", "MEMD_", "XDG_", "NOTIFY_SOCKET"))
    }
    for name in ("home", "config", "cache", "state", "runtime"):
        os.makedirs(os.path.join(root, name), mode=0o700, exist_ok=True)
    env.update(
        HOME=os.path.join(root, "home"),
        XDG_CONFIG_HOME=os.path.join(root, "config"),
        XDG_CACHE_HOME=os.path.join(root, "cache"),
        XDG_STATE_HOME=os.path.join(root, "state"),
        XDG_RUNTIME_DIR=os.path.join(root, "runtime"),
        MEMD_MANAGED_SETTINGS_PATH=os.path.join(root, "managed-settings.json"),
    )
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("--projects", type=int, default=100)
    parser.add_argument("--files", type=int, default=100)
    args = parser.parse_args()
    dirs = make_corpus(args.base, projects=args.projects, files=args.files)
    print(f"wrote {len(dirs)} memory dirs x {args.files} topic files under {args.base}")


if __name__ == "__main__":
    main()
