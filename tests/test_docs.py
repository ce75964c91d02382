"""The README and the documentation site: short, true to the code, and built without a warning."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from acp_tui.ui import keys

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = sorted((ROOT / "docs").glob("*.md"))


def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def commands() -> list[str]:
    """The README's first two code blocks, which open it: install and launch; install and test."""
    return re.findall(r"```sh\n(.*?)\n```", README, flags=re.DOTALL)[:2]


def test_the_readme_opens_with_the_two_commands_and_fits() -> None:
    assert len(README.encode()) <= 12_000
    launch, suite = commands()
    assert README.startswith(f"# acp-tui\n\n```sh\n{launch}\n```\n\n```sh\n{suite}\n```\n")
    assert "\n" not in launch and "\n" not in suite
    assert launch.endswith("install . && .venv/bin/acp-tui")
    assert suite.endswith("install -e '.[test]' && .venv/bin/python -m pytest")
    # Where acp-tui is after the install, and a first command on a real agent.
    assert "activate" in README and "acp-tui probe --agent pong" in README


def test_ci_runs_the_readmes_test_command_exactly() -> None:
    _, suite = commands()
    assert suite in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("path", [ROOT / "README.md", *PAGES], ids=lambda path: path.name)
def test_no_history_in_the_docs(path: Path) -> None:
    """The docs say what is, not how it came to be: no issue numbers, no branches compared."""
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"\bissues? #?\d+|\(operator branch\)|\bbefore \(", text, flags=re.IGNORECASE)


def test_the_readmes_keys_are_the_apps() -> None:
    bound = {name for key in keys.KEYS for name in (*key.keys.split(","), key.shown)}
    table = README[README.index("| key | where |") : README.index("Every other key")]
    named = re.findall(r"^\| `([^`]+)`(?: / `([^`]+)`)? \|", table, flags=re.MULTILINE)
    assert len(named) >= 10
    for pair in named:
        for name in filter(None, pair):
            assert name in bound, f"README names {name!r}, which acp_tui/ui/keys.py does not bind"


def test_the_key_reference_is_generated_from_keys_py() -> None:
    page = (ROOT / "docs" / "keys.md").read_text(encoding="utf-8")
    assert page == hooks().keys_page(), "docs/keys.md is stale: run `python docs/hooks.py`"
    for _, rows in keys.help_sections():
        for shown, _ in rows:
            assert f"| `{shown}` |" in page


def test_the_site_builds_strict(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (the test extras bring mkdocs-material)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about MkDocs 2.0
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d",
         str(tmp_path / "site")],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'src="assets/acp-tui.svg"' in home and (tmp_path / "site" / "assets" / "acp-tui.svg").is_file()
    assert (tmp_path / "site" / "keys" / "index.html").is_file()
