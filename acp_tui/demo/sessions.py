"""The demo agent's sessions: their state, and a small JSON file each so a fresh process can go on.

Every acp-tui turn is a fresh process, so a session that can be resumed (or loaded) outlives the
process that made it: each is kept as `<id>.json` in acp-tui's cache folder (`demo-sessions` under
`paths.cache_dir()`, so `ACP_TUI_HOME` moves it too): cwd, mode, model, the tokens used so far, the
tool calls numbered so far, and the history (each turn's prompt and answer text). Ids are
`demo-<persona>-<8 hex>`, claimed by creating the file (O_EXCL), so two processes never share one.
Files are replaced atomically; old ones (a week, or past the newest 200) are pruned whenever a
session is made. A folder that cannot be written (a read-only home in a sandbox) only means
sessions are not kept: the agent still answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import secrets
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_tui.core.files import UnreadableFile, parse_json, private_dir, read_text, replace_file, write_new
from acp_tui.settings import paths

# The session's config options (the first value is the default).
MODES = {"ask": "Ask before writing", "auto": "Write without asking", "read-only": "Never write"}
MODELS = {"demo-fast": "Demo fast", "demo-thorough": "Demo thorough"}

SESSION_ID = re.compile(r"demo-[a-z]+(?:-[a-z]+)*-[0-9a-f]{8}")
KEEP_SECONDS = 7 * 24 * 3600
KEEP_FILES = 200

log = logging.getLogger("acp_tui.demo")


@dataclass
class Exchange:
    """One finished turn: what was asked, and the answer's text (thoughts and tool calls aside)."""

    prompt: str
    answer: str


@dataclass
class Session:
    """A session's state; `cancelled` is set by `session/cancel` and cleared when a turn starts."""

    session_id: str
    cwd: Path
    mode: str = "ask"
    model: str = "demo-fast"
    used: int = 0  # tokens of the context, as a model would count them (about 4 characters each)
    tool_calls: int = 0  # numbered so far: a tool call's id stays unique in the session
    history: list[Exchange] = field(default_factory=list)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event, repr=False, compare=False)

    def to_json(self) -> str:
        return json.dumps(
            {
                "session_id": self.session_id,
                "cwd": str(self.cwd),
                "mode": self.mode,
                "model": self.model,
                "used": self.used,
                "tool_calls": self.tool_calls,
                "history": [{"prompt": e.prompt, "answer": e.answer} for e in self.history],
            },
            ensure_ascii=False,
            indent=1,
        )

    @classmethod
    def from_json(cls, data: Any) -> Session:
        """The session a file holds; ValueError if it is not one of ours."""
        if not isinstance(data, dict):
            raise ValueError("not an object")
        session_id, cwd, mode, model = (data.get(k) for k in ("session_id", "cwd", "mode", "model"))
        used, tool_calls, history = (data.get(k) for k in ("used", "tool_calls", "history"))
        if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
            raise ValueError("no session id")
        if not isinstance(cwd, str) or mode not in MODES or model not in MODELS:
            raise ValueError("no cwd, mode or model")
        if not isinstance(history, list):
            raise ValueError("no history")
        exchanges = []
        for entry in history:
            prompt = entry.get("prompt") if isinstance(entry, dict) else None
            answer = entry.get("answer") if isinstance(entry, dict) else None
            if not isinstance(prompt, str) or not isinstance(answer, str):
                raise ValueError("a turn without its prompt and answer")
            exchanges.append(Exchange(prompt, answer))
        return cls(session_id, Path(cwd), str(mode), str(model), _count(used), _count(tool_calls), exchanges)


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("a count that is not one")
    return value


def sessions_dir() -> Path:
    return paths.cache_dir() / "demo-sessions"


class SessionStore:
    """The session files in `root` (made private on first use)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._warned = False

    def create(self, persona: str, cwd: Path) -> Session:
        """A new session under a fresh id, its file claimed at once; older files pruned."""
        for _ in range(100):
            session = Session(session_id=f"demo-{persona}-{secrets.token_hex(4)}", cwd=cwd)
            try:
                write_new(private_dir(self.root) / f"{session.session_id}.json", session.to_json())
            except OSError as exc:
                if isinstance(exc, FileExistsError) and self.root.is_dir():
                    continue  # 1 in 4 billion: another process has this one
                self._cannot_keep(exc)
                return session  # the id is still random: it will not meet another
            self.prune(keep=session.session_id)
            return session
        raise RuntimeError(f"{self.root}: no free session id")

    def save(self, session: Session) -> None:
        try:
            replace_file(private_dir(self.root) / f"{session.session_id}.json", session.to_json())
        except OSError as exc:
            self._cannot_keep(exc)

    def load(self, session_id: str) -> Session | None:
        """The session kept under `session_id`, or None: unknown, not an id of ours, or unreadable."""
        if not SESSION_ID.fullmatch(session_id):
            return None  # never a path: an id comes from the client
        path = self.root / f"{session_id}.json"
        try:
            session = Session.from_json(parse_json(read_text(path)))
        except UnreadableFile as exc:
            if path.exists():
                log.warning("session file unreadable: %s", exc)
            return None
        except ValueError as exc:
            log.warning("%s: not a session file (%s)", path, exc)
            return None
        return session if session.session_id == session_id else None

    def prune(self, *, keep: str) -> None:
        """Remove session files older than a week, and all but the newest KEEP_FILES (never `keep`)."""
        try:
            entries = [e for e in os.scandir(self.root) if SESSION_ID.fullmatch(e.name.removesuffix(".json"))]
            found = [(e.stat(follow_symlinks=False), e) for e in entries if e.name.endswith(".json")]
        except OSError:
            return
        files = sorted(
            ((info.st_mtime, entry) for info, entry in found if stat.S_ISREG(info.st_mode)),
            key=lambda item: item[0],
            reverse=True,
        )
        cutoff = time.time() - KEEP_SECONDS
        for rank, (mtime, entry) in enumerate(files):
            if entry.name != f"{keep}.json" and (rank >= KEEP_FILES or mtime < cutoff):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)

    def _cannot_keep(self, exc: OSError) -> None:
        if not self._warned:
            self._warned = True
            log.warning("sessions are not kept (%s): a later turn cannot resume them", exc)
