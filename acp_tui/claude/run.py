"""One Claude run: one Claude Code child, driven by the Claude Agent SDK, one turn, one result.

The lifecycle, the events, the stop and the cleanup are every run's (`acp_tui.runs.base.RunBase`).
The child is Claude Code's CLI, started by the run like any agent (`ChildTransport` says why not by
the SDK): the CLI the SDK bundles unless the preset names another `command`, in stream-json mode,
with permission requests sent to us (`--permission-prompt-tool stdio`) and no settings file read
(`--setting-sources=`: neither the user's nor the repository's allow rules, hooks or credentials
helpers decide what the agent may do; the preset's policy does). The SDK's client speaks the
control protocol over it: `initialize` (within the handshake timeout), the prompt as the turn to
its `ResultMessage` (`interrupt` when the run is told to stop), each tool permission through the
preset's policy (`can_use_tool`), recorded.

A preset's `options` choose the `model` and the permission `mode` (`--model`, `--permission-mode`);
its `args` go on the command line before ours (a `command` that runs the CLI through another
program); its `env` is the CLI's credentials (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, ...), as for
any child. A follow-up resumes the session of the run it continues (`--resume`).
"""

from __future__ import annotations

import dataclasses
import shutil
from functools import cached_property
from typing import TYPE_CHECKING, Any

import anyio

from acp_tui.claude.stream import TurnStream
from acp_tui.claude.tools import ALLOW, PERMISSION_OPTIONS, tool_call
from acp_tui.runs.child import start_child
from acp_tui.runs.extras import missing_extra
from acp_tui.runs.phase import Phase
from acp_tui.runs.provider import ProviderRun
from acp_tui.runs.talk import Outcome
from acp_tui.settings.schema import CLAUDE_COMMAND

if TYPE_CHECKING:
    from claude_agent_sdk import ClaudeSDKClient, PermissionResult, ResultMessage, ToolPermissionContext

    from acp_tui.acp.transport import StdioTransport

OPTIONS = {"model": "--model", "mode": "--permission-mode"}
DISCONNECT_GRACE = 1.0


class ClaudeSubagentRun(ProviderRun):
    @cached_property
    def turn_stream(self) -> TurnStream:
        return TurnStream(self)

    # The conversation --------------------------------------------------------------------------

    def refusal(self) -> str | None:
        untaken = self.untaken("claude", tuple(OPTIONS), "its own settings")
        return untaken or missing_extra("claude_agent_sdk", "claude")

    async def launch(self) -> None:
        """Claude Code, started like any agent's child (confined when the preset says so)."""
        cli = dataclasses.replace(
            self.config,
            command=cli_path(self.config.command),
            args=(*self.config.args, *self._cli_args()),
            env={"CLAUDE_CODE_ENTRYPOINT": "sdk-py", **self.config.env},
        )
        self.child = await start_child(cli, self.cwd, self.stderr)

    def _cli_args(self) -> list[str]:
        args = ["--output-format", "stream-json", "--input-format", "stream-json", "--verbose"]
        args += ["--include-partial-messages", "--permission-prompt-tool", "stdio", "--setting-sources="]
        for option, flag in OPTIONS.items():
            if option in self.config.options:
                args.append(f"{flag}={self.config.options[option]}")
        if self.request.session_id:
            args.append(f"--resume={self.request.session_id}")
        return args

    async def converse(self) -> Outcome:
        from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

        from acp_tui.acp.transport import StdioTransport
        from acp_tui.claude.transport import ChildTransport, stream_json_problem

        lines = StdioTransport.of_run(self, check=stream_json_problem)
        assert self.task_group is not None
        self.task_group.start_soon(self._watch_output, lines)
        options = ClaudeAgentOptions(can_use_tool=self._can_use_tool)
        client = ClaudeSDKClient(options, transport=ChildTransport(lines))
        self.advance(Phase.INITIALIZING)
        try:
            with self.deadlines.handshake_step():
                await client.connect()
            self.turn_stream.started(await client.get_server_info(), self.config.options)
            self.advance(Phase.PROMPTING)
            self.step = "the turn"
            return await self.prompt(client)
        finally:
            # The SDK's tasks end here (its reader, the callbacks it runs); the child is ended by
            # the cleanup. Bounded: the transport's close only closes the child's stdin.
            with anyio.CancelScope(shield=True), anyio.move_on_after(DISCONNECT_GRACE):
                await client.disconnect()

    async def _watch_output(self, lines: StdioTransport) -> None:
        """Claude Code's output ended before its turn did (it died, or never started): the SDK
        would wait for the answer to a control request (`initialize`, `interrupt`) for a minute.
        The conversation is over."""
        await lines.eof.wait()
        if not self.talk.turn_ended:
            self.child_gone()

    async def prompt(self, client: ClaudeSDKClient) -> Outcome:
        """The turn (`interrupt` when told to stop), to how it ended."""
        return await self.talk.turn_outcome(
            lambda: self._ask(client), client.interrupt, self.turn_stream.outcome
        )

    async def _ask(self, client: ClaudeSDKClient) -> ResultMessage | None:
        await client.query(self.request.prompt)
        async for message in client.receive_response():
            self.turn_stream.read(message)
        if self.turn_stream.result is None:
            raise ConnectionError("Claude Code ended the turn without a result")
        return self.turn_stream.result

    async def _can_use_tool(
        self, name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

        call = tool_call(
            context.tool_use_id, name, tool_input, title=context.title, blocked_path=context.blocked_path
        )
        option_id = await self.permissions.decide(self.turn_stream.ask(call, PERMISSION_OPTIONS))
        if option_id == ALLOW.option_id:
            return PermissionResultAllow()
        if option_id is None:  # no answer (the run stops): the turn stops with it
            return PermissionResultDeny(message="The request was cancelled.", interrupt=True)
        return PermissionResultDeny(message="The user's policy denied this.")

    async def explain(self, exc: Exception) -> str | None:
        from claude_agent_sdk import ClaudeSDKError

        # The SDK says what Claude Code answered to a control request with a bare Exception.
        if isinstance(exc, ClaudeSDKError) or type(exc) is Exception:
            return f"{self.step} failed: {exc}"
        return await super().explain(exc)

    def result_fields(self) -> dict[str, Any]:
        return self.turn_stream.result_fields()


def cli_path(command: str) -> str:
    """The Claude Code CLI a preset's `command` names: by default the SDK's own (as the SDK finds
    it: the one it bundles, else `claude` on PATH)."""
    if command != CLAUDE_COMMAND:
        return command
    from acp_tui.compat import claude_bundled_cli

    return claude_bundled_cli() or shutil.which(CLAUDE_COMMAND) or CLAUDE_COMMAND
