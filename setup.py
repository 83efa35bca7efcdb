"""Build of the compiled simulator core (docs/compiled-core.md); all metadata stays in pyproject.toml.

The extension is `optional`: when the C compiler is missing or fails, `pip install -e .` still
succeeds and the Python engine (the reference) works alone. CI (`.ci/run`) imports the extension
after the install and fails when it did not build, so a broken core cannot go unnoticed there.
"""

from __future__ import annotations

from setuptools import Extension, setup

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
CORE_HEADERS = [
    f"{CORE_DIR}/nh_rng.h",
    f"{CORE_DIR}/nh_formulas.h",
    f"{CORE_DIR}/nh_rewards.h",
    f"{CORE_DIR}/nh_tables.h",
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
]

setup(
    ext_modules=[
        Extension(
            "envs.nh.core._nhcore",
            sources=CORE_SOURCES,
            depends=CORE_HEADERS,
            include_dirs=[CORE_DIR],
            extra_compile_args=["-std=c11", "-Wall", "-Wextra"],
            optional=True,
        )
    ]
)
