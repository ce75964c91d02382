"""The command line of a carrier's own client (ssh, docker, podman, kubectl) that runs a command on
the far side of a `remote` URL (`acp_tui.settings.remote`), stdin, stdout and stderr piped through,
no terminal. `remote_options` go to the client before the host or container (`-i KEY`, `-o ...`,
`-J JUMP`; `-u USER` for docker exec; `--kubeconfig F`).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from acp_tui.settings.remote import Remote

# ssh: never a prompt (no terminal to ask on), never our agent's keys or forwardings handed over,
# and a dead link noticed by the client too (the shim notices by the missing heartbeats).
SSH_DEFAULTS = (
    "-T",
    "-o", "BatchMode=yes",
    "-o", "ForwardAgent=no",
    "-o", "ForwardX11=no",
    "-o", "ClearAllForwardings=yes",
    "-o", "ServerAliveInterval=2",
    "-o", "ServerAliveCountMax=3",
)  # fmt: skip


def client_command(
    remote: Remote, options: Sequence[str], far: Sequence[str], *, connect_timeout: float
) -> list[str]:
    """The client's argv that runs `far` (argv) on the far side, with stdin, stdout and stderr
    piped through, and no terminal."""
    options = list(options)
    if remote.scheme == "ssh":
        argv = ["ssh", *options, *SSH_DEFAULTS, "-o", f"ConnectTimeout={max(1, round(connect_timeout))}"]
        argv += [
            *(["-p", str(remote.port)] if remote.port else []),
            *(["-l", remote.user] if remote.user else []),
        ]
        # ssh hands the far side one string, which the login shell splits: quoted once.
        return [*argv, "--", remote.host, shlex.join(far)]
    if remote.scheme in ("docker", "podman"):
        return [remote.scheme, "exec", "-i", *options, "--", remote.host, *far]
    argv = ["kubectl", *options, *(["--context", remote.context] if remote.context else [])]
    argv += ["exec", "-i", "-n", str(remote.namespace), remote.host]
    return [*argv, *(["-c", remote.container] if remote.container else []), "--", *far]
