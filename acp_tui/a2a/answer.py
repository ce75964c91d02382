"""What an A2A agent's stream says, read into its run: the answer, and how the task ended.

An A2A answer comes in parts: a message (the whole reply, when the agent makes no task), the
status messages of a task (the agent's words as it works, and some agents stream their answer this
way), and artifacts (the task's output, chunked with `append`). The text of each is the answer, in
the order it comes (`OutputBuffer.append`: a new part on a new line). A task snapshot (the first
event of a streamed task, or the only one from an agent that does not stream) adds what it carries
that was not seen yet; its history echoes our own message and is never the answer. Parts that are
not text (files, data) are counted, never shown.

The task's last state decides how the run ends (`outcome`); the message of a task that failed, was
rejected or canceled, or waits for input or authentication is the reason, not the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from acp_tui.core.model import SubagentStopReason
from acp_tui.runs.base import RunBase
from acp_tui.runs.talk import Outcome

if TYPE_CHECKING:
    from a2a.types import Artifact, Message, Part, StreamResponse, Task, TaskStatus

# TaskState values (lf.a2a.v1), by name, so that this module loads without the SDK.
SUBMITTED, WORKING, COMPLETED, FAILED, CANCELED, INPUT_REQUIRED, REJECTED, AUTH_REQUIRED = range(1, 9)
# States whose message says why the task ended (or stopped), rather than answering.
REASONED = {FAILED, CANCELED, INPUT_REQUIRED, REJECTED, AUTH_REQUIRED}


class TaskStream:
    def __init__(self, run: RunBase) -> None:
        self.run = run
        self.task_id: str | None = None
        self.context_id: str | None = None  # the conversation: a follow-up sends it again
        self.state: int | None = None
        self.state_name = ""
        self.reason = ""  # the words of a status that ended the task without an answer
        self.replied = False  # a message came instead of a task: the whole answer
        self.task_known = asyncio.Event()  # a task id to cancel
        self._kept: set[tuple[str, str]] = set()  # (kind, id) of the messages and artifacts kept

    def read(self, event: StreamResponse) -> None:
        """One event of the stream."""
        self.run.heard_from_agent()
        if event.HasField("message"):
            self.replied = True
            self._ids(event.message.task_id, event.message.context_id)
            self._message(event.message)
        elif event.HasField("task"):
            self._task(event.task)
        elif event.HasField("status_update"):
            status = event.status_update
            self._ids(status.task_id, status.context_id)
            self._status(status.status)
        elif event.HasField("artifact_update"):
            artifact = event.artifact_update
            self._ids(artifact.task_id, artifact.context_id)
            self._artifact(artifact.artifact)
        else:
            self.run.hide("unknown")

    def outcome(self) -> Outcome:
        """How the task ended, once the stream has."""
        reason = f": {self.reason}" if self.reason else ""
        if self.replied or self.state == COMPLETED:
            return SubagentStopReason.COMPLETED, None
        if self.state == CANCELED:
            return SubagentStopReason.ABORTED, f"the agent canceled the task{reason}"
        if self.state == FAILED:
            return SubagentStopReason.ERROR, f"the agent failed the task{reason}"
        if self.state == REJECTED:
            return SubagentStopReason.ERROR, f"the agent rejected the task{reason}"
        if self.state in (INPUT_REQUIRED, AUTH_REQUIRED):
            asks = f" (the agent asks: {self.reason})" if self.reason else ""
            return SubagentStopReason.ERROR, f"the task is {self.state_name}{asks}"
        if self.state is None:
            return SubagentStopReason.ERROR, "the agent's stream ended with neither a task nor a message"
        return SubagentStopReason.ERROR, f"the agent's stream ended with the task still {self.state_name}"

    # The events ------------------------------------------------------------------------------

    def _ids(self, task_id: str, context_id: str) -> None:
        if task_id and self.task_id is None:
            self.task_id = task_id
            self.task_known.set()
        if context_id and self.context_id is None:
            self.context_id = context_id

    def _task(self, task: Task) -> None:
        self._ids(task.id, task.context_id)
        self.run.hide("task")
        for artifact in task.artifacts:
            if ("artifact", artifact.artifact_id) not in self._kept:
                self._artifact(artifact)
        self._status(task.status)

    def _status(self, status: TaskStatus) -> None:
        from a2a.types import TaskState

        self.state = status.state
        self.state_name = TaskState.Name(status.state).removeprefix("TASK_STATE_").lower().replace("_", "-")
        if not status.HasField("message"):
            self.run.hide("status")
        elif status.state in REASONED:
            self.reason = " ".join(_texts(status.message.parts))
            self.run.hide("status")
        else:
            self._message(status.message)

    def _message(self, message: Message) -> None:
        if ("message", message.message_id) in self._kept:
            return
        self._kept.add(("message", message.message_id))
        self._parts(message.parts, ("message", message.message_id))

    def _artifact(self, artifact: Artifact) -> None:
        # An artifact's chunks (`append`) go on where its last one ended. One sent again whole
        # follows what was shown of it: nothing shown is taken back.
        part = ("artifact", artifact.artifact_id)
        self._kept.add(part)
        self._parts(artifact.parts, part)

    def _parts(self, parts: Iterable[Part], part: Any) -> None:
        for piece in parts:
            if piece.HasField("text"):
                self.run.output.append(piece.text, part=part)
            else:
                self.run.hide(f"part:{piece.WhichOneof('content') or 'empty'}")


def _texts(parts: Iterable[Part]) -> list[str]:
    return [part.text for part in parts if part.HasField("text")]
