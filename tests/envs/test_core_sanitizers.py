"""The compiled core's differential tests under AddressSanitizer and UndefinedBehaviorSanitizer.

Both extensions of the core (the production `_nhcore` and the testing `_nhcore_testing` with the differential
drivers, as setup.py builds them) are rebuilt from `envs/nh/core/src/*.c` with `-fsanitize=address,undefined`
into a temporary directory, loaded under their usual names in a fresh interpreter (libasan preloaded, as a
sanitized extension in an unsanitized Python needs), and the core's differential tests run against them there;
any out-of-bounds access, use after free, signed overflow or misaligned access aborts that run. Slow (two
compiles plus the tests at sanitizer speed): `pytest -m slow`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from xml.etree import ElementTree

import pytest

from envs.nh.core._sources import source_hash

REPO = Path(__file__).resolve().parents[2]
CORE_SRC = REPO / "envs" / "nh" / "core" / "src"
DIFFERENTIAL_TESTS = [
    "test_core_rng.py",
    "test_core_formulas.py",
    "test_core_hits.py",
    "test_core_reset.py",
    "test_core_combat.py",
    "test_core_movement.py",
    "test_core_operations.py",
    "test_core_tick.py",
    "test_core_rewards.py",
    "test_core_engine.py",
]
SANITIZE_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer"]

# Runs in the child: load the sanitized builds under the extensions' names, then the differential tests.
CHILD = """
import importlib.util, sys
import envs.nh.core
for name, path in (("_nhcore", sys.argv[1]), ("_nhcore_testing", sys.argv[2])):
    spec = importlib.util.spec_from_file_location(f"envs.nh.core.{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[f"envs.nh.core.{name}"] = module
    setattr(envs.nh.core, name, module)
    assert module.__file__ == path
import pytest
# -s: a sanitizer report goes to the real stderr, not into pytest's capture that the abort discards.
sys.exit(pytest.main(["-q", "-s", "-n", "0", "-p", "no:cacheprovider", "-m", "not slow", f"--junitxml={sys.argv[3]}",
                      *sys.argv[4:]]))
"""


def _compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


def _runtime_library(cc: str, name: str) -> str:
    path = subprocess.run([cc, f"-print-file-name={name}"], capture_output=True, text=True, check=True).stdout.strip()
    if not os.path.isabs(path) or not os.path.exists(path):
        pytest.skip(f"{cc} has no {name}")
    return path


@pytest.mark.slow
def test_differential_tests_pass_under_asan_and_ubsan(tmp_path: Path) -> None:
    cc = _compiler()
    libasan = _runtime_library(cc, "libasan.so")
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    targets = [tmp_path / f"_nhcore{suffix}", tmp_path / f"_nhcore_testing{suffix}"]
    drivers = CORE_SRC / "nhcore_testing.c"
    production = [p for p in sorted(CORE_SRC.glob("*.c")) if p != drivers]
    builds = ((targets[0], production, []), (targets[1], [*production, drivers], ["-DNH_TESTING"]))
    for target, sources, macros in builds:
        compile_cmd = [
            cc,
            "-shared",
            "-fPIC",
            "-std=c11",
            "-O1",
            "-g",
            "-Wall",
            "-Wextra",
            "-Werror",
            *SANITIZE_FLAGS,
            f'-DNH_SOURCE_HASH="{source_hash()}"',
            *macros,
            f"-I{CORE_SRC}",
            f"-I{sysconfig.get_paths()['include']}",
            *map(str, sources),
            "-o",
            str(target),
        ]
        subprocess.run(compile_cmd, check=True, cwd=REPO)
    env = {
        **os.environ,
        "LD_PRELOAD": libasan,
        "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",  # CPython itself keeps memory until exit
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
    }
    tests = [str(REPO / "tests" / "envs" / name) for name in DIFFERENTIAL_TESTS]
    report = tmp_path / "differential.xml"
    result = subprocess.run(
        [sys.executable, "-c", CHILD, *map(str, targets), str(report), *tests],
        cwd=REPO, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[:4000]  # the report leads stderr
    # pytest's own record of the run: every differential test ran (none skipped) and passed
    (suite,) = ElementTree.parse(report).getroot().iter("testsuite")
    counts = {key: int(suite.get(key, 0)) for key in ("tests", "skipped", "failures", "errors")}
    assert counts["tests"] > 0 and counts["skipped"] == counts["failures"] == counts["errors"] == 0, counts
