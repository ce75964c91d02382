"""Attempts and the session that holds them: what the app shows and `acp-tui run` prints.

An attempt is one run of one agent for one round; `r` adds another beside it. Its phase moves one
way: `waiting` -> `preparing` (its worktree, its provider) -> `spawning` -> `initializing` ->
`prompting` -> `ended`, with `cancelling` reachable from any live phase; the stop steps of a cancel
(`session/cancel` sent, SIGTERM, SIGKILL) are noted on the way. `needs-you` is not a phase: it is
shown while a permission request of the attempt waits for a person. Only the driver
(`acp_tui.session.driver`) moves an attempt; everything else reads it.

Attempts are never dropped: closing a pane takes it off the screen, not out of the session, so the
export holds every run the session made.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from acp_tui.core.costs import spent, totals
from acp_tui.settings.schema import AgentPreset

if TYPE_CHECKING:  # the runs' vocabulary loads with the first run: the app's first frame shows none
    from acp_tui.core.events import EventStream
    from acp_tui.core.model import (
        AgentInfo,
        AgentSessionInfo,
        CommandInfo,
        ConfigOptionInfo,
        Cost,
        NetworkRefusal,
        PermissionRecord,
        RunEvent,
        SubagentResult,
        SubagentRun,
        ToolCallInfo,
        Usage,
    )
    from acp_tui.reports.records import RunRecord
    from acp_tui.settings.provider_config import AcpProviderConfig
    from acp_tui.workspace.worktrees import Change, Worktree

Phase: TypeAlias = Literal[
    "waiting", "preparing", "spawning", "initializing", "prompting", "cancelling", "ended"
]
LIVE_PHASES: tuple[Phase, ...] = ("waiting", "preparing", "spawning", "initializing", "prompting")
STARTING_PHASES: tuple[Phase, ...] = LIVE_PHASES[:-1]  # before its prompt is sent


# What the driver tells an attempt's watcher besides the run's own events ---------------------------


@dataclass(frozen=True)
class WorktreeReady:
    """The attempt's worktree exists; its run will work in it."""

    worktree: Worktree


@dataclass(frozen=True)
class ChangeRecorded:
    """What the run changed in its worktree (comes just before the attempt's `Finished`)."""

    change: Change


AttemptEvent: TypeAlias = "RunEvent | WorktreeReady | ChangeRecorded"


def _event_stream() -> EventStream[AttemptEvent]:
    from acp_tui.core.events import EventStream

    return EventStream()


@dataclass(eq=False)
class Attempt:
    """One run of one agent in one round, from its start to its result."""

    id: int
    preset: AgentPreset
    prompt: str
    round_no: int
    attempt_no: int
    policy: str
    isolated: bool = False  # runs in its own git worktree (the prompt bar's box, or the preset's)
    # A follow-up continues the session of the turn before it (`previous`), in that turn's cwd (its
    # worktree, if it had one); `turn` counts from 1.
    turn: int = 1
    previous: Attempt | None = field(default=None, repr=False)
    warm: bool = False  # its run took a spare
    started_at: float = field(default_factory=time.monotonic)
    phase: Phase = "waiting"
    stop_step: str = ""  # the last step of a cancel: `cancel-sent`, `sigterm`, `sigkill`
    cancel_reason: str | None = None  # set once a cancel was asked for
    cancelled_by_user: bool = False
    failure: str | None = None  # set: the attempt ends `error` saying this (its watcher failed)
    result: SubagentResult | None = None
    asks_waiting: int = 0  # permission requests of this attempt waiting for a person
    # What the run said so far (the result has the final word once it ended).
    live_permissions: list[PermissionRecord] = field(default_factory=list)
    live_tool_calls: dict[str, ToolCallInfo] = field(default_factory=dict)  # by id, as they stand
    live_network_refused: list[NetworkRefusal] = field(default_factory=list)
    hidden: Counter[str] = field(default_factory=Counter)
    usage: Usage | None = None
    first_usage: Usage | None = None  # the baseline of a session whose cost so far is unknown
    agent_info: AgentInfo | None = None
    options: dict[str, str] = field(default_factory=dict)  # the session's, once it started
    offered: tuple[ConfigOptionInfo, ...] = ()
    commands: tuple[CommandInfo, ...] = ()  # the slash commands its agent offers, as it last said
    spawned_at: float | None = None  # the run's start, after its worktree was made
    first_output_at: float | None = None
    last_output_at: float | None = None
    trace: str | None = None
    workdir: str | None = None  # where to work instead of the preset's cwd (`acp-tui run --cwd`)
    cwd: str | None = None  # the run's working directory (path rules of `policy check` use it)
    open: bool = True  # shown in the grid
    worktree: Worktree | None = None  # once made (a follow-up shares its conversation's)
    change: Change | None = None  # what its worktree held when this turn ended (the whole change)
    # Read back from a record: where its worktree was (path, base, cwd), to reopen for a follow-up,
    # and why it could not be reopened (then no follow-up runs, anywhere).
    recorded_worktree: tuple[str, str, str | None] | None = None
    worktree_error: str | None = None
    recorded: RunRecord | None = field(default=None, repr=False)  # the record it was read from
    config: AcpProviderConfig | None = field(default=None, repr=False)  # the core's, once prepared
    run: SubagentRun | None = field(default=None, repr=False)
    # The driver's: the events a watcher (a pane, the printer) consumes, the cancel, the recording.
    events: EventStream[AttemptEvent] = field(default_factory=_event_stream, repr=False)
    # Plain asyncio: attempts are made in plain code (a key press), where anyio's need a task.
    cancelled: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    record_lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)
    driven: bool = False  # the driver started it
    ended: asyncio.Event = field(default_factory=asyncio.Event, repr=False)  # its result is set

    @classmethod
    def from_record(cls, record: RunRecord, preset: AgentPreset, id: int) -> Attempt:
        """A finished attempt as a record tells it (a saved session, `acp-tui run --continue`):
        what a follow-up needs and a pane shows."""
        worktree = record.worktree
        result = record.result()
        attempt = cls(
            id,
            preset,
            record.prompt,
            record.round or 1,
            record.attempt or 1,
            record.policy or preset.policy,
            isolated=worktree is not None,
            recorded_worktree=(worktree, str(record.base), record.cwd) if worktree is not None else None,
            turn=record.turn,
            warm=record.warm,
            phase="ended",
            result=result,
            hidden=Counter(result.hidden),  # what its pane showed as it ran, shown again
            usage=result.usage,
            agent_info=result.agent,
            options=dict(result.options),
            cwd=record.cwd,
            trace=record.trace,
            open=False,
            recorded=record,
        )
        attempt.ended.set()
        return attempt

    @property
    def agent(self) -> str:
        return self.preset.name

    @property
    def label(self) -> str:
        turn = f"·t{self.turn}" if self.turn > 1 else ""
        return f"r{self.round_no}·a{self.attempt_no}{turn}"

    @property
    def session_id(self) -> str | None:
        """The agent's session this attempt opened or continued, once known."""
        if self.result is not None and self.result.session_id:
            return self.result.session_id
        return self.previous.session_id if self.previous is not None else None

    @property
    def continuation(self) -> str | None:
        """How its agent said its sessions are reached again (`resume`, `load`), once known: a turn
        that failed before its session opened keeps what the turn before it learnt."""
        if self.result is not None and self.result.continuation:
            return self.result.continuation
        return self.previous.continuation if self.previous is not None else None

    def cannot_follow_up(self, *, asking_the_agent: bool = False) -> str | None:
        """Why no follow-up can continue this attempt's session (None: one can). `asking_the_agent`:
        what its agent said it offers counts too (a record read back may not say; the fresh child
        says so itself)."""
        if self.result is None:
            return "the run has not ended yet"
        if not self.session_id:
            return "the run opened no session to continue"
        if asking_the_agent and self.continuation is None:
            return f"{self.agent} offers neither session/resume nor session/load"
        if self.worktree_error is not None:
            return f"its worktree cannot be reopened: {self.worktree_error}"
        if self.worktree is not None and self.worktree.removed:
            return f"its worktree is gone: {self.worktree.path}"
        return None

    @property
    def last_usage(self) -> Usage | None:
        """The last usage its agent reported: as the run goes, else as its result says."""
        return self.usage or (self.result.usage if self.result is not None else None)

    @property
    def spent(self) -> Cost | None:
        """What this turn cost, as its agent reported it (`core.costs.spent`: a follow-up's is its
        session's cost less the turn before's)."""
        usage = self.last_usage
        before = self.previous.last_usage if self.previous is not None else None
        if self.previous is not None and before is None:  # a session continued with no cost known
            before = self.first_usage  # (an agent's own, loaded): counted from its first report
        return spent(usage.cost if usage else None, before.cost if before else None)

    @property
    def first_line(self) -> str:
        return self.prompt.strip().splitlines()[0] if self.prompt.strip() else ""

    @property
    def opening(self) -> Attempt:
        """The first turn of this attempt's conversation (itself, for a first prompt)."""
        first = self
        while first.previous is not None:
            first = first.previous
        return first

    @property
    def finished(self) -> bool:
        return self.result is not None

    @property
    def live(self) -> bool:
        return self.result is None

    @property
    def starting(self) -> bool:
        """Its agent is not yet prompted: booting, or waiting to."""
        return self.result is None and self.phase in STARTING_PHASES

    @property
    def permissions(self) -> list[PermissionRecord]:
        """Every permission request of the run and how it was answered."""
        return self.result.permissions if self.result is not None else self.live_permissions

    @property
    def network_refused(self) -> tuple[NetworkRefusal, ...]:
        """The connections its sandbox refused (hosts its `sandbox_network` list does not name)."""
        return self.result.network_refused if self.result is not None else tuple(self.live_network_refused)

    @property
    def tool_calls(self) -> tuple[ToolCallInfo, ...]:
        """Every tool call of the run, in the order announced, as it stands (or stood at the end)."""
        return self.result.tool_calls if self.result is not None else tuple(self.live_tool_calls.values())

    @property
    def state(self) -> str:
        """What is shown: a live phase, `needs-you`, `cancelling`, or how it ended (in the screen's
        words: `stop_word`)."""
        if self.result is not None:
            from acp_tui.core.model import stop_word

            return stop_word(self.result.stop_reason)
        if self.phase == "cancelling":
            return "cancelling"
        if self.asks_waiting:
            return "needs-you"
        return self.phase

    def record(self, *, numbered: bool = False) -> RunRecord:
        """The finished attempt's record (`acp_tui.reports.records`); `numbered`: with its round and
        attempt, as the app's export and saved sessions hold it. One read back is given back whole
        (its diff, tool calls and timings are not ours to rebuild)."""
        from acp_tui.reports.records import run_record

        assert self.result is not None
        if self.recorded is not None:
            record = self.recorded.model_copy(update={"round": None, "attempt": None})
        else:
            first, since = self.first_output_at, self.spawned_at or self.started_at
            record = run_record(
                self.preset,
                self.result,
                prompt=self.prompt,
                policy=self.policy,
                trace=self.trace,
                cwd=self.cwd,
                isolation=self.worktree.fields(self.change) if self.worktree is not None else None,
                first_chunk_s=first - since if first is not None else None,
                turn=self.turn,
                warm=self.warm,
            )
        return record.numbered(self.round_no, self.attempt_no) if numbered else record


@dataclass
class Session:
    """Rounds of one prompt sent to several agents, and the attempts of each."""

    attempts: list[Attempt] = field(default_factory=list)
    rounds: int = 0
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def costs(self) -> dict[str, float]:
        """What every turn of the session cost, per currency (`core.costs.totals`)."""
        return totals(attempt.spent for attempt in self.attempts)

    def new_round(
        self, prompt: str, presets: list[AgentPreset], policies: dict[str, str], *, worktree: bool = False
    ) -> list[Attempt]:
        """`worktree`: every attempt isolated; a preset's `isolation = "worktree"` is, whatever it says."""
        self.rounds += 1
        attempts = [
            Attempt(
                next(self._ids),
                preset,
                prompt,
                self.rounds,
                1,
                policies[preset.name],
                isolated=worktree or preset.isolation == "worktree",
            )
            for preset in presets
        ]
        self.attempts.extend(attempts)
        return attempts

    def retry(self, old: Attempt, policy: str, preset: AgentPreset | None = None) -> Attempt:
        """A new attempt of the same agent and prompt, in the same round, with the policy (and the
        preset's options) of now."""
        number = 1 + max(
            a.attempt_no for a in self.attempts if (a.agent, a.round_no) == (old.agent, old.round_no)
        )
        attempt = Attempt(
            next(self._ids),
            preset or old.preset,
            old.prompt,
            old.round_no,
            number,
            policy,
            isolated=old.isolated,
        )
        self.attempts.append(attempt)
        return attempt

    def agent_session(self, preset: AgentPreset, session: AgentSessionInfo, cwd: str) -> Attempt:
        """A session the agent keeps (`session/list`), as the ended turn a follow-up continues, in
        `cwd`: in a round of its own, and not one of this session's attempts (no run of ours)."""
        from acp_tui.reports.records import agent_session_record

        self.rounds += 1
        record = agent_session_record(preset, session.session_id, cwd, session.title or session.session_id)
        return Attempt.from_record(record.numbered(self.rounds, 1), preset, next(self._ids))

    def follow_up(
        self, previous: Attempt, prompt: str, policy: str, preset: AgentPreset | None = None
    ) -> Attempt:
        """The next turn of `previous`'s conversation: a fresh child continues its session, in its
        cwd (its worktree too), with the policy (and the preset's options) of now."""
        attempt = Attempt(
            next(self._ids),
            preset or previous.preset,
            prompt,
            previous.round_no,
            previous.attempt_no,
            policy,
            isolated=previous.isolated,
            turn=previous.turn + 1,
            previous=previous,
            worktree=previous.worktree,
            workdir=previous.cwd or previous.workdir,
        )
        self.attempts.append(attempt)
        return attempt

    def restore(
        self, values: list[Any], preset_for: Callable[[RunRecord], AgentPreset]
    ) -> tuple[list[Attempt], int]:
        """A saved session's attempts as they ended, each follow-up linked to the turn before it:
        the latest turn of each conversation, and how many of the JSON values were skipped (no
        record of ours, said by `read_record`, which checks each before `preset_for` is asked)."""
        from acp_tui.reports.records import read_record

        restored: list[Attempt] = []
        skipped = 0
        for value in values:
            try:
                record = read_record(value)
            except ValueError:
                skipped += 1
                continue
            restored.append(Attempt.from_record(record, preset_for(record), next(self._ids)))
        restored.sort(key=lambda a: (a.round_no, a.attempt_no, a.turn))
        latest: dict[tuple[int, int, str], Attempt] = {}
        for attempt in restored:
            key = (attempt.round_no, attempt.attempt_no, attempt.agent)
            if attempt.turn > 1 and key in latest:
                attempt.previous = latest[key]
            latest[key] = attempt
        self.attempts.extend(restored)
        self.rounds = max([self.rounds, *(a.round_no for a in restored)])
        return list(latest.values()), skipped

    def latest_turn(self, attempt: Attempt) -> Attempt:
        """The newest turn of `attempt`'s conversation (a pane shows that one, under the others)."""
        opening = attempt.opening
        return next(a for a in reversed(self.attempts) if a.opening is opening)

    def live_for(self, agent: str) -> list[Attempt]:
        return [a for a in self.attempts if a.agent == agent and a.live]

    def records(self) -> list[RunRecord]:
        """Every finished attempt of the session as a record with its `round` and `attempt`, in
        start order (the app's export)."""
        return [attempt.record(numbered=True) for attempt in self.attempts if attempt.finished]
