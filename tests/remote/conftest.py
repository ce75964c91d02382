from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.remote.support import FarHost, Netns, end_far_processes, network_namespace, sshd


@pytest.fixture(scope="session")
def far_host() -> Iterator[FarHost]:
    """A real sshd on 127.0.0.1, for the whole session."""
    with sshd() as host:
        yield host


@pytest.fixture
def netns_host() -> Iterator[tuple[FarHost, Netns]]:
    """A real sshd in a network namespace of its own, behind a link a test can cut."""
    with network_namespace() as netns, sshd(netns.address, netns.name) as host:
        yield host, netns


@pytest.fixture(autouse=True)
def nothing_left_far() -> Iterator[None]:
    """After each test, nothing of the far user runs (what was left is ended, and the test fails)."""
    yield
    from tests.remote.support import far_processes

    left = far_processes()
    end_far_processes()
    assert not left, f"far side processes left running: {left}"
