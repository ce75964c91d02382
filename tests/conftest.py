"""Every test runs with folders of its own, and ends with no process of ours left running; the slow
ones are marked `slow` here, in one list (`pytest -m "not slow"` is the fast part, for a change)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_tui.settings import paths
from tests.helpers import our_live_processes

# What takes seconds a test (two loaded cores): real floods, browsers, sandboxes, users, node, whole
# screens drawn on a pty or compared as snapshots. A prefix of a node id: a folder, a file, a test.
SLOW = (
    "tests/sandbox/",  # bubblewrap, a user of our own, daemons left inside
    "tests/browser/",  # a server, Chromium
    "tests/hostile/",  # floods, storms, soaks, SIGKILLed supervisors, fuzzing
    "tests/remote/test_ssh",  # an sshd, a user, network namespaces, cut links
    "tests/remote/test_podman.py",  # an image built, a container
    "tests/core/test_foreign_agent.py",  # node (and npm install, the first time)
    "tests/lab/test_rules.py::test_rules_on_the_typescript_example_agents_edit",
    "tests/core/test_subreaper.py::test_as_an_unprivileged_user",
    "tests/ui/test_snapshots.py",  # every screen at two sizes
    "tests/ui/test_terminal.py",  # the app on a pty
    "tests/ui/test_first_frame.py",
    "tests/ui/test_answer_view.py::test_a_long_answer_shows_its_tail_and_says_what_came_before",
    "tests/ui/test_operator.py::test_the_focused_pane_is_always_in_view",
    "tests/ui/test_keys.py::test_tab_walks_the_panes_only_in_reading_order",
    "tests/ui/test_keys.py::test_slash_and_i_focus_the_prompt_where_keys_type_and_escape_leaves_it",
    "tests/ui/test_keys.py::test_c_after_enter_cancels_the_first_pane_and_leaves_the_prompt_unchanged",
    "tests/ui/test_agents_screen.py::test_ctrl_r_reloads_a_good_file_for_the_next_runs_and_keeps_the_old_on_a_bad_one",
    "tests/ui/test_agents_screen.py::test_authentication_required_offers_the_terminal_login_and_runs_again",
    "tests/test_isolation.py::test_a_sigkilled_run_leaves_a_worktree_that_the_next_run_prunes",
    "tests/test_isolation.py::test_sigint_mid_edit_records_the_partial_diff_and_removes_the_worktree",
    "tests/test_docs.py::test_the_site_builds_strict",  # mkdocs
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session", autouse=True)
def session_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The same for what a module's or the session's fixtures run, before any test's own."""
    with paths.rooted_at(tmp_path_factory.mktemp("acp-session-home")) as home:
        yield home


@pytest.fixture(autouse=True)
def acp_home(session_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """acp-tui's folders (config, cache, state, log: `acp_tui.settings.paths`) under a new folder, for
    the test and every `acp-tui` process it starts: no test reads the user's presets or writes into
    the user's cache."""
    with paths.rooted_at(tmp_path_factory.mktemp("acp-home")) as home:
        yield home


@pytest.fixture(autouse=True)
def no_process_left_behind() -> Iterator[None]:
    yield
    leaked = our_live_processes()
    for pid, _ in leaked:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not leaked, f"processes left running: {leaked}"
