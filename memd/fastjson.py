"""JSON through CPython's C accelerator `_json`, without importing `json` or `re`.

`import json` pulls in `re` and `enum` (about 7 ms), more than the hooks' whole
budget on the common PostToolUse call. `_json` is the C scanner and encoder the
`json` module itself uses, so `loads` and `dumps` give what `json.loads` and
`json.dumps(ensure_ascii=False)` give: the same values, the same text. Where
`_json` is missing (another Python), or the input needs the `json` module's
encoding detection (a BOM, UTF-16/32), they fall back to `json`.

Errors are ValueError, as `json`'s JSONDecodeError is one.
"""

from __future__ import annotations

_WHITESPACE = " \t\n\r"  # what json's decoder skips around a document
_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": -float("inf")}


class _ScannerContext:
    """The attributes `_json.make_scanner` reads, as `json.JSONDecoder()` sets them."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_CONSTANTS.__getitem__)


def _unsupported(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


try:
    import _json
except ImportError:  # not CPython: the json module does it all
    _scan = None
else:
    # The stub types the duck-typed context as `make_scanner` itself.
    _scan = _json.make_scanner(_ScannerContext())  # type: ignore[arg-type]


def loads(
    data: str | bytes, *, max_depth: int | None = None, strict_text: bool = False
) -> object:
    """Return the value of the JSON document `data`, as `json.loads(data)` does.

    Args:
        max_depth: refuse arrays and objects nested deeper than this before
            parsing (the C scanner recurses: a line of `[` is a RecursionError).
        strict_text: refuse bytes that are not UTF-8 and strings that hold a
            lone surrogate (`"\\ud83d"`), which no UTF-8 peer can read back.
    """
    if isinstance(data, bytes):
        if strict_text:
            try:
                data = data.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ValueError(f"not UTF-8: byte {error.start}") from None
        elif _scan is None or data[:3] == b"\xef\xbb\xbf" or b"\0" in data[:4]:
            if max_depth is not None:
                import json

                encoding = json.detect_encoding(data)
                refuse_deeper(data.decode(encoding, "surrogatepass"), max_depth)
            return _json_module_loads(data)
    text = data if isinstance(data, str) else data.decode("utf-8", "surrogatepass")
    if max_depth is not None:
        refuse_deeper(text, max_depth)
    value = _loads_text(text)
    if strict_text:
        _refuse_lone_surrogates(value)
    return value


def _loads_text(text: str) -> object:
    if _scan is None or text[:1] == "\ufeff":
        return _json_module_loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    except SystemError:
        # `_json` words a syntax error with `json.decoder.JSONDecodeError`, and
        # fails without an exception while that module is not loaded yet.
        return _json_module_loads(text)
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def dumps(value: object) -> str:
    """Return `value` as JSON text, as `json.dumps(value, ensure_ascii=False)` does."""
    if _scan is None:
        import json

        return json.dumps(value, ensure_ascii=False)
    # json.JSONEncoder(ensure_ascii=False).iterencode(value, _one_shot=True); a
    # fresh `markers` each call, as there, so a failed call leaves nothing behind.
    encode = _json.make_encoder(
        {},  # markers: a circular structure is a ValueError, as in json
        _unsupported,
        _json.encode_basestring,
        None,  # indent
        ": ",
        ", ",
        False,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )
    return "".join(encode(value, 0))


def refuse_deeper(text: str, limit: int) -> None:
    """Raise ValueError if brackets outside strings nest deeper than `limit`.

    One pass, linear in the text: string contents are skipped by `find`, and
    each quote's preceding backslashes are counted once.
    """
    if text.count("[") + text.count("{") <= limit:
        return  # the common case: too few brackets to nest that deep
    depth, at, end = 0, 0, len(text)
    while at < end:
        char = text[at]
        if char == '"':
            close = at
            while True:
                close = text.find('"', close + 1)
                if close < 0:
                    return  # an unterminated string: the parser says so
                slashes = 0
                while text[close - 1 - slashes] == "\\":
                    slashes += 1
                if slashes % 2 == 0:
                    break
            at = close + 1
            continue
        if char in "[{":
            depth += 1
            if depth > limit:
                raise ValueError(f"nested deeper than {limit}: char {at}")
        elif char in "]}":
            depth -= 1
        at += 1


def _refuse_lone_surrogates(value: object) -> None:
    """Raise ValueError if a string of `value` (key or item) is not valid Unicode."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as error:
                raise ValueError(
                    f"a string holds a lone surrogate: U+{ord(item[error.start]):04X}"
                ) from None
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _json_module_loads(data: str | bytes) -> object:
    import json

    return json.loads(data)
