"""A SHA-256 fingerprint of whole seeded fights through `NHEngine`: behaviour must stay bit-identical.

Performance work on the simulator, the encoder, the masks, the signals and the ladder policies must
not change a single number. This test plays a fixed set of seeded fights (several matchups, builds,
fight modes and reset options) and hashes, every tick: the actions sent, both players' observations
(float32 bytes) and masks, rewards, signals, outcomes, termination and truncation flags, the `info`
dicts of both players (stable JSON), the §15.3 critic inputs where the opponent observation is on,
and at the end of every fight the generator's state. The digests live in
`tests/data/trajectory-fingerprint.json`; they were generated from the code before any optimisation.

**Do not regenerate the stored digests to make this test pass.** A different digest means that the
simulator's behaviour changed: find the tick that differs (``--dump`` below prints per-tick digests
of one scenario) and fix the change. Regenerate only for an intended change of behaviour (a spec
fix), and say so in the change's description.

How to regenerate (intended behaviour changes only)::

    .venv/bin/python tests/envs/test_trajectory_fingerprint.py --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envs.nh.contract import CRITIC_SIZE, HEAD_SIZES
from envs.nh.core_engine import core_available, make_engine
from envs.nh.loadouts import Build
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from envs.nh.rewards import CORE_REWARD_WEIGHTS, RewardWeights
from envs.nh.state import FightMode
from envs.opponents import make_opponent

DATA = Path(__file__).resolve().parents[1] / "data" / "trajectory-fingerprint.json"

ENGINE_NAMES = [
    "python",
    pytest.param("core", marks=pytest.mark.skipif(not core_available(), reason="the compiled core is not built")),
]

UNMASKED = "unmasked"
"""Seat driver that sends uniformly random head values, ignoring the masks (§5: nothing is enforced)."""


@dataclass(frozen=True)
class Case:
    name: str
    params: FightParams
    seats: tuple[str | None, str | None]
    """Ladder policy name (or `UNMASKED`) per seat; None where the simulator's baseline plays."""
    seeds: tuple[int, ...]
    observe_all: bool = True
    weights: RewardWeights = field(default_factory=RewardWeights)
    progress: float = 0.0


CASES: tuple[Case, ...] = (
    Case(
        "random_vs_random_pure",
        FightParams(opponent=OPPONENT_AGENT, max_episode_ticks=400),
        ("random", "random"),
        (11, 12, 13, 14),
    ),
    Case(
        "random_vs_random_randomized_training_critic",
        FightParams(
            opponent=OPPONENT_AGENT,
            randomize_build=True,
            random_build_options=tuple(Build),
            randomize_gear=True,
            randomize_fight_type=True,
            training=True,
            include_opponent_observation=True,
            agent="alice",
            target="bob",
            episode_id="fp",
            max_episode_ticks=300,
        ),
        ("random", "random"),
        (*range(21, 31), 113, 119),  # 113, 119: Vesta's longsword special (§6.9)
        weights=CORE_REWARD_WEIGHTS,
        progress=150.0,
    ),
    # seeds chosen so that the rare gear of §12.6 fights: Statius, Ancient godsword sacrifice, Dharok's
    Case(
        "random_vs_random_lms_med_special_weapons",
        FightParams(
            opponent=OPPONENT_AGENT,
            account_build=Build.LMS_MED,
            randomize_gear=True,
            randomize_fight_type=True,
            training=True,
            include_opponent_observation=True,
            max_episode_ticks=300,
        ),
        ("random", "random"),
        (304, 308, 313, 314, 333),
    ),
    # ... and the Dragon dagger (p++) poison (§6.10.5)
    Case(
        "random_vs_random_pure_poison",
        FightParams(
            opponent=OPPONENT_AGENT,
            randomize_gear=True,
            randomize_fight_type=True,
            training=True,
            max_episode_ticks=300,
        ),
        ("random", "random"),
        (302, 307, 309),
        weights=CORE_REWARD_WEIGHTS,
    ),
    Case(
        "tribrid_vs_baseline_zerker",
        FightParams(account_build=Build.ZERKER, max_episode_ticks=500),
        ("tribrid", None),
        (31, 32, 33),
        weights=CORE_REWARD_WEIGHTS,
        progress=400.0,
    ),
    Case(
        "tribrid_vs_baseline_randomized_not_observe_all",
        FightParams(
            randomize_gear=True,
            randomize_fight_type=True,
            training=True,
            account_build=Build.MED,
            max_episode_ticks=300,
        ),
        ("tribrid", None),
        (41, 42, 43, 44),
        observe_all=False,
    ),
    Case(
        "stay_alive_vs_prayer_switcher_med",
        FightParams(
            opponent=OPPONENT_AGENT,
            account_build=Build.MED,
            death_match=False,
            allow_moving_if_can_attack=True,
            only_switch_prayer_when_about_to_attack=False,
            max_episode_ticks=400,
        ),
        ("stay_alive", "prayer_switcher"),
        (51, 52, 53),
    ),
    Case(
        "prayer_switcher_vs_tribrid_maxed_arena",
        FightParams(
            opponent=OPPONENT_AGENT,
            account_build=Build.MAXED,
            fight_type=FightMode.PVP_ARENA,
            only_switch_gear_when_attack_soon=False,
            include_opponent_observation=True,
            max_episode_ticks=400,
        ),
        ("prayer_switcher", "tribrid"),
        (61, 62),
        weights=CORE_REWARD_WEIGHTS,
    ),
    Case(
        "unmasked_vs_tribrid_lms",
        FightParams(
            opponent=OPPONENT_AGENT,
            randomize_build=True,
            random_build_options=(Build.LMS_PURE, Build.LMS_ZERKER, Build.LMS_MED),
            randomize_gear=True,
            training=True,
            max_episode_ticks=300,
        ),
        (UNMASKED, "tribrid"),
        (71, 72, 73, 74, 75, 76),
    ),
    Case(
        "unmasked_vs_baseline_pure",
        FightParams(training=True, randomize_gear=True, max_episode_ticks=300),
        (UNMASKED, None),
        (81, 82, 83),
    ),
    Case(
        "baseline_vs_baseline",
        FightParams(opponent=OPPONENT_BASELINE, first_player_baseline=True, max_episode_ticks=150),
        (None, None),
        (91,),
    ),
)


def _unmasked(seed: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.array([rng.integers(0, n) for n in HEAD_SIZES], dtype=np.int64)

    return act


def _json(x: Any) -> bytes:
    return json.dumps(x, sort_keys=True, allow_nan=True).encode()


def _outcome(o: Any) -> str | None:
    return None if o is None else o.value


def run_case(case: Case, on_tick: Callable[[int, str], None] | None = None, engine_name: str = "python"
             ) -> tuple[str, int]:
    """Play the case's fights on one engine (`make_engine`); returns (hex digest, ticks played)."""
    h = hashlib.sha256()
    engine = make_engine(engine_name, case.params, reward_weights=case.weights, observe_all=case.observe_all)
    engine.progress = case.progress
    critic = np.zeros(CRITIC_SIZE, dtype=np.float32)
    ticks = 0
    for fight, seed in enumerate(case.seeds):
        engine.reset(seed=seed)
        drivers: list[Callable[[np.ndarray, np.ndarray], np.ndarray] | None] = []
        for seat, name in enumerate(case.seats):
            if name is None:
                drivers.append(None)
            elif name == UNMASKED:
                drivers.append(_unmasked(1000 * seed + seat))
            else:
                drivers.append(make_opponent(name, 1000 * seed + seat).act)
        h.update(engine.obs.tobytes())
        h.update(engine.masks.tobytes())
        h.update(_json([engine.info(0), engine.info(1)]))
        while True:
            tick_hash = hashlib.sha256()
            actions = [None if d is None else d(engine.obs[i], engine.masks[i]) for i, d in enumerate(drivers)]
            tick_hash.update(_json([None if a is None else [int(v) for v in a] for a in actions]))
            step = engine.step(actions)
            ticks += 1
            tick_hash.update(engine.obs.astype(np.float32).tobytes())
            tick_hash.update(engine.masks.astype(np.bool_).tobytes())
            tick_hash.update(
                _json(
                    {
                        "rewards": [float(r) for r in step.rewards],
                        "signals": step.signals,
                        "outcomes": [_outcome(o) for o in step.outcomes],
                        "terminated": step.terminated,
                        "truncated": step.truncated,
                        "info": [engine.info(0, step), engine.info(1, step)],
                    }
                )
            )
            if case.params.include_opponent_observation:
                for i in (0, 1):
                    tick_hash.update(engine.critic_obs(i, critic).tobytes())
            digest = tick_hash.hexdigest()
            if on_tick is not None:
                on_tick(fight, f"tick {engine.info(0)['tick']} {digest}")
            h.update(digest.encode())
            if step.terminated or step.truncated:
                break
        h.update(_json([engine.info(0)["tick"], engine.rng.bit_generator.state]))
    return h.hexdigest(), ticks


def _stored() -> dict[str, Any]:
    return json.loads(DATA.read_text(encoding="utf-8"))


@pytest.mark.parametrize("engine", ENGINE_NAMES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_trajectory_fingerprint_unchanged(case: Case, engine: str) -> None:
    """The same digests on the Python engine and on the compiled core (the engines are bit-identical)."""
    stored = _stored()["cases"][case.name]
    digest, ticks = run_case(case, engine_name=engine)
    assert ticks == stored["ticks"], f"{case.name}: {ticks} ticks played, {stored['ticks']} recorded"
    assert digest == stored["sha256"], (
        f"{case.name}: the trajectory changed (behaviour is no longer bit-identical). Do not regenerate "
        f"the digest; run `python {Path(__file__).name} --dump {case.name}` before and after to find the tick."
    )


def test_every_case_has_a_stored_digest() -> None:
    assert set(_stored()["cases"]) == {c.name for c in CASES}


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--write":
        cases = {}
        for case in CASES:
            digest, ticks = run_case(case)
            cases[case.name] = {"sha256": digest, "ticks": ticks}
            print(case.name, ticks, digest)
        DATA.write_text(json.dumps({"cases": cases}, indent=2) + "\n", encoding="utf-8")
        return 0
    if len(argv) == 2 and argv[0] == "--dump":
        case = next(c for c in CASES if c.name == argv[1])
        run_case(case, lambda fight, line: print(fight, line))
        return 0
    print("usage: test_trajectory_fingerprint.py --write | --dump CASE_NAME", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
