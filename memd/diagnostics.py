"""The shape of every finding memd reports: a rule code, a severity and a place."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostic:
    """One finding about one file.

    `path` is relative to the memory directory (POSIX separators) when the file
    lives in one, otherwise the path the user gave. `line` and `column` are
    1-based; `None` when the finding is about the whole file.
    """

    code: str
    name: str
    severity: Severity
    path: str
    message: str
    hint: str = ""
    line: int | None = None
    column: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": str(self.severity),
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "hint": self.hint,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Diagnostic:
        line, column = data.get("line"), data.get("column")
        return cls(
            code=str(data["code"]),
            name=str(data["name"]),
            severity=Severity(str(data["severity"])),
            path=str(data["path"]),
            message=str(data["message"]),
            hint=str(data.get("hint", "")),
            line=line if isinstance(line, int) else None,
            column=column if isinstance(column, int) else None,
        )


# Everything str.splitlines() breaks on: user text (a `type`, a key, a file
# name) shown in a message is escaped so a finding stays on one line.
_LINE_BREAKS = MappingProxyType(
    {ord(c): repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}
)


def one_line(text: str) -> str:
    """Return `text` with every line break escaped (`\\n`), for messages and hints."""
    return text.translate(_LINE_BREAKS)


def escape_surrogates(text: str) -> str:
    """Return `text` with each lone surrogate written as a visible escape.

    A file name that is not UTF-8 holds its undecodable bytes as U+DC80-U+DCFF
    (`surrogateescape`); each reads back as its byte, `\\xe9`. Any other lone
    surrogate reads `\\ud83d`. Nothing else changes, so valid text is returned
    as it came.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(_escape_surrogate(c) for c in text)
    return text


def _escape_surrogate(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if 0xD800 <= code <= 0xDFFF:
        return f"\\u{code:04x}"
    return char


def count_by_severity(diagnostics: tuple[Diagnostic, ...]) -> tuple[int, int, int]:
    """Return (errors, warnings, infos)."""
    errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
    warnings = sum(1 for d in diagnostics if d.severity is Severity.WARNING)
    return errors, warnings, len(diagnostics) - errors - warnings
