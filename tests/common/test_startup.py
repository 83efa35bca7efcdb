"""`common.startup`: a command starts without the optional imports that cost seconds and serve nothing of ours."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_the_cli_imports_ray_without_rfc3987_syntax() -> None:
    """Loading the command line marks the module absent before Ray (and with it jsonschema) is imported."""
    out = _run("import sys, osrs_rllib.cli, ray, jsonschema; print(sys.modules.get('rfc3987_syntax', 'missing'))")
    assert out == "None"


def test_an_import_after_the_skip_fails_as_not_installed() -> None:
    code = ("from common.startup import skip_unused_slow_imports\n"
            "skip_unused_slow_imports()\n"
            "try:\n    import rfc3987_syntax\nexcept ImportError:\n    print('skipped')\n")  # fmt: skip
    assert _run(code) == "skipped"
