"""Shared fixtures. Ray is started once per test session, for real (no mocks), on 127.0.0.1. A compiled simulator
core that is not built is reported at the end of the run, and is a failure under `--require-core` (CI)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

RAY_TEST_CPUS = 2

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One pytest-xdist worker per core: torch's default of a thread per core in every worker (and in the
    # commands each one starts) oversubscribes the machine, and its spinning threads cost more than they give.
    os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    """A real local Ray (no dashboard) shared by the tests that need one; shut down at the end."""
    import ray

    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    started = False
    if not ray.is_initialized():
        from common.ray_errors import dashboard_port_beside_others

        # Ray binds its dashboard port even without a dashboard: beside a training run (8265 taken) the node
        # would never come up, so the tests take the next free port as `train` and `serve` do.
        from serving.ray_start import init_ray

        # The start-up path of `train` and `serve` (`serving/ray_start.py`): it survives a busy machine.
        init_ray(dict(num_cpus=RAY_TEST_CPUS, include_dashboard=False, dashboard_port=dashboard_port_beside_others(),
                      log_to_driver=False, configure_logging=False), local=True)
        started = True
    yield
    if started:
        ray.shutdown()


# ---- the compiled simulator core: missing is reported, and a failure when required ----------------

_CORE_MODULES = ("envs.nh.core._nhcore", "envs.nh.core._nhcore_testing")
_MISSING_CORE = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--require-core",
        action="store_true",
        help="a compiled simulator core that is not built fails its tests instead of skipping them "
        "(the same as OSRS_RLLIB_REQUIRE_CORE=1, which CI sets)",
    )


def _missing_core_modules() -> list[str]:
    """The core's extension modules that are not built here (found by name, not imported: a stale one is
    built, and its tests fail with the command that rebuilds it)."""
    import importlib.util

    return [name for name in _CORE_MODULES if importlib.util.find_spec(name) is None]


def pytest_configure(config: pytest.Config) -> None:
    from envs.nh.core import REQUIRE_CORE_ENV, TESTING_CORE_ENV

    # The suite's core tests need the testing extension: any build run from here (and the rebuild commands the
    # messages print) makes it too.
    os.environ.setdefault(TESTING_CORE_ENV, "1")
    if config.getoption("--require-core"):
        os.environ[REQUIRE_CORE_ENV] = "1"  # read by the core tests' `compiled_core` and by subprocesses
    missing = _missing_core_modules()
    config.stash[_MISSING_CORE] = missing
    if missing:
        # A warning makes the run's summary line yellow: without the core, skipped core tests are not green.
        config.issue_config_time_warning(pytest.PytestWarning(_missing_core_message(missing)), stacklevel=2)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    missing = config.stash.get(_MISSING_CORE, [])
    if missing:
        terminalreporter.write_sep("!", "compiled simulator core missing", red=True, bold=True)
        terminalreporter.write_line(_missing_core_message(missing), red=True)


def _missing_core_message(missing: list[str]) -> str:
    from envs.nh.core import REQUIRE_CORE_ENV, require_core
    from envs.nh.core._sources import TESTING_REINSTALL_COMMAND

    what = "fail" if require_core() else "are skipped"
    fallback = " and the envs fall back to the Python engine" if "envs.nh.core._nhcore" in missing else ""
    return (
        f"the compiled simulator core is not built ({', '.join(missing)}): its tests {what}{fallback}. Build both "
        f"with `{TESTING_REINSTALL_COMMAND}` (needs gcc or clang; without the switch only the production module is "
        f"built); CI sets {REQUIRE_CORE_ENV}=1 (or pass --require-core) so that a missing core fails instead of "
        "skipping."
    )
