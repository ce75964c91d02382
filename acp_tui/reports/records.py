"""The record of a finished run: one model (`RunRecord`) for `acp-tui run --format json`, the app's
export and saved sessions, and for what reads them back (reports, compare, `acp-tui apply`, the lab,
`acp-tui run --continue`, a reopened session). `acp-tui schema record` prints its JSON Schema.

A record is made from a run's result (`run_record`) and read back from JSON (`read_record`, the one
check of a record's shape: anything no record of ours holds is a ValueError naming the key, such
as `"usage.cost.amount" is missing`). Reading is strict (a string is no number, a number no flag,
no number is infinite) and lenient where older records are: every key but `name`, `command` and
`stop_reason` may be absent; keys of newer records are kept as they are.

Adding a field is one line in `RunRecord`, with a default (records written before it still read);
a field the result (`SubagentResult`) has under the same name is filled from it.

This module imports pydantic: whoever needs a record imports it when a run has ended, never on the
way to the app's first frame or to `acp-tui run`'s first spawn.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any, Literal, get_origin

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from acp_tui.core.elicitation import ElicitationRecord
from acp_tui.core.masking import SecretMask
from acp_tui.core.model import (
    AgentInfo,
    Cost,
    NetworkRefusal,
    PermissionOptionInfo,
    PermissionRecord,
    SubagentResult,
    SubagentStopReason,
    Usage,
)
from acp_tui.core.text import json_safe
from acp_tui.settings.schema import AgentPreset, Provider, Settings

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _finite(value: Any) -> Any:
    """A number JSON can carry and a float can hold (an integer of 400 digits cannot)."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise PydanticCustomError("finite_number", "out of range") from None
    return value


Seconds = Annotated[float, BeforeValidator(_finite)]


class _Part(BaseModel):
    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="ignore", frozen=True)


class PermissionOption(_Part):
    option_id: str = ""
    name: str = ""
    kind: str = Field("", description="allow_once | allow_always | reject_once | reject_always")


class Permission(_Part):
    title: str = ""
    kind: str | None = Field(None, description="the tool call's kind: edit, execute, read, ...")
    options: list[PermissionOption] = []
    decision: str = Field("cancelled", description="the chosen option's kind, or cancelled")
    option_id: str | None = None
    rule: str = Field("", description="what decided: reject, allow, a rule's name, or cancelled")
    at: Seconds = Field(0.0, description="seconds since the run started")
    raw_input: Any = Field(None, description="the tool call's raw input, as the agent sent it (masked)")
    locations: list[str] = []
    waited_s: Seconds = Field(0.0, description="from the request to its answer")


class Agent(_Part):
    """The child's `agentInfo` from `initialize`."""

    name: str
    title: str | None = None
    version: str | None = None


class Spent(_Part):
    amount: Seconds
    currency: str


class UsageSeen(_Part):
    """The last `usage_update`: context tokens used of `size`, and the cost so far."""

    used: int
    size: int
    cost: Spent | None = None


class AuthMethod(_Part):
    id: str
    name: str
    description: str | None = None
    type: str | None = Field(None, description="agent | env_var | terminal | ... (when given)")
    vars: list[str] = Field([], description="env_var: the variables the agent reads (when any)")
    args: list[str] = Field([], description="terminal: what logs in (when any)")

    @model_serializer(mode="wrap")
    def _given_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        said: dict[str, Any] = handler(self)
        for key in ("type", "vars", "args"):
            if not said.get(key):
                del said[key]
        return said


class Refused(_Part):
    """A connection the sandbox refused: to a host its `sandbox_network` list does not name."""

    host: str = Field(description="as the agent named it")
    port: int
    at: Seconds = Field(0.0, description="seconds since the run started")


class Asked(_Part):
    """What an agent asked the person (`elicitation/create`)."""

    mode: str = Field(description="form | url")
    message: str = ""
    form: Any = Field(None, description="form mode: the requested schema, as the agent sent it (masked)")
    url: str | None = Field(None, description="url mode: the URL the person was shown (never opened by us)")


class Answered(_Part):
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = Field(None, description="an accepted form's values")
    by: str = Field("", description="person | no one (declined: nobody to ask) | cancelled (the run ended)")


class Question(_Part):
    asked: Asked
    answered: Answered
    at: Seconds = Field(0.0, description="seconds since the run started")
    waited_s: Seconds = Field(0.0, description="from the question to its answer")


class DiffStat(_Part):
    files: int
    insertions: int
    deletions: int


class RunRecord(_Part):
    """One finished run."""

    model_config = ConfigDict(extra="allow")  # a newer record's keys are kept as they came

    name: str = Field(description="the agent, as its preset names it")
    command: list[str] = Field(description="the agent's command line: [command, *args]")
    provider: Provider = Field("acp", description="what the agent speaks: acp, a2a, codex or claude")
    prompt: str = ""
    policy: str = Field("", description="the permission policy in force")
    stop_reason: SubagentStopReason = Field(strict=False)  # its values, as JSON spells them
    output: str = Field("", description="the whole answer")
    truncated: bool = Field(False, description="the answer was cut at the size limit")
    error: str | None = Field(None, description="why it did not complete, in one line")
    hidden: dict[str, int] = Field({}, description="update kind -> how many were consumed unseen")
    tool_kinds: dict[str, int] = Field(
        {}, description="the kinds of the tool calls announced -> how many (edits made unasked are said)"
    )
    permissions: list[Permission] = []
    elicitations: list[Question] = Field([], description="the agent's questions to the person, answered")
    exit_code: int | None = Field(None, description="the child's; negative for a signal")
    duration_s: Seconds = 0.0
    trace: str | None = Field(None, description="the JSONL protocol trace, when one was written")
    agent: Agent | None = None
    options: dict[str, str] = Field({}, description="config option id -> its value id, as set")
    usage: UsageSeen | None = None
    auth_methods: list[AuthMethod] = []
    ended_by: Literal["exit", "sigterm", "sigkill"] | None = Field(
        None, description="how the agent's processes ended (null: none was started)"
    )
    cwd: str | None = Field(None, description="the agent's working directory")
    sandbox: Literal["none", "workspace"] = Field("none", description="workspace: confined by bubblewrap")
    remote: str | None = Field(None, description="where the agent ran when not here: the preset's remote URL")
    network_refused: list[Refused] = Field([], description="what the sandbox's host list refused")
    worktree: str | None = Field(None, description="the run's git worktree, when isolated")
    base: str | None = Field(None, description="the commit the worktree started from")
    diff_stat: DiffStat | None = None
    diff: str | None = Field(None, description="the worktree's change, as a patch")
    diff_truncated: bool = False
    skipped: list[str] = Field([], description="files over the preset's max_file_bytes, not recorded")
    diff_masked: bool = Field(False, description="secrets were masked in the diff: it no longer applies")
    first_chunk_s: Seconds | None = Field(None, description="from the spawn to the first answer chunk")
    session_id: str | None = Field(None, description="the agent's session, which a follow-up continues")
    continuation: Literal["resume", "load"] | None = None
    turn: int = Field(1, ge=1, description="1 for a first prompt, 2 for its follow-up, ...")
    warm: bool = Field(False, description="the run took a spare, a child started ahead of it")
    round: int | None = Field(None, ge=1, description="the app's export and saved sessions only")
    attempt: int | None = Field(None, ge=1, description="the app's export and saved sessions only")

    @field_validator("agent", "usage", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == {} else value

    @model_validator(mode="after")
    def _whole(self) -> RunRecord:
        if not self.name.strip():
            raise PydanticCustomError("record", '"name" is empty')
        if not self.command or not self.command[0].strip():
            raise PydanticCustomError(
                "record", '"command" is not a command line (a non-empty list of strings)'
            )
        if self.worktree is not None and self.base is None:
            raise PydanticCustomError("record", '"worktree" has no "base"')
        return self

    @model_serializer(mode="wrap")
    def _numbered_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        said: dict[str, Any] = handler(self)
        for key in ("round", "attempt"):
            if said.get(key) is None:
                del said[key]
        return said

    def numbered(self, round_no: int, attempt_no: int) -> RunRecord:
        """This record as the app's export and saved sessions hold it."""
        return self.model_copy(update={"round": round_no, "attempt": attempt_no})

    def result(self) -> SubagentResult:
        """The result this record tells of (what a follow-up and a reopened pane need)."""
        usage = self.usage
        return SubagentResult(
            stop_reason=self.stop_reason,
            output=self.output,
            error=self.error,
            exit_code=self.exit_code,
            hidden=dict(self.hidden),
            tool_kinds=dict(self.tool_kinds),
            permissions=[_permission_record(p) for p in self.permissions],
            duration_s=self.duration_s,
            truncated=self.truncated,
            ended_by=self.ended_by,
            agent=AgentInfo(**self.agent.model_dump()) if self.agent else None,
            options=dict(self.options),
            usage=Usage(usage.used, usage.size, Cost(**usage.cost.model_dump()) if usage.cost else None)
            if usage
            else None,
            session_id=self.session_id,
            continuation=self.continuation,
            network_refused=tuple(NetworkRefusal(**r.model_dump()) for r in self.network_refused),
            elicitations=tuple(_elicitation_record(q) for q in self.elicitations),
        )


RECORD_KEYS = tuple(key for key in RunRecord.model_fields if key not in ("round", "attempt"))
# What a result carries under a record's own name: copied as it is.
_FROM_RESULT = tuple(f.name for f in dataclasses.fields(SubagentResult) if f.name in RunRecord.model_fields)
_TABLES = frozenset(key for key, f in RunRecord.model_fields.items() if get_origin(f.annotation) is dict)

# A record's isolation keys when the run had no worktree (see `isolation.Worktree.fields`).
NOT_ISOLATED: dict[str, Any] = {
    "worktree": None,
    "base": None,
    "diff_stat": None,
    "diff": None,
    "diff_truncated": False,
    "skipped": [],
    "diff_masked": False,
}


def run_record(
    preset: AgentPreset,
    result: SubagentResult,
    *,
    prompt: str,
    policy: str | None = None,
    trace: str | None = None,
    cwd: str | None = None,
    isolation: Mapping[str, Any] | None = None,
    first_chunk_s: float | None = None,
    turn: int = 1,
    warm: bool = False,
) -> RunRecord:
    """The record of one run. `policy` is the one in force when it differs from the preset's;
    `isolation`, its worktree's keys (`Worktree.fields()`) when it had one."""
    said = {key: getattr(result, key) for key in _FROM_RESULT}
    said["duration_s"] = round(result.duration_s, 3)
    said["permissions"] = [
        {**dataclasses.asdict(p), "at": round(p.at, 3), "waited_s": round(p.waited_s, 3)}
        for p in result.permissions
    ]
    for key in ("agent", "usage"):
        said[key] = dataclasses.asdict(said[key]) if said[key] is not None else None
    said["auth_methods"] = [dataclasses.asdict(method) for method in result.auth_methods]
    said["elicitations"] = [_question(record) for record in result.elicitations]
    said["network_refused"] = [
        {**dataclasses.asdict(refusal), "at": round(refusal.at, 3)} for refusal in result.network_refused
    ]
    fields = {
        "name": preset.name,
        "command": preset.argv,
        "provider": preset.provider,
        "prompt": prompt,
        "policy": policy or preset.policy,
        **said,
        "trace": trace,
        "cwd": cwd,
        "sandbox": preset.sandbox,
        "remote": preset.remote,
        **isolation_keys(isolation, preset.secrets()),
        "first_chunk_s": round(first_chunk_s, 3) if first_chunk_s is not None else None,
        "turn": turn,
        "warm": warm,
    }
    # Our own values (tuples, dataclass fields): converted, not refused as a record read back is.
    return RunRecord.model_validate(fields, strict=False)


def agent_session_record(
    preset: AgentPreset, session_id: str, cwd: str, title: str | None = None
) -> RunRecord:
    """A session the agent keeps (`session/list`), as the record of an ended turn that a follow-up
    continues (`acp-tui run --load`, the app's list of an agent's sessions): its id, where it is
    continued (ours to choose: never the cwd the agent lists), its title as the prompt."""
    said = {"name": preset.name, "command": preset.argv, "prompt": title or "", "stop_reason": "completed"}
    return RunRecord.model_validate({**said, "session_id": session_id, "cwd": cwd})


def isolation_keys(fields: Mapping[str, Any] | None, secrets: list[str]) -> dict[str, Any]:
    """A worktree's keys as a record holds them: the one place its diff is masked. A secret the
    agent wrote into a file shows as `***` (an unmasked diff exists only in the live worktree)."""
    keys = {**NOT_ISOLATED, **(fields or {})}
    mask = SecretMask(secrets)
    if not mask:
        return keys
    if isinstance(keys["diff"], str):
        masked = mask(keys["diff"])
        keys["diff"], keys["diff_masked"] = masked, masked != keys["diff"]
    keys["skipped"] = [mask(name) for name in keys["skipped"]]
    return keys


def read_record(value: Any) -> RunRecord:
    """A record read back from JSON; ValueError saying, in one line, what no record of ours holds."""
    if not isinstance(value, Mapping):
        raise ValueError("not a JSON object")
    try:
        return RunRecord.model_validate(value)
    except ValidationError as exc:
        raise ValueError(_said(exc.errors()[0])) from None


def result_from(value: Any) -> SubagentResult:
    """The result a record read back tells of (`read_record`, then `RunRecord.result`)."""
    return read_record(value).result()


def json_line(record: RunRecord | Mapping[str, Any]) -> str:
    """One record (or any JSON object) as one line of JSON, no newline at the end: the exact text,
    escaped by JSON, and encodable whatever it holds (a lone surrogate is spelled as its escape)."""
    value = record.model_dump(mode="json") if isinstance(record, RunRecord) else record
    return json_safe(json.dumps(value, ensure_ascii=False))


def record_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) every record validates against (`acp-tui schema record`)."""
    return {"$schema": SCHEMA_DIALECT, **RunRecord.model_json_schema()}


def preset_for(record: RunRecord, settings: Settings) -> AgentPreset:
    """The preset that follows up a record's run: the settings' preset of its name (its env,
    options and policy of now), else one made of the record's own command. A run that was confined
    stays confined: a follow-up never lifts a sandbox; and it runs where its session is (the
    record's `remote`)."""
    name, command = record.name, record.command
    url = command[0] if record.provider == "a2a" else None  # an A2A agent's command is its url
    preset = (
        settings.preset(name)
        if name in settings.names
        else AgentPreset(name, command[0], tuple(command[1:]), provider=record.provider, url=url)
    )
    if record.remote is not None and record.remote != preset.remote:
        preset = replace(preset, remote=record.remote, remote_options=(), cwd=None, create_cwd=False)
    return replace(preset, sandbox="workspace") if record.sandbox == "workspace" else preset


def _permission_record(permission: Permission) -> PermissionRecord:
    said = permission.model_dump(exclude={"options", "locations"})  # the same names, field by field
    options = tuple(PermissionOptionInfo(**o.model_dump()) for o in permission.options)
    return PermissionRecord(**said, options=options, locations=tuple(permission.locations))


def _question(record: ElicitationRecord) -> dict[str, Any]:
    asked = {"mode": record.mode, "message": record.message, "form": record.form, "url": record.url}
    answered = {"action": record.action, "content": record.content, "by": record.by}
    return {
        "asked": asked,
        "answered": answered,
        "at": round(record.at, 3),
        "waited_s": round(record.waited_s, 3),
    }


def _elicitation_record(question: Question) -> ElicitationRecord:
    asked, answered = question.asked, question.answered
    return ElicitationRecord(
        asked.mode,
        asked.message,
        asked.form,
        asked.url,
        answered.action,
        answered.content,
        answered.by,
        question.at,
        question.waited_s,
    )


def _said(error: Mapping[str, Any]) -> str:
    """pydantic's first complaint about a record, in our words, naming the key (`usage.cost.amount`:
    list positions left out)."""
    loc = error["loc"]
    kind = error["type"]
    if kind == "record":
        return str(error["msg"])
    if not loc:
        return "not a JSON object"
    keys = [part for part in loc if isinstance(part, str)]
    if loc[0] in _TABLES and len(loc) == 2:
        return f'"{loc[0]}" holds a value that is not what a record holds'
    if isinstance(loc[-1], int):  # an item of a list
        what = "a permission" if keys == ["permissions"] else "a string"
        return f'"{".".join(keys)}" holds something that is not {what}'
    named = '"' + ".".join(keys) + '"'
    if kind == "missing":
        return f"{named} is missing"
    if kind == "finite_number":
        return f"{named} is out of range"
    if kind == "greater_than_equal":
        return f"{named} is not a number from 1"
    if keys == ["stop_reason"]:
        return '"stop_reason" is not a stop reason'
    return f"{named} is not what a record holds"
