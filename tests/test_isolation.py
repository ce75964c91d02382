"""Isolation: every run in its own git worktree, with real git in temporary repositories.

Git's identity for the tests' own commits comes from `-c` options, never the global config; the
worktrees live under a temporary user cache dir.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from acp_tui import AcpSubagentProvider, OutputDelta, SubagentRequest, SubagentStopReason
from acp_tui.acp import client as _sdk_loaded  # noqa: F401 - the SDK loaded up front
from acp_tui.cli.main import main
from acp_tui.core.text import json_safe
from acp_tui.workspace.apply import ApplyRefused, apply_diff
from acp_tui.workspace.git import IsolationError
from acp_tui.workspace.worktrees import Isolation, find_origin
from tests.containment.support import checkout_with_an_edit, isolated_cache, scratch_tmpdir
from tests.helpers import demo, git, our_live_processes

DEMO = [sys.executable, "-m", "acp_tui.demo.agent", "--persona"]


cache_home = pytest.fixture(autouse=True)(isolated_cache)
repo = pytest.fixture(checkout_with_an_edit)
scratch = pytest.fixture(autouse=True)(scratch_tmpdir)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of a checkout, and its index: what an isolated run must never write."""
    files = {
        str(path.relative_to(root)): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and ".git" not in path.relative_to(root).parts
    }
    files[".git/index"] = (root / ".git" / "index").read_bytes()
    return files


def worktree_paths(root: Path) -> list[str]:
    listing = git(root, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in listing.splitlines() if line.startswith("worktree ")]


def agent(name: str, persona: str, *extra: str) -> str:
    return f"{name}={shlex.join([*DEMO, persona, *extra])}"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["run", *args], catch_exceptions=False)


def json_records(result: Result) -> dict[str, dict[str, Any]]:
    return {record["name"]: record for record in map(json.loads, result.stdout.splitlines())}


# Worktrees for runs ---------------------------------------------------------------------------------


async def test_two_agents_writing_different_files_end_with_their_own_diffs_and_an_untouched_checkout(
    repo: Path, cache_home: Path
) -> None:
    before = snapshot(repo)
    isolation = Isolation()
    origin = await find_origin(repo)
    assert origin.dirty and "uncommitted changes" in origin.note

    async def one(name: str, persona: str, prompt: str) -> Any:
        async with isolation.isolated(origin, name) as worktree:
            request = SubagentRequest(prompt, cwd=str(worktree.cwd))
            run = await AcpSubagentProvider(demo(persona)).start(request)
            result = await run.result()
            assert result.stop_reason is SubagentStopReason.COMPLETED, result.error
            await worktree.record()
        return worktree

    editor, creator = await asyncio.gather(
        one("editor", "edit", "edit README.md"), one("creator", "create", "create notes/new.txt")
    )
    await isolation.aclose()

    assert editor.change and creator.change
    assert editor.change.stat and editor.change.stat.to_json() == {
        "files": 1,
        "insertions": 5,
        "deletions": 0,
    }
    assert "+edited by acp-tui demo: step 5" in (editor.change.diff or "")
    assert "notes/new.txt" not in (editor.change.diff or "")
    # The worktree started at HEAD: the user's uncommitted line was not carried, so not in the diff.
    assert "The user's own edit" not in (editor.change.diff or "")
    assert creator.change.stat and creator.change.stat.files == 1  # a new file counts
    assert "new file mode" in (creator.change.diff or "")
    assert "+created by acp-tui demo: notes/new.txt" in (creator.change.diff or "")
    assert "README.md" not in (creator.change.diff or "")

    assert snapshot(repo) == before
    assert worktree_paths(repo) == [str(repo)]
    assert not editor.path.exists() and not creator.path.exists()
    assert not list(cache_home.glob("*/*/"))  # no worktree left in our slot


async def test_a_run_cancelled_mid_edit_still_records_its_partial_diff(repo: Path) -> None:
    isolation = Isolation()
    origin = await find_origin(repo)
    worktree = await isolation.add(origin, "slow editor")
    try:
        config = demo("edit", "--delay", "0.2", "--chunks", "50")
        run = await AcpSubagentProvider(config).start(
            SubagentRequest("edit src/app.py", cwd=str(worktree.cwd))
        )
        async for event in run.events():
            if isinstance(event, OutputDelta):  # the line it reports is on disk already
                await run.dispose("cancelled by the test")
        result = await run.result()
        assert result.stop_reason is SubagentStopReason.ABORTED
        change = await worktree.record()
    finally:
        await isolation.aclose()
    assert change.stat is not None and 1 <= change.stat.insertions < 50
    assert "+edited by acp-tui demo: step 1\n" in (change.diff or "")
    assert "step 50" not in (change.diff or "")


async def test_the_cwd_is_the_matching_path_inside_the_worktree_at_the_base_asked(repo: Path) -> None:
    (repo / "src" / "app.py").write_text("print('second')\n")
    git(repo, "commit", "-q", "-am", "second")
    origin = await find_origin(repo / "src", base="HEAD~1")
    assert origin.prefix == "src" and origin.base == git(repo, "rev-parse", "HEAD~1").strip()
    isolation = Isolation()
    try:
        worktree = await isolation.add(origin, "x")
        assert worktree.cwd == worktree.path / "src"
        assert (worktree.cwd / "app.py").read_text() == "print('hello')\n"
        change = await worktree.record()
        assert change.stat is not None and change.stat.files == 0 and change.diff == ""
    finally:
        await isolation.aclose()


async def test_a_diff_over_the_limit_is_cut_at_a_line_and_says_so(repo: Path) -> None:
    isolation = Isolation()
    try:
        worktree = await isolation.add(await find_origin(repo), "big")
        (worktree.path / "big.txt").write_text("".join(f"line {i}\n" for i in range(2000)))
        change = await worktree.record(limit=1000)
    finally:
        await isolation.aclose()
    assert change.truncated and change.diff is not None
    assert len(change.diff) <= 1000 and change.diff.endswith("\n")
    assert change.stat is not None and change.stat.insertions == 2000  # the stat is whole


async def test_errors_before_anything_is_spawned_are_one_line(tmp_path: Path, repo: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(IsolationError, match="is not in a git repository"):
        await find_origin(plain)
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    with pytest.raises(IsolationError, match="bare repository"):
        await find_origin(bare)
    with pytest.raises(IsolationError, match='--base "no-such-ref": no such commit'):
        await find_origin(repo, base="no-such-ref")
    empty = tmp_path / "empty"
    git(tmp_path, "init", "-q", str(empty))
    with pytest.raises(IsolationError, match="has no commit yet"):
        await find_origin(empty)


# Crashes and prunes ----------------------------------------------------------------------------------

CRASHING_OWNER = """
import asyncio, os, signal, sys
from pathlib import Path
from acp_tui.workspace.worktrees import Isolation, find_origin

async def main():
    isolation = Isolation(Path(sys.argv[2]))
    worktree = await isolation.add(await find_origin(sys.argv[1]), "doomed")
    (worktree.path / "half-done.txt").write_text("partial")
    print(worktree.path, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


async def test_a_crash_leaves_a_worktree_that_the_next_start_prunes(repo: Path, cache_home: Path) -> None:
    alive = Isolation()  # another acp-tui, still running: its worktree must survive the prune
    survivor = await alive.add(await find_origin(repo), "alive")
    crashed = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CRASHING_OWNER, str(repo), str(cache_home),
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )  # fmt: skip
    out, _ = await crashed.communicate()
    assert crashed.returncode == -9
    left = Path(out.decode().strip())
    assert left.is_dir() and str(left) in worktree_paths(repo)

    pruned = await Isolation().start()

    assert pruned == [left]
    assert not left.exists()
    assert str(left) not in worktree_paths(repo)
    assert survivor.path.is_dir() and str(survivor.path) in worktree_paths(repo)
    await alive.aclose()
    assert worktree_paths(repo) == [str(repo)]


async def test_a_kept_worktree_outlives_its_process_and_the_next_prune(repo: Path) -> None:
    first = Isolation()
    worktree = await first.add(await find_origin(repo), "kept")
    worktree.keep()
    await first.aclose()
    assert worktree.path.is_dir()
    assert await Isolation().start() == []
    assert worktree.path.is_dir()
    worktree.keep(False)
    await worktree.remove()
    assert worktree_paths(repo) == [str(repo)]


async def test_a_reopened_worktree_no_longer_kept_outlives_a_sweep_until_its_removal(repo: Path) -> None:
    first = Isolation()
    worktree = await first.add(await find_origin(repo), "kept")
    worktree.keep()
    await first.aclose()  # its process is gone: its slot is free, anyone's start sweeps it
    marker = worktree.path.with_name(worktree.path.name + ".kept")
    following = Isolation()
    reopened = following.reopen(worktree.path, worktree.base, str(worktree.cwd))
    reopened.keep(False)  # `acp-tui run --continue` without --keep-worktrees: removed at its end
    other = Isolation()
    assert await other.start() == [] and other.folder == worktree.path.parent  # takes that very slot
    assert reopened.path.is_dir() and marker.is_file()  # in use: not swept
    assert await following.aclose() == []
    assert not reopened.path.exists() and not marker.exists()
    assert worktree_paths(repo) == [str(repo)]
    await other.aclose()


async def test_reopen_takes_only_a_cwd_inside_the_worktree(repo: Path, tmp_path: Path) -> None:
    isolation = Isolation()
    worktree = await isolation.add(await find_origin(repo), "kept")
    worktree.keep()
    (worktree.path / "src" / "out").symlink_to(tmp_path)
    (worktree.path / "src" / "in").symlink_to(worktree.path / "src")
    path, base = worktree.path, worktree.base
    again = Isolation()
    assert again.reopen(path, base, str(path / "src")).cwd == path / "src"
    assert again.reopen(path, base, str(path)).cwd == path
    assert again.reopen(path, base, str(path / "src" / "in")).cwd == path / "src" / "in"
    for cwd in (str(tmp_path), f"{path}/src/../..", "src", f"{path}-other"):
        with pytest.raises(IsolationError, match="is not inside its worktree"):
            again.reopen(path, base, cwd)
    with pytest.raises(IsolationError, match=r"leads out of its worktree .* \(through a link\)"):
        again.reopen(path, base, str(path / "src" / "out" / "deeper"))
    worktree.keep(False)
    assert await isolation.aclose() == []
    assert worktree_paths(repo) == [str(repo)]


# Applying -------------------------------------------------------------------------------------------


async def recorded_change(repo: Path, write: dict[str, bytes]) -> tuple[str, str]:
    """(diff, base) of a worktree where `write` was written."""
    isolation = Isolation()
    try:
        worktree = await isolation.add(await find_origin(repo), "writer")
        for name, data in write.items():
            (worktree.path / name).write_bytes(data)
        change = await worktree.record()
    finally:
        await isolation.aclose()
    assert change.diff is not None
    return change.diff, worktree.base


async def test_apply_writes_the_change_including_new_and_non_utf8_files(repo: Path) -> None:
    latin = "café\n".encode("latin-1")
    diff, base = await recorded_change(repo, {"src/app.py": b"print('changed')\n", "latin.txt": latin})
    # Through JSON as `run --format json` writes it and `apply` reads it: bytes survive.
    diff = json.loads(json_safe(json.dumps({"diff": diff}, ensure_ascii=False)))["diff"]
    assert await apply_diff(diff, repo, base=base) == ["latin.txt", "src/app.py"]
    assert (repo / "src" / "app.py").read_text() == "print('changed')\n"
    assert (repo / "latin.txt").read_bytes() == latin
    assert "The user's own edit" in (repo / "README.md").read_text()  # the rest is left alone


async def test_apply_refuses_a_conflict_listing_it_and_writes_nothing(repo: Path) -> None:
    diff, base = await recorded_change(repo, {"src/app.py": b"print('from the agent')\n"})
    (repo / "src" / "app.py").write_text("print('from the user')\n")
    git(repo, "commit", "-q", "-am", "the user moved on")
    before = snapshot(repo)
    with pytest.raises(ApplyRefused) as refused:
        await apply_diff(diff, repo, base=base)
    assert refused.value.conflicts == ("src/app.py",)
    assert "conflicts with" in str(refused.value) and "src/app.py" in str(refused.value)
    assert snapshot(repo) == before


# The command line -----------------------------------------------------------------------------------


def test_run_worktree_json_records_their_changes_and_leaves_no_worktree(repo: Path, cache_home: Path) -> None:
    before = snapshot(repo)
    result = run(
        "--worktree",
        "--format",
        "json",
        "--cwd",
        str(repo / "src"),
        "--prompt",
        "edit app.py and create extra.py",
        "--agent",
        agent("ed", "edit", "--chunks", "2"),
        "--agent",
        agent("cr", "create"),
    )
    assert result.exit_code == 0, result.stderr
    records = json_records(result)
    base = git(repo, "rev-parse", "HEAD").strip()
    for record in records.values():
        assert record["base"] == base
        assert record["worktree"] and not Path(record["worktree"]).exists()
        assert record["diff_truncated"] is False
        assert isinstance(record["first_chunk_s"], float)
    assert records["ed"]["diff_stat"] == {"files": 1, "insertions": 2, "deletions": 0}
    assert "+++ b/src/app.py" in records["ed"]["diff"]
    assert records["cr"]["diff_stat"] == {"files": 1, "insertions": 1, "deletions": 0}
    assert "+++ b/src/extra.py" in records["cr"]["diff"]
    assert "uncommitted changes of" in result.stderr
    assert snapshot(repo) == before
    assert worktree_paths(repo) == [str(repo)]
    assert not list(cache_home.glob("*/*/"))


def test_run_worktree_markdown_prints_the_comparison(repo: Path) -> None:
    result = run(
        "--worktree",
        "--format",
        "markdown",
        "--cwd",
        str(repo),
        "--prompt",
        "edit README.md",
        "--agent",
        agent("ed", "edit", "--chunks", "3"),
        "--agent",
        agent("echo", "echo"),
    )
    assert result.exit_code == 0, result.stderr
    report = result.stdout
    assert report.startswith("# acp-tui comparison\n")
    assert "| 1. ed | completed |" in report and "| 2. echo | completed |" in report
    assert "| 1 (+3 -0) |" in report and "| 0 (+0 -0) |" in report, result.stderr
    assert report.index("## Answers") < report.index("### 1. ed: completed") < report.index("## Changes")
    assert "```diff\ndiff --git a/README.md b/README.md\n" in report
    assert "*(no change)*" in report
    assert worktree_paths(repo) == [str(repo)]


def test_keep_worktrees_leaves_them_and_says_where(repo: Path) -> None:
    result = run(
        "--worktree", "--keep-worktrees", "--format", "json", "--cwd", str(repo),
        "--prompt", "create kept.txt", "--agent", agent("cr", "create"),
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    path = Path(json_records(result)["cr"]["worktree"])
    assert (path / "kept.txt").is_file()
    assert f"acp-tui: kept the worktree {path}" in result.stderr
    git(repo, "worktree", "remove", "--force", str(path))


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("plain", "is not in a git repository"),
        ("bare", "bare repository"),
    ],
)
def test_run_worktree_outside_a_checkout_is_a_usage_error(tmp_path: Path, where: str, expected: str) -> None:
    target = tmp_path / where
    if where == "bare":
        git(tmp_path, "init", "-q", "--bare", str(target))
    else:
        target.mkdir()
    marker = tmp_path / "spawned"
    code = f"open({str(marker)!r}, 'w')"
    spawning = f"x={shlex.join([sys.executable, '-c', code])}"
    result = run("--worktree", "--cwd", str(target), "--prompt", "hi", "--agent", spawning)
    assert result.exit_code == 2
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("acp-tui run: error: --worktree: ") and expected in line
    assert not marker.exists()


def test_run_worktree_without_git_is_a_usage_error(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    result = run("--worktree", "--cwd", str(repo), "--prompt", "hi", "--agent", agent("e", "echo"))
    assert result.exit_code == 2
    assert result.stderr.strip() == "acp-tui run: error: --worktree: git not found on PATH"


def test_base_and_keep_need_worktree(repo: Path) -> None:
    result = run("--base", "HEAD", "--cwd", str(repo), "--prompt", "hi", "--agent", agent("e", "echo"))
    assert result.exit_code == 2 and "need --worktree" in result.stderr


def test_apply_command_applies_a_record_and_refuses_a_conflict(repo: Path, tmp_path: Path) -> None:
    result = run(
        "--worktree", "--format", "json", "--cwd", str(repo), "--prompt", "edit src/app.py",
        "--agent", agent("ed", "edit", "--chunks", "1"), "--agent", agent("cr", "create"),
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    records = tmp_path / "records.jsonl"
    records.write_text(result.stdout)
    runner = CliRunner()

    several = runner.invoke(main, ["apply", str(records), "--cwd", str(repo)])
    assert several.exit_code == 2 and "choose one with --run (" in several.stderr

    git(repo, "stash", "-q")  # a clean checkout, at the base, for the first apply
    applied = runner.invoke(main, ["apply", str(records), "--run", "ed", "--cwd", str(repo)])
    assert applied.exit_code == 0, applied.stderr
    assert applied.stdout == 'applied the change of run "ed": 1 file: src/app.py\n'
    assert (repo / "src" / "app.py").read_text().endswith("edited by acp-tui demo: step 1\n")

    (repo / "src" / "app.py").write_text("print('the user rewrote it')\n")
    git(repo, "commit", "-q", "-am", "the user moved on")
    (records.parent / "ed.json").write_text(json.dumps(json_records(result)["ed"]))
    again = runner.invoke(main, ["apply", str(records.parent / "ed.json"), "--cwd", str(repo)])
    assert again.exit_code == 1
    [line] = again.stderr.splitlines()
    assert line.startswith("acp-tui apply: refused: ") and "src/app.py" in line


def test_apply_command_bad_records_are_one_line(tmp_path: Path, repo: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = CliRunner().invoke(main, ["apply", str(bad), "--cwd", str(repo)])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert "not a JSON record" in result.stderr
    unisolated = tmp_path / "plain.json"
    plain = {"name": "a", "command": ["a"], "stop_reason": "completed", "worktree": None, "diff": None}
    unisolated.write_text(json.dumps(plain))
    result = CliRunner().invoke(main, ["apply", str(unisolated), "--cwd", str(repo)])
    assert result.exit_code == 2 and 'run "a" was not isolated' in result.stderr


# Signals and crashes of `acp-tui run` itself: a real process ----------------------------------------


def start_cli(repo: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "acp_tui", "run", "--worktree", "--format", "json", "--cwd", str(repo), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )


def wait_for_stderr(proc: subprocess.Popen[str], needle: str) -> None:
    """Read stderr until a line holds `needle` (the test timeout bounds this)."""
    assert proc.stderr is not None
    for line in proc.stderr:
        if needle in line:
            return
    raise AssertionError(f"stderr ended without {needle!r}")


def slow_editor() -> str:
    return agent("slow", "edit", "--delay", "0.2", "--chunks", "100")


def test_sigint_mid_edit_records_the_partial_diff_and_removes_the_worktree(repo: Path) -> None:
    proc = start_cli(repo, "--prompt", "edit README.md", "--agent", slow_editor())
    try:
        wait_for_stderr(proc, "[slow] demo agent: prompt")
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    (record,) = map(json.loads, stdout.splitlines())
    assert record["stop_reason"] == "aborted"
    assert record["diff_stat"]["files"] in (0, 1) and record["diff_stat"]["insertions"] < 100
    assert not Path(record["worktree"]).exists()
    assert worktree_paths(repo) == [str(repo)]


def test_a_sigkilled_run_leaves_a_worktree_that_the_next_run_prunes(repo: Path, cache_home: Path) -> None:
    proc = start_cli(repo, "--prompt", "edit README.md", "--agent", slow_editor())
    try:
        wait_for_stderr(proc, "[slow] demo agent: prompt")
        [left] = [Path(p) for p in worktree_paths(repo) if p != str(repo)]
        proc.kill()  # no cleanup of ours runs; the watchdog ends the agent
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert left.is_dir()
    deadline = time.monotonic() + 10
    while our_live_processes() and time.monotonic() < deadline:  # the watchdog's SIGTERM, SIGKILL
        time.sleep(0.05)

    result = run("--worktree", "--cwd", str(repo), "--prompt", "hi", "--agent", agent("e", "echo"))

    assert result.exit_code == 0, result.stderr
    assert not left.exists()
    assert worktree_paths(repo) == [str(repo)]
    assert not list(cache_home.glob("*/*/"))


def test_a_preset_may_ask_for_a_worktree_of_its_own(repo: Path, tmp_path: Path) -> None:
    config = tmp_path / "agents.toml"
    argv = [*DEMO, "create"]
    config.write_text(
        f'[[agent]]\nname = "isolated"\ncommand = {json.dumps(argv[0])}\nargs = {json.dumps(argv[1:])}\n'
        f'cwd = {json.dumps(str(repo))}\nisolation = "worktree"\n\n'
        f'[[agent]]\nname = "plain"\ncommand = {json.dumps(argv[0])}\n'
        f"args = {json.dumps([*DEMO[1:], 'echo'])}\n"
    )
    result = run("--config", str(config), "--format", "json", "--prompt", "create a.txt")
    assert result.exit_code == 0, result.stderr
    records = json_records(result)
    assert records["isolated"]["diff_stat"] == {"files": 1, "insertions": 1, "deletions": 0}
    assert records["plain"]["worktree"] is None and records["plain"]["diff"] is None
    assert not (repo / "a.txt").exists()

    config.write_text(config.read_text().replace('isolation = "worktree"', 'isolation = "docker"'))
    bad = run("--config", str(config), "--prompt", "x")
    assert bad.exit_code == 2 and '"isolation" must be "none" or "worktree"' in bad.stderr
