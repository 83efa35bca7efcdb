"""A fight played entirely through the server gives the same result as the same fight played in-process."""

from __future__ import annotations

import numpy as np
import pytest

from envs.nh.core_engine import AnyEngine
from envs.nh.engine import EngineStep
from envs.nh.params import FightParams
from osrs_rllib.batched_fights import Seat, play_fights
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
