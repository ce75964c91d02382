"""Where an agent runs when not here: a preset's `remote` URL, read with urllib.parse (the command
line of the carrier's client is `acp_tui.process.carriers`).

    ssh://[USER@]HOST[:PORT]
    docker://CONTAINER            podman://CONTAINER
    kubectl://[CONTEXT/]NAMESPACE/POD[/CONTAINER]

Three kubectl segments are NAMESPACE/POD/CONTAINER; a context comes with four (an empty last one
keeps the pod's default container: `kubectl://CTX/NS/POD/`). The URL never carries a secret (a password in
it is refused), so records keep it whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import SplitResult, urlsplit

Scheme = Literal["ssh", "docker", "podman", "kubectl"]
SCHEMES: tuple[Scheme, ...] = ("ssh", "docker", "podman", "kubectl")
FORMS = (
    "ssh://[USER@]HOST[:PORT], docker://CONTAINER, podman://CONTAINER or "
    "kubectl://[CONTEXT/]NAMESPACE/POD[/CONTAINER]"
)

# Names as each engine allows them; none may start with "-" (the client would read an option).
_HOST = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*|[0-9a-f:.]*:[0-9a-f:.]*")  # a name, or IPv6
_USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
_CONTAINER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_KUBE_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")  # RFC 1123, as namespaces and pods
_CONTEXT = re.compile(r"[A-Za-z0-9_][^\s/]*")


class RemoteError(ValueError):
    """A `remote` URL that cannot be used, said in one line."""


@dataclass(frozen=True)
class Remote:
    """A parsed `remote` URL."""

    url: str
    scheme: Scheme
    host: str  # ssh: the host; docker, podman: the container; kubectl: the pod
    user: str | None = None
    port: int | None = None
    context: str | None = None
    namespace: str | None = None
    container: str | None = None  # kubectl: a container of the pod

    @property
    def where(self) -> str:
        """Where the agent runs, for a title or an error: `host`, `docker:NAME`, `pod NS/POD`."""
        if self.scheme == "ssh":
            return f"{self.user}@{self.host}" if self.user else self.host
        if self.scheme == "kubectl":
            return f"pod {self.namespace}/{self.host}" + (f"/{self.container}" if self.container else "")
        return f"{self.scheme}:{self.host}"

    @property
    def client(self) -> str:
        return self.scheme


def parse_remote(url: str) -> Remote:
    """`url` read (urllib.parse), or a `RemoteError` saying what is wrong with it."""
    if any(c.isspace() or not c.isprintable() for c in url):
        raise RemoteError(f'remote "{url.strip()}": no spaces or control characters (expected {FORMS})')
    try:
        parts = urlsplit(url)
        port = parts.port if parts.scheme == "ssh" else None
    except ValueError as exc:
        raise RemoteError(f'remote "{url}": {exc} (expected {FORMS})') from None
    if parts.scheme not in SCHEMES:
        raise RemoteError(f'remote "{url}": unknown carrier "{parts.scheme}" (expected {FORMS})')
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise RemoteError(f'remote "{url}": no query or fragment (expected {FORMS})')
    if parts.password is not None:
        raise RemoteError(f'remote "{url}": no password in the URL (use remote_options, e.g. -i KEY)')
    if parts.scheme == "ssh":
        return _ssh(url, parts, port)
    if parts.scheme == "kubectl":
        return _kubectl(url, parts)
    if parts.path or not _CONTAINER.fullmatch(parts.netloc):
        raise RemoteError(f'remote "{url}": expected {parts.scheme}://CONTAINER (a container name or id)')
    return Remote(url, parts.scheme, parts.netloc)


def _ssh(url: str, parts: SplitResult, port: int | None) -> Remote:
    host, user = parts.hostname or "", parts.username
    if (
        parts.path not in ("", "/")
        or not _HOST.fullmatch(host)
        or (user is not None and not _USER.fullmatch(user))
    ):
        raise RemoteError(f'remote "{url}": expected ssh://[USER@]HOST[:PORT]')
    return Remote(url, "ssh", host, user=user, port=port)


def _kubectl(url: str, parts: SplitResult) -> Remote:
    segments = [parts.netloc, *parts.path.split("/")[1:]]
    context = None
    if len(segments) == 4:
        context, *segments = segments
        segments = segments if segments[-1] else segments[:-1]
    if (
        len(segments) not in (2, 3)
        or (context is not None and not _CONTEXT.fullmatch(context))
        or not all(_KUBE_NAME.fullmatch(name) for name in segments)
    ):
        raise RemoteError(f'remote "{url}": expected kubectl://[CONTEXT/]NAMESPACE/POD[/CONTAINER]')
    namespace, pod, *container = segments
    return Remote(
        url,
        "kubectl",
        pod,
        context=context,
        namespace=namespace,
        container=container[0] if container else None,
    )
