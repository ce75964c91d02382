"""`acp-tui policy check`: decide recorded permission requests again with a policy, no agent run.

Requests come from traces (`--trace` files: each `session/request_permission` the agent sent, the
tool call's fields merged from its earlier `tool_call` / `tool_call_update` announcements, the cwd
of `session/new`, and the client's answer) and from JSON records (`acp-tui run --format json`, the
app's export: each record's `permissions`; older records without `raw_input` / `locations` still
read, and rules on commands and paths then have nothing to match). A folder stands for every
`*.json` / `*.jsonl` file under it; a trace that a record of the same check names is read once, as
the trace (it keeps what a rule needs, the cwd too) with the rules that decided from the record. The
trace of another provider's run (Claude Code's stream-json, A2A's) holds no ACP conversation: that
run's requests are its record's.

Each request gives a row: `run` (the file and line of its record, with the record's round and attempt
when it has them, or the trace file), `agent`, `kind`, `title`, `was` and `now` (`{decision, rule}`:
the chosen option's kind, `cancelled`, or `ask`), `changed`. The status: 0 when no decision changed,
1 when any did; bad input is the caller's exit 2.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from acp_tui.core.model import PermissionOptionInfo, PermissionRecord
from acp_tui.core.text import one_line
from acp_tui.lab.trace_file import Entry, TraceError, agent_label, entry_from, is_trace_line, obj
from acp_tui.policy.ask import PermissionAsk, PermissionPolicy
from acp_tui.runs.tool_calls import ToolCalls

ASK = "ask"


class Person:
    """The `ask` policy under check: a person would be asked, so it decides nothing."""

    name = ASK


PERSON = Person()
CheckedPolicy = PermissionPolicy | Person


class RecordsError(ValueError):
    """Input that is not records or traces, said in one line naming the file."""


@dataclass(frozen=True)
class Decision:
    decision: str  # the chosen option's kind, "cancelled", or "ask"
    rule: str | None  # what decided; None when unknown (a trace does not say)

    def to_json(self) -> dict[str, Any]:
        return {"decision": self.decision, "rule": self.rule}


@dataclass(frozen=True)
class Request:
    """One recorded permission request and how it was answered then."""

    agent: str
    ask: PermissionAsk
    recorded: Decision
    source: str  # "FILE line N, permission K", for an error about it
    run: str  # which run asked: "runs.jsonl:3 r1·a2", or the trace's file name


@dataclass(frozen=True)
class Row:
    run: str
    agent: str
    kind: str | None
    title: str
    was: Decision
    now: Decision

    @property
    def changed(self) -> bool:
        return self.was.decision != self.now.decision

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "agent": self.agent,
            "kind": self.kind,
            "title": self.title,
            "was": self.was.to_json(),
            "now": self.now.to_json(),
            "changed": self.changed,
        }


# Reading ----------------------------------------------------------------------------------------


def input_files(paths: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file())
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            raise RecordsError(f"{path}: no such file or folder")
    return files


def load_requests(paths: Sequence[Path]) -> list[Request]:
    """Every permission request of `paths` (files or folders), in file order."""
    records: list[tuple[Path, list[tuple[int, dict[str, Any]]]]] = []
    traces: list[tuple[Path, list[Entry]]] = []
    for path in input_files(paths):
        kind, items = _read_file(path)
        if kind == "trace":
            traces.append((path, items))
        else:
            records.append((path, items))
    # A record naming a trace that is also given is read from the trace, which keeps everything a
    # rule needs (raw input, locations, the cwd), with the rules that decided from the record.
    by_trace = {_resolved(path): (path, entries) for path, entries in traces}
    requests: list[Request] = []
    used: set[Path] = set()
    for path, lines in records:
        for number, record in lines:
            own = list(_record_requests(record, f"{path} line {number}", _run_of(record, path, number)))
            named = record.get("trace")
            trace = by_trace.get(_resolved(Path(named))) if isinstance(named, str) else None
            if trace is not None:
                used.add(_resolved(trace[0]))
            # Another provider's trace is no ACP conversation: its requests are the record's.
            if trace is None or record.get("provider", "acp") != "acp":
                requests.extend(own)
                continue
            traced = trace_requests(*trace)
            if [r.ask.title for r in traced] == [r.ask.title for r in own]:
                traced = [
                    replace(t, agent=o.agent, run=o.run, recorded=replace(t.recorded, rule=o.recorded.rule))
                    for t, o in zip(traced, own, strict=True)
                ]
            requests.extend(traced)
    for path, entries in traces:
        if _resolved(path) not in used:
            requests.extend(trace_requests(path, entries))
    return requests


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def _read_file(path: Path) -> tuple[str, Any]:
    from acp_tui.core.files import JsonError, UnreadableFile, json_values, read_text

    try:
        parsed = json_values(read_text(path, what="record file"))
    except UnreadableFile as exc:
        raise RecordsError(str(exc)) from None
    except JsonError as exc:
        raise RecordsError(f"{path} {exc}" if exc.line else f"{path}: {exc}") from None
    if len(parsed) == 1 and isinstance(parsed[0][1], list):  # one document: a list of records
        parsed = [(1, item) for item in parsed[0][1]]
    if parsed and is_trace_line(parsed[0][1]):
        try:
            return "trace", [entry_from(data, f"{path} line {n}") for n, data in parsed]
        except TraceError as exc:
            raise RecordsError(str(exc)) from None
    for number, data in parsed:
        if not isinstance(data, dict) or not isinstance(data.get("permissions"), list):
            raise RecordsError(
                f'{path} line {number}: neither a run record (with "permissions") nor a trace line'
            )
    return "records", parsed


def _run_of(record: dict[str, Any], path: Path, number: int) -> str:
    """`runs.jsonl:3`, and `r1·a2` (`·t2`) when the record says its round and attempt (the app's)."""
    numbers = [record.get(key) for key in ("round", "attempt", "turn")]
    round_no, attempt, turn = (n if type(n) is int else None for n in numbers)
    label = f" r{round_no}·a{attempt}" if round_no and attempt else ""
    return f"{path.name}:{number}{label}" + (f"·t{turn}" if label and turn and turn > 1 else "")


# What a permission of a record must hold to be decided again, said per key.
_PERMISSION_PROBLEMS = {
    "title": '"title" and "decision" must be strings',
    "decision": '"title" and "decision" must be strings',
    "kind": '"kind" must be a string or null',
    "options": '"options" must be a list of {option_id, name, kind}',
    "locations": '"locations" must be a list of paths',
}


def _record_requests(record: dict[str, Any], where: str, run: str) -> Iterable[Request]:
    """The permissions of a record (one of `acp-tui run`'s, or a hand-written one with little more
    than `permissions`), read by the record's own model of a permission."""
    from pydantic import ValidationError

    from acp_tui.reports.records import Permission

    agent = record.get("name")
    agent = agent if isinstance(agent, str) else "?"
    for index, said in enumerate(record["permissions"], start=1):
        at = f"{where}, permission {index}"
        if not isinstance(said, dict):
            raise RecordsError(f"{at}: not an object")
        try:
            permission = Permission.model_validate({"title": None, "decision": None, **said})
        except ValidationError as exc:
            key = next((k for k in exc.errors()[0]["loc"] if isinstance(k, str)), "")
            problem = _PERMISSION_PROBLEMS.get(key, f'"{key}" is not what a permission holds')
            raise RecordsError(f"{at}: {problem}") from None
        cwd = said.get("cwd", record.get("cwd"))  # a hand-written request may name its own
        ask = PermissionAsk(
            title=permission.title,
            kind=permission.kind,
            options=tuple(PermissionOptionInfo(**o.model_dump()) for o in permission.options),
            raw_input=permission.raw_input,
            locations=tuple(permission.locations),
            cwd=cwd if isinstance(cwd, str) else None,
        )
        rule = permission.rule if "rule" in said else None  # a hand-written request may not say
        yield Request(agent, ask, Decision(permission.decision, rule), at, run)


def trace_requests(path: Path, entries: list[Entry]) -> list[Request]:
    """The permission requests of one trace, each with the client's recorded answer."""
    agent = agent_label(path, entries)
    answers = {json.dumps(e.frame["id"]): e.frame for e in entries if e.dir == "out" and e.is_response}
    tool_calls = ToolCalls()  # the same merging as the live run's
    cwd: str | None = None
    requests = []
    for number, entry in enumerate(entries, start=1):
        frame, method = entry.frame, entry.frame.get("method")
        params = frame.get("params")
        if not isinstance(params, dict):
            params = {}
        if entry.dir == "out" and method == "session/new" and isinstance(params.get("cwd"), str):
            cwd = params["cwd"]
        elif entry.dir == "in" and method == "session/update":
            update = params.get("update")
            if isinstance(update, dict) and update.get("sessionUpdate") in ("tool_call", "tool_call_update"):
                tool_calls.merge(update)
        elif entry.dir == "in" and method == "session/request_permission" and entry.is_request:
            where = f"{path} line {number}"
            call, options = params.get("toolCall"), _trace_options(params.get("options"))
            if not isinstance(call, dict) or options is None:
                continue  # not a request the client could decide (it answered with an error)
            ask = tool_calls.ask(call, options, cwd)
            answer = answers.get(json.dumps(frame["id"]))
            requests.append(Request(agent, ask, Decision(_answered(answer, options), None), where, path.name))
    return requests


def _trace_options(raw: Any) -> tuple[PermissionOptionInfo, ...] | None:
    if not isinstance(raw, list) or not all(
        isinstance(o, dict) and all(isinstance(o.get(k), str) for k in ("optionId", "name", "kind"))
        for o in raw
    ):
        return None
    return tuple(PermissionOptionInfo(o["optionId"], o["name"], o["kind"]) for o in raw)


def _answered(answer: dict[str, Any] | None, options: tuple[PermissionOptionInfo, ...]) -> str:
    outcome = obj(obj(obj(answer).get("result")).get("outcome"))
    if outcome.get("outcome") == "selected":
        for option in options:
            if option.option_id == outcome.get("optionId"):
                return option.kind
    return "cancelled"


# What a policy reads of a request that its record keeps, under the same names.
ASKED = ("title", "kind", "options", "content", "raw_input", "locations")


def ask_of(record: PermissionRecord, cwd: str | None = None) -> PermissionAsk:
    """A recorded request asked again: everything a policy reads, from the run's record."""
    return PermissionAsk(**{name: getattr(record, name) for name in ASKED}, cwd=cwd)


# Deciding ---------------------------------------------------------------------------------------


async def decide(policy: CheckedPolicy, ask: PermissionAsk) -> Decision:
    """What `policy` decides (a person decides nothing: `ask`)."""
    if isinstance(policy, Person):
        return Decision(ASK, ASK)
    choice = await policy.decide(ask)
    kinds: dict[str, str] = {}
    for option in ask.options:  # an id offered twice reads as its first offer, as in the run
        kinds.setdefault(option.option_id, option.kind)
    decision = kinds.get(choice.option_id, "cancelled") if choice.option_id is not None else "cancelled"
    return Decision(decision, choice.rule)


def check(
    requests: Sequence[Request], policy: CheckedPolicy, against: CheckedPolicy | None = None
) -> list[Row]:
    """One row per request. `against` given: `was` is `policy`'s decision and `now` is `against`'s;
    otherwise `was` is the recorded decision and `now` is `policy`'s."""

    async def rows() -> list[Row]:
        out = []
        for request in requests:
            if against is None:
                was, now = request.recorded, await decide(policy, request.ask)
            else:
                was, now = await decide(policy, request.ask), await decide(against, request.ask)
            out.append(Row(request.run, request.agent, request.ask.kind, request.ask.title, was, now))
        return out

    return asyncio.run(rows())


# Printing ---------------------------------------------------------------------------------------


def text_table(rows: Sequence[Row], *, was_label: str = "was", now_label: str = "now") -> str:
    """The rows for people: untrusted text on one line each, changed rows marked with `*`. Each
    decision beside what made it, in a column of its own (a rule's name holds parentheses of its own:
    `writes ask (ask: reject)`); rule names are whole (what decided is the point of the table); long
    titles are cut."""
    table = [["run", "agent", "kind", "title", was_label, "by", now_label, "by", "changed"]]
    for row in rows:
        table.append(
            [
                one_line(row.run, 40),
                one_line(row.agent, 24),
                one_line(row.kind or "-", 10),
                one_line(row.title, 48),
                row.was.decision,
                one_line(row.was.rule or "-"),
                row.now.decision,
                one_line(row.now.rule or "-"),
                "*" if row.changed else "",
            ]
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    changed = sum(row.changed for row in rows)
    lines.append(f"{changed} of {len(rows)} decision{'s' if len(rows) != 1 else ''} changed")
    return "\n".join(lines) + "\n"
