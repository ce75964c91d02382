"""`acp-tui replay TRACE`: a recorded run played back as an ACP agent over stdio.

The trace (`--trace DIR`, the app's tracing) is cut at each request the client sent: to a live
request, the replay answers with the frames the traced agent sent after the same request (the
n-th `session/prompt` gets what the n-th recorded one got), responses renumbered to the live id.
Agent frames go out with the recorded gaps (divided by `speed`; 0: none). A request the agent made
(`session/request_permission`, `elicitation/create`, ...) waits for the client's answer before the
frames after it, unless `wait` is off; a permission answer, or an answer to a question (its action
and content), that differs from the recorded one is a *divergence*: one line on stderr, and the
prompt's answer carries all of them in `_meta["acp-tui/replay"]`. The recorded frames go on either
way: the replay shows what the agent did, not what it would have done.

`session/cancel` ends a prompt being played at once with `cancelled`. A live request the trace has
no answer for gets a JSON-RPC error; a trace that ends in the middle of a request ends the replay
(the recorded agent stopped there too).

Standard library only (no ACP SDK): it starts as fast as the scripted agents of the tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NoReturn

from acp_tui.core.files import parse_json
from acp_tui.lab.trace_file import Entry, load_trace, obj

META_KEY = "acp-tui/replay"
PERMISSION = "session/request_permission"
QUESTION = "elicitation/create"
# The longest pause played, whatever the trace says: a recorded gap of 1e18 s (or a tiny --speed)
# would overflow the wait, and no real agent is silent for longer between two frames.
MAX_PAUSE = 60.0


def replay_argv(trace: str) -> list[str]:
    """The command that replays `trace`: what a preset's `replay = "PATH"` stands for. The module
    is run directly, which spares it the command line's imports (measured: about 190 ms to the
    `initialize` answer instead of 250 ms through `acp-tui replay`; an SDK agent takes 700 ms)."""
    return [sys.executable, "-m", "acp_tui.lab.replay", trace]


def _key(rid: Any) -> str:
    return json.dumps(rid)


@dataclass
class Segment:
    """What the traced agent did after one request of the client: (t, frame) to send, and the
    times of the client's own answers in between (the gaps are measured from them too)."""

    method: str
    recorded_id: Any
    t: float
    steps: list[tuple[float, dict[str, Any] | None]] = field(default_factory=list)  # None: an answer


def segments(entries: list[Entry]) -> dict[str, deque[Segment]]:
    by_method: dict[str, deque[Segment]] = {}
    current: Segment | None = None
    for entry in entries:
        if entry.dir == "out" and entry.is_request:
            current = Segment(str(entry.frame["method"]), entry.frame["id"], entry.t)
            by_method.setdefault(current.method, deque()).append(current)
        elif current is None:
            continue
        elif entry.dir == "in":
            current.steps.append((entry.t, entry.frame))
        elif entry.is_response:
            current.steps.append((entry.t, None))
    return by_method


class Replay:
    def __init__(
        self, entries: list[Entry], *, speed: float, wait: bool, out: IO[bytes], err: IO[str]
    ) -> None:
        self.segments = segments(entries)
        # The client's recorded answers to the agent's requests, by the agent's request id.
        self.recorded = {_key(e.frame["id"]): e.frame for e in entries if e.dir == "out" and e.is_response}
        self.speed = speed
        self.wait = wait
        self._out = out
        self._err = err
        self._write_lock = threading.Lock()
        self._inbox: deque[dict[str, Any] | None] = deque()
        self._changed = threading.Condition()  # the inbox, answers, cancel, end of input
        self._answers: dict[str, dict[str, Any]] = {}
        self._cancelled = False
        self._in_prompt = False
        self._cancel_queued = False
        self._eof = False
        self._live_ids: dict[str, Any] = {}  # recorded id of a client request -> its live id

    # Input: a reader thread files requests, answers and cancels -------------------------------------

    def read(self, stdin: IO[bytes]) -> None:
        for raw in stdin:
            try:
                message = parse_json(raw.decode())
            except ValueError:  # UnicodeDecodeError included
                continue
            if not isinstance(message, dict) or not isinstance(message.get("method", ""), str):
                continue
            with self._changed:
                if "method" not in message:
                    if "id" in message:
                        self._answers[_key(message["id"])] = message
                elif message["method"] == "session/cancel":
                    # It stops the turn being played, or one that came in just before it.
                    if self._in_prompt:
                        self._cancelled = True
                    elif any(m and m.get("method") == "session/prompt" for m in self._inbox):
                        self._cancel_queued = True
                elif "id" in message:
                    self._inbox.append(message)
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._inbox.append(None)
            self._changed.notify_all()

    def _next_request(self) -> dict[str, Any] | None:
        with self._changed:
            self._changed.wait_for(lambda: bool(self._inbox))
            return self._inbox.popleft()

    # Output -----------------------------------------------------------------------------------------

    def send(self, frame: dict[str, Any]) -> None:
        data = json.dumps(frame, separators=(",", ":")).encode() + b"\n"
        with self._write_lock:
            self._out.write(data)
            self._out.flush()

    def note(self, line: str) -> None:
        self._err.write(f"replay: {line}\n")
        self._err.flush()

    # Playing ----------------------------------------------------------------------------------------

    def serve(self, stdin: IO[bytes]) -> int:
        threading.Thread(target=self.read, args=(stdin,), daemon=True).start()
        try:
            while (message := self._next_request()) is not None:
                if not self.answer(message):
                    return 1
        except BrokenPipeError:  # the client went away: nobody is left to play to
            return 0
        return 0

    def answer(self, message: dict[str, Any]) -> bool:
        """Play the recorded answer to one live request; False when the trace ends inside it."""
        method, live_id = message["method"], message["id"]
        queue = self.segments.get(method)
        if not queue:
            error = {"code": -32601, "message": f"replay: the trace has no {method} to answer with"}
            self.send({"jsonrpc": "2.0", "id": live_id, "error": error})
            return True
        segment = queue.popleft()
        self._live_ids[_key(segment.recorded_id)] = live_id
        if method == "session/prompt":
            with self._changed:
                self._in_prompt, self._cancelled = True, self._cancel_queued  # a cancel is for one turn
                self._cancel_queued = False
        try:
            return self._play(segment, live_id)
        finally:
            with self._changed:
                self._in_prompt = self._cancelled = False

    def _play(self, segment: Segment, live_id: Any) -> bool:
        method = segment.method
        divergences: list[dict[str, Any]] = []
        pending: list[dict[str, Any]] = []
        answered_ourselves = False
        last_t = segment.t
        for t, frame in segment.steps:
            if frame is None:  # the client answered the traced agent here
                last_t = max(last_t, t)
                continue
            if self._pause(t - last_t):
                break  # cancelled: the turn ends now
            last_t = t
            if "method" not in frame:  # a response: to this request, or an earlier one
                target = self._live_ids.get(_key(frame.get("id")))
                if target is None:
                    continue
                if target == live_id:
                    self._settle(pending, divergences)
                    frame = self._with_meta(frame, divergences)
                    answered_ourselves = True
                self.send({**frame, "id": target})
                if answered_ourselves:
                    return True
                continue
            self.send(frame)
            if "id" in frame:
                pending.append(frame)
                if self.wait:
                    self._settle(pending, divergences)
        if self._is_cancelled() and method == "session/prompt":
            self._settle(pending, divergences)
            result = {"stopReason": "cancelled"}
            self.send(self._with_meta({"jsonrpc": "2.0", "id": live_id, "result": result}, divergences))
            return True
        self.note(f"the trace ends without the agent's answer to {method}; stopping as it did")
        return False

    def _pause(self, gap: float) -> bool:
        """Wait out a recorded gap (scaled); True as soon as the prompt is cancelled."""
        delay = min(gap / self.speed, MAX_PAUSE) if self.speed > 0 else 0.0
        with self._changed:
            if delay > 0:
                self._changed.wait_for(lambda: self._cancelled or self._eof, timeout=delay)
            return self._cancelled

    def _is_cancelled(self) -> bool:
        with self._changed:
            return self._cancelled

    def _settle(self, pending: list[dict[str, Any]], divergences: list[dict[str, Any]]) -> None:
        """Wait for the client's answers to the requests sent (or a cancel, or the end of input),
        and compare each permission answer with the recorded one."""
        while pending:
            request = pending[0]
            key = _key(request["id"])
            with self._changed:
                self._changed.wait_for(lambda k=key: k in self._answers or self._cancelled or self._eof)  # type: ignore[misc]
                answer = self._answers.pop(key, None)
            if answer is None:
                return  # cancelled or gone: whatever is left is not compared
            pending.pop(0)
            method = request.get("method")
            if method == PERMISSION:
                divergence = self._compare(request, answer)
            elif method == QUESTION:
                divergence = self._compare_answers(request, answer)
            else:
                continue
            if divergence is not None:
                divergences.append(divergence)

    def _compare_answers(self, request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any] | None:
        """A question's answer (its action, and the content accepted) against the recorded one."""
        recorded = _answered(self.recorded.get(_key(request["id"])))
        chosen = _answered(answer)
        if recorded == chosen:
            return None
        message = obj(request.get("params")).get("message") or "?"
        self.note(
            f"divergence at question {json.dumps(message)} (id {json.dumps(request['id'])}): "
            f"recorded {json.dumps(recorded)}, chosen {json.dumps(chosen)}"
        )
        return {"request": message, "id": request["id"], "recorded": recorded, "chosen": chosen}

    def _compare(self, request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any] | None:
        params = obj(request.get("params"))
        offered = params.get("options")
        offered = [o for o in offered if isinstance(o, dict)] if isinstance(offered, list) else []
        options = {_key(o.get("optionId")): o.get("kind") for o in offered}
        recorded = _choice(self.recorded.get(_key(request["id"])), options)
        chosen = _choice(answer, options)
        if recorded == chosen:
            return None
        call = obj(params.get("toolCall"))
        title = call.get("title") or call.get("toolCallId") or "?"
        self.note(
            f"divergence at permission request {json.dumps(title)} (id {json.dumps(request['id'])}): "
            f"recorded {_said(recorded)}, chosen {_said(chosen)}"
        )
        return {"request": title, "id": request["id"], "recorded": recorded, "chosen": chosen}

    def _with_meta(self, frame: dict[str, Any], divergences: list[dict[str, Any]]) -> dict[str, Any]:
        if not divergences or not isinstance(frame.get("result"), dict):
            return frame
        result = dict(frame["result"])
        meta = dict(obj(result.get("_meta")))
        meta[META_KEY] = {"divergences": list(divergences)}
        result["_meta"] = meta
        return {**frame, "result": result}


def _choice(answer: dict[str, Any] | None, kinds: dict[Any, Any]) -> dict[str, Any]:
    """A permission answer as {outcome, option_id, kind}; no answer at all reads as cancelled."""
    outcome = obj(obj(obj(answer).get("result")).get("outcome"))
    if outcome.get("outcome") == "selected":
        option_id = outcome.get("optionId")
        return {"outcome": "selected", "option_id": option_id, "kind": kinds.get(_key(option_id))}
    return {"outcome": "cancelled", "option_id": None, "kind": None}


def _answered(answer: dict[str, Any] | None) -> dict[str, Any]:
    """An answer to a question as {action, content}; no answer at all reads as cancelled."""
    result = obj(obj(answer).get("result"))
    return {"action": result.get("action", "cancel"), "content": result.get("content")}


def _said(choice: dict[str, Any]) -> str:
    if choice["outcome"] != "selected":
        return "cancelled"
    return f"{json.dumps(choice['option_id'])} ({choice['kind']})"


def run(trace: str | Path, *, speed: float = 1.0, wait: bool = True) -> NoReturn:
    """Replay `trace` on this process's stdio, then end the process. The trace is read (and
    checked) before anything; a bad one raises `TraceError`."""
    entries = load_trace(trace)
    replay = Replay(entries, speed=speed, wait=wait, out=sys.stdout.buffer, err=sys.stderr)
    status = replay.serve(sys.stdin.buffer)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    # The reader thread may still sit in a read of stdin: an ordinary exit would wait for its lock
    # at shutdown and abort. There is nothing left to clean up.
    os._exit(status)


def main(argv: list[str] | None = None) -> int:
    """`python -m acp_tui.lab.replay TRACE`: the same agent without the command line's imports."""
    import argparse

    from acp_tui.lab.trace_file import TraceError

    parser = argparse.ArgumentParser(prog="acp-tui replay", description="Replay a trace as an ACP agent.")
    parser.add_argument("trace")
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--no-wait", action="store_true")
    args = parser.parse_args(argv)
    if args.speed < 0:
        parser.error("--speed must be >= 0")
    try:
        run(args.trace, speed=args.speed, wait=not args.no_wait)
    except TraceError as exc:
        print(f"acp-tui replay: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
