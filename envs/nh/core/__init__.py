"""The compiled NH simulator core (C), ported step by step from the Python engine (issue 15).

The Python engine in `envs/nh/` is the reference: the readable statement of the rules. The C core in
`envs/nh/core/src/` reproduces it bit for bit, one step at a time, each step checked by a
differential test (`tests/envs/test_core_*.py`) before the next begins. `docs/compiled-core.md` holds
the design and the status table of what is ported.

The extension `envs.nh.core._nhcore` is built by `pip install -e .` (`setup.py`, optional: a failed
compile leaves the Python engine working). No user path (the envs, training, evaluation, serving) uses
the core yet: it is switched on only once the whole tick, observations, masks and rewards match;
`benchmarks/sim_throughput.py --core` times what is ported.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from envs.nh.loadouts import Build, choose_build
from envs.nh.params import OPPONENT_AGENT, FightParams
from envs.nh.state import FightMode

BUILD_HINT = "build it with `pip install -e .` (needs a C compiler: gcc or clang)"


def load_core() -> ModuleType:
    """The compiled extension module.

    Raises:
        ImportError: the core is not built here; the message says how to build it.
    """
    try:
        from envs.nh.core import _nhcore
    except ImportError as exc:
        raise ImportError(f"the compiled simulator core envs.nh.core._nhcore is not built: {BUILD_HINT}") from exc
    return _nhcore


def reset_params(params: FightParams) -> dict[str, Any]:
    """The `nh_reset_params` dict the core's resets take (`FightBatch.reset`), from a FightParams.

    Enums become their position (`list(Build)`, `list(FightMode)`). The identifier rule of spec §12.7
    depends only on the parameters, so it is resolved here into a fixed build, as the Python engine
    would choose it; the core then draws the build only when no identifier is given.
    """
    builds = list(Build)
    by_identifiers = params.randomize_build and bool(params.agent or params.target)
    build = (
        choose_build(params.random_build_options, params.agent, params.target)
        if by_identifiers
        else params.account_build
    )
    weights = params.random_build_weights
    return {
        "build": builds.index(build),
        "randomize_build": int(params.randomize_build and not by_identifiers),
        "build_options": [builds.index(b) for b in params.random_build_options],
        "build_weights": list(weights) if weights is not None else None,
        "randomize_fight_type": int(params.randomize_fight_type),
        "fight_type": list(FightMode).index(params.fight_type) if params.fight_type is not None else -1,
        "randomize_gear": int(params.randomize_gear),
        "self_play": int(params.opponent == OPPONENT_AGENT),
        "first_player_baseline": int(params.first_player_baseline),
        "training": int(params.training),
        "death_match": int(params.death_match),
        "max_episode_ticks": params.max_episode_ticks,
        "only_switch_prayer_when_about_to_attack": int(params.only_switch_prayer_when_about_to_attack),
        "only_switch_gear_when_attack_soon": int(params.only_switch_gear_when_attack_soon),
        "allow_smite": int(params.allow_smite),
        "allow_redemption": int(params.allow_redemption),
        "allow_moving_if_can_attack": int(params.allow_moving_if_can_attack),
    }


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
