"""Files we create never follow a link (issue 16): a link planted at the exact next name of a trace,
an export, the settings seal or the log leaves its target untouched, and the write goes elsewhere
(a new name) or is lost quietly, never through the link."""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_tui.lab.trace_file import agent_label, load_trace
from acp_tui.runs.trace import TraceWriter
from acp_tui.settings.logs import route_logging
from acp_tui.ui.app import EXPORT_NAME, SupervisorApp
from tests.ui.helpers import all_finished, scripted_preset, settings, wait_until

PRECIOUS = "the user's own file\n"
SUFFIXES = (".md", ".jsonl", "-compare.md")  # the export's three files


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file of the user's that a planted link points at."""
    path = tmp_path / "victim" / "precious.txt"
    path.parent.mkdir()
    path.write_text(PRECIOUS)
    return path


def next_names(pattern: str, seconds: int = 3) -> Iterator[str]:
    """The names `pattern` (strftime) gives this second and the next ones: those about to be taken."""
    now = time.time()
    for ahead in range(seconds):
        yield time.strftime(pattern, time.localtime(now + ahead))


def untouched(victim: Path) -> bool:
    return victim.read_text() == PRECIOUS


# Traces -------------------------------------------------------------------------------------------


def test_a_link_at_the_next_trace_name_is_never_written_through(tmp_path: Path, victim: Path) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    planted = [traces / name for name in next_names("agent-%Y%m%d-%H%M%S-4242.jsonl")]
    for link in planted:
        link.symlink_to(victim)
    notes: list[str] = []
    writer = TraceWriter.for_run(str(traces), "agent", 4242, lambda text: text, notes.append)
    writer.write("out", {"jsonrpc": "2.0", "id": 0, "method": "initialize"})
    writer.close()

    assert untouched(victim)
    assert writer.path not in planted and not writer.path.is_symlink()
    assert writer.path.name.endswith("-4242-2.jsonl")
    [entry] = load_trace(writer.path)
    assert entry.frame["method"] == "initialize"
    assert agent_label(writer.path, [entry]) == "agent"  # the `-2` keeps the name readable
    assert notes == []


# The export ---------------------------------------------------------------------------------------


async def test_a_link_at_this_seconds_export_names_is_never_written_through(
    tmp_path: Path, victim: Path
) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    app = SupervisorApp(settings(scripted_preset("agent", text="exported")))
    app.export_dir = exports
    async with app.run_test(size=(150, 40)) as pilot:
        await pilot.press("enter")
        await wait_until(pilot, all_finished(app))
        planted = [exports / f"{stem}{suffix}" for stem in next_names(EXPORT_NAME) for suffix in SUFFIXES]
        for link in planted:
            link.symlink_to(victim)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(list(exports.iterdir())) == len(planted) + 3)

    assert untouched(victim)
    written = sorted(path.name for path in exports.iterdir() if not path.is_symlink())
    [jsonl] = [name for name in written if name.endswith(".jsonl")]
    stem = jsonl.removesuffix(".jsonl")
    assert re.fullmatch(r"acp-tui-\d{8}-\d{6}-\d+", stem)  # a free name after the planted ones
    assert written == sorted(f"{stem}{suffix}" for suffix in SUFFIXES)
    assert '"output": "exported"' in (exports / jsonl).read_text()


# The log ----------------------------------------------------------------------------------------


@pytest.fixture
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        handler.close()
    root.handlers[:] = handlers
    root.setLevel(level)


def test_a_link_at_the_log_is_never_written_through(
    tmp_path: Path, victim: Path, restored_logging: None, capfd: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "logs" / "acp-tui.log"
    log.parent.mkdir()
    log.symlink_to(victim)
    route_logging(path=log)
    logging.getLogger("acp").warning("a record for the log")

    assert untouched(victim)
    assert capfd.readouterr().err == ""  # lost quietly: the terminal is the app's
    log.unlink()
    logging.getLogger("acp").warning("the next record")
    assert "the next record" in log.read_text()
    assert oct(log.stat().st_mode & 0o777) == "0o600"


def test_a_fifo_at_the_log_never_blocks_a_record(
    tmp_path: Path, restored_logging: None, capfd: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "logs" / "acp-tui.log"
    log.parent.mkdir()
    os.mkfifo(log)
    route_logging(path=log)
    logging.getLogger("acp").warning("nobody reads this fifo")  # returns: nothing waits for a reader
    assert capfd.readouterr().err == ""


def test_a_link_in_place_of_the_log_folder_is_never_written_into(
    tmp_path: Path, victim: Path, restored_logging: None
) -> None:
    (tmp_path / "state").mkdir()
    folder = tmp_path / "state" / "log"
    folder.symlink_to(victim.parent, target_is_directory=True)
    route_logging(path=folder / "acp-tui.log")
    logging.getLogger("acp").warning("a record for the log")
    assert sorted(os.listdir(victim.parent)) == ["precious.txt"]
