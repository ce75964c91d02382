"""Host patterns: which hosts a confined agent may reach (`sandbox_network = ["api.anthropic.com",
"*.openai.com"]`), decided on the name it asked for, in time linear in that name.

A pattern is a host name (`api.anthropic.com`: that host only), `*.` and a name (`*.openai.com`: every
name below it, at any depth, never `openai.com` itself: list both to allow both, as Anthropic's
sandbox runtime reads them), or an IP address (`127.0.0.1`, `::1`: that address, asked for as such).
Names compare without case and without a final dot. A name whose last label is all digits is no
name: `127.1` or `2130706433` are addresses to a resolver, and so never match a name pattern.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

MAX_NAME = 253  # the longest a DNS name can be
_LABEL = re.compile(r"[a-z0-9_-]{1,63}")  # no quantifier over a group: no backtracking
WILDCARD = "*."

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class _Node:
    """One label of the patterns, right to left: `exact` ends a name pattern here, `below` a
    wildcard's (any name strictly under this one)."""

    __slots__ = ("below", "children", "exact")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.exact = False
        self.below = False


class HostPatterns:
    """The hosts one preset opens. `allows(host)` walks the host's labels once, right to left."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self._root = _Node()
        self._addresses: set[IpAddress] = set()
        for text in patterns:
            pattern = host_pattern(text)
            address = as_address(pattern)
            if address is not None:
                self._addresses.add(address)
                continue
            wild = pattern.startswith(WILDCARD)
            node = self._root
            for label in reversed(pattern.removeprefix(WILDCARD).split(".")):
                node = node.children.setdefault(label, _Node())
            if wild:
                node.below = True
            else:
                node.exact = True

    def allows(self, host: str) -> bool:
        """Whether `host` (as a client names it: a name, an address, `[v6]`) is one of ours."""
        address = as_address(host)
        if address is not None:
            return address in self._addresses
        name = host_name(host)
        if name is None:
            return False
        labels = name.split(".")
        node = self._root
        for depth in range(len(labels) - 1, -1, -1):
            child = node.children.get(labels[depth])
            if child is None:
                return False
            node = child
            if node.below and depth > 0:
                return True
        return node.exact


def host_pattern(text: str) -> str:
    """`text` as a pattern (names lower-cased, without a final dot), or ValueError."""
    if as_address(text) is not None:
        return text.strip("[]").lower()
    name = host_name(text.removeprefix(WILDCARD))
    if name is None:
        raise ValueError(f"not a host name: {text!r}")
    return WILDCARD + name if text.startswith(WILDCARD) else name


def host_name(text: str) -> str | None:
    """`text` as a DNS name (lower case, no final dot), or None when it is none (too long, a bad
    label, or all digits at the end)."""
    name = text.lower().removesuffix(".")
    if not name or len(name) > MAX_NAME:
        return None
    labels = name.split(".")
    if not all(_LABEL.fullmatch(label) for label in labels) or labels[-1].isdigit():
        return None
    return name


def as_address(text: str) -> IpAddress | None:
    """The IP address `text` spells in full (`[::1]` as `::1`), or None."""
    try:
        return ipaddress.ip_address(text[1:-1] if text.startswith("[") and text.endswith("]") else text)
    except ValueError:
        return None
