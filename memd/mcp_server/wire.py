"""The one gate on `memd mcp`'s stdin: lines framed with a bound, then checked.

Both readers, the lobby (`memd.mcp_server.lobby`) and the SDK's stand-in
stdin (`memd.mcp_server.server`), take their lines from a `LineFramer` and
pass each through `check_line`, so every request meets the same rules
whoever answers it:

- a line is at most `MAX_LINE_BYTES`; a longer one is read through (the
  memory it holds stays within the bound) and refused when it ends;
- a line must be UTF-8, JSON nested at most `MAX_MESSAGE_DEPTH` deep, with
  no lone surrogate (`"\\ud800"`) in any string, which no UTF-8 peer can
  read back and the SDK's reader would drop without a word.

A refusal answers under the request's own id whenever one can be found (the
id of an over-long line is recovered by `_IdScanner`, one linear pass
that keeps only the top-level object's keys and short values), so a client
waiting on that id gets its answer instead of waiting forever; only a line
with no usable id is answered with `"id": null`, as JSON-RPC says.

Standard library only: the lobby runs before the SDK is imported.
"""

from __future__ import annotations

from memd import fastjson

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

MAX_LINE_BYTES = 8 * 1024 * 1024  # a memory_write of a topic file, escaped, fits
MAX_MESSAGE_DEPTH = 64  # JSON-RPC nests a few levels; the parsers recurse
READ_BYTES = 65536
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
# Of an over-long line only the top level is kept to find its id: keys and
# values up to this long (a longer value stands as "" or 0).
_MAX_KEPT_VALUE = 1024
_MAX_SKELETON = 64 * 1024


class Refusal:
    """A line that is not a message memd serves: the error to answer it with."""

    __slots__ = ("code", "message", "request_id")

    def __init__(self, code: int, message: str, request_id: object = None) -> None:
        self.code = code
        self.message = message
        self.request_id = request_id

    def reply(self) -> bytes:
        """The JSON-RPC error response, one line."""
        reply = {
            "jsonrpc": "2.0",
            "id": self.request_id,
            "error": {"code": self.code, "message": self.message},
        }
        return (fastjson.dumps(reply) + "\n").encode("utf-8")


def usable_id(message: object) -> str | int | None:
    """The request id of a parsed message if a reply can carry it, else None."""
    if not isinstance(message, dict):
        return None
    value = message.get("id")
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return None
    return value


def check_line(line: bytes) -> object:
    """Return the message a line holds, or the `Refusal` that answers it."""
    try:
        return fastjson.loads(line, max_depth=MAX_MESSAGE_DEPTH, strict_text=True)
    except RecursionError:
        return Refusal(
            PARSE_ERROR, f"Parse error: nested deeper than {MAX_MESSAGE_DEPTH}"
        )
    except ValueError as error:
        problem = str(error)
    # Not a message memd serves; parse it leniently only to find whom to tell.
    try:
        lenient = fastjson.loads(
            line.decode("utf-8", "surrogateescape"), max_depth=MAX_MESSAGE_DEPTH
        )
    except (ValueError, RecursionError):
        return Refusal(PARSE_ERROR, f"Parse error: {problem}")
    request_id = usable_id(lenient)
    if request_id is None:
        return Refusal(PARSE_ERROR, f"Parse error: {problem}")
    return Refusal(INVALID_REQUEST, f"Invalid request: {problem}", request_id)


def too_long(request_id: object) -> Refusal:
    mib = MAX_LINE_BYTES // (1024 * 1024)
    message = (
        f"request over {mib} MiB ({MAX_LINE_BYTES} bytes), not read; "
        "send less (a memory is one topic file)"
    )
    if request_id is None:
        return Refusal(PARSE_ERROR, f"Parse error: {message}")
    return Refusal(INVALID_REQUEST, f"Invalid request: {message}", request_id)


class LineFramer:
    """Bytes in, lines out: each line without its newline, or a `Refusal`.

    `feed` adds what was read; `next_item` returns the next whole line (or
    the refusal of an over-long one), None when more bytes are needed.
    `pending` is what was fed and not yet framed (the lobby's hand-over).
    """

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._max = max_line_bytes
        self._buffer = bytearray()
        self._searched = 0  # bytes of the buffer known to hold no newline
        self._skipping: _IdScanner | None = None  # inside an over-long line

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def pending(self) -> bytes:
        return bytes(self._buffer)

    def next_item(self) -> bytes | Refusal | None:
        buffer = self._buffer
        newline = buffer.find(b"\n", self._searched)
        if self._skipping is not None:
            scanner = self._skipping
            scanner.feed(bytes(buffer if newline < 0 else buffer[:newline]))
            if newline < 0:
                buffer.clear()
                self._searched = 0
                return None
            del buffer[: newline + 1]
            self._searched, self._skipping = 0, None
            return too_long(scanner.request_id())
        if newline < 0:
            self._searched = len(buffer)
            if len(buffer) > self._max:
                self._skipping = _IdScanner()
                return self.next_item()
            return None
        self._searched = 0
        if newline > self._max:
            scanner = _IdScanner()
            scanner.feed(bytes(buffer[:newline]))
            del buffer[: newline + 1]
            return too_long(scanner.request_id())
        line = bytes(buffer[:newline])
        del buffer[: newline + 1]
        return line

    def end(self) -> bytes | Refusal | None:
        """At end of input: the unterminated last line (or its refusal), if any."""
        if self._skipping is not None:
            scanner, self._skipping = self._skipping, None
            scanner.feed(bytes(self._buffer))
            self._buffer.clear()
            return too_long(scanner.request_id())
        if not self._buffer.strip():
            return None
        line = bytes(self._buffer)
        self._buffer.clear()
        if len(line) > self._max:
            scanner = _IdScanner()
            scanner.feed(line)
            return too_long(scanner.request_id())
        return line


class _IdScanner:
    """The top level of a JSON object, streamed in chunks, to read its `id` from.

    One pass with `re` jumps from one quote or bracket to the next: string
    bodies and nested values cost a search each, never a Python step per
    byte. What is kept, the skeleton, is the top-level object with every
    nested value written as 0 and every long value as "".
    """

    def __init__(self) -> None:
        import re  # only for an over-long line: the lobby's start-up does without

        self._string_stop: re.Pattern[bytes] = re.compile(rb'["\\]')
        self._structure: re.Pattern[bytes] = re.compile(rb'["{}\[\]]')
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._skeleton = bytearray()
        self._string_at = -1  # where the current top-level string starts
        self._overflow = False

    def feed(self, data: bytes) -> None:
        at, end = 0, len(data)
        while at < end:
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                    self._keep(data[at : at + 1])
                    at += 1
                    continue
                found = self._string_stop.search(data, at)
                stop = found.start() if found else end
                self._keep(data[at:stop])
                if found is None:
                    return
                self._keep(data[stop : stop + 1])
                if data[stop] == 0x5C:  # a backslash: the next byte is escaped
                    self._escaped = True
                else:
                    self._in_string = False
                    self._string_at = -1
                at = stop + 1
                continue
            found = self._structure.search(data, at)
            stop = found.start() if found else end
            self._keep(data[at:stop])
            if found is None:
                return
            char = data[stop]
            if char == 0x22:  # a quote opens a string
                self._in_string = True
                if self._depth == 1:
                    self._string_at = len(self._skeleton)
                self._keep(b'"')
            elif char in b"{[":
                self._keep(b"0")  # a nested value stands as 0 at the top level
                self._depth += 1
                if self._depth == 1:
                    self._keep(data[stop : stop + 1])
            else:
                if self._depth == 1:
                    self._keep(data[stop : stop + 1])
                self._depth -= 1
            at = stop + 1

    def _keep(self, data: bytes) -> None:
        if self._depth != 1 or self._overflow or not data:
            return
        if self._in_string and self._string_at >= 0:
            if len(self._skeleton) + len(data) - self._string_at > _MAX_KEPT_VALUE:
                del self._skeleton[self._string_at :]
                self._skeleton += b'""'
                self._string_at = -2  # the rest of this string is not kept
                return
        elif self._in_string:  # a long string already cut short
            return
        self._skeleton += data
        if len(self._skeleton) > _MAX_SKELETON:
            self._overflow = True

    def request_id(self) -> str | int | None:
        if self._overflow or self._depth != 0 or self._in_string:
            return None
        try:
            return usable_id(fastjson.loads(bytes(self._skeleton), max_depth=1))
        except (ValueError, RecursionError):
            return None
