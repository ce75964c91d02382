"""What a confined agent shares with the host through the kernel, and must not reach: the kernel's
settings (`/proc/sys`: as root, `kernel.core_pattern` names a program the kernel runs as root of the
host at the next crash) and the keys of our keyrings (the session keyring it would inherit, and
the user keyring of its uid, root's when we run as root).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from tests.sandbox.support import (
    User,
    answer,
    need_bwrap,
    outcomes,
    outside_tmp,
    read_json_line,
    supervise_as,
    tries,
    trying,
)


@pytest.fixture(autouse=True)
def confined() -> None:
    need_bwrap()


async def test_as_root_the_kernels_settings_are_read_only(tmp_path: Path) -> None:
    """Root keeps its hold on what root owns without any capability: /proc/sys is root's."""
    if os.geteuid() != 0:
        pytest.skip("not root: only root may write /proc/sys, sandbox or not")
    steps = [("rewrite", "/proc/sys/kernel/core_pattern"), ("rewrite", "/proc/sys/kernel/hostname")]
    assert await answer(trying(), steps, tmp_path) == ["error:EROFS", "error:EROFS"]


@pytest.mark.parametrize("who", ["root", "unprivileged"])
def test_no_key_of_our_keyrings_is_readable(request: pytest.FixtureRequest, who: str) -> None:
    if os.uname().machine not in ("x86_64", "aarch64", "riscv64"):
        pytest.skip(f"the test knows no keyctl number for {os.uname().machine}")
    if who == "root" and os.geteuid() != 0:
        pytest.skip("not root")
    user: User | None = request.getfixturevalue("unprivileged") if who == "unprivileged" else None
    key = f"acp-tui-test-{uuid.uuid4().hex[:12]}"
    said = {}
    with outside_tmp("acp-tui-keys-", owner=user) as home:
        (home / "work").mkdir()
        if user is not None:
            os.chown(home / "work", user.uid, user.gid)
        for sandbox in ("none", "workspace"):
            job = {"prompt": tries(("key", key), ("key", f"{key}-user")), "cwd": f"{home}/work", "key": key}
            supervisor = supervise_as(user, {**job, "sandbox": sandbox}, home=home)
            try:
                said[sandbox] = outcomes(read_json_line(supervisor)["output"])
            finally:
                supervisor.kill()
                supervisor.wait(10)
    assert said["none"] == ["ok:session secret", "ok:user secret"]
    assert said["workspace"] == ["error:ENOKEY", "error:ENOKEY"]
