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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TextIO

from .config import AgentPreset
from .report import json_line, run_record, text_block
from .subagents.acp.provider import AcpProviderConfig, AcpSubagentProvider
from .subagents.acp.run import AcpSubagentRun
from .subagents.model import Finished, StderrLine, SubagentRequest, SubagentResult, SubagentStopReason
from .untrusted import one_line

EXIT_OK = 0
EXIT_NOT_COMPLETED = 1
EXIT_INTERRUPTED = 130
INTERRUPTING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

Format = Literal["text", "json"]


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
) -> int:
    """Run `jobs` in parallel on `prompt`, print each result as it finishes, return the exit status."""
    fanout = _Fanout(
        jobs, prompt, cwd=cwd, timeout=timeout, fmt=fmt, out=out or sys.stdout, err=err or sys.stderr
    )
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

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in INTERRUPTING_SIGNALS:
            loop.add_signal_handler(sig, self._interrupt, sig)
        try:
            results = await asyncio.gather(*(self._drive(job) for job in self.jobs))
            if self._disposals:
                await asyncio.gather(*self._disposals)
        finally:
            for sig in INTERRUPTING_SIGNALS:
                loop.remove_signal_handler(sig)
        if self.interrupted:
            return EXIT_INTERRUPTED
        if all(r.stop_reason is SubagentStopReason.COMPLETED for r in results):
            return EXIT_OK
        return EXIT_NOT_COMPLETED

    async def _drive(self, job: Job) -> SubagentResult:
        run = await AcpSubagentProvider(job.config).start(self.request)
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
                if isinstance(event, StderrLine):
                    self._write(self.err, f"[{one_line(name)}] {one_line(event.text)}\n")
                elif isinstance(event, Finished):
                    result = event.result
        finally:
            if timer is not None:
                timer.cancel()
        if result is None:  # the stream always ends with Finished; this is belt and braces
            result = await run.result()
        record = run_record(
            job.preset,
            result,
            prompt=self.request.prompt,
            policy=job.policy,
            trace=run.trace_path,
            cwd=run.cwd,
        )
        self._write(self.out, json_line(record) + "\n" if self.fmt == "json" else text_block(record) + "\n")
        return result

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


def _silence(stream: Any) -> None:
    """Point a closed stream's descriptor at /dev/null, so the flush at exit does not fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
