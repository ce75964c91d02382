"""Rules decide on what will run (issue 16): command lines read as bash reads them (checked against
real bash), reject rules that see through wrappers, globs in linear time, and the paths a call
really touches (redirections, `diff` content, links out of the cwd)."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp.schema import FileEditToolCallContent, ToolCallUpdate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_tui import AcpProviderConfig, AcpSubagentProvider, SubagentRequest
from acp_tui.core.model import PermissionOptionInfo
from acp_tui.lab.check import trace_requests
from acp_tui.lab.trace_file import load_trace
from acp_tui.policy.ask import ALLOW_KINDS, PermissionAsk
from acp_tui.policy.globs import PATH_MAX, paths_match, wildcard
from acp_tui.policy.rules import Rule, RulePolicy, commands_match
from acp_tui.policy.shell import command_lines, read_line
from acp_tui.runs.tool_calls import ToolCalls

CWD = "/work/project"
OPTIONS = (PermissionOptionInfo("a1", "Once", "allow_once"), PermissionOptionInfo("r1", "No", "reject_once"))
STATUS = Rule("status", "allow", commands=("git status", "git status *"))
PUSH = Rule("push", "reject", commands=("git push", "git push *"))
BASH = shutil.which("bash")


def execute(command: Any, **fields: Any) -> PermissionAsk:
    return PermissionAsk("a call", "execute", OPTIONS, raw_input={"command": command, **fields}, cwd=CWD)


def edit(*locations: str, cwd: str = CWD) -> PermissionAsk:
    return PermissionAsk("an edit", "edit", OPTIONS, locations=locations, cwd=cwd)


def approves(policy: RulePolicy, request: PermissionAsk) -> bool:
    chosen = asyncio.run(policy.decide(request)).option_id
    return any(o.option_id == chosen and o.kind in ALLOW_KINDS for o in request.options)


# Separators and redirections, found before any quote is removed ---------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "git status & >/dev/null rm -rf ~",
        "git status '>' & rm -rf ~",
        "git status &>/dev/null& rm -rf ~",
        "git status 2>&1 & rm -rf ~",
        "git status >& /dev/null & rm -rf ~",
        "git status # comment\nrm -rf ~",
        "git status \\\n; rm -rf ~",
        "git status; > ~/.bashrc",
    ],
)
def test_a_background_or_redirected_command_is_a_command(line: str) -> None:
    assert not STATUS.matches(execute(line))
    assert Rule("rm", "reject", commands=("rm *",)).matches(execute(line)) or line.endswith("~/.bashrc")


@pytest.mark.parametrize(
    "line",
    [
        "git status > ~/.bashrc",
        "git status >> ~/.bashrc",
        "git status 2> ~/.bashrc",
        "git status &> ~/.bashrc",
        "git status &>> ~/.bashrc",
        "git status >& ~/.bashrc",
        "git status >| ~/.bashrc",
        "git status <> ~/.bashrc",
        "> ~/.bashrc git status",
        "git status > $HOME/.bashrc",
    ],
)
def test_an_allow_rule_without_paths_never_approves_a_redirection_to_a_file(line: str) -> None:
    assert not STATUS.matches(execute(line))


def test_a_redirections_file_is_a_touched_path() -> None:
    assert not Rule("echo", "allow", commands=("echo *",)).matches(
        execute("echo KEY >> ~/.ssh/authorized_keys")
    )
    # With paths, the rule judges the file; /dev/null and descriptor copies are no file.
    logs = Rule("logs", "allow", commands=("make *",), paths=("logs/**",))
    assert logs.matches(execute("make test > logs/test.txt 2>&1"))
    assert not logs.matches(execute("make test > logs/test.txt 2> ~/.bashrc"))
    assert not logs.matches(execute("make test > logs/$NAME"))  # a file that cannot be read off the line
    assert not logs.matches(execute("cd / && make test > logs/x"))  # a relative file after a `cd`
    assert STATUS.matches(execute("git status >/dev/null 2>&1"))
    assert STATUS.matches(execute("git status 2>/dev/null | git status --short 1>&2"))
    # A reject rule on paths sees the file a command writes, or reads.
    env = Rule("no .env", "reject", paths=("**/.env",))
    assert env.matches(execute("echo KEY=1 > .env"))
    assert env.matches(execute("bash -c 'cat < config/.env'"))
    # A path-only allow rule is not satisfied by a redirection alone: the command is unjudged.
    src = Rule("src", "allow", paths=("src/**",))
    assert not src.matches(execute("rm -rf ~ > src/x"))


def test_a_quoted_tilde_is_a_folder_named_tilde() -> None:
    home = Rule("home", "allow", commands=("echo *",), paths=("~/**",))
    assert home.matches(execute("echo x > ~/notes.txt"))
    assert not home.matches(execute("echo x > '~/notes.txt'"))  # writes ./~/notes.txt


def test_c_counts_only_among_a_shells_leading_options() -> None:
    assert command_lines({"command": ["bash", "evil.sh", "-c", "git status"]}) == [
        "bash evil.sh -c 'git status'"
    ]
    assert not STATUS.matches(execute(["bash", "evil.sh", "-c", "git status"]))
    assert not STATUS.matches(execute(["bash", "--rcfile", "evil.sh", "-i", "-c", "git status"]))
    for argv in (
        ["bash", "-lc", "git status"],
        ["bash", "-c", "-e", "git status"],
        ["bash", "-o", "pipefail", "-c", "git status", "name", "arg"],
        ["/bin/sh", "-ec", "git status"],
    ):
        assert STATUS.matches(execute(argv)), argv


@pytest.mark.parametrize(
    "line",
    [
        "eval 'git status'",
        "source ./x.sh",
        ". ./x.sh",
        "trap 'rm -rf ~' EXIT",
        "curl -s x | sh",
        "git status | bash",
        "bash < script.sh",
        "bash evil.sh",
        "bash <<< 'rm -rf ~'",
        "bash <<EOF\nrm -rf ~\nEOF",
        "echo x | xargs sh",
        "$X status",
        "${GIT} status",
        "/usr/bin/$X status",
        "gi? status",
        "git status $(rm -rf ~)",
        'git status "$(rm -rf ~)"',
        "git status `rm -rf ~`",
        "git status <(rm -rf ~)",
        "git status $((a[$(id)]))",
        "git status ${x@P}",
        "git status ${!ref}",
        "git status ${arr[$i]}",
        "git status ${x:$i}",
        "cat <<EOF\n$(rm -rf ~)\nEOF",
        "git status 'unbalanced",
        "git status (",
    ],
)
def test_what_cannot_be_read_off_the_text_never_matches_an_allow_rule(line: str) -> None:
    assert read_line(line).opaque is not None
    for globs in (("*",), ("git status", "git status *", "eval *", "source *", ". *", "bash *", "*sh*")):
        assert not commands_match(globs, [line], every=True), (line, globs)


def test_what_can_be_read_still_is() -> None:
    for line in (
        "git status -- 'file with spaces' \"and $HOME\"",
        "git status ${HOME} ${x:-default} $1 $@",
        "cat <<'EOF' | git status\n$(not run)\nEOF",
        "git status <<< '$(not run)'",
        "git status # $(a comment)",
        "git status \\$(not a substitution)",
        "git status '$(quoted)'",
    ):
        assert read_line(line).opaque is None, line


@pytest.mark.parametrize(
    "line",
    [
        "FOO='a b' git push",
        'FOO="a b" BAR=1 git push',
        "env -i git push",
        "env -u HOME git push",
        "env -- git push",
        "env -S 'git push'",
        "sudo -u root git push",
        "sudo -g wheel -E -H -n -- git push",
        "nice -n 5 git push",
        "nice -5 git push",
        "time -p git push",
        "exec -a NAME git push",
        "command -p git push",
        "nohup -- git push",
        "timeout 5 git push",
        "timeout -s KILL --kill-after=1 5 git push",
        "stdbuf -o0 git push",
        "ionice -c 3 git push",
        "echo x | xargs -n1 -I{} git push",
        "doas git push",
        "setsid git push",
        "/usr/bin/git push",
        "git -C . push",
        "git -c k=v push",
        "git --git-dir=.git --work-tree . push",
        "g''it p\\ush",
        "$'\\x67it' push",
        "sudo env FOO=1 nice -n 3 /usr/bin/git -C x push",
        "bash -c 'sh -c \"git push\"'",
        "eval 'git push'",
        "echo $(git push)",
        "bash <<EOF\ngit push\nEOF",
        "sh <<< 'git push'",
        "find . -name x -exec git push \\;",
        "if true; then git push; fi",
        "! git push",
        "{ git push; }",
        "{git,} push",
        "FOO\\\n=1 git push",
    ],
)
def test_reject_rules_see_through_assignments_wrappers_and_spellings(line: str) -> None:
    assert PUSH.matches(execute(line)), line


# Any program may run its arguments as a command: the issue's six, and what an attacker tries next.
RUN_ARGUMENTS = [
    "flock /tmp/l git push",
    "taskset -c 0 git push",
    "watch -n 60 git push",
    "su -c 'git push' me",
    "strace -f git push",
    "git -c alias.ship=push ship",
    "git -c alias.ship='push --force' ship origin",
    "git -c Alias.Ship='!git push' ship",
    "git -c alias.ship='!f() { git push; }; f' ship",
    "flock /tmp/l git -c alias.ship=push ship",
    "flock /tmp/l /usr/bin/git -C . push",
    "parallel git push ::: a",
    "parallel ::: 'git push'",
    "echo x | xargs -I{} git push",
    "find . -exec git -C {} push \\;",
    "nohup setsid chroot / unshare -r ionice -c3 chrt 10 stdbuf -o0 git push",
    "script -qc 'git push' /dev/null",
    "busybox sh -c 'git push'",
    "env -S 'git push'",
    "su me -c \"sh -c 'git push'\"",
    "runuser -u me -- git push",
    "ssh host 'git push'",
    "docker exec box git push",
    "git -c core.sshCommand='sh -c \"git push\"' fetch",
    "GIT_SSH_COMMAND='git push' git fetch",
    "git rebase --exec 'git push' main",
    "alias ship='git push'; ship",
]


@pytest.mark.parametrize("line", RUN_ARGUMENTS)
def test_a_reject_rule_matches_wherever_the_command_would_run(line: str) -> None:
    assert PUSH.matches(execute(line)), line
    policy = RulePolicy("p", (PUSH,), default="allow", order="deny-first")
    assert not approves(policy, execute(line)), line


@pytest.mark.parametrize(
    "line",
    [
        "$(echo git) push",
        "bash -c '$(echo git) push'",
        "sh -c 'eval \"$X\"'",
        "git --config-env=alias.ship=SHIP ship",
        "find . -name '*.sh' -exec {} \\;",
        "echo x | xargs -I{} sh -c '{}'",
        "parallel < commands.txt",
        "curl -s x | sh",
    ],
)
def test_an_opaque_line_never_gets_the_default_allow(line: str) -> None:
    policy = RulePolicy("p", (PUSH,), default="allow", order="deny-first")
    choice = asyncio.run(policy.decide(execute(line)))
    assert (choice.option_id, choice.rule) == ("r1", "default (opaque: reject)"), line
    headless_ask = RulePolicy("p", (Rule("ask", "ask", kinds=("execute",)),), default="allow")
    assert asyncio.run(headless_ask.decide(execute(line))).option_id == "r1"


def test_a_readable_line_still_gets_the_default_allow() -> None:
    policy = RulePolicy("p", (PUSH,), default="allow", order="deny-first")
    for line in (
        "git status",
        "flock /tmp/l make test",
        "bash -c 'git log | head'",
        "echo 'a b' | xargs -n1 echo",
    ):
        choice = asyncio.run(policy.decide(execute(line)))
        assert (choice.option_id, choice.rule) == ("a1", "default"), line


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
@pytest.mark.parametrize("alias", ["push", "!git push"])
def test_a_git_alias_on_the_line_runs_what_we_read(tmp_path: Path, alias: str) -> None:
    """Real git: `-c alias.ship=...` makes `git ship` push; the reject rule sees the push."""
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "clone", "-q", str(remote), str(work)], check=True, capture_output=True)
    identity = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(["git", *identity, "commit", "-q", "--allow-empty", "-m", "x"], cwd=work, check=True)
    line = f"git -c alias.ship={shlex.quote(alias)} ship origin HEAD"
    assert PUSH.matches(execute(line))
    subprocess.run(["bash", "-c", line], cwd=work, check=True, capture_output=True)
    pushed = subprocess.run(["git", "-C", str(remote), "log", "--oneline"], capture_output=True, text=True)
    assert pushed.stdout.strip().endswith(" x")  # it did push


def test_a_line_nested_deeper_than_we_read_matches_every_reject_rule_and_no_allow_rule() -> None:
    deep = "echo " + "$(" * 40 + "x" + ")" * 40
    assert PUSH.matches(execute(deep))
    assert not commands_match(["*"], [deep], every=True)
    wrapped = "env " * 200 + "git status"
    assert PUSH.matches(execute(wrapped)) and not STATUS.matches(execute(wrapped))


# The reading is bash's: run the line in real bash, with no program on PATH -----------------------

# bash calls `command_not_found_handle` for every command it would run from PATH: it writes the
# command's words to a file of its own (commands of a pipeline run at once). `eval` then `wait`:
# background jobs are waited for; those of subshells too, as we read the pipe they all hold to its end.
HARNESS = r"""
command_not_found_handle() { printf '%s\037' "$@" > "$ACP_TEST_LOG/$BASHPID.$RANDOM"; }
eval "$1"
wait
"""


def bash_runs(line: str) -> tuple[list[tuple[str, ...]], set[str], str]:
    """What bash ran for `line` (each command's words), the files it created, its stderr."""
    assert BASH is not None
    with tempfile.TemporaryDirectory() as folder:
        work, empty, log = Path(folder, "work"), Path(folder, "empty"), Path(folder, "log")
        for made in (work, empty, log):
            made.mkdir()
        (work / "in").write_text("")
        read, write = os.pipe()
        try:
            done = subprocess.run(
                [BASH, "--norc", "--noprofile", "-c", HARNESS, "bash", line],
                cwd=work,
                env={"PATH": str(empty), "HOME": str(work), "LC_ALL": "C", "ACP_TEST_LOG": str(log)},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                pass_fds=(write,),
                timeout=20,
                check=False,
            )
        finally:
            os.close(write)
        with os.fdopen(read, "rb") as held:  # to its end: every process, background ones too, is done
            held.read()
        records = [path.read_bytes().decode("utf-8", "surrogateescape") for path in log.iterdir()]
        created = {path.name for path in work.iterdir()} - {"in"}
    return [tuple(record.split("\037")[:-1]) for record in records], created, done.stderr


def our_commands(line: str) -> tuple[list[tuple[str, ...]], set[str]]:
    """The commands we read in `line` (without their leading assignments), and the files they write."""
    reading = read_line(line)
    commands, files = [], set()
    for command in reading.commands:
        words = list(command.words)
        while words and "=" in words[0].raw and words[0].raw.split("=")[0].isidentifier():
            words.pop(0)
        if words:
            commands.append(tuple(word.text for word in words))
        if any(word.pattern and "{" in word.raw for word in command.words):  # and braces expanded
            commands.append(tuple(word.text for word in command.calls[1]))
        files |= {r.target.text for r in command.redirects if r.writes_file() and r.target is not None}
        if any(r.target is not None and r.target.expands for r in command.redirects):
            files.add("?")  # a file we do not claim to know: any name bash creates may be it
    return commands, files


@pytest.mark.parametrize(
    ("line", "ran"),
    [
        ("git status & >/dev/null rm -rf x", [("git", "status"), ("rm", "-rf", "x")]),
        ("git status '>' & rm -rf x", [("git", "status", ">"), ("rm", "-rf", "x")]),
        ("git status 2>&1 >/dev/null; git status >&2 | c1", [("git", "status"), ("git", "status"), ("c1",)]),
        ("git status # ; rm -rf x", [("git", "status")]),
        ("git status a#b; rm -rf x", [("git", "status", "a#b"), ("rm", "-rf", "x")]),
        ("cat <<E | c1\nrm -rf x\nE\nc2", [("cat",), ("c1",), ("c2",)]),
        ("FOO='a b' git push", [("git", "push")]),
        ("$'\\x67it' p\\ush \"a b\" 'c'\"d\"", [("git", "push", "a b", "cd")]),
        ("c1 >&-c2 x", [("c1", "c2", "x")]),  # `>&-` closes; the rest of the word is one of its own
        ("A\\\n=1 c1", [("c1",)]),  # a line continuation goes first: `A=1` is an assignment
    ],
)
def test_the_issues_lines_run_in_bash_as_we_read_them(line: str, ran: list[tuple[str, ...]]) -> None:
    bash_ran, created, stderr = bash_runs(line)
    assert Counter(bash_ran) == Counter(ran), stderr
    assert Counter(our_commands(line)[0]) == Counter(ran)
    assert created == set()


WORDS = ["c1", "c2", "x", "-c", "a=b", "''", '""', "'a b'", '"a b"', "'>'", "'&'", '";"', "\\;", "\\&"]
WORDS += ["\\>", "'#'", "x#y", "$'c\\x31'", '"q\\"q"', "c\\\n1", "'\n'", "{c1,c2}", "c{1,'2 3'}", "{x..z}"]
WORDS += ["x{01..02}", "'{c1,c2}'", "{a,\\,b}{1..2}"]
OPERATORS = [";", "&", "&&", "||", "|", "|&", "\n", "(", ")", "#", " ", " ", " ", "\t"]
# Every file a line may write is relative (in a temporary folder): `/dev/null` stands apart.
REDIRECTIONS = [">", ">>", ">|", "&>", "&>>", ">&", "<>", "2>", "<in", "2>&1", ">&2", " >/dev/null ", "<<<c2"]
REDIRECTIONS += ["<<E\nbody c2\nE\n", "<<-E\n\tc2\n\tE\n", "<<'E'\n$x `c2`\nE\n"]
TARGETS = ["f", "g", "'h i'"]
TOKENS = st.lists(st.sampled_from(WORDS + OPERATORS + REDIRECTIONS + TARGETS), max_size=14)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tokens=TOKENS)
def test_bash_runs_nothing_we_did_not_read(tokens: list[str]) -> None:
    """Differential: bash runs no command (and creates no file) that our reading does not have;
    where bash ran without a complaint and nothing was conditional, exactly ours."""
    line = "".join(tokens)
    if read_line(line).unreadable:  # too many words from its braces: it is judged unread
        assert PUSH.matches(execute(line)) and not STATUS.matches(execute(line))
        return
    bash_ran, created, stderr = bash_runs(line)
    ours, files = our_commands(line)
    assert Counter(bash_ran) <= Counter(ours), (line, stderr)
    assert created <= files or "?" in files, (line, stderr)
    # Exactly ours where bash said nothing (and could: no line moved its stderr) and ran everything.
    quiet = not stderr and not any(mark in line for mark in ("2>", "&>", ">&", "|&"))
    plain = "&&" not in line and "||" not in line and "{" not in line
    if quiet and plain and read_line(line).opaque is None:
        assert Counter(bash_ran) == Counter(ours), line
        assert created == files or "?" in files, line


ALLOWED_TAIL = ["x", "'y z'", "'>'", '";"', "'&'", "\\|", " >/dev/null ", "2>&1", " ", " ", "#", "\n"]
ALLOWED_TAIL += [";", "&", "|", ">", "f", "git", "status", "rm", "~", "-rf", "(", ")", "<<<x", "'"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tail=st.lists(st.sampled_from(ALLOWED_TAIL), max_size=10))
def test_an_allow_rule_never_approves_a_line_that_runs_more(tail: list[str]) -> None:
    """If `git status *` allows a line, bash runs only `git status ...` and writes no file."""
    line = "git status " + "".join(tail)
    if STATUS.matches(execute(line)):
        bash_ran, created, _ = bash_runs(line)
        assert all(words[:2] == ("git", "status") for words in bash_ran), line
        assert created == set(), line


# A reject rule never approves, whatever wraps or spells the command ------------------------------

ASSIGNMENTS = st.lists(
    st.sampled_from(["FOO=1", "FOO='a b'", 'X="y z"', "A=", "B=$HOME", "C+=x"]), max_size=2
)
WRAPPER = st.sampled_from(
    [
        "env",
        "env -i",
        "env -u HOME",
        "env --",
        "env -",
        "env A=1",
        "/usr/bin/env -i",
        "sudo",
        "sudo -u root",
        "sudo -g wheel",
        "sudo -E",
        "sudo -H",
        "sudo -n",
        "sudo --",
        "sudo -u root -E --",
        "/usr/bin/sudo",
        "nice",
        "nice -n 5",
        "nice -5",
        "nice --adjustment=3",
        "nohup",
        "nohup --",
        "time",
        "time -p",
        "exec",
        "exec -a NAME",
        "command",
        "command -p",
        "timeout 5",
        "timeout -s KILL 5",
        "timeout --kill-after=1 5",
        "stdbuf -o0",
        "stdbuf -oL -e 0",
        "ionice -c 3",
        "ionice -c3 -n7",
        "xargs",
        "xargs -0",
        "xargs -n1",
        "xargs -I{}",
        "doas",
        "doas -u root",
        "setsid",
        "env -S",
        "flock /tmp/l",
        "taskset -c 0",
        "watch -n 60",
        "strace -f -o /dev/null",
        "chroot /",
        "unshare -r",
        "chrt 10",
        "busybox",
        "runuser -u me --",
    ]
)
PROGRAM = st.sampled_from(["git", "/usr/bin/git", "'git'", '"git"', "g''it", "\\git", "$'\\x67it'", "./git"])
GIT_OPTIONS = st.lists(
    st.sampled_from(
        ["-C .", "-C /tmp", "-c k=v", "-c 'a=b c'", "--git-dir=x", "--git-dir x", "--no-pager", "-P"]
    ),
    max_size=2,
)
SUBCOMMAND = st.sampled_from(["push", "'push'", "pu\\sh", '"push"', "$'push'"])
ARGS = st.sampled_from(["", " origin", " --force", " origin main", " > /dev/null", " 2>&1", " &"])
CONTEXT = st.sampled_from(
    [
        "{L}",
        "x; {L}",
        "x && {L}",
        "x || {L}",
        "x | {L}",
        "{L} &",
        "({L})",
        "$({L})",
        "`{L}`",
        'echo "$({L})"',
        "if x; then {L}; fi",
        "while x; do {L}; done",
        "! {L}",
        "{ {L}; }",
        "bash -c {Q}",
        "sh -lc {Q}",
        "eval {Q}",
        "x\n{L}",
        "{L} # comment",
        "FOO=1 bash -c {Q}",
        "bash <<< {Q}",
        "sudo sh -c {Q}",
        "find . -exec {L} \\;",
        "coproc {L}",
        "cat <<E\n$({L})\nE",
        "su -c {Q} me",
        "script -c {Q} /dev/null",
        "ssh host {Q}",
        "watch {Q}",
    ]
)


@settings(max_examples=500, deadline=None)
@given(
    assignments=ASSIGNMENTS,
    wrappers=st.lists(WRAPPER, max_size=3),
    program=PROGRAM,
    options=GIT_OPTIONS,
    subcommand=SUBCOMMAND,
    args=ARGS,
    context=CONTEXT,
    order=st.sampled_from(["first-match", "deny-first"]),
)
def test_a_reject_rule_never_approves_under_any_wrapper_or_quoting(
    assignments: list[str],
    wrappers: list[str],
    program: str,
    options: list[str],
    subcommand: str,
    args: str,
    context: str,
    order: Any,
) -> None:
    words = [*assignments, *wrappers, program, *options, subcommand]
    if "env -S" in wrappers:  # its value is one word: the rest of the command
        at = wrappers.index("env -S")
        words = [
            *assignments,
            *wrappers[:at],
            "env -S",
            shlex.quote(" ".join(words[len(assignments) + at + 1 :])),
        ]
    command = " ".join(words) + args
    line = context.replace("{Q}", shlex.quote(command)).replace("{L}", command)
    policy = RulePolicy("p", (PUSH, Rule("anything", "allow", commands=("*",))), default="allow", order=order)
    assert not approves(policy, execute(line)), line


# Globs in linear time ---------------------------------------------------------------------------


def calls(call: Callable[[], object]) -> int:
    """The function calls (Python's and C's) that `call()` makes: its work, counted, not timed."""
    call()  # compiled globs are cached: count the deciding, not the first compilation
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        count += event in ("call", "c_call")

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return count


def linear(decide: Callable[[int], object], size: int) -> bool:
    """Twice the input costs at most about twice the work (a backtracking match grows far faster)."""
    return calls(lambda: decide(2 * size)) <= 2.2 * calls(lambda: decide(size)) + 50


def test_deciding_a_200_kb_path_is_linear() -> None:
    allow = Rule("tests", "allow", paths=("**/test/**/*.py",))
    reject = Rule("tests", "reject", paths=("**/test/**/*.py", "**/node_modules/**"))
    for rule in (allow, reject):
        assert linear(lambda n, rule=rule: rule.matches(edit(CWD + "/" + "a/" * n + "x.py")), 100_000)
    # Under PATH_MAX the segments are matched one by one.
    rule = Rule("r", "reject", paths=("**/a/**/b/**/*.py", "a/**/a*a*a*c"))
    assert linear(lambda n: rule.matches(edit(CWD + "/" + "a/" * n + "b")), 1_000)


def test_a_path_longer_than_path_max_matches_every_reject_rule_and_no_allow_rule() -> None:
    for long in (
        CWD + "/src/" + "x" * PATH_MAX,
        CWD + "/src/" + "é" * (PATH_MAX // 2 + 1),
        "src/" + "y" * 4090,
    ):
        assert not Rule("src", "allow", paths=("src/**", "**")).matches(edit(long))
        assert Rule("nothing", "reject", paths=("/nowhere/*",)).matches(edit(long))
    assert Rule("src", "allow", paths=("src/**",)).matches(edit(CWD + "/src/" + "x" * 200))


def test_a_newline_is_a_character_like_any_other() -> None:
    path = CWD + "/a\nb/node_modules/evil\n.js"
    assert Rule("modules", "reject", paths=("**/node_modules/**",)).matches(edit(path))
    assert Rule("js", "reject", paths=("**/*.js",)).matches(edit(path))
    assert Rule("one", "reject", paths=("a?b/*/evil?.js",)).matches(edit(path))
    assert commands_match(["echo *"], ["echo 'a\nb'"], every=True)
    assert wildcard("a*b").match("a\n\nb") and wildcard("a?b").match("a\nb")


def test_command_globs_are_linear_too() -> None:
    for glob in ("*a*a*a*a*a*a*a*a*a*a*a*b", "*a?a[ab]a*a*a*a*a*b"):
        assert linear(lambda n, glob=glob: wildcard(glob).match("a" * n), 200_000)
    line = "git status "
    assert linear(lambda n: commands_match(["*a*a*a*a*a*a*a*a*a*b"], [line + "a" * n], every=False), 200_000)


@pytest.mark.parametrize(
    ("glob", "text", "hit"),
    [
        ("*", "", True),
        ("a*", "a", True),
        ("*a", "ba", True),
        ("a*b*c", "abxbc", True),
        ("a*b*c", "acb", False),
        ("*ab*ab*", "abab", True),
        ("*ab*ab*", "aba", False),
        ("a?c", "abc", True),
        ("a?c", "ac", False),
        ("[!a]*", "ba", True),
        ("[^a]*", "ab", False),
        ("[]x]", "]", True),
        ("[a-c]z", "bz", True),
        ("[b-a]", "[b-a]", False),  # a reversed range matches nothing, as in bash
        ("[b-a]", "b", False),
        ("[xb-a]", "x", True),
        ("[^a]", "^", True),  # bash's `[^...]` is `[!...]`, not a class holding `^`
        ("[^]a]", "]", False),
        ("x[^", "x[^", True),
        ("x[", "x[", True),
        ("git status *", "git status --short", True),
        ("git status *", "git status", False),
    ],
)
def test_wildcards_match_as_bash_does(glob: str, text: str, hit: bool) -> None:
    assert (wildcard(glob).match(text) is not None) is hit


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("src/**", "src", False),  # everything under src, not src itself
        ("**", ".", True),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/x/y/c", False),
        ("**/x/**/y", "x/y", True),
        ("**/x/**/y", "q/x/r/s/y", True),
        ("src**", "src/deep/x", True),  # `**` within a segment spans directories too
        ("src**", "srcs", True),
        ("a**b", "a/x/b", True),
        ("a**b", "ab", True),
        ("a**b", "a/x/c", False),
        ("*.py", "a/b.py", False),
    ],
)
def test_path_globs_segment_by_segment(glob: str, path: str, hit: bool) -> None:
    assert paths_match([glob], [path], CWD, every=False) is hit


# The paths a call touches -------------------------------------------------------------------------


def test_an_edit_named_only_in_its_diff_content_is_a_touched_path() -> None:
    call = ToolCallUpdate(
        tool_call_id="e1",
        title="Edit",
        kind="edit",
        content=[FileEditToolCallContent(type="diff", path=f"{CWD}/.env", old_text=None, new_text="K=1")],
    )
    fields = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
    request = ToolCalls().ask(fields, (), None)
    assert request.locations == (f"{CWD}/.env",)
    assert Rule("no .env", "reject", paths=("**/.env",)).matches(
        PermissionAsk(request.title, request.kind, OPTIONS, locations=request.locations, cwd=CWD)
    )


async def test_a_live_run_and_its_trace_reject_an_edit_named_only_in_its_diff(tmp_path: Path) -> None:
    target = str(tmp_path / ".env")
    policy = RulePolicy("careful", (Rule("no .env", "reject", paths=("**/.env",)),), default="allow")
    config = AcpProviderConfig(
        command=sys.executable,
        args=[str(Path(__file__).with_name("edit_agent.py")), target],
        permission_policy=policy,
        trace_dir=str(tmp_path / "traces"),
        term_grace=0.3,
        cancel_grace=0.5,
    )
    run = await AcpSubagentProvider(config).start(SubagentRequest("go", cwd=str(tmp_path)))
    result = await run.result()
    [record] = result.permissions
    assert (record.decision, record.rule, record.locations) == ("reject_once", "no .env", (target,))
    assert run.trace_path is not None
    [traced] = trace_requests(Path(run.trace_path), load_trace(run.trace_path))
    assert traced.ask.locations == (target,)
    assert (await policy.decide(traced.ask)).rule == "no .env"


def test_a_link_out_of_the_cwd_is_outside(tmp_path: Path) -> None:
    cwd, outside = tmp_path / "project", tmp_path / "outside"
    (cwd / "src").mkdir(parents=True)
    outside.mkdir()
    (cwd / "src" / "link").symlink_to(outside)
    src = Rule("src", "allow", kinds=("edit",), paths=("src/**",))
    assert src.matches(edit(str(cwd / "src" / "a.py"), cwd=str(cwd)))
    assert src.matches(edit("src/new/deeper/b.py", cwd=str(cwd)))  # nothing of it exists yet
    for through in ("src/link/x", "src/link/new/y", str(cwd / "src" / "link" / "x"), "src/link/../escape"):
        assert not src.matches(edit(through, cwd=str(cwd))), through
    # A reject rule sees both: the path as written and where it leads.
    assert Rule("outside", "reject", paths=(f"{outside}/**",)).matches(edit("src/link/x", cwd=str(cwd)))
    assert Rule("src", "reject", paths=("src/**",)).matches(edit("src/link/x", cwd=str(cwd)))
