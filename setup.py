"""Build of the compiled simulator core (docs/compiled-core.md); all metadata stays in pyproject.toml.

Two extensions from the same C sources: `envs.nh.core._nhcore`, the production binding (the batch API), and
`envs.nh.core._nhcore_testing`, the same binding compiled with NH_TESTING plus the differential tests'
drivers (`nhcore_testing.c`). The testing one is built only when asked, with OSRS_RLLIB_TESTING_CORE=1
(`envs/nh/core/_sources.py`; CI and the test suite set it): a user's install has no use for it. Both carry
the hash of the C sources and generated tables they were built from (`NH_SOURCE_HASH`,
`envs/nh/core/_sources.py`); importing one whose hash differs from the checkout's fails with the command that
rebuilds it.

The extensions are `optional`: when the C compiler is missing or fails, `pip install -e .` still succeeds and
the Python engine (the reference) works alone; the build says so in a warning (pip shows a build backend's
warnings), and `engine: auto` warns once at first use. CI (`.ci/run`) installs with OSRS_RLLIB_TESTING_CORE=1,
imports both after the install and sets OSRS_RLLIB_REQUIRE_CORE=1, so a core that did not build fails there
instead of skipping its tests.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CORE_DIR = "envs/nh/core/src"
CORE_SOURCES = [
    f"{CORE_DIR}/nhcore_module.c",
    f"{CORE_DIR}/nh_formulas.c",
    f"{CORE_DIR}/nh_hits.c",
    f"{CORE_DIR}/nh_items.c",
    f"{CORE_DIR}/nh_loadout.c",
    f"{CORE_DIR}/nh_state.c",
    f"{CORE_DIR}/nh_combat.c",
    f"{CORE_DIR}/nh_movement.c",
    f"{CORE_DIR}/nh_operations.c",
    f"{CORE_DIR}/nh_sim.c",
    f"{CORE_DIR}/nh_actions.c",
    f"{CORE_DIR}/nh_baseline.c",
    f"{CORE_DIR}/nh_masks.c",
    f"{CORE_DIR}/nh_observation.c",
    f"{CORE_DIR}/nh_rewards.c",
    f"{CORE_DIR}/nh_data.c",
]
TESTING_SOURCES = [*CORE_SOURCES, f"{CORE_DIR}/nhcore_testing.c"]
CORE_HEADERS = [
    f"{CORE_DIR}/nh_rng.h",
    f"{CORE_DIR}/nh_formulas.h",
    f"{CORE_DIR}/nh_rewards.h",
    f"{CORE_DIR}/nh_tables.h",
    f"{CORE_DIR}/nh_fields.h",
    f"{CORE_DIR}/nh_hits.h",
    f"{CORE_DIR}/nh_loadout.h",
    f"{CORE_DIR}/nh_state.h",
    f"{CORE_DIR}/nh_combat.h",
    f"{CORE_DIR}/nh_movement.h",
    f"{CORE_DIR}/nh_operations.h",
    f"{CORE_DIR}/nh_sim.h",
    f"{CORE_DIR}/nh_actions.h",
    f"{CORE_DIR}/nh_baseline.h",
    f"{CORE_DIR}/nh_masks.h",
    f"{CORE_DIR}/nh_observation.h",
    f"{CORE_DIR}/nh_data.h",
    f"{CORE_DIR}/nhcore_binding.h",
    f"{CORE_DIR}/nhcore_testing.h",
]


def _sources_module() -> ModuleType:
    """envs/nh/core/_sources.py loaded by path: the package needs numpy and pydantic, a build has neither."""
    path = Path(__file__).parent / "envs/nh/core/_sources.py"
    spec = importlib.util.spec_from_file_location("_nh_core_sources", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SOURCES = _sources_module()
HASH_MACRO = ("NH_SOURCE_HASH", f'"{SOURCES.source_hash(Path(__file__).parent / CORE_DIR)}"')


class CoreNotBuiltWarning(UserWarning):
    """An optional extension of the core did not build: the install goes on with the Python engine alone."""


class BuildCore(build_ext):
    """`build_ext` that says loudly when an optional extension did not build (setuptools only logs a line)."""

    def run(self) -> None:
        self.failed: list[str] = []
        super().run()
        if self.failed:
            # A Python warning, not a print: pip (25+) forwards a build backend's warnings to the user and hides its
            # printed output unless run with -v.
            warnings.warn(
                f"the compiled simulator core did not build ({', '.join(self.failed)}). The Python engine works alone "
                "(`engine: auto` falls back to it, about 30x slower, and says so once); `engine: core` and the core's "
                f"tests need it. Install a C compiler (gcc or clang) and run `{SOURCES.REINSTALL_COMMAND}` again "
                "(with -v for the compiler's output). See docs/compiled-core.md.",
                CoreNotBuiltWarning,
                stacklevel=1,
            )

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception:
            self.failed.append(ext.name)
            raise  # setuptools turns it into a warning for an optional extension


def _extension(name: str, sources: list[str], macros: list[tuple[str, str]]) -> Extension:
    return Extension(
        name,
        sources=sources,
        depends=[*CORE_HEADERS, *TESTING_SOURCES],  # every hashed file: a change to any rebuilds both (new hash)
        include_dirs=[CORE_DIR],
        define_macros=[HASH_MACRO, *macros],
        extra_compile_args=["-std=c11", "-Wall", "-Wextra"],
        optional=True,
    )


def extensions() -> list[Extension]:
    """The production extension, and the testing one when the environment asks for it (`TESTING_CORE_ENV`)."""
    found = [_extension("envs.nh.core._nhcore", CORE_SOURCES, [])]
    if SOURCES.build_testing_core():
        found.append(_extension("envs.nh.core._nhcore_testing", TESTING_SOURCES, [("NH_TESTING", "1")]))
    return found


if __name__ == "__main__":  # pip's build backend and `python setup.py` run it as the main script; a test loads it
    setup(cmdclass={"build_ext": BuildCore}, ext_modules=extensions())
