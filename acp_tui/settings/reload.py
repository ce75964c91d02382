"""Reading the config file again (the app's ctrl+r), for the next runs: what the new file changes, and
what the choices made since the start keep."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from acp_tui.core.model import ConfigOptionInfo
from acp_tui.settings.load import load_settings
from acp_tui.settings.provider_config import SandboxMode
from acp_tui.settings.schema import Settings


@dataclass(frozen=True)
class Choices:
    """The choices for the next runs, by preset: the policy (the file's, or one picked in F2), the
    options and sandbox picked in F2, and what each agent offers (from its last session or a probe)."""

    policies: dict[str, str] = field(default_factory=dict)
    options: dict[str, dict[str, str]] = field(default_factory=dict)
    sandboxes: dict[str, SandboxMode] = field(default_factory=dict)
    offered: dict[str, tuple[ConfigOptionInfo, ...]] = field(default_factory=dict)


def reload(old: Settings, choices: Choices) -> tuple[Settings, Choices, list[str]]:
    """The file of `old` read again (a `ConfigError` when it is bad: then nothing changes), the
    choices that still hold and the F2 policies the file overruled."""
    assert old.source is not None, "the demo agents come from no file"
    return reloaded(old, load_settings(old.source), choices)


def reloaded(old: Settings, new: Settings, choices: Choices) -> tuple[Settings, Choices, list[str]]:
    """What stays of `old` and `choices` with the file's `new` settings:

    - the agents given on the command line (`--agent NAME=COMMAND`), which no file has;
    - a policy picked in F2, while the file has it and did not change that agent's policy: the newer
      word wins, so a file that changed it overrules F2 (said as "NAME FILE'S (not F2'S)");
    - the options and sandbox picked for an agent that is still there;
    - what an agent offers, unless its command changed (it is its program's)."""
    given = tuple(p for p in old.presets if p.name in old.selected and p.name not in new.names)
    new = replace(new, presets=(*new.presets, *given), selected=old.selected)
    policies, overruled = {}, []
    for preset in new.presets:
        before = choices.policies.get(preset.name)
        filed = old.preset(preset.name).policy if preset.name in old.names else None
        picked = before is not None and before != filed
        if picked and preset.policy != filed:
            overruled.append(f"{preset.name} {preset.policy} (not {before})")
        keep = picked and preset.policy == filed and before in new.policy_names
        policies[preset.name] = before if keep and before else preset.policy
    kept = Choices(
        policies=policies,
        options={k: v for k, v in choices.options.items() if k in new.names},
        sandboxes={k: v for k, v in choices.sandboxes.items() if k in new.names},
        offered={
            k: v
            for k, v in choices.offered.items()
            if k in new.names and new.preset(k).argv == old.preset(k).argv
        },
    )
    return new, kept, overruled
