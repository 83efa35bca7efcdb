"""The compiled NH simulator core (C), a bit-identical port of the Python engine (issues 15 and 26).

The Python engine in `envs/nh/` is the reference: the readable statement of the rules. The C core in
`envs/nh/core/src/` reproduces it bit for bit, checked by the differential tests (`tests/envs/test_core_*.py`);
`docs/compiled-core.md` holds the design.

`pip install -e .` builds the production extension (`setup.py`, optional: a failed compile leaves the Python
engine working): `_nhcore`, the binding that the engines use (`load_core`). With `OSRS_RLLIB_TESTING_CORE=1`
(CI and the test suite set it) it also builds `_nhcore_testing` from the same sources, the same binding plus the
differential tests' drivers (`load_testing_core`). Each refuses to load
when the checkout's C sources are not those it was built from (`StaleCoreError`, with the command that
rebuilds it), so a pull that changes the rules cannot keep running the old ones.

The fields the core mirrors (reset parameters, player state, events, signals, reward weights) are listed
once, in `mirrors.py`; `gen_tables.py` generates the binding's tables from it and fails on a Python field
without a mirror.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from envs.nh.core import mirrors
from envs.nh.core._sources import (
    REINSTALL_COMMAND,
    REQUIRE_CORE_ENV,
    TESTING_CORE_ENV,
    StaleCoreError,
    rebuild_command,
    require_core,
)
from envs.nh.loadouts import Build, choose_build
from envs.nh.params import OPPONENT_AGENT, FightParams
from envs.nh.state import FightMode

__all__ = [
    "BUILD_HINT",
    "REQUIRE_CORE_ENV",
    "TESTING_CORE_ENV",
    "StaleCoreError",
    "load_core",
    "load_testing_core",
    "require_core",
    "reset_params",
    "reward_weights_mapping",
]

BUILD_HINT = f"build it with `{REINSTALL_COMMAND}` (needs a C compiler: gcc or clang)"
"""How to build the production extension, for the messages of a missing core."""


def _load(name: str) -> ModuleType:
    try:
        module = importlib.import_module(f"envs.nh.core.{name}")
    except StaleCoreError:
        raise  # built, but from other sources: the message says how to rebuild
    except ImportError as exc:
        how = BUILD_HINT if name == "_nhcore" else (
            f"the testing build is made only when asked: build it with `{rebuild_command(name)}` (needs a C "
            "compiler: gcc or clang)"
        )  # fmt: skip
        raise ImportError(f"the compiled simulator core envs.nh.core.{name} is not built: {how}") from exc
    return module


def load_core() -> ModuleType:
    """The compiled extension module (`envs.nh.core._nhcore`: the batch API).

    Raises:
        StaleCoreError: it was built from other C sources than the checkout's; the message says how to rebuild.
        ImportError: the core is not built here; the message says how to build it.
    """
    return _load("_nhcore")


def load_testing_core() -> ModuleType:
    """The testing build of the extension (`envs.nh.core._nhcore_testing`): the batch API plus the differential
    tests' drivers (`Rng`, `make_loadout`, the formulas, `FightBatch.set_player`, `.step`, ...).

    Raises:
        StaleCoreError, ImportError: as `load_core`.
    """
    return _load("_nhcore_testing")


def reset_params(params: FightParams) -> dict[str, Any]:
    """The `nh_reset_params` dict the core's resets take (`FightBatch.reset`), from a FightParams.

    Every field `mirrors.RESET_PARAMS` marks `COPIED` goes over as an int under its own name; the others are
    derived here: enums become their position (`list(Build)`, `list(FightMode)`), the identifier rule of spec
    §12.7 (which depends only on the parameters) is resolved into a fixed build as the Python engine would
    choose it, so the core draws the build only when no identifier is given, and the opponent becomes
    `self_play`. The keys are `mirrors.RESET_INTS` and `mirrors.RESET_LISTS`, as the generated C table reads them.
    """
    builds = list(Build)
    by_identifiers = params.randomize_build and bool(params.agent or params.target)
    build = (
        choose_build(params.random_build_options, params.agent, params.target)
        if by_identifiers
        else params.account_build
    )
    weights = params.random_build_weights
    out: dict[str, Any] = {name: int(getattr(params, name)) for name in _COPIED}
    out.update(
        build=builds.index(build),
        randomize_build=int(params.randomize_build and not by_identifiers),
        build_options=[builds.index(b) for b in params.random_build_options],
        build_weights=list(weights) if weights is not None else None,
        fight_type=list(FightMode).index(params.fight_type) if params.fight_type is not None else -1,
        self_play=int(params.opponent == OPPONENT_AGENT),
    )
    return out


_COPIED = tuple(name for name, how in mirrors.RESET_PARAMS.items() if how == mirrors.COPIED)


def reward_weights_mapping(weights: Any) -> dict[str, Any]:
    """Every field of a `RewardWeights` by name, as `FightBatch.set_reward_weights` takes it (spec §17.3).

    The core holds no default weight: it gets every field from the Python value, whichever pydantic form
    `RewardWeights` has (a pydantic dataclass or a `BaseModel`).
    """
    dump = getattr(weights, "model_dump", None)
    if callable(dump):
        return dict(dump())
    from dataclasses import fields

    return {f.name: getattr(weights, f.name) for f in fields(weights)}
