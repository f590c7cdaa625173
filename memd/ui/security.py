"""The viewer's gate, as pure decisions: tokens, the Host and Origin rules, parameters.

The viewer can restore files and undo dreams, so it is treated like a
server on the internet (docs/ui.md):

- one random token per daemon start; `memd ui` passes it once in the URL,
  and the page swaps it for a cookie (`session_value`) and drops it;
- a CSRF value (`csrf_value`) in every form, checked with the Origin;
- the Host header must name the address and port the viewer listens on
  (`host_allowed`), so a DNS-rebound name never reaches a page;
- every parameter is checked by name (`parameter_refusal`): a project is
  memd's own id, a file a relpath that passes memd.relpath's rule, a
  revision a number. A parameter of any other name is refused;
- on Linux the connection must come from a process of the daemon's own
  user (`diag_request`/`diag_uid`: the kernel's sock_diag answer for that
  one socket; `peer_uid` over /proc/net/tcp where netlink is missing):
  every local user can reach a loopback port, and browsers share cookies
  across ports.

All comparisons of secrets are constant-time (`hmac.compare_digest`).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import socket
import struct

from memd.relpath import relpath_refusal

COOKIE_NAME = "memd_ui"
TOKEN_PARAMETER = "token"  # noqa: S105 -- the name of a query parameter
CSP = (
    "default-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'; object-src 'none'"
)
SECURITY_HEADERS = (
    ("content-security-policy", CSP),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "same-origin"),  # no-referrer would send `Origin: null`
    ("cache-control", "no-store"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
)
MAX_QUERY_CHARS = 500
_PROJECT_ID = re.compile(r"[0-9a-f]{16}")
_NUMBER = re.compile(r"[0-9]{1,9}")
_DIGEST = re.compile(r"[0-9a-f]{64}")


def _derive(token: str, purpose: bytes) -> str:
    return hmac.new(token.encode(), purpose, hashlib.sha256).hexdigest()


def session_value(token: str) -> str:
    """Return the cookie value the token is swapped for (never the token itself)."""
    return _derive(token, b"memd-ui-session")


def csrf_value(token: str) -> str:
    """Return the value every form carries and every POST must send back."""
    return _derive(token, b"memd-ui-csrf")


def same_secret(given: str | None, expected: str) -> bool:
    """Whether `given` equals `expected`, compared in constant time."""
    if not given:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def host_for(address: str, port: int) -> str:
    """Return how a Host header spells `address:port` (IPv6 in brackets)."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def allowed_hosts(addresses: tuple[str, ...], port: int) -> frozenset[str]:
    """Return the Host values the viewer answers: its addresses, and `localhost`
    when it listens on loopback (a rebinding attacker's name is never these)."""
    hosts = {host_for(address, port) for address in addresses}
    if any(ipaddress.ip_address(address).is_loopback for address in addresses):
        hosts.add(f"localhost:{port}")
    return frozenset(hosts)


def host_allowed(host: str | None, allowed: frozenset[str]) -> bool:
    """Whether the Host header is one of `allowed` (exact, lower-cased)."""
    return host is not None and host.strip().lower() in allowed


def origin_allowed(origin: str | None, allowed: frozenset[str]) -> bool:
    """Whether a POST's Origin is this viewer (`http://` + an allowed host)."""
    if not origin or not origin.startswith("http://"):
        return False
    return origin[len("http://") :].lower() in allowed


def is_loopback(address: str) -> bool:
    """Whether `address` (an IP literal) is a loopback address."""
    return ipaddress.ip_address(address).is_loopback


def parameter_refusal(name: str, value: str) -> str | None:
    """Return why a request parameter is refused, or None when it may be used.

    The only parameters the viewer reads: `id` (a project, memd's own id),
    `file` (a relpath inside that project's memory dir), `rev` and `gen`
    (numbers), `q` (free text: recall's search, the overview's name filter),
    `plan` (the digest of the fix plan a Compact page showed), `csrf`, and
    `token` (the gate's).
    """
    if name == "id":
        return None if _PROJECT_ID.fullmatch(value) else "not a project id"
    if name == "file":
        why = relpath_refusal(value)
        return None if why is None else f"not a relpath inside the memory dir: {why}"
    if name in ("rev", "gen"):
        return None if _NUMBER.fullmatch(value) else "not a number"
    if name == "plan":
        return None if _DIGEST.fullmatch(value) else "not a plan digest"
    if name == "q":
        return None if len(value) <= MAX_QUERY_CHARS else "query too long"
    if name in ("csrf", TOKEN_PARAMETER):
        return None if len(value) <= 128 else "too long"
    return "unknown parameter"


def _proc_address(address: str, port: int) -> str:
    """`address:port` as /proc/net/tcp{,6} spells it: 32-bit words in host order."""
    if ":" in address:
        raw = socket.inet_pton(socket.AF_INET6, address)
    else:
        raw = socket.inet_pton(socket.AF_INET, address)
    words = [raw[i : i + 4] for i in range(0, len(raw), 4)]
    hexed = "".join(f"{int.from_bytes(word, 'little'):08X}" for word in words)
    return f"{hexed}:{port:04X}"


def peer_uid(
    table: str, client: tuple[str, int], server: tuple[str, int]
) -> int | None:
    """Return the uid owning the client end of a loopback TCP connection.

    `table` is /proc/net/tcp (or tcp6) text; the client's socket is the row
    whose local address is `client` and remote address `server`. None when
    no row matches.
    """
    try:
        local = _proc_address(*client)
        remote = _proc_address(*server)
    except (OSError, ValueError):
        return None
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) > 7 and fields[1] == local and fields[2] == remote:
            return int(fields[7]) if fields[7].isdigit() else None
    return None


# sock_diag (linux/sock_diag.h, linux/inet_diag.h): one socket, looked up by
# its four-tuple, answered with its owner's uid; no table read that can miss
# a row while other sockets come and go (/proc/net/tcp is read in pages).
NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST = 1
_NLMSG_ERROR = 2
_NO_COOKIE = 0xFFFFFFFF
_ALL_STATES = 0xFFFFFFFF
_NLMSG_HEADER = struct.Struct("=IHHII")
_UID_AT = _NLMSG_HEADER.size + 4 + 48 + 12  # inet_diag_msg: after id, expires, queues


def diag_request(client: tuple[str, int], server: tuple[str, int]) -> bytes:
    """The netlink message asking the kernel for the client end of a TCP connection."""
    family = socket.AF_INET6 if ":" in client[0] else socket.AF_INET

    def address(text: str) -> bytes:
        return socket.inet_pton(family, text).ljust(16, b"\0")

    sockid = (
        struct.pack("!HH", client[1], server[1])
        + address(client[0])
        + address(server[0])
        + struct.pack("=III", 0, _NO_COOKIE, _NO_COOKIE)
    )
    body = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, _ALL_STATES)
    body += sockid
    header = _NLMSG_HEADER.pack(
        _NLMSG_HEADER.size + len(body), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0
    )
    return header + body


def diag_uid(reply: bytes) -> int | None:
    """The uid in the kernel's answer to `diag_request`; None for an error or none."""
    if len(reply) < _NLMSG_HEADER.size:
        return None
    _length, kind, _flags, _seq, _pid = _NLMSG_HEADER.unpack_from(reply)
    if kind != _SOCK_DIAG_BY_FAMILY or len(reply) < _UID_AT + 4:
        return None
    uid: int = struct.unpack_from("=I", reply, _UID_AT)[0]
    return uid
