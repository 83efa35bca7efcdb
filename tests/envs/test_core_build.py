"""The compiled core knows its sources, and a missing one is never green.

Each test works on a copy of the packages in a temporary directory (the checkout's own files are shared with
other running processes and stay untouched), imported in a fresh interpreter the way a user's process would:

* a core built from the checkout's sources imports; after one C source is edited without rebuilding, importing
  it (directly, through `load_core`, or as `engine: auto`) fails with the command that rebuilds it;
* an install without the sources beside the package (nothing to compare) imports;
* without the core, the core's tests skip and the run says the core is missing (a warning: not a green
  summary line); with `OSRS_RLLIB_REQUIRE_CORE=1` or `pytest --require-core` they fail instead;
* the testing extension is built only when asked (`OSRS_RLLIB_TESTING_CORE=1`): without it the differential
  tests skip saying how to build it, and fail when the core is required.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from envs.nh.core import REQUIRE_CORE_ENV, TESTING_CORE_ENV
from envs.nh.core._sources import REINSTALL_COMMAND, TESTING_REINSTALL_COMMAND
from tests.envs.core_snapshots import compiled_core

REPO = Path(__file__).resolve().parents[2]
compiled_core(testing=False)  # the stale-core checks need a build to copy


def _copy_packages(dest: Path, with_core: bool = True, with_testing_core: bool = True) -> Path:
    """`envs` and `common` (and the built core, when asked) under `dest`, importable ahead of the checkout."""
    left_out = () if with_core else ("*.so",)
    if not with_testing_core:
        left_out = (*left_out, "_nhcore_testing*")
    ignore = shutil.ignore_patterns("__pycache__", *left_out)
    for package in ("envs", "common"):
        shutil.copytree(REPO / package, dest / package, ignore=ignore)
    return dest


def _python(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != REQUIRE_CORE_ENV} | {"PYTHONPATH": str(cwd), **env}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=environ, capture_output=True, text=True)


def test_a_core_built_from_other_sources_refuses_to_import(tmp_path: Path) -> None:
    root = _copy_packages(tmp_path)
    imports = "import envs.nh.core._nhcore, envs.nh.core._nhcore_testing; print(envs.nh.core._nhcore.__file__)"
    ok = _python(imports, root)
    assert ok.returncode == 0 and ok.stdout.startswith(str(root)), ok.stderr[-2000:]

    source = root / "envs" / "nh" / "core" / "src" / "nh_sim.c"
    source.write_text(source.read_text() + "\n/* an edit after the build */\n")
    for code, command in (
        ("import envs.nh.core._nhcore", REINSTALL_COMMAND),
        ("import envs.nh.core._nhcore_testing", TESTING_REINSTALL_COMMAND),  # a plain install would not rebuild it
        ("from envs.nh.core import load_core; load_core()", REINSTALL_COMMAND),
        ("from envs.nh.core_engine import make_engine; make_engine('auto')", REINSTALL_COMMAND),  # not Python's
    ):
        stale = _python(code, root)
        assert stale.returncode != 0, (code, stale.stdout)
        assert "StaleCoreError" in stale.stderr and f"`{command}`" in stale.stderr, (code, stale.stderr)

    shutil.rmtree(source.parent)  # an install without the sources beside it: nothing to compare, it loads
    assert _python(imports, root).returncode == 0


def test_a_missing_core_is_reported_and_fails_when_required(tmp_path: Path) -> None:
    root = _copy_packages(tmp_path, with_core=False)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")  # the pytest settings
    (root / "tests" / "envs").mkdir(parents=True)
    for name in ("__init__.py", "conftest.py", "envs/__init__.py", "envs/core_snapshots.py", "envs/test_core_rng.py"):
        shutil.copy(REPO / "tests" / name, root / "tests" / name)
    pytest_run = "import sys, pytest; sys.exit(pytest.main(['-q', '-n', '0', '-p', 'no:cacheprovider', *sys.argv[1:]]))"

    default = _python(pytest_run, root)
    out = default.stdout
    assert default.returncode in (0, 5), out[-3000:]  # 5: every test collected was skipped (this copy has no other)
    assert "skipped" in out and " passed" not in out, out[-3000:]
    assert "compiled simulator core missing" in out and "1 warning" in out, out[-3000:]  # reported, not green

    for env, args in (({REQUIRE_CORE_ENV: "1"}, ""), ({}, ", '--require-core'")):
        required = _python(pytest_run.replace("*sys.argv[1:]", f"'tests/envs/test_core_rng.py'{args}"), root, **env)
        assert required.returncode != 0, required.stdout[-3000:]
        assert f"{REQUIRE_CORE_ENV} is set: a missing core is a failure" in required.stdout, required.stdout[-3000:]


def _pytest_copy(root: Path) -> str:
    """Copy what running `tests/envs/test_core_rng.py` needs under `root`; the code that runs pytest there."""
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")  # the pytest settings
    (root / "tests" / "envs").mkdir(parents=True)
    for name in ("__init__.py", "conftest.py", "envs/__init__.py", "envs/core_snapshots.py", "envs/test_core_rng.py"):
        shutil.copy(REPO / "tests" / name, root / "tests" / name)
    # -n 0: in that one process (the suite's own settings run a file per core), so its report is a single one.
    return "import sys, pytest; sys.exit(pytest.main(['-q', '-n', '0', '-rs', '-p', 'no:cacheprovider', " \
        "*sys.argv[1:]]))"


def test_the_testing_core_is_built_only_when_asked() -> None:
    """A user's install builds the production extension alone; the switch adds the testing one."""
    code = (
        "import importlib.util; spec = importlib.util.spec_from_file_location('build_script', 'setup.py'); "
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); "
        "print(' '.join(e.name for e in m.extensions()))"
    )
    for switch, names in (
        (None, "envs.nh.core._nhcore"),
        ("0", "envs.nh.core._nhcore"),
        ("1", "envs.nh.core._nhcore envs.nh.core._nhcore_testing"),
    ):
        env = {k: v for k, v in os.environ.items() if k != TESTING_CORE_ENV} | (
            {TESTING_CORE_ENV: switch} if switch is not None else {}
        )
        listed = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True)
        assert listed.returncode == 0, listed.stderr[-2000:]
        assert listed.stdout.split() == names.split(), (switch, listed.stdout)


def test_without_the_testing_core_its_tests_skip_saying_how_to_build_it(tmp_path: Path) -> None:
    root = _copy_packages(tmp_path, with_testing_core=False)
    pytest_run = _pytest_copy(root)
    skipped = _python(pytest_run, root, COLUMNS="1000")  # the skip reasons in full
    out = skipped.stdout
    assert skipped.returncode in (0, 5), out[-3000:]
    assert f"`{TESTING_REINSTALL_COMMAND}`" in out and " passed" not in out, out[-3000:]
    required = _python(pytest_run, root, COLUMNS="1000", **{REQUIRE_CORE_ENV: "1"})
    assert required.returncode != 0 and "_nhcore_testing is not built" in required.stdout, required.stdout[-3000:]
