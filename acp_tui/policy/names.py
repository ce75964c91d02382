"""The built-in policies by name."""

from __future__ import annotations

from acp_tui.policy.ask import PermissionPolicy
from acp_tui.policy.rules import AllowOncePolicy, FixedPolicy

BUILTIN_POLICIES: dict[str, PermissionPolicy] = {
    "reject": FixedPolicy("reject"),
    "allow": FixedPolicy("allow"),
    "allow-once": AllowOncePolicy(),
}


def resolve_policy(policy: str | PermissionPolicy) -> PermissionPolicy:
    if not isinstance(policy, str):
        return policy
    try:
        return BUILTIN_POLICIES[policy]
    except KeyError:
        raise ValueError(
            f"unknown permission policy {policy!r} (expected one of: {', '.join(BUILTIN_POLICIES)})"
        ) from None
