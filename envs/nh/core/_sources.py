"""The compiled core's source hash: which C sources and generated tables a build was made from.

`setup.py` loads this file by path (the package itself needs numpy and pydantic, which a build does not
have) and compiles the hash into both extensions (`NH_SOURCE_HASH`); each extension calls
`check_build` from its module init, so importing a core built from other sources than the checkout's
fails with the command that rebuilds it, instead of running yesterday's rules. Standard library only.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

SRC_DIR = Path(__file__).resolve().parent / "src"
"""The C sources and generated tables, beside this file in a checkout and in an editable install."""
SOURCE_SUFFIXES = (".c", ".h")
REINSTALL_COMMAND = "pip install -e ."
"""The README's install command (its `.[dev]` extras change nothing for the core)."""
REQUIRE_CORE_ENV = "OSRS_RLLIB_REQUIRE_CORE"
"""Set to 1 (CI does; `pytest --require-core` does) to make a missing compiled core an error, not a skip or
a silent fall back to the Python engine."""
TESTING_CORE_ENV = "OSRS_RLLIB_TESTING_CORE"
"""Set to 1 when installing to build the testing extension `_nhcore_testing` too (the differential tests'
drivers, about 0.8 MB): CI and the test suite set it; a user's install builds the production `_nhcore` only."""
TESTING_REINSTALL_COMMAND = f"{TESTING_CORE_ENV}=1 {REINSTALL_COMMAND}"
"""The install command that builds the testing extension as well."""


class StaleCoreError(ImportError):
    """The compiled core was built from other C sources than the checkout's: it would run other rules."""


def source_files(src_dir: Path = SRC_DIR) -> list[Path]:
    """Every file a build compiles or includes, in a fixed order (name order)."""
    return sorted(p for p in src_dir.iterdir() if p.suffix in SOURCE_SUFFIXES and p.is_file())


def source_hash(src_dir: Path = SRC_DIR) -> str:
    """SHA-256 over the names and bytes of `source_files` (a rename counts as a change)."""
    digest = hashlib.sha256()
    for path in source_files(src_dir):
        digest.update(path.name.encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _switch_on(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def build_testing_core() -> bool:
    """Whether this build compiles the testing extension too (`TESTING_CORE_ENV`)."""
    return _switch_on(TESTING_CORE_ENV)


def rebuild_command(module: str) -> str:
    """The command that rebuilds `module`: the testing extension is only built when asked for."""
    return TESTING_REINSTALL_COMMAND if module.endswith("_testing") else REINSTALL_COMMAND


def check_build(built_hash: str, module: str) -> None:
    """Raise `StaleCoreError` when the checkout's sources differ from those `module` was built from.

    An install without the sources beside the package (a wheel that left them out) has nothing to compare
    and passes: there the build and the package came together.
    """
    if not SRC_DIR.is_dir() or not source_files():
        return
    current = source_hash()
    if current != built_hash:
        raise StaleCoreError(
            f"the compiled simulator core {module} is stale: it was built from other C sources than "
            f"{SRC_DIR} holds now (built {built_hash[:12]}, sources {current[:12]}), so it would run other "
            f"rules than this checkout. Rebuild it: `{rebuild_command(module)}` in the repository root "
            "(or, faster, `python setup.py build_ext --inplace` with the same environment)."
        )


def require_core() -> bool:
    """Whether a missing compiled core must be an error here (`REQUIRE_CORE_ENV`)."""
    return _switch_on(REQUIRE_CORE_ENV)
