"""Our proxy for a confined agent that may reach some hosts only (`sandbox_network = [...]`): HTTP
CONNECT, and plain HTTP in absolute form (`GET http://host/path`), allowed by the name asked for.

The agent's network namespace has nothing but a loopback, where it finds this proxy (the launcher
hands us a listener made there; `HTTP_PROXY` and its kin name it). What it may not reach is refused
with a 403 and reported (`on_refused(host, port)`), never resolved; what it may is resolved here,
outside, once, and the address connected to is one the name may lead to (`HostPatterns.refusal`:
never this machine, unless listed); then spliced both ways. Plain HTTP is one request per
connection, sent on as a server can read it only one way: its request line and header lines
strictly as RFC 9112 spells them (no bare CR or LF, no folded line, no space before a colon), its
Host the URL's (RFC 9112 3.2.2: a proxy replaces it), its body the length its single
Content-Length says (a chunked one is refused: 411), and nothing after it: a server that answers
many names never sees a request for another. Bounded, whatever a client does: a request head of at
most `HEAD_BYTES`, complete within `HEAD_SECONDS` (a slow client is dropped, not waited for), at most
`MAX_CONNECTIONS` at once (more are closed at once), and buffers of a fixed size each way (a reader
waits while its writer drains).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from acp_tui.policy.hosts import HostPatterns, IpAddress, as_address

HEAD_BYTES = 16 * 1024
HEAD_SECONDS = 10.0
CONNECT_SECONDS = 15.0
MAX_CONNECTIONS = 64
CHUNK = 64 * 1024
_HOP_BY_HOP = {
    b"connection",
    b"proxy-connection",
    b"keep-alive",
    b"proxy-authorization",
    b"proxy-authenticate",
    b"te",
    b"trailer",
    b"upgrade",
}

_REPLACED = _HOP_BY_HOP | {b"host"}  # and those the Connection header names; ours go instead
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110's token: a method, a header's name
_VISIBLE = re.compile(rb"[\x21-\x7e\x80-\xff]+")  # a request target: no control, no space
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]


class _BadRequest(Exception):
    """The client's request is not one we serve: answered with this status and reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


@dataclass(frozen=True)
class _Request:
    host: str  # as the client named it (an IPv6 address without its brackets)
    port: int
    head: bytes | None  # for plain HTTP: the head to send on (origin form, `Connection: close`)
    body: int = 0  # for plain HTTP: the length of the body that follows the head


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses of `host`, as this machine resolves them."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class HostProxy:
    """One run's proxy: serves the listener it is given until `aclose()`."""

    def __init__(
        self,
        hosts: HostPatterns,
        on_refused: Callable[[str, int], None],
        *,
        resolve: Resolver = system_resolver,
        max_connections: int = MAX_CONNECTIONS,
        head_seconds: float = HEAD_SECONDS,
    ) -> None:
        self._hosts = hosts
        self._on_refused = on_refused
        self._resolve = resolve
        self._max_connections = max_connections
        self._head_seconds = head_seconds
        self._server: asyncio.Server | None = None
        self._clients: set[asyncio.Task[None]] = set()
        self._closed = False

    async def serve(self, listener: socket.socket) -> None:
        """Accept the agent's connections on `listener` (ours to close from now on)."""
        if self._closed:
            listener.close()
            return
        self._server = await asyncio.start_server(self._client, sock=listener, limit=HEAD_BYTES)

    async def aclose(self) -> None:
        """Stop accepting and end every connection; idempotent."""
        self._closed = True
        if self._server is not None:
            self._server.close()
        clients, self._clients = set(self._clients), set()
        for task in clients:
            task.cancel()
        for task in clients:
            with contextlib.suppress(BaseException):
                await task

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if self._closed or task is None or len(self._clients) >= self._max_connections:
            writer.transport.abort()
            return
        self._clients.add(task)
        upstream: asyncio.StreamWriter | None = None
        try:
            request = await self._read_request(reader)
            if not self._hosts.allows(request.host):
                self._on_refused(request.host, request.port)
                raise _BadRequest(403, f"{request.host}:{request.port} is not a host this agent may reach")
            up_reader, upstream = await self._connect(request.host, request.port)
            if request.head is None:
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                upstream.write(request.head)
            await _splice(reader, writer, up_reader, upstream, None if request.head is None else request.body)
        except _BadRequest as exc:
            with contextlib.suppress(OSError):
                writer.write(_response(exc.status, str(exc)))
                await writer.drain()
        except (OSError, EOFError, asyncio.IncompleteReadError):
            pass  # the client left, or a side of the tunnel broke: nothing to say to anyone
        finally:
            self._clients.discard(task)
            for end in (writer, upstream):
                if end is not None:
                    end.transport.abort()

    async def _read_request(self, reader: asyncio.StreamReader) -> _Request:
        try:
            async with asyncio.timeout(self._head_seconds):
                head = await reader.readuntil(b"\r\n\r\n")
        except TimeoutError:
            raise _BadRequest(408, "the request took too long") from None
        except asyncio.LimitOverrunError:
            raise _BadRequest(431, "the request head is too large") from None
        return parse_request(head)

    async def _connect(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            async with asyncio.timeout(CONNECT_SECONDS):
                addresses = [host] if as_address(host) else await self._resolve(host, port)
        except (OSError, TimeoutError) as exc:
            raise _BadRequest(502, f"could not reach {host}:{port}: {exc.strerror or exc}") from None
        allowed, why = self._where_it_may_lead(host, addresses)
        if not allowed:
            self._on_refused(host, port)
            raise _BadRequest(403, f"{host}:{port} resolved to {why}, which a name may not lead to")
        try:
            async with asyncio.timeout(CONNECT_SECONDS):
                failure: OSError = OSError(f"{host} has no address")
                for address in allowed:
                    try:
                        return await asyncio.open_connection(address, port, limit=CHUNK)
                    except OSError as exc:
                        failure = exc
                raise failure
        except (OSError, TimeoutError) as exc:
            raise _BadRequest(502, f"could not reach {host}:{port}: {exc.strerror or exc}") from None

    def _where_it_may_lead(self, host: str, addresses: Sequence[str]) -> tuple[list[str], str]:
        """The addresses `host` resolved to that it may lead to, and why the others may not."""
        if as_address(host):
            return list(addresses), ""  # an address asked for as such: listed, or refused before
        allowed, why = [], "no address"
        for text in addresses:
            address = as_address(text.partition("%")[0])  # a link-local address's %scope aside
            refusal = (
                "an unreadable address" if address is None else self._hosts.refusal(host, address, _ours)
            )
            if refusal is None:
                allowed.append(text)
            else:
                why = refusal
        return allowed, why


def parse_request(head: bytes) -> _Request:
    """The host and port a request head asks for (CONNECT host:port, or an absolute http:// URL),
    and for plain HTTP the head to send on and its body's length; or `_BadRequest`."""
    lines = head.removesuffix(b"\r\n\r\n").split(b"\r\n")
    parts = lines[0].split(b" ")
    if (
        len(parts) != 3
        or parts[2] not in (b"HTTP/1.0", b"HTTP/1.1")
        or not _TOKEN.fullmatch(parts[0])
        or not _VISIBLE.fullmatch(parts[1])
    ):
        raise _BadRequest(400, "not an HTTP/1 request")
    method, target, version = parts
    fields = [_field(line) for line in lines[1:]]
    text = target.decode("latin-1")
    if method == b"CONNECT":
        host, _, number = text.rpartition(":")
        return _Request(_unbracketed(host), _port(number), None)
    url = urllib.parse.urlsplit(text)
    if url.scheme.lower() != "http" or not url.hostname or url.username is not None:
        raise _BadRequest(400, "a proxy request names an http:// URL (or uses CONNECT)")
    try:
        port = url.port or 80
    except ValueError:
        raise _BadRequest(400, "not a port") from None
    dropped = _REPLACED.union(*(_words(value) for name, value in fields if name == b"connection"))
    if any(name == b"transfer-encoding" for name, _ in fields):
        raise _BadRequest(411, "a plain HTTP body needs a Content-Length")
    lengths = [value.strip() for name, value in fields if name == b"content-length"]
    if len(lengths) > 1 or not all(length.isdigit() for length in lengths):
        raise _BadRequest(400, "not one Content-Length")
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    authority = url.netloc.encode("latin-1")
    kept = [line for line, (name, _) in zip(lines[1:], fields, strict=True) if name not in dropped]
    out = [
        b" ".join([method, path.encode("latin-1"), version]),
        b"Host: " + authority,
        *kept,
        b"Connection: close",
    ]
    return _Request(url.hostname, port, b"\r\n".join(out) + b"\r\n\r\n", int(lengths[0]) if lengths else 0)


def _field(line: bytes) -> tuple[bytes, bytes]:
    """A header line's name (lower case) and value, or `_BadRequest` for anything but RFC 9112's
    `name: value` (a line a server could read another way: a bare CR or LF, folded, a space
    before the colon)."""
    name, colon, value = line.partition(b":")
    if not colon or not _TOKEN.fullmatch(name) or b"\r" in value or b"\n" in value:
        raise _BadRequest(400, "not an HTTP/1 header line")
    return name.lower(), value


def _words(value: bytes) -> set[bytes]:
    return {word.strip().lower() for word in value.split(b",")}


def _ours(address: IpAddress) -> bool:
    """Whether `address` is one of this machine's: only then can a socket be bound to it."""
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((str(address), 0))
    except OSError:
        return False
    return True


def _unbracketed(host: str) -> str:
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 5 and 0 < int(text) < 65536):
        raise _BadRequest(400, "not a port")
    return int(text)


def _response(status: int, reason: str) -> bytes:
    words = {
        400: "Bad Request",
        403: "Forbidden",
        408: "Timeout",
        411: "Length Required",
        431: "Too Large",
        502: "Bad Gateway",
    }
    body = f"acp-tui sandbox: {reason}\n".encode("latin-1", "replace")
    head = f"HTTP/1.1 {status} {words[status]}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}"
    return head.encode() + b"\r\nConnection: close\r\n\r\n" + body


async def _splice(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    upstream: asyncio.StreamWriter,
    body: int | None,
) -> None:
    """Both ways until both have ended (the client's way, `body` bytes of it when given); an end
    half-closes the other side (a request's end is not its answer's), a broken side ends both."""
    ways = [
        asyncio.ensure_future(
            _copy(reader, upstream) if body is None else _copy_body(reader, upstream, body)
        ),
        asyncio.ensure_future(_copy(up_reader, writer)),
    ]
    try:
        for way in asyncio.as_completed(ways):
            if not await way:
                break
    finally:
        for way in ways:
            way.cancel()
        await asyncio.gather(*ways, return_exceptions=True)


async def _copy_body(source: asyncio.StreamReader, sink: asyncio.StreamWriter, size: int) -> bool:
    """Copy `size` bytes and no more (what follows is never sent); True once they all went."""
    try:
        while size:
            chunk = await source.read(min(size, CHUNK))
            if not chunk:
                return False
            size -= len(chunk)
            sink.write(chunk)
            await sink.drain()
    except OSError:
        return False
    return True


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> bool:
    """Copy to the end; True when it ended cleanly (and the sink was told), False when it broke."""
    try:
        while chunk := await source.read(CHUNK):
            sink.write(chunk)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except OSError:
        return False
    return True
