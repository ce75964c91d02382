"""The layout shows the architecture: imports run one way, floor by floor, and never in a circle.

`cli -> ui -> session -> acp / workspace / lab / reports -> runs -> policy, process, settings -> core`: a
module imports its own floor or the floors below, never one above. Every import counts, those inside
functions and `TYPE_CHECKING` blocks too (each is a dependency, taken late or for types only).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "acp_tui"

FLOORS = {
    # Every use of a pinned library's private parts, in one module beneath everything (its imports
    # of textual, textual-serve, pydantic are inside its functions, so using it costs nothing).
    "compat": 0,
    "core": 1,
    "policy": 2,
    "process": 2,
    "settings": 2,
    # What every provider's run shares (`acp_tui.runs`): below the providers, above what they use.
    "runs": 2.5,
    "acp": 3,
    "a2a": 3,
    "claude": 3,
    "codex": 3,
    "workspace": 3,
    "lab": 3,
    "reports": 3,
    "session": 4,
    # The public facade (`acp_tui`, `acp_tui.subagents`): the core's names, from below.
    "": 4,
    "subagents": 4,
    # The demo agent is a program of its own that runs are started with: it may use what an ACP
    # agent of ours uses (`acp_tui.acp.sdk`), and nothing of ours imports it.
    "demo": 4,
    "ui": 5,
    # `acp-tui serve`: the app in browser tabs (textual-serve), started by the command line.
    "web": 5,
    "cli": 6,
    "__main__": 6,
}
# The UI renders what the session layer gives it: it never speaks ACP, nor another provider's protocol.
UI_NEVER = (
    "acp",
    "acp_tui.acp.client",
    "acp_tui.acp.transport",
    "acp_tui.acp.session_setup",
    "a2a",
    "acp_tui.a2a",
    "claude_agent_sdk",
    "acp_tui.claude",
    "acp_tui.codex",
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def room(module: str) -> str:
    """`core` for `acp_tui.core.text`; `` for `acp_tui` itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def imports(module: str) -> Iterator[tuple[str, int]]:
    """Every module `module` imports (ours as `acp_tui....`, others by their top name), with the line."""
    path = modules()[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                yield (submodule if submodule in modules() else base), node.lineno


def our_imports(module: str) -> Iterator[tuple[str, int]]:
    for imported, line in imports(module):
        if imported == "acp_tui" or imported.startswith("acp_tui."):
            yield imported, line


def test_every_module_is_in_a_room_of_a_floor() -> None:
    assert {module: room(module) for module in modules() if room(module) not in FLOORS} == {}


def test_nothing_imports_upward() -> None:
    upward = [
        f"{module}:{line} imports {imported} ({room(module)} is below {room(imported)})"
        for module in modules()
        for imported, line in our_imports(module)
        if FLOORS[room(imported)] > FLOORS[room(module)]
    ]
    assert upward == []


def test_the_core_imports_nothing_of_ours_and_only_the_ui_imports_textual() -> None:
    """Textual is the UI's alone, but for `acp_tui.compat`, whose every entry says why it needs it."""
    wrong = []
    for module in modules():
        for imported, line in imports(module):
            ours = imported.startswith("acp_tui.")
            if room(module) == "core" and ours and room(imported) not in ("core", "compat"):
                wrong.append(f"{module}:{line} imports {imported}")
            if imported.split(".")[0] == "textual" and room(module) not in ("ui", "compat"):
                wrong.append(f"{module}:{line} imports {imported}")
    assert wrong == []


def test_the_ui_never_speaks_acp() -> None:
    spoken = [
        f"{module}:{line} imports {imported}"
        for module in modules()
        if room(module) == "ui"
        for imported, line in imports(module)
        if any(imported == never or imported.startswith(f"{never}.") for never in UI_NEVER)
    ]
    assert spoken == []


def test_only_settings_paths_asks_the_platform_for_folders() -> None:
    """Every folder of ours comes from `settings.paths`, so that `ACP_TUI_HOME` (and every test's
    folders) moves them all."""
    assert [
        f"{module}:{line}"
        for module in modules()
        if module != "acp_tui.settings.paths"
        for imported, line in imports(module)
        if imported.split(".")[0] == "platformdirs"
    ] == []


def test_nothing_of_ours_imports_the_demo_agent() -> None:
    assert [
        f"{module}:{line}"
        for module in modules()
        if room(module) != "demo"
        for imported, line in our_imports(module)
        if room(imported) == "demo"
    ] == []


def graph() -> dict[str, set[str]]:
    ours = modules()
    return {module: {imported for imported, _ in our_imports(module) if imported in ours} for module in ours}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected group of more than one module (or a module importing itself), by
    Tarjan's algorithm, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in edges[node]:
                    found.append(sorted(group))
    return found


def test_no_import_circles() -> None:
    assert cycles(graph()) == []


def test_rooms_of_one_floor_import_each_other_one_way_only() -> None:
    rooms: dict[str, set[str]] = {}
    for module, imported in graph().items():
        rooms.setdefault(room(module), set()).update(room(other) for other in imported)
    for name, others in rooms.items():
        others.discard(name)
    assert cycles({**{r: set() for others in rooms.values() for r in others}, **rooms}) == []


@pytest.mark.parametrize(
    ("edges", "circles"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [["a", "b"]]),
        ({"a": {"a"}}, [["a"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"}}, [["a", "b", "c"], ["d", "e"]]),
    ],
)
def test_the_circle_finder_finds_circles(edges: dict[str, set[str]], circles: list[list[str]]) -> None:
    assert sorted(cycles(edges)) == circles


def test_the_compat_module_imports_its_libraries_only_where_used() -> None:
    """`acp_tui.compat` sits beneath the core: at its top level it imports nothing but the stdlib."""
    tree = ast.parse(modules()["acp_tui.compat"].read_text(encoding="utf-8"))
    top = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    names = [
        alias.name if isinstance(node, ast.Import) else node.module or ""
        for node in top
        for alias in node.names
    ]
    libraries = ("textual", "textual_serve", "pydantic", "acp", "acp_tui")
    assert [name for name in names if name.split(".")[0] in libraries] == []


def methods_per_class(package: str) -> dict[str, int]:
    counts = {}
    for module, path in modules().items():
        if module == package or module.startswith(package + "."):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    defs = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
                    counts[f"{module}.{node.name}"] = len(defs)
    return counts


def test_no_class_of_the_ui_has_over_30_methods() -> None:
    """One job per class."""
    counts = methods_per_class("acp_tui.ui")
    assert {name: n for name, n in counts.items() if n > 30} == {}
    for name in ("MainScreen", "RunPane", "PaneView"):
        assert any(key.endswith(f".{name}") for key in counts)


def test_no_class_of_the_core_has_over_30_methods() -> None:
    """The rest of the package, the run first: what outgrows one job moves to a collaborator."""
    counts = {
        name: n for name, n in methods_per_class("acp_tui").items() if not name.startswith("acp_tui.ui.")
    }
    assert {name: n for name, n in counts.items() if n > 30} == {}
    assert "acp_tui.runs.base.RunBase" in counts
