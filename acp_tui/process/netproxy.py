"""Our proxy for a confined agent that may reach some hosts only (`sandbox_network = [...]`): HTTP
CONNECT, and plain HTTP in absolute form (`GET http://host/path`), allowed by the name asked for.

The agent's network namespace has nothing but a loopback, where it finds this proxy (the launcher
hands us a listener made there; `HTTP_PROXY` and its kin name it). What it may not reach is refused
with a 403 and reported (`on_refused(host, port)`), never resolved; what it may is resolved here,
outside, and spliced both ways. Bounded, whatever a client does: a request head of at most
`HEAD_BYTES`, complete within `HEAD_SECONDS` (a slow client is dropped, not waited for), at most
`MAX_CONNECTIONS` at once (more are closed at once), and buffers of a fixed size each way (a reader
waits while its writer drains).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from acp_tui.policy.hosts import HostPatterns, as_address

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
            await _splice(reader, writer, up_reader, upstream)
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
                failure: OSError = OSError(f"{host} has no address")
                for address in addresses:
                    try:
                        return await asyncio.open_connection(address, port, limit=CHUNK)
                    except OSError as exc:
                        failure = exc
                raise failure
        except (OSError, TimeoutError) as exc:
            raise _BadRequest(502, f"could not reach {host}:{port}: {exc.strerror or exc}") from None


def parse_request(head: bytes) -> _Request:
    """The host and port a request head asks for (CONNECT host:port, or an absolute http:// URL),
    or `_BadRequest`."""
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
        raise _BadRequest(400, "not an HTTP/1 request")
    method, target, version = parts
    text = target.decode("latin-1")
    if method == b"CONNECT":
        host, _, number = text.rpartition(":")
        return _Request(_unbracketed(host), _port(number), None)
    url = urllib.parse.urlsplit(text)
    if url.scheme.lower() != "http" or not url.hostname:
        raise _BadRequest(400, "a proxy request names an http:// URL (or uses CONNECT)")
    try:
        port = url.port or 80
    except ValueError:
        raise _BadRequest(400, "not a port") from None
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    kept = [line for line in lines[1:] if line and line.split(b":", 1)[0].strip().lower() not in _HOP_BY_HOP]
    out = b"\r\n".join([b" ".join([method, path.encode("latin-1"), version]), *kept, b"Connection: close"])
    return _Request(url.hostname, port, out + b"\r\n\r\n")


def _unbracketed(host: str) -> str:
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 5 and 0 < int(text) < 65536):
        raise _BadRequest(400, "not a port")
    return int(text)


def _response(status: int, reason: str) -> bytes:
    words = {400: "Bad Request", 403: "Forbidden", 408: "Timeout", 431: "Too Large", 502: "Bad Gateway"}
    body = f"acp-tui sandbox: {reason}\n".encode("latin-1", "replace")
    head = f"HTTP/1.1 {status} {words[status]}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}"
    return head.encode() + b"\r\nConnection: close\r\n\r\n" + body


async def _splice(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    upstream: asyncio.StreamWriter,
) -> None:
    """Both ways until both have ended; an end half-closes the other side (a request's end is not
    its answer's), a broken side ends both."""
    ways = [asyncio.ensure_future(_copy(reader, upstream)), asyncio.ensure_future(_copy(up_reader, writer))]
    try:
        for way in asyncio.as_completed(ways):
            if not await way:
                break
    finally:
        for way in ways:
            way.cancel()
        await asyncio.gather(*ways, return_exceptions=True)


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
