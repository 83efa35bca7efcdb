"""Every command module is registered in one place, and what the quick commands load: `--help`, `version`,
`jobs`, `serve status` and a fight of scripted sides import no Ray, no torch and not the play web server.

A structural check, not a timing one (benchmarks/cli_startup.py times the commands): each command runs in a
fresh interpreter, which then lists the modules it holds. A module-level import of the library in a command
module, or a heavy import in a package's ``__init__``, shows here by name.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

HEAVY = ("ray", "torch", "fastapi", "uvicorn", "tensorboard")
"""Packages no quick command may load (the trainer's, the model's and the web servers')."""
PLAY_ALLOWED = {"osrs_rllib.play", "osrs_rllib.play.limits"}
"""The play package loads its submodules on first use; only the command's defaults may be loaded to list it."""

PROBE = """
import json, sys
from osrs_rllib.cli import app
try:
    app(sys.argv[1:], prog_name="osrs-rllib")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _loaded(*args: str) -> tuple[int, set[str]]:
    """Run ``osrs-rllib ARGS`` in a fresh interpreter; its exit code and every module it had loaded."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def _heavy(modules: set[str]) -> list[str]:
    return sorted(
        m for m in modules
        if m.split(".")[0] in HEAVY or (m.startswith("osrs_rllib.play") and m not in PLAY_ALLOWED)
    )  # fmt: skip


def test_importing_the_command_line_loads_no_heavy_module() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import json, sys, osrs_rllib.cli; print(json.dumps(sorted(sys.modules)))"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert _heavy(set(json.loads(proc.stdout))) == []


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["version"],
        ["fight", "--help"],
        ["serve", "--help"],
        ["play", "--help"],
        ["train", "--help"],
        ["jobs", "--json", "--experiments-dir", "{tmp}"],
        ["serve", "status", "--json", "--state-dir", "{tmp}"],
        ["fight", "noop", "random", "--n", "2", "--json", "--engine", "python"],
    ],
    ids=lambda args: " ".join(a for a in args if a != "{tmp}"),
)
def test_quick_commands_load_no_heavy_module(args: list[str], tmp_path: Path) -> None:
    code, modules = _loaded(*(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert code in (0, None)
    assert _heavy(modules) == []


def test_every_command_module_is_registered_in_one_place() -> None:
    """A command module left out of `osrs_rllib.cli.COMMAND_GROUPS` would never reach the command line."""
    from osrs_rllib import cli

    modules = {p.stem for p in (REPO / "osrs_rllib" / "commands").glob("*.py")} - {"__init__", "options"}
    registered = {group.__name__.rsplit(".", 1)[-1] for group in cli.COMMAND_GROUPS}
    assert modules <= registered, sorted(modules - registered)
    assert all(callable(getattr(group, "register", None)) for group in cli.COMMAND_GROUPS)

