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


def loads(data: str | bytes) -> object:
    """Return the value of the JSON document `data`, as `json.loads(data)` does."""
    if isinstance(data, bytes):
        if _scan is None or data[:3] == b"\xef\xbb\xbf" or b"\0" in data[:4]:
            return _json_module_loads(data)
        text = data.decode("utf-8", "surrogatepass")
    else:
        text = data
    if _scan is None or text[:1] == "\ufeff":
        return _json_module_loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
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


def _json_module_loads(data: str | bytes) -> object:
    import json

    return json.loads(data)
