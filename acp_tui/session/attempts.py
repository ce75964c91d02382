"""A session of the app: rounds of one prompt sent to several agents, and the attempts of each.

An attempt is one run of one agent for one round; `r` adds another beside it. Attempts are never
dropped: closing a pane takes it off the screen, not out of the session, so the export holds every
run the session made (a run still going is exported once it ends).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from acp_tui.core.model import PermissionRecord, SubagentResult, Usage
from acp_tui.settings.schema import AgentPreset

if TYPE_CHECKING:
    from acp_tui.workspace.worktrees import Worktree


@dataclass(eq=False)
class Attempt:
    """One run of one agent in one round, from its start to its result."""

    id: int
    preset: AgentPreset
    prompt: str
    round_no: int
    attempt_no: int
    policy: str
    started_at: float = field(default_factory=time.monotonic)
    state: str = "waiting"  # a live phase, `needs you`, `cancelling`, or the stop reason at the end
    cancelled_by_user: bool = False
    result: SubagentResult | None = None
    permissions: list[PermissionRecord] = field(default_factory=list)
    usage: Usage | None = None
    spawned_at: float | None = None  # the run's start, after its worktree was made (as `acp-tui run`)
    first_output_at: float | None = None
    last_output_at: float | None = None
    trace: str | None = None
    cwd: str | None = None  # the run's working directory (path rules of `policy check` use it)
    open: bool = True  # shown in the grid
    isolated: bool = False  # runs in its own git worktree (the prompt bar's toggle, or the preset's)
    worktree: Worktree | None = None  # once made; its `change` once the run ended

    @property
    def agent(self) -> str:
        return self.preset.name

    @property
    def label(self) -> str:
        return f"r{self.round_no}·a{self.attempt_no}"

    @property
    def first_line(self) -> str:
        return self.prompt.strip().splitlines()[0] if self.prompt.strip() else ""

    @property
    def finished(self) -> bool:
        return self.result is not None


@dataclass
class Session:
    attempts: list[Attempt] = field(default_factory=list)
    rounds: int = 0
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

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

    def live_for(self, agent: str) -> list[Attempt]:
        return [a for a in self.attempts if a.agent == agent and not a.finished]

    def records(self) -> list[dict[str, Any]]:
        """Every finished attempt of the session as a record (`acp_tui.reports.records`), in start order."""
        return [self.record(attempt) for attempt in self.attempts if attempt.result is not None]

    def record(self, attempt: Attempt) -> dict[str, Any]:
        """A finished attempt's record, with `acp-tui run`'s isolation keys and `first_chunk_s`."""
        from acp_tui.reports import records as report

        assert attempt.result is not None
        first, since = attempt.first_output_at, attempt.spawned_at or attempt.started_at
        record = report.run_record(
            attempt.preset,
            attempt.result,
            prompt=attempt.prompt,
            policy=attempt.policy,
            trace=attempt.trace,
            cwd=attempt.cwd,
            isolation=attempt.worktree.fields() if attempt.worktree is not None else None,
            first_chunk_s=first - since if first is not None else None,
        )
        record["round"] = attempt.round_no
        record["attempt"] = attempt.attempt_no
        return record
