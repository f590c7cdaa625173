"""The fix a rename offers: the new path, on the line that named the old one (pure).

`memd fix` never rewrites a memory's claims on its own: these edits are
planned only for `memd fix --renames` (applied, with undo like every fix)
and shown by `memd fix --dry-run`. Only a rename whose final path is at
`HEAD` is offered; the claim is replaced where it stands (its line, at its
column when the text is still there), as written: `./src/a.py:12` becomes
`./src/b.py:12`, a bare `a.py` becomes `b.py`.
"""

from __future__ import annotations

from memd.lint.fixes import FileEdit
from memd.truth.claims import NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from memd.truth.judge import Finding


def plan_renames(
    texts: Mapping[str, bytes], findings: Iterable[tuple[str, Finding]]
) -> list[FileEdit]:
    """One edit per file naming renamed paths (relpath -> bytes in `texts`)."""
    by_file: dict[str, list[Finding]] = {}
    for relpath, finding in findings:
        if finding.renamed_to is not None and finding.path is not None:
            by_file.setdefault(relpath, []).append(finding)
    edits = []
    for relpath, renamed in sorted(by_file.items()):
        data = texts.get(relpath)
        if data is None:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue  # never rewrite what memd cannot read back the same
        lines = text.split("\n")
        said = []
        for finding in sorted(renamed, key=lambda f: (f.claim.line, -f.claim.column)):
            new_text = _renamed_text(finding)
            number = finding.claim.line - 1
            if new_text is None or not 0 <= number < len(lines):
                continue
            line = lines[number]
            at = finding.claim.column - 1
            if line[at : at + len(finding.claim.text)] != finding.claim.text:
                at = line.find(finding.claim.text)
            if at < 0:
                continue
            lines[number] = line[:at] + new_text + line[at + len(finding.claim.text) :]
            said.append(f"`{finding.claim.text}` -> `{new_text}`")
        if said:
            new = "\n".join(lines).encode("utf-8")
            if new != data:
                edits.append(
                    FileEdit(
                        relpath=relpath,
                        old=data,
                        new=new,
                        reason="names what git renamed: " + ", ".join(said),
                    )
                )
    return edits


def _renamed_text(finding: Finding) -> str | None:
    old, new = finding.path, finding.renamed_to
    if old is None or new is None:
        return None
    text = finding.claim.text
    if finding.claim.kind == NAME:
        old_name, new_name = old.rsplit("/", 1)[-1], new.rsplit("/", 1)[-1]
        return text.replace(old_name, new_name, 1) if old_name in text else None
    return text.replace(old, new, 1) if old in text else None
