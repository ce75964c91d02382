"""Nothing an agent can write chooses what we run: real git, real `acp-tui run --worktree` with a
stdlib agent that attacks its worktree and, through it, the repository (its shared `.git/config`,
`info/attributes`), then our later commands in the main checkout (`run`, `apply`)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from acp_tui.cli.main import main
from acp_tui.workspace.worktrees import Isolation, find_origin
from tests.containment.support import attacker, records, run, worktree_paths
from tests.helpers import git

SECRET = "sekrit-of-the-supervisor-1234"


@pytest.fixture(autouse=True)
def our_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACP_TUI_TEST_API_TOKEN", SECRET)


def isolated(repo: Path, script: str, *extra: str) -> dict[str, object]:
    result = run("--worktree", "--format", "json", "--cwd", str(repo), "--prompt", "go",
                 "--agent", attacker("agent", script), *extra)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    record = records(result)["agent"]
    record["stderr"] = result.stderr
    return record


def executable(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_worktree_whose_git_the_agent_replaced_runs_nothing_and_records_nothing(
    repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "monitor-ran"
    # Its own repository in place of the `.git` file: the real objects by alternates, a copy of the
    # index, and a config whose fsmonitor is a script of the agent's (it writes our environment).
    script = f"""
set -e
admin=$(sed -n 's/^gitdir: //p' .git)
common=$(cd "$admin/../.." && pwd)
mkdir own own/refs
mkdir -p own/objects/info
cp "$admin/HEAD" own/HEAD
cp "$admin/index" own/index 2>/dev/null || true
echo "$common/objects" > own/objects/info/alternates
printf '#!/bin/sh\\nenv > {marker}\\n' > own/monitor
chmod +x own/monitor
printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = %s\\n' "$PWD/.git/monitor" > own/config
rm .git
mv own .git
echo changed > src/app.py
"""
    record = isolated(repo, script)
    assert not marker.exists(), marker.read_text()
    assert record["diff"] is None and record["diff_stat"] is None
    assert "the agent replaced its worktree's .git: nothing of it was recorded" in str(record["stderr"])
    assert worktree_paths(repo) == [str(repo)]
    assert not Path(str(record["worktree"])).exists()


def test_a_filter_the_agent_configured_is_not_run_by_our_recording_nor_by_apply(
    repo: Path, tmp_path: Path
) -> None:
    cleaned, smudged = tmp_path / "cleaned", tmp_path / "smudged"
    # `git config` inside a worktree writes the repository's shared config.
    script = f"""
git config filter.x.clean 'touch {cleaned}; cat'
git config filter.x.smudge 'touch {smudged}; cat'
echo '* filter=x' > .gitattributes
echo hi > new.txt
"""
    record = isolated(repo, script)
    assert not cleaned.exists() and not smudged.exists()
    assert '[filter "x"]' in (repo / ".git" / "config").read_text()  # the attack landed
    assert "+* filter=x" in str(record["diff"]) and "+hi" in str(record["diff"])

    saved = tmp_path / "record.json"
    saved.write_text(json.dumps({k: v for k, v in record.items() if k != "stderr"}))
    git(repo, "stash", "-q")
    applied = CliRunner().invoke(main, ["apply", str(saved), "--cwd", str(repo)])
    assert applied.exit_code == 0, applied.stderr
    assert (repo / "new.txt").read_text() == "hi\n"
    assert not cleaned.exists() and not smudged.exists()


def test_an_include_the_agent_added_to_the_shared_config_is_never_obeyed(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "agent-files"
    outside.mkdir()
    monitored, filtered = outside / "monitored", outside / "filtered"
    executable(outside / "monitor", f"touch {monitored}")
    (outside / "inc.cfg").write_text(
        f'[core]\n\tfsmonitor = {outside / "monitor"}\n[filter "y"]\n\tclean = "touch {filtered}; cat"\n'
    )
    script = f"""
git config include.path {outside / "inc.cfg"}
common=$(git rev-parse --git-common-dir)
mkdir -p "$common/info"
echo '* filter=y' >> "$common/info/attributes"
echo x > new.txt
"""
    record = isolated(repo, script)
    assert "include" in (repo / ".git" / "config").read_text()
    assert not monitored.exists() and not filtered.exists()
    assert "+x" in str(record["diff"])
    # The main checkout, with a tracked file git must read again (its stat data changed).
    os.utime(repo / "src" / "app.py", (1, 1))
    again = isolated(repo, "echo second > second.txt")
    assert "+second" in str(again["diff"])
    assert not monitored.exists() and not filtered.exists()


def test_config_written_from_a_worktree_into_the_main_repository_runs_nothing_of_ours(
    repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "agent-files"
    outside.mkdir()
    ran = outside / "ran"
    monitor = executable(outside / "monitor", f"echo monitor >> {ran}")
    driver = executable(outside / "driver", f'echo "$0 $*" >> {ran}; cat')
    script = f"""
git config core.fsmonitor {monitor}
git config filter.z.clean {driver}
git config filter.z.smudge {driver}
git config merge.z.driver '{driver} %A'
git config diff.z.textconv {driver}
git config diff.external {driver}
git config core.pager {driver}
mkdir -p "$(git rev-parse --git-common-dir)/info"
echo '* filter=z merge=z diff=z' >> "$(git rev-parse --git-common-dir)/info/attributes"
mkdir -p "$(git rev-parse --git-common-dir)/hooks"
cp {driver} "$(git rev-parse --git-common-dir)/hooks/post-checkout"
echo change >> src/app.py
"""
    first = isolated(repo, script)
    assert "fsmonitor" in (repo / ".git" / "config").read_text()
    os.utime(repo / "README.md", (1, 1))  # our `git status` of the main checkout must read it again
    second = isolated(repo, "echo more >> README.md")  # status, worktree add, checkout, record
    assert not ran.exists(), ran.read_text()
    assert "+change" in str(first["diff"]) and "+more" in str(second["diff"])

    saved = tmp_path / "first.json"
    saved.write_text(json.dumps({k: v for k, v in first.items() if k != "stderr"}))
    applied = CliRunner().invoke(main, ["apply", str(saved), "--cwd", str(repo)])
    assert applied.exit_code == 0, applied.stderr
    assert (repo / "src" / "app.py").read_text().endswith("change\n")
    assert not ran.exists(), ran.read_text()


ALLOWED_ENV = {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PWD", "SHLVL", "_", "OLDPWD"}


def test_every_git_we_run_is_defused_and_gets_a_minimal_environment(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch: Path
) -> None:
    """A `git` first on PATH logs each call (argv and environment), then runs the real one."""
    git(repo, "stash", "-q")  # a clean checkout at the base, for the apply at the end
    bin_dir, log = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    log.mkdir()
    real = next(
        Path(folder) / "git"
        for folder in os.environ["PATH"].split(os.pathsep)
        if (Path(folder) / "git").is_file()
    )
    executable(
        bin_dir / "git",
        f'n=$(mktemp {log}/call.XXXXXX); printf "%s\\0" "$@" > "$n.argv"; env -0 > "$n.env"\n'
        f'exec {real} "$@"',
    )
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    record = isolated(repo, "echo hi > new.txt; mv src/app.py src/moved.py")
    saved = tmp_path / "record.json"
    saved.write_text(json.dumps({k: v for k, v in record.items() if k != "stderr"}))
    applied = CliRunner().invoke(main, ["apply", str(saved), "--cwd", str(repo)])
    assert applied.exit_code == 0, applied.stderr

    assert not list(scratch.iterdir())  # our private git directories are gone
    calls = sorted(log.glob("*.argv"))
    assert len(calls) >= 8
    for call in calls:
        argv = call.read_text().split("\0")[:-1]
        environ = dict(
            item.split("=", 1) for item in call.with_suffix(".env").read_text().split("\0") if "=" in item
        )
        where = f"git {' '.join(argv)}"
        assert "core.fsmonitor=false" in argv and f"core.hooksPath={os.devnull}" in argv, where
        assert "--no-pager" in argv, where
        assert SECRET not in "\0".join(environ.values()), where
        assert {k for k in environ if not k.startswith("GIT_")} <= ALLOWED_ENV, (where, sorted(environ))
        assert environ.get("GIT_CONFIG_NOSYSTEM") == "1" and environ.get("GIT_TERMINAL_PROMPT") == "0", where
        subcommand = next(a for a in argv if not a.startswith("-") and "=" not in a)
        if subcommand != "rev-parse":  # discovery from the user's cwd is the one that names none
            assert any(a.startswith("--git-dir=") for a in argv), where


async def test_what_is_planted_in_our_own_git_directory_is_gone_before_we_record(
    repo: Path, tmp_path: Path
) -> None:
    """Our git directory is no secret to a process of the same user: a `commondir` there would
    make git read another repository's config (a filter of the agent's), `info/attributes` name it."""
    evil, marker = tmp_path / "evil", tmp_path / "filtered"
    git(tmp_path, "init", "-q", str(evil))
    git(evil, "config", "filter.x.clean", f"touch {marker}; cat")
    isolation = Isolation()
    worktree = await isolation.add(await find_origin(repo), "planted")
    ours = worktree._ours
    assert ours is not None
    (ours.path / "commondir").write_text(f"{evil / '.git'}\n")
    (ours.path / "info" / "attributes").write_text("* filter=x\n")
    (ours.path / "config").write_text(f'[filter "x"]\n\tclean = touch {marker}; cat\n')
    (worktree.path / "new.txt").write_text("hello\n")
    change = await worktree.record()
    await isolation.aclose()
    assert change.error is None and "+hello" in (change.diff or "")
    assert not marker.exists()
