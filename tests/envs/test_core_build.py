"""The compiled core knows its sources, and a missing one is never green.

Each test works on a copy of the packages in a temporary directory (the checkout's own files are shared with
other running processes and stay untouched), imported in a fresh interpreter the way a user's process would:

* a core built from the checkout's sources imports; after one C source is edited without rebuilding, importing
  it (directly, through `load_core`, or as `engine: auto`) fails with the command that rebuilds it;
* an install without the sources beside the package (nothing to compare) imports;
* without the core, the core's tests skip and the run says the core is missing (a warning: not a green
  summary line); with `OSRS_RLLIB_REQUIRE_CORE=1` or `pytest --require-core` they fail instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from envs.nh.core import REQUIRE_CORE_ENV
from envs.nh.core._sources import REINSTALL_COMMAND
from tests.envs.core_snapshots import compiled_core

REPO = Path(__file__).resolve().parents[2]
compiled_core(testing=False)  # the stale-core checks need a build to copy


def _copy_packages(dest: Path, with_core: bool = True) -> Path:
    """`envs` and `common` (and the built core, when asked) under `dest`, importable ahead of the checkout."""
    ignore = shutil.ignore_patterns("__pycache__", *(() if with_core else ("*.so",)))
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
    for code in (
        "import envs.nh.core._nhcore",
        "import envs.nh.core._nhcore_testing",
        "from envs.nh.core import load_core; load_core()",
        "from envs.nh.core_engine import make_engine; make_engine('auto')",  # an error, not the Python engine
    ):
        stale = _python(code, root)
        assert stale.returncode != 0, (code, stale.stdout)
        assert "StaleCoreError" in stale.stderr and f"`{REINSTALL_COMMAND}`" in stale.stderr, (code, stale.stderr)

    shutil.rmtree(source.parent)  # an install without the sources beside it: nothing to compare, it loads
    assert _python(imports, root).returncode == 0


def test_a_missing_core_is_reported_and_fails_when_required(tmp_path: Path) -> None:
    root = _copy_packages(tmp_path, with_core=False)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")  # the pytest settings
    (root / "tests" / "envs").mkdir(parents=True)
    for name in ("__init__.py", "conftest.py", "envs/__init__.py", "envs/core_snapshots.py", "envs/test_core_rng.py"):
        shutil.copy(REPO / "tests" / name, root / "tests" / name)
    pytest_run = "import sys, pytest; sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', *sys.argv[1:]]))"

    default = _python(pytest_run, root)
    out = default.stdout
    assert default.returncode in (0, 5), out[-3000:]  # 5: every test collected was skipped (this copy has no other)
    assert "skipped" in out and " passed" not in out, out[-3000:]
    assert "compiled simulator core missing" in out and "1 warning" in out, out[-3000:]  # reported, not green

    for env, args in (({REQUIRE_CORE_ENV: "1"}, ""), ({}, ", '--require-core'")):
        required = _python(pytest_run.replace("*sys.argv[1:]", f"'tests/envs/test_core_rng.py'{args}"), root, **env)
        assert required.returncode != 0, required.stdout[-3000:]
        assert f"{REQUIRE_CORE_ENV} is set: a missing core is a failure" in required.stdout, required.stdout[-3000:]
