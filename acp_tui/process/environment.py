"""The child's environment: the parent's minus anything credential-shaped, plus explicit overlays."""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Mapping

log = logging.getLogger(__name__)

# What makes a variable's name credential-shaped, in any case. Anywhere in the name: the RFC's KEY,
# SECRET and TOKEN, and the words no one uses for anything else (PGPASSWORD, SMTP_PASSWORD,
# GOOGLE_APPLICATION_CREDENTIALS).
CREDENTIAL_ANYWHERE = re.compile(
    r"KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE", re.IGNORECASE
)
# Short words that are parts of others (PASSENGER, BYPASS, AUTHOR, XAUTHORITY, GDMSESSION): a
# credential only as a whole part of the name, between underscores or its ends (DB_PASS,
# REDISCLI_AUTH, BW_SESSION, OP_SESSION_me); PWD only after another part (MYSQL_PWD), since PWD and
# OLDPWD themselves are the shell's directories.
CREDENTIAL_PART = re.compile(r"(?:^|_)(?:PASS|AUTH|SESSION)(?:_|$)|_PWD(?:_|$)", re.IGNORECASE)
# Names with such a part that the desktop and ssh set, hold no secret, and programs read: an agent
# that opens a browser, a notification or `ssh` needs them (the sandbox hides the sockets they name).
SESSION_NAMES = frozenset({"DBUS_SESSION_BUS_ADDRESS", "DESKTOP_SESSION", "SESSION_MANAGER", "SSH_AUTH_SOCK"})


def is_credential_name(name: str) -> bool:
    if CREDENTIAL_ANYWHERE.search(name):
        return True
    exempt = name in SESSION_NAMES or name.startswith("XDG_SESSION_")
    return not exempt and CREDENTIAL_PART.search(name) is not None


def child_environment(overlay: Mapping[str, str], parent: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent's environment scrubbed of credentials, then `overlay` (the child's own) on top."""
    source = os.environ if parent is None else parent
    env = {name: value for name, value in source.items() if not is_credential_name(name)}
    env.update(overlay)
    return env


_protected = False


def protect_own_environment() -> None:
    """Keep our own credentials from our children's eyes (once; Linux).

    A child cannot get them through its environment (see `child_environment`), but it could read
    ours from `/proc/<ppid>/environ`, which shows the block the kernel handed us at exec, whatever
    `os.environ` says since. So the values of credential-shaped variables are blanked in that block
    (Python read them into `os.environ` at start-up; nothing here needs them again), and the process
    is marked non-dumpable, which makes its /proc files readable by root only.

    What remains: a child running as root can still read our memory; other processes of the same
    user (our siblings, not our children) could read the block before this ran.
    """
    global _protected
    if _protected or not sys.platform.startswith("linux"):
        return
    _protected = True
    try:
        _blank_initial_environment()
    except (OSError, ValueError):
        log.debug("could not blank our environment block", exc_info=True)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        log.debug("could not mark the process non-dumpable", exc_info=True)


PR_SET_DUMPABLE = 4


def _blank_initial_environment() -> None:
    with open("/proc/self/stat", "rb") as f:
        stat = f.read()
    fields = stat[stat.rfind(b")") + 2 :].split()
    # env_start and env_end are fields 50 and 51 of stat(5); fields[0] is field 3.
    env_start, env_end = int(fields[47]), int(fields[48])
    with open("/proc/self/environ", "rb") as f:
        block = f.read()
    if not env_start or env_end - env_start != len(block):
        return
    blanked = b"\0".join(_blank_entry(entry) for entry in block.split(b"\0"))
    if blanked == block:
        return
    with open("/proc/self/mem", "r+b", buffering=0) as mem:
        mem.seek(env_start)
        if mem.read(len(block)) != block:  # not the block we think it is: touch nothing
            return
        mem.seek(env_start)
        mem.write(blanked)


def _blank_entry(entry: bytes) -> bytes:
    name, sep, value = entry.partition(b"=")
    if sep and is_credential_name(name.decode("utf-8", "replace")):
        return name + sep + b"\0" * len(value)  # same length: nothing after it moves
    return entry
