"""Shared fixtures. Ray is started once per test session, for real (no mocks), on 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

RAY_TEST_CPUS = 2


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    """A real local Ray (no dashboard) shared by the tests that need one; shut down at the end."""
    import ray

    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    started = False
    if not ray.is_initialized():
        ray.init(num_cpus=RAY_TEST_CPUS, include_dashboard=False, log_to_driver=False, configure_logging=False)
        started = True
    yield
    if started:
        ray.shutdown()
