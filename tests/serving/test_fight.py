"""A fight played entirely through the server gives the same result as the same fight played in-process."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from envs.nh.core_engine import AnyEngine
from envs.nh.engine import EngineStep
from envs.nh.params import FightParams
from osrs_rllib.evaluation.batched import Seat, play_fights
from policies.model_file import load_model_file
from serving.client import ServeClient, play_fight
from tests.serving.conftest import Stack


def in_process(model_path: str, seed: int) -> tuple[str, int, int, int]:
    model = load_model_file(model_path)
    result: dict[str, tuple[str, int, int, int]] = {}

    def on_step(fight: int, engine: AnyEngine, step: EngineStep) -> None:
        if step.terminated or step.truncated:
            outcome = step.outcomes[0]
            info = engine.info(0)
            result["r"] = (outcome.value if outcome else "tied", engine.tick, info["hp"], info["opponent_hp"])

    seat = Seat(lambda obs, masks, seeds: model.act(obs, masks.astype(np.float32), deterministic=True),
                model.frame_stack)
    play_fights(FightParams(), [seed], seat, None, parallel=1, on_step=on_step)
    return result["r"]


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("model", "seed"), [("latest", 3), ("stacked", 8)])
def test_fight_through_the_server_equals_the_in_process_fight(stack: Stack, model: str, seed: int) -> None:
    with ServeClient(stack.host, stack.port, timeout_s=60) as client:
        served = play_fight(client, model, seed=seed)
    expected = in_process(str(stack.models_dir / f"{model}.nhmodel"), seed)
    assert (served.outcome, served.ticks, served.hp, served.opponent_hp) == expected
    assert served.requests == served.ticks > 1


@pytest.mark.timeout(600)
def test_a_served_mixture_plays_the_member_its_fight_seed_draws(stack: Stack, tmp_path: Path) -> None:
    """The client draws the member as `fight` does in-process, and the served member plays that member's fight."""
    import time

    from policies.mixture import save_mixture_file
    from policies.mixture_draw import fight_member
    from tests.serving.conftest import write_model

    members = [write_model(tmp_path / f"{i}.nhmodel", 60 + i) for i in range(2)]
    path = save_mixture_file([load_model_file(m) for m in members], stack.models_dir / "mix.nhmodel")
    try:
        with ServeClient(stack.host, stack.port, timeout_s=60) as client:
            deadline = time.monotonic() + 60
            while not any(m["name"] == "mix" for m in client.models()):
                assert time.monotonic() < deadline, "the mixture was never picked up"
                time.sleep(0.3)
            listed = {m["name"]: m for m in client.models()}
            assert listed["mix"]["kind"] == "mixture" and listed["mix"]["members"] == ["mix.m0", "mix.m1"]
            seeds = [next(s for s in range(40) if fight_member(s, 2) == i) for i in (0, 1)]  # one fight per member
            for seed in seeds:
                served = play_fight(client, "mix", seed=seed)
                expected = in_process(str(members[fight_member(seed, 2)]), seed)
                assert (served.outcome, served.ticks, served.hp, served.opponent_hp) == expected
    finally:
        path.unlink()
