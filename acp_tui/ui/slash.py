"""Slash commands in the prompt: what the checked agents offer that completes what is typed.

ACP's slash commands are text: `/name args` goes to the agent as the prompt, as typed. While the
prompt is a `/` and the start of a name (one word, nothing after it yet), the commands of the
checked agents whose name starts so are offered, each with its description and the agents that
offer it. A name that is no plain word (spaces, control characters: from an agent, so untrusted)
is never offered: completing it would put that text in the person's prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_tui.core.model import CommandInfo


@dataclass(frozen=True)
class Offered:
    command: CommandInfo  # the first offer of that name (its description, its hint)
    agents: tuple[str, ...]  # every checked agent that offers it, in the order given

    @property
    def completion(self) -> str:
        """The prompt once this command is chosen: its name, then room for its input."""
        return f"/{self.command.name} "


def typed_name(prompt: str) -> str | None:
    """The start of a command name being typed (`/te` gives `te`), or None when the prompt is not
    one."""
    if not prompt.startswith("/") or any(c.isspace() for c in prompt):
        return None
    return prompt[1:]


def matching(prompt: str, offered: Mapping[str, Sequence[CommandInfo]]) -> list[Offered]:
    """The commands that complete `prompt`, by name; `offered`: each checked agent's commands."""
    typed = typed_name(prompt)
    if typed is None:
        return []
    found: dict[str, Offered] = {}
    for agent, commands in offered.items():
        for command in commands:
            if not _plain(command.name) or not command.name.lower().startswith(typed.lower()):
                continue
            known = found.get(command.name)
            if known is None:
                found[command.name] = Offered(command, (agent,))
            elif agent not in known.agents:
                found[command.name] = Offered(known.command, (*known.agents, agent))
    return [found[name] for name in sorted(found)]


def _plain(name: str) -> bool:
    return bool(name) and name.isprintable() and not any(c.isspace() for c in name)
