"""The policy's shell reader against tree-sitter-bash as its lexer would be: the floor of that spike.

    pip install tree-sitter tree-sitter-bash   # benchmark-only: no project dependency
    python benchmarks/shell_reader.py [--rounds N]

A: our whole reading of a line (`acp_tui.policy.shell`: words, quotes removed, redirections,
substitutions, the views each command passes on), uncached. B: tree-sitter-bash parsing the same
line and visiting every node of its tree, which any lexer built on it must at least do before it
can say a word. Two sets: lines as agents send them (a few dozen characters) and 200 KB lines (the
policy's bound on what it reads in linear time). Rounds alternate which goes first; reported as
medians and the median of per-round ratios B/A: a ratio over 1 means tree-sitter alone, before any
conversion to our words, is already slower than our whole reading.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from _common import end_progress, header, median, paired, ratios, table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from acp_tui.policy import shell

AGENT_LINES = [
    "git status",
    "ls -la src/",
    "cd /work/project && npm test 2>&1 | tail -20",
    "grep -rn 'def main' --include=*.py .",
    "python -m pytest tests/ -q -x",
    "find . -name '*.pyc' -delete",
    "cat <<'EOF' > out.txt\nhello $x\nEOF",
    "git log --oneline -n 5 | head",
    "bash -lc 'cd src && make -j4'",
    'echo "$(date) done" >> log.txt',
    'for f in *.py; do black "$f"; done',
    "sed -i 's/foo/bar/g' a.txt b.txt",
    "FOO='a b' git push origin main",
]
LONG_LINES = ["echo " + "word " * 40_000, "git status " + "a" * 200_000]


def timed(read: Callable[[str], object], lines: Sequence[str], repeat: int) -> Callable[[], float]:
    def run() -> float:
        start = time.perf_counter()
        for _ in range(repeat):
            for line in lines:
                read(line)
        return time.perf_counter() - start

    return run


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    try:
        import tree_sitter
        import tree_sitter_bash
    except ImportError:
        print("skipped: tree-sitter-bash is not installed (pip install tree-sitter tree-sitter-bash)")
        return 0
    ts = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))

    def ours(line: str) -> object:
        return shell._read.__wrapped__(line, 0)  # type: ignore[attr-defined]

    def tree_sitter_floor(line: str) -> object:
        nodes = [ts.parse(line.encode()).root_node]
        while nodes:
            nodes.extend(nodes.pop().children)
        return None

    header("shell reader vs tree-sitter-bash (parse and visit)")
    rows = []
    sets = (("agent lines (13, x50)", AGENT_LINES, 50), ("200 KB lines (2)", LONG_LINES, 1))
    for label, lines, repeat in sets:
        a, b = paired(
            args.rounds, timed(ours, lines, repeat), timed(tree_sitter_floor, lines, repeat), label=label
        )
        rows.append([label, median(a) * 1e3, median(b) * 1e3, median(ratios(b, a))])
    end_progress()
    print(table(["lines", "ours (ms)", "tree-sitter floor (ms)", "floor / ours"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
