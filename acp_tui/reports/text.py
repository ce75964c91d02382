"""Records for people reading a terminal: what the agent wrote shown with its control characters made
visible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp_tui.core.text import one_line, visible

if TYPE_CHECKING:
    from acp_tui.reports.records import Permission, Question, RunRecord


def text_block(record: RunRecord) -> str:
    """One record for people reading a terminal: the answer under its name, then how it ended.
    What the agent wrote is shown with its control characters made visible: it is printed to a
    terminal, and must not drive it."""
    name = one_line(record.name)
    lines = [f"=== {name} ==="]
    if record.output:
        lines.append(visible(record.output.rstrip("\n")))
    ending = f"--- {name}: {record.stop_reason.value}"
    if record.error:
        ending += f": {one_line(record.error)}"
    lines.append(f"{ending} ({record.duration_s:.2f} s)")
    lines.extend(f"    permission: {one_line(permission_line(p))}" for p in record.permissions)
    lines.extend(f"    question: {one_line(question_line(q))}" for q in record.elicitations)
    lines.extend(f"    {one_line(fact)}" for fact in session_facts(record))
    return "\n".join(lines) + "\n"


def permission_line(permission: Permission) -> str:
    offered = ", ".join(f"{o.name} ({o.kind})" for o in permission.options)
    kind = f" [{permission.kind}]" if permission.kind else ""
    return (
        f'at {permission.at:.2f} s "{permission.title}"{kind}: {permission.decision}'
        f" by {permission.rule}" + (f"; offered: {offered}" if offered else "")
    )


def question_line(question: Question) -> str:
    asked, answered = question.asked, question.answered
    what = f"{asked.mode}, {asked.url}" if asked.url else asked.mode
    return f'at {question.at:.2f} s "{asked.message}" ({what}): {answered.action} by {answered.by}'


def session_facts(record: RunRecord) -> list[str]:
    """What the session was (agent, options) and cost (usage), as the agent said: one line each."""
    facts = []
    agent = record.agent
    if agent:
        version = f" {one_line(agent.version)}" if agent.version else ""
        facts.append(f"agent: {one_line(agent.title or agent.name)}{version}")
    if record.options:
        chosen = ", ".join(f"{one_line(k)}={one_line(v)}" for k, v in record.options.items())
        facts.append(f"options: {chosen}")
    usage = record.usage
    if usage:
        cost = usage.cost
        spent = f", cost {cost.amount:g} {one_line(cost.currency)}" if cost else ""
        facts.append(f"usage: {usage.used} of {usage.size} tokens{spent}")
    return facts


def probe_text(name: str, record: dict[str, Any]) -> str:
    """The probe for people: every string from the agent shown literally, on one line."""
    lines = [f"=== {one_line(name)} ==="]
    agent = record["agent"]
    if agent:
        title = f' "{one_line(agent["title"])}"' if agent.get("title") else ""
        version = f" {one_line(agent['version'])}" if agent.get("version") else ""
        lines.append(f"agent: {one_line(agent['name'])}{title}{version}")
    if record.get("description"):
        lines.append(f"about: {one_line(record['description'])}")
    for interface in record.get("interfaces", ()):
        keys = ("protocol_binding", "protocol_version")
        binding = " ".join(one_line(interface[key]) for key in keys if interface[key])
        lines.append(f"interface: {binding} at {one_line(interface['url'])}")
    if record.get("skills"):
        lines.append("skills:")
    for skill in record.get("skills", ()):
        about = f": {one_line(skill['description'])}" if skill.get("description") else ""
        lines.append(f"  {one_line(skill['id'])} ({one_line(skill['name'])}){about}")
    if record["protocol_version"] is not None:
        lines.append(f"protocol version: {record['protocol_version']}")
    sessions = record["agent_capabilities"].get("sessionCapabilities") or {}
    if record["protocol_version"] is not None:
        lines.append("session/close: " + ("advertised" if "close" in sessions else "not advertised"))
        listed = "advertised (acp-tui sessions --agent NAME)" if record["session_list"] else "not advertised"
        lines.append(f"session/list: {listed}")
        modes_asked = ", ".join(map(one_line, record["client_capabilities"].get("elicitation") or {}))
        lines.append(f"questions (elicitation): acp-tui answers {modes_asked or 'none'}")
    modes = record["modes"]
    if modes["available"]:
        marked = [f"{one_line(m)}*" if m == modes["current"] else one_line(m) for m in modes["available"]]
        lines.append("modes: " + " ".join(marked) + "   (* current)")
    for option in record["config_options"]:
        values = [f"{one_line(v)}*" if v == option["current"] else one_line(v) for v in option["values"]]
        category = f" [{one_line(option['category'])}]" if option.get("category") else ""
        lines.append(f"option {one_line(option['id'])}{category}: " + " ".join(values))
    if record["commands"]:
        lines.append("commands:")
    for command in record["commands"]:
        hint = f" <{one_line(command['hint'])}>" if command.get("hint") else ""
        lines.append(f"  /{one_line(command['name'])}{hint}: {one_line(command['description'])}")
    if record["auth_methods"]:
        lines.append("login methods:")
    for method in record["auth_methods"]:
        kind = f" [{one_line(method['type'])}]" if method.get("type") else ""
        variables = f" (set {', '.join(map(one_line, method['vars']))})" if method.get("vars") else ""
        about = f": {one_line(method['description'])}" if method.get("description") else ""
        lines.append(f"  {one_line(method['id'])}{kind}: {one_line(method['name'])}{variables}{about}")
    if record.get("remote"):
        lines.append(f"remote: {one_line(record['remote'])}")
    if record.get("sandbox") == "workspace":
        lines.append("sandbox: workspace (confined by bubblewrap)")
        lines.append(f"sandbox network: {record.get('sandbox_network')}")
    if record["error"]:
        lines.append(f"error: {one_line(record['error'])}")
    return "\n".join(lines) + "\n"
