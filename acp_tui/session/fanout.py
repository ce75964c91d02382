"""`acp-tui run`'s round: every agent at once, child stderr forwarded, results as they finish.

The runs go through the same driver as the app's (`acp_tui.session.driver`), and their events are
the ones a pane consumes. Exit status: 0 when every run
completed, 1 when any did not, 130 when interrupted (SIGINT, SIGTERM, SIGHUP) once every run is
disposed. Usage errors (2) are the command line's business, before anything gets here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TextIO

from acp_tui.core.model import StderrLine, SubagentStopReason
from acp_tui.core.text import one_line
from acp_tui.reports.text import text_block
from acp_tui.session.attempts import Attempt, Session
from acp_tui.session.driver import SessionDriver, isolation_cwd
from acp_tui.settings.provider_config import AcpProviderConfig
from acp_tui.settings.schema import AgentPreset

if TYPE_CHECKING:
    from acp_tui.reports.records import RunRecord
    from acp_tui.workspace.worktrees import IsolationPlan

EXIT_OK = 0
EXIT_NOT_COMPLETED = 1
EXIT_INTERRUPTED = 130
INTERRUPTING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

Format = Literal["text", "json", "markdown"]


@dataclass(frozen=True)
class Job:
    """One agent to run: the preset it came from, the core's config, the policy in force."""

    preset: AgentPreset
    config: AcpProviderConfig
    policy: str


def run_jobs(
    jobs: Sequence[Job],
    prompt: str,
    *,
    cwd: str | None = None,
    timeout: float | None = None,
    fmt: Format = "text",
    out: TextIO | None = None,
    err: TextIO | None = None,
    isolation: IsolationPlan | None = None,
    follow_ups: Sequence[RunRecord] = (),
    keep_worktrees: bool = False,
) -> int:
    """Run `jobs` in parallel on `prompt`, print each result as it finishes, return the exit status.

    With `isolation`, each job runs in its own git worktree (see `acp_tui.workspace.worktrees`).
    With `follow_ups` (records, one per job), each job is the next turn of its record's run: it
    continues that session, where that run worked (its worktree, kept if `keep_worktrees`)."""
    fanout = _Fanout(
        jobs, prompt, cwd=cwd, timeout=timeout, fmt=fmt, out=out or sys.stdout, err=err or sys.stderr
    )
    return asyncio.run(fanout.run(isolation, follow_ups, keep_worktrees=keep_worktrees))


@dataclass
class _Fanout:
    jobs: Sequence[Job]
    prompt: str
    cwd: str | None
    timeout: float | None
    fmt: Format
    out: TextIO
    err: TextIO
    interrupted: str | None = field(default=None, init=False)
    driver: SessionDriver | None = field(default=None, init=False)
    _out_closed: bool = field(default=False, init=False)

    async def run(
        self,
        isolation: IsolationPlan | None = None,
        follow_ups: Sequence[RunRecord] = (),
        *,
        keep_worktrees: bool = False,
    ) -> int:
        loop = asyncio.get_running_loop()
        configs: dict[int, AcpProviderConfig] = {}
        session = Session()
        self.driver = driver = SessionDriver(
            lambda attempt: configs[attempt.id],
            timeout=self.timeout,
            keep_worktrees=keep_worktrees or (isolation is not None and isolation.keep),
        )
        if follow_ups:
            attempts, refused = self._follow_ups(session, driver, follow_ups, keep=keep_worktrees)
        else:
            policies = {job.preset.name: job.policy for job in self.jobs}
            attempts, refused = (
                session.new_round(self.prompt, [job.preset for job in self.jobs], policies),
                {},
            )
            origins = isolation.origins if isolation is not None else (None,) * len(attempts)
            far = isolation.far if isolation is not None else frozenset()
            for index, (attempt, origin) in enumerate(zip(attempts, origins, strict=True)):
                attempt.workdir = self.cwd
                attempt.isolated = origin is not None or index in far
        for attempt, job in zip(attempts, self.jobs, strict=True):
            configs[attempt.id] = job.config
        for sig in INTERRUPTING_SIGNALS:
            loop.add_signal_handler(sig, self._interrupt, sig)
        try:
            if isolation is not None:
                await self._start_isolation(driver, isolation, attempts)
            for attempt in attempts:
                if attempt.id in refused:  # nothing runs elsewhere instead
                    driver.refuse(attempt, refused[attempt.id])
                else:
                    driver.start(attempt)
            await asyncio.gather(*(self._watch(attempt) for attempt in attempts))
        finally:
            for sig in INTERRUPTING_SIGNALS:
                loop.remove_signal_handler(sig)
            left = await driver.aclose()
            self._write(self.err, "".join(f"acp-tui: {one_line(line)}\n" for line in left))
            if driver.isolation is not None:
                kept = [w.path for w in driver.isolation.worktrees if w.kept]
                self._write(self.err, "".join(f"acp-tui: kept the worktree {path}\n" for path in kept))
        if self.fmt == "markdown":
            from acp_tui.reports.compare import comparison_markdown

            self._write(self.out, comparison_markdown([attempt.record() for attempt in attempts]))
        if self.interrupted:
            return EXIT_INTERRUPTED
        if all(
            a.result is not None and a.result.stop_reason is SubagentStopReason.COMPLETED for a in attempts
        ):
            return EXIT_OK
        return EXIT_NOT_COMPLETED

    def _follow_ups(
        self, session: Session, driver: SessionDriver, records: Sequence[RunRecord], *, keep: bool
    ) -> tuple[list[Attempt], dict[int, str]]:
        """The next turn of each record's run, and why those that cannot run cannot (by attempt id)."""
        attempts: list[Attempt] = []
        refused: dict[int, str] = {}
        for number, (record, job) in enumerate(zip(records, self.jobs, strict=True), start=1):
            previous = Attempt.from_record(record, job.preset, -number)
            driver.reopen_worktree(previous)
            if previous.worktree is not None:  # not kept: its marker still guards it until removed
                previous.worktree.keep(keep)
            attempt = session.follow_up(previous, self.prompt, job.policy, job.preset)
            if previous.worktree_error is not None:
                refused[attempt.id] = f"cannot continue: {previous.worktree_error}"
            attempts.append(attempt)
        return attempts, refused

    async def _start_isolation(
        self, driver: SessionDriver, plan: IsolationPlan, attempts: list[Attempt]
    ) -> None:
        """The checkouts the command line found, and the cache's start (its prune) said once."""
        from acp_tui.workspace.git import IsolationError
        from acp_tui.workspace.worktrees import Isolation

        for attempt, origin in zip(attempts, plan.origins, strict=True):
            if origin is not None:
                driver.origins[isolation_cwd(attempt)] = origin
        driver.base = plan.base
        driver.isolation = Isolation()
        with contextlib.suppress(IsolationError):  # then each run says so, in its record
            await driver.isolation.start()
        notes = [*driver.isolation.left, *plan.notes]
        self._write(self.err, "".join(f"acp-tui: {one_line(note)}\n" for note in notes))

    async def _watch(self, attempt: Attempt) -> None:
        """Forward the attempt's stderr; once it ended, its worktree goes (unless kept) and its
        record is printed."""
        assert self.driver is not None
        name = one_line(attempt.agent)
        async for event in attempt.events:
            if isinstance(event, StderrLine):
                self._write(self.err, f"[{name}] {one_line(event.text)}\n")
        change = attempt.worktree.change if attempt.worktree is not None else None
        left = await self.driver.drop_worktree(attempt)
        for problem in (change.error if change else None, left):
            if problem:
                self._write(self.err, f"[{name}] {one_line(problem)}\n")
        record = attempt.record()
        if self.fmt == "json":
            from acp_tui.reports.records import json_line

            self._write(self.out, json_line(record) + "\n")
        elif self.fmt == "text":
            self._write(self.out, text_block(record) + "\n")

    def _interrupt(self, sig: signal.Signals) -> None:
        if self.interrupted or self.driver is None:
            return  # disposal is already under way, and bounded by the runs' graces
        self.interrupted = f"interrupted by {sig.name}"
        for attempt in self.driver.attempts:
            self.driver.cancel_soon(attempt, self.interrupted)

    def _write(self, stream: TextIO, text: str) -> None:
        if stream is self.out and self._out_closed:
            return
        try:
            try:
                stream.write(text)
            except UnicodeEncodeError:  # a terminal or pipe whose encoding cannot hold the text
                encoding = getattr(stream, "encoding", None) or "ascii"
                stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
            stream.flush()
        except BrokenPipeError:
            # A reader that went away (`| head`) must not stop the runs from being seen through.
            if stream is self.out:
                self._out_closed = True
                _silence(stream)


def _silence(stream: Any) -> None:
    """Point a closed stream's descriptor at /dev/null, so the flush at exit does not fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
