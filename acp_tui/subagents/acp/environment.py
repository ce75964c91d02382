"""The child's environment: the parent's minus anything credential-shaped, plus explicit overlays."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

# The RFC's rule: these substrings anywhere in a name, in any case, mark a credential.
CREDENTIAL_NAME = re.compile(r"KEY|SECRET|TOKEN", re.IGNORECASE)


def is_credential_name(name: str) -> bool:
    return CREDENTIAL_NAME.search(name) is not None


def child_environment(overlay: Mapping[str, str], parent: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent's environment scrubbed of credentials, then `overlay` (the child's own) on top."""
    source = os.environ if parent is None else parent
    env = {name: value for name, value in source.items() if not is_credential_name(name)}
    env.update(overlay)
    return env
