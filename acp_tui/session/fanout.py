"""The fan-out without a screen: every run at once, child stderr forwarded, results as they finish.

It consumes the same `SubagentRun.events()` stream as the app's panes. Exit status: 0 when every run
completed, 1 when any did not, 130 when interrupted (SIGINT, SIGTERM, SIGHUP) once every run is
disposed. Usage errors (2) are the command line's business, before anything gets here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TextIO

from acp_tui.acp.provider import AcpProviderConfig, AcpSubagentProvider
from acp_tui.acp.run import AcpSubagentRun
from acp_tui.core.model import (
    Finished,
    OutputDelta,
    StderrLine,
    SubagentRequest,
    SubagentResult,
    SubagentStopReason,
)
from acp_tui.core.text import one_line
from acp_tui.reports.records import json_line, run_record
from acp_tui.reports.text import text_block
from acp_tui.settings.schema import AgentPreset

if TYPE_CHECKING:
    from acp_tui.workspace.worktrees import Isolation, IsolationPlan, Origin, Worktree

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
) -> int:
    """Run `jobs` in parallel on `prompt`, print each result as it finishes, return the exit status.

    With `isolation`, each job runs in its own git worktree (see `acp_tui.workspace.worktrees`)."""
    fanout = _Fanout(
        jobs, prompt, cwd=cwd, timeout=timeout, fmt=fmt, out=out or sys.stdout, err=err or sys.stderr
    )
    fanout.isolation = isolation
    return asyncio.run(fanout.run())


class _Fanout:
    def __init__(
        self,
        jobs: Sequence[Job],
        prompt: str,
        *,
        cwd: str | None,
        timeout: float | None,
        fmt: Format,
        out: TextIO,
        err: TextIO,
    ) -> None:
        self.jobs = jobs
        self.request = SubagentRequest(prompt=prompt, cwd=cwd)
        self.timeout = timeout
        self.fmt = fmt
        self.out = out
        self.err = err
        self.runs: list[AcpSubagentRun] = []
        self.interrupted: str | None = None
        self._disposals: set[asyncio.Task[None]] = set()
        self._out_closed = False
        # Isolation (`--worktree`): the plan checked by the command line, the worktrees it made.
        self.isolation: IsolationPlan | None = None
        self._worktrees: Isolation | None = None
        self._records: dict[int, dict[str, Any]] = {}  # by id(job), for the comparison

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in INTERRUPTING_SIGNALS:
            loop.add_signal_handler(sig, self._interrupt, sig)
        try:
            if self.isolation is not None:
                from acp_tui.workspace.git import IsolationError
                from acp_tui.workspace.worktrees import Isolation

                self._worktrees = Isolation()
                with contextlib.suppress(IsolationError):  # then each run says so, in its record
                    await self._worktrees.start()
                notes = [*self._worktrees.left, *self.isolation.notes]
                self._write(self.err, "".join(f"acp-tui: {one_line(note)}\n" for note in notes))
            results = await asyncio.gather(
                *(self._drive(job, self._origin(i)) for i, job in enumerate(self.jobs))
            )
            if self._disposals:
                await asyncio.gather(*self._disposals)
        finally:
            for sig in INTERRUPTING_SIGNALS:
                loop.remove_signal_handler(sig)
            if self._worktrees is not None:
                left = await self._worktrees.aclose()
                self._write(self.err, "".join(f"acp-tui: {one_line(line)}\n" for line in left))
                kept = [w.path for w in self._worktrees.worktrees if w.kept]
                self._write(self.err, "".join(f"acp-tui: kept the worktree {path}\n" for path in kept))
        if self.fmt == "markdown":
            from acp_tui.reports.compare import comparison_markdown

            records = [self._records[id(job)] for job in self.jobs if id(job) in self._records]
            self._write(self.out, comparison_markdown(records))
        if self.interrupted:
            return EXIT_INTERRUPTED
        if all(r.stop_reason is SubagentStopReason.COMPLETED for r in results):
            return EXIT_OK
        return EXIT_NOT_COMPLETED

    def _origin(self, index: int) -> Origin | None:
        return self.isolation.origins[index] if self.isolation is not None else None

    async def _drive(self, job: Job, origin: Origin | None = None) -> SubagentResult:
        request, worktree = self.request, None
        if origin is not None and self._worktrees is not None:
            from acp_tui.workspace.git import IsolationError

            try:
                worktree = await self._worktrees.add(origin, job.preset.name)
            except IsolationError as exc:  # never run in the main checkout instead
                failed = SubagentResult(SubagentStopReason.ERROR, "", error=f"no worktree: {exc}")
                self._emit(job, failed, None, None, None)
                return failed
            if self.isolation is not None and self.isolation.keep:
                worktree.keep()
            request = replace(request, cwd=str(worktree.cwd))
        started = time.monotonic()
        first_chunk: float | None = None
        config = job.config if worktree is None else confined_to(worktree, job.config)
        run = await AcpSubagentProvider(config).start(request)
        self.runs.append(run)
        if self.interrupted:  # the signal came while this one was spawning
            self._dispose(run, self.interrupted)
        timer = None
        if self.timeout is not None:
            reason = f"timed out after {self.timeout:g} s"
            timer = asyncio.get_running_loop().call_later(self.timeout, self._dispose, run, reason)
        name = job.preset.name
        result: SubagentResult | None = None
        try:
            async for event in run.events():
                if isinstance(event, OutputDelta) and first_chunk is None:
                    first_chunk = time.monotonic() - started
                elif isinstance(event, StderrLine):
                    self._write(self.err, f"[{one_line(name)}] {one_line(event.text)}\n")
                elif isinstance(event, Finished):
                    result = event.result
        finally:
            if timer is not None:
                timer.cancel()
        if result is None:  # the stream always ends with Finished; this is belt and braces
            result = await run.result()
        if worktree is not None:
            from acp_tui.workspace.worktrees import time_left

            change = await worktree.record(
                timeout=time_left(started, self.timeout, job.config.run_timeout),
                max_file_bytes=job.preset.max_file_bytes,
            )
            left = await worktree.remove()  # unless kept
            for problem in (change.error, left):
                if problem:
                    self._write(self.err, f"[{one_line(name)}] {one_line(problem)}\n")
        self._emit(job, result, run.trace_path, worktree, first_chunk, run.cwd)
        return result

    def _emit(
        self,
        job: Job,
        result: SubagentResult,
        trace: str | None,
        worktree: Worktree | None,
        first_chunk: float | None,
        cwd: str | None = None,
    ) -> None:
        record = run_record(
            job.preset,
            result,
            prompt=self.request.prompt,
            policy=job.policy,
            trace=trace,
            cwd=cwd,
            isolation=worktree.fields() if worktree is not None else None,
            first_chunk_s=first_chunk,
        )
        if self.fmt == "markdown":
            self._records[id(job)] = record  # the comparison is printed once every run has ended
        elif self.fmt == "json":
            self._write(self.out, json_line(record) + "\n")
        else:
            self._write(self.out, text_block(record) + "\n")

    def _interrupt(self, sig: signal.Signals) -> None:
        if self.interrupted:
            return  # disposal is already under way, and bounded by the runs' graces
        self.interrupted = f"interrupted by {sig.name}"
        for run in self.runs:
            self._dispose(run, self.interrupted)

    def _dispose(self, run: AcpSubagentRun, reason: str) -> None:
        task = asyncio.ensure_future(run.dispose(reason))
        self._disposals.add(task)
        task.add_done_callback(self._disposals.discard)

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


def confined_to(worktree: Worktree, config: AcpProviderConfig) -> AcpProviderConfig:
    """A sandboxed run's config in `worktree`: the worktree and what a commit there writes of the
    main repository writable, the main checkout read-only (see `process.sandbox.worktree_paths`)."""
    if config.sandbox == "none":
        return config
    from acp_tui.process.sandbox import worktree_paths

    origin = worktree.origin
    writable, readonly = worktree_paths(worktree.path, origin.toplevel, origin.common_dir, worktree.admin)
    return replace(
        config,
        sandbox_writable=(*config.sandbox_writable, *writable),
        sandbox_readonly=(*config.sandbox_readonly, *readonly),
    )


def _silence(stream: Any) -> None:
    """Point a closed stream's descriptor at /dev/null, so the flush at exit does not fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
