from __future__ import annotations

import pwd
from collections.abc import Iterator

import pytest

from tests.remote.support import (
    FarHost,
    Netns,
    end_far_processes,
    far_processes,
    far_user_made,
    network_namespace,
    sshd,
)


@pytest.fixture(scope="session")
def far_account() -> Iterator[pwd.struct_passwd]:
    """The far side's unprivileged user, made for this test process."""
    with far_user_made() as user:
        yield user


@pytest.fixture(scope="session")
def far_host(far_account: pwd.struct_passwd) -> Iterator[FarHost]:
    """A real sshd on 127.0.0.1, for the whole session."""
    with sshd() as host:
        yield host


@pytest.fixture
def netns_host(far_account: pwd.struct_passwd) -> Iterator[tuple[FarHost, Netns]]:
    """A real sshd in a network namespace of its own, behind a link a test can cut."""
    with network_namespace() as netns, sshd(netns.address, netns.name) as host:
        yield host, netns


@pytest.fixture(autouse=True)
def nothing_left_far(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test that had a far side, nothing of the far user runs (what was left is ended,
    and the test fails)."""
    yield
    if "far_account" not in request.fixturenames:
        return
    left = far_processes()
    end_far_processes()
    assert not left, f"far side processes left running: {left}"
