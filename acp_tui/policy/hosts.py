"""Host patterns: which hosts a confined agent may reach (`sandbox_network = ["api.anthropic.com",
"*.openai.com"]`), decided on the name it asked for, in time linear in that name.

A pattern is a host name (`api.anthropic.com`: that host only), `*.` and a name (`*.openai.com`: every
name below it, at any depth, never `openai.com` itself: list both to allow both, as Anthropic's
sandbox runtime reads them), or an IP address (`127.0.0.1`, `::1`: that address, asked for as such).
Names compare without case and without a final dot. A name whose last label is all digits is no
name: `127.1` or `2130706433` are addresses to a resolver, and so never match a name pattern.

What a listed name resolves to is whoever runs its DNS's to say (any name below a wildcard, too),
so a name never leads to this machine, as Anthropic's sandbox runtime decides (`refusal`): not to
a loopback, link-local (a cloud's instance metadata), unspecified, multicast or broadcast address,
a cloud's metadata address outside those, nor an address of this machine's own, an IPv4 address
carried in an IPv6 one judged as itself; unless that address is listed itself, or the name is a
loopback name (`localhost` and the names below it, RFC 6761), which leads to a loopback address and
nothing else. Private ranges (10/8, 192.168/16, fc00::/7) stay open: an intranet's names are a
legitimate thing to list.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable

MAX_NAME = 253  # the longest a DNS name can be
_LABEL = re.compile(r"[a-z0-9_-]{1,63}")  # no quantifier over a group: no backtracking
WILDCARD = "*."

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Never reached by a name unless listed (see the module's doc), each with what a refusal says.
_NEVER_BY_NAME = [
    (ipaddress.ip_network(network), why)
    for networks, why in (
        (("127.0.0.0/8", "::1/128"), "a loopback address"),
        (("0.0.0.0/8", "::/128"), "an unspecified address"),  # 0.0.0.0 connects to this machine
        (("169.254.0.0/16", "fe80::/10"), "a link-local address"),
        (("224.0.0.0/4", "ff00::/8", "255.255.255.255/32"), "a multicast or broadcast address"),
        (
            ("100.100.100.200/32", "168.63.129.16/32", "192.0.0.192/32", "fd00:ec2::/32", "fd20:ce::254/128"),
            "a cloud's metadata address",
        ),
    )
    for network in networks
]
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


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

    def refusal(self, name: str, address: IpAddress, ours: Callable[[IpAddress], bool]) -> str | None:
        """Why the listed `name` may not lead to `address` it resolved to (see the module's doc;
        `ours`: whether an address is one of this machine's), or None when it may."""
        if address in self._addresses:
            return None
        if host_name(name) == "localhost" or (host_name(name) or "").endswith(".localhost"):
            return None if address.is_loopback else "a loopback name that leads elsewhere"
        carried = [address, *_carried_ipv4(address)]
        why = next((why for network, why in _NEVER_BY_NAME for each in carried if each in network), None)
        return why or ("an address of this machine" if any(map(ours, carried)) else None)

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


def _carried_ipv4(address: IpAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 address an IPv6 one delivers to (mapped, 6to4, NAT64, IPv4-compatible), if any."""
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    if address.sixtofour is not None:
        return [address.sixtofour]
    if address in _NAT64 or (address in _IPV4_COMPATIBLE and int(address) > 1):
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    return []
