"""A session of the app: rounds of one prompt sent to several agents, and the attempts of each.

An attempt is one run of one agent for one round; `r` adds another beside it. Attempts are never
dropped: closing a pane takes it off the screen, not out of the session, so the export holds every
run the session made (a run still going is exported once it ends).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from .config import AgentPreset
from .subagents.model import PermissionRecord, SubagentResult, Usage


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
    last_output_at: float | None = None
    trace: str | None = None
    cwd: str | None = None  # the run's working directory (path rules of `policy check` use it)
    open: bool = True  # shown in the grid

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

    def new_round(self, prompt: str, presets: list[AgentPreset], policies: dict[str, str]) -> list[Attempt]:
        self.rounds += 1
        attempts = [
            Attempt(next(self._ids), preset, prompt, self.rounds, 1, policies[preset.name])
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
        attempt = Attempt(next(self._ids), preset or old.preset, old.prompt, old.round_no, number, policy)
        self.attempts.append(attempt)
        return attempt

    def live_for(self, agent: str) -> list[Attempt]:
        return [a for a in self.attempts if a.agent == agent and not a.finished]

    def records(self) -> list[dict[str, Any]]:
        """Every finished attempt of the session as a record (`acp_tui.report`), in start order."""
        from . import report

        records = []
        for attempt in self.attempts:
            result = attempt.result
            if result is None:
                continue
            record = report.run_record(
                attempt.preset,
                result,
                prompt=attempt.prompt,
                policy=attempt.policy,
                trace=attempt.trace,
                cwd=attempt.cwd,
            )
            record["round"] = attempt.round_no
            record["attempt"] = attempt.attempt_no
            records.append(record)
        return records
