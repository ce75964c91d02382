"""Every folder of ours, in one place: the config file, the cache (worktrees, the demo's scratch
dir), the state (traces, exports), the log.

They are the user's folders for acp-tui as the platform has them (`~/.config/acp-tui`,
`~/.cache/acp-tui`, `~/.local/state/acp-tui`, `~/.local/state/acp-tui/log` on Linux), unless
`ACP_TUI_HOME` names a folder: then each of them is a folder under it (`config`, `cache`, `state`,
`log`). Every `acp-tui` process started from ours inherits the variable, so `rooted_at` keeps a
test, and every command it starts, out of the user's own folders.

Nothing here creates a folder: whoever writes makes its own (`core.files.private_dir`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

APP_NAME = "acp-tui"
HOME_VARIABLE = "ACP_TUI_HOME"
CONFIG_FILE_NAME = "agents.toml"
LOG_FILE_NAME = "acp-tui.log"

Kind = Literal["config", "cache", "state", "log", "data"]
_KINDS: tuple[Kind, ...] = ("config", "cache", "state", "log", "data")


def home() -> Path | None:
    """The folder `ACP_TUI_HOME` names (made absolute), or None when it names none."""
    value = os.environ.get(HOME_VARIABLE)
    return Path(os.path.abspath(os.path.expanduser(value))) if value else None


def _platform(kind: Kind) -> Path:
    try:
        import platformdirs
    except ImportError:  # our code on the far side of a link (process.shim), without our dependencies
        return _xdg(kind)
    return Path(getattr(platformdirs, f"user_{kind}_dir")(APP_NAME, appauthor=False))


_XDG = {"config": ".config", "cache": ".cache", "state": ".local/state", "data": ".local/share"}


def _xdg(kind: Kind) -> Path:
    """The folder as platformdirs names it on Linux: `$XDG_<KIND>_HOME` or its default, then ours."""
    if kind == "log":
        return _xdg("state") / "log"
    base = os.environ.get(f"XDG_{kind.upper()}_HOME") or os.path.expanduser(f"~/{_XDG[kind]}")
    return Path(base) / APP_NAME


def _folder(kind: Kind) -> Path:
    root = home()
    return root / kind if root is not None else _platform(kind)


def config_dir() -> Path:
    return _folder("config")


def cache_dir() -> Path:
    return _folder("cache")


def state_dir() -> Path:
    return _folder("state")


def log_dir() -> Path:
    return _folder("log")


def config_file() -> Path:
    """The presets read when no `--config` is given (the demo set when it does not exist)."""
    return config_dir() / CONFIG_FILE_NAME


def worktrees_dir() -> Path:
    """Where isolated runs get their worktrees (`slot-N`)."""
    return cache_dir() / "worktrees"


def demo_scratch_dir() -> Path:
    """Where the demo's `pong` may write its proof.txt: never the user's current directory."""
    return cache_dir() / "pong"


def traces_dir() -> Path:
    """Where the app's protocol traces go (ctrl+t)."""
    return state_dir() / "traces"


def exports_dir() -> Path:
    """Where exports go when no folder is chosen."""
    return state_dir() / "exports"


def screenshots_dir() -> Path:
    """Where the palette's Screenshot saves (the platform's Downloads folder may not exist)."""
    return state_dir() / "screenshots"


def sessions_dir() -> Path:
    """Where the app keeps its sessions as they go (`acp-tui sessions`, `acp-tui --session ID`)."""
    return state_dir() / "sessions"


def log_file() -> Path:
    return log_dir() / LOG_FILE_NAME


def own_folders() -> list[Path]:
    """Every folder that may hold something of ours (presets' `env`, other runs' worktrees and
    traces): the platform's, and the `ACP_TUI_HOME` ones too when it is set. A sandbox hides them."""
    folders = [_platform(kind) for kind in _KINDS]
    root = home()
    return [root, *folders] if root is not None else folders


@contextlib.contextmanager
def rooted_at(folder: Path) -> Iterator[Path]:
    """Every folder of ours under `folder` while in the block, for this process and the `acp-tui`
    processes it starts (the tests' seam)."""
    before = os.environ.get(HOME_VARIABLE)
    os.environ[HOME_VARIABLE] = str(folder)
    try:
        yield folder
    finally:
        if before is None:
            os.environ.pop(HOME_VARIABLE, None)
        else:
            os.environ[HOME_VARIABLE] = before
