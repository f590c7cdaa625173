"""The few JavaScript string and number semantics the reference relies on.

The reference runs on V8, so its "length" is UTF-16 code units, its `trim()`
has its own whitespace set, `toFixed` rounds ties half-up on the exact double,
and its path hash is Java's `String.hashCode` (REFERENCE.md §2-3). Python
differs on every one of these, so they live here, spelled out.

Hot path: imported by `paths`, so only the stdlib's near-free modules load at
import time (`decimal` loads inside the one function that needs it).
"""

from __future__ import annotations

# ECMAScript WhiteSpace + LineTerminator: TAB VT FF SP NBSP ZWNBSP, Zs, LF CR LS PS.
# Unlike str.strip() this keeps U+001C..U+001F and U+0085.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_BASE36_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_BELOW_ASTRAL_LEAD = bytes(range(0xF0))  # every byte but a 4-byte sequence's lead


def utf16_units(s: str) -> bytes:
    """Return `s` as UTF-16-LE bytes, two per code unit; lone surrogates kept."""
    return s.encode("utf-16-le", "surrogatepass")


def from_utf16_units(data: bytes) -> str:
    """Decode UTF-16-LE bytes; half a surrogate pair stays a lone surrogate."""
    return data.decode("utf-16-le", "surrogatepass")


def utf16_len(s: str) -> int:
    """Return the JS `length` of `s`: UTF-16 code units (an astral char counts 2)."""
    if s.isascii():
        return len(s)
    # One unit per code point, plus one per astral one: the lead bytes F0-F4 of
    # UTF-8's 4-byte sequences (a lone surrogate takes 3 bytes). UTF-8, not
    # UTF-16: its codec is built in, while loading UTF-16's costs a hook 0.1 ms.
    utf8 = s.encode("utf-8", "surrogatepass")
    return len(s) + len(utf8.translate(None, _BELOW_ASTRAL_LEAD))


def js_trim(s: str) -> str:
    """Return `s` trimmed the way `String.prototype.trim` trims."""
    return s.strip(JS_WHITESPACE)


def js_number_to_string(x: int | float) -> str:
    """Return `String(x)` for a JS number (integers without `.0`, `NaN`, `Infinity`)."""
    if isinstance(x, int):
        return str(x)
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"  # String(-0) is "0"
    if x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    magnitude = abs(x)
    if 1e-6 <= magnitude < 1e21:
        # repr is the shortest round-trip digits, as in JS; only the notation differs.
        from decimal import Decimal

        return format(Decimal(repr(x)), "f")
    mantissa, _, exponent = repr(x).partition("e")
    sign = "-" if exponent.startswith("-") else "+"
    return f"{mantissa}e{sign}{int(exponent.lstrip('+-'))}"


def js_to_fixed_1(x: float) -> str:
    """Return `x.toFixed(1)`: ties on the exact double round half away from zero."""
    if x != x or x in (float("inf"), float("-inf")) or abs(x) >= 1e21:
        return js_number_to_string(x)
    from decimal import ROUND_HALF_UP, Decimal

    if x == 0:
        return "0.0"  # (-0).toFixed(1) drops the sign; (-0.04).toFixed(1) keeps it
    return format(Decimal(x).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP), "f")


def java_string_hash(s: str) -> int:
    """Return Java's `String.hashCode` of `s` over UTF-16 units, signed 32-bit."""
    units = utf16_units(s)
    h = 0
    for i in range(0, len(units), 2):
        h = (h * 31 + (units[i] | units[i + 1] << 8)) & 0xFFFFFFFF
    return h - 0x100000000 if h & 0x80000000 else h


def to_base36(n: int) -> str:
    """Return `n.toString(36)` for an integer, lowercase digits."""
    if n == 0:
        return "0"
    sign = "-" if n < 0 else ""
    n = abs(n)
    digits = []
    while n:
        n, rem = divmod(n, 36)
        digits.append(_BASE36_DIGITS[rem])
    return sign + "".join(reversed(digits))
