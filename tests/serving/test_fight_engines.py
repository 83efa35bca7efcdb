"""`serving.client.play_fight` on both engines: the same fight through the real server whether
the client steps the compiled core or the Python engine, and its ``engine`` option picks the engine that plays."""

from __future__ import annotations

from typing import Any

import pytest

import envs.nh.core_engine as core_engine
from envs.nh.core_engine import CoreEngine, core_available
from envs.nh.engine import NHEngine
from serving.client import ServeClient, play_fight
from tests.serving.conftest import Stack


@pytest.mark.timeout(600)
@pytest.mark.skipif(not core_available(), reason="the compiled core is not built here")
def test_served_fight_is_the_same_on_both_engines(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[type] = []
    real = core_engine.make_engine

    def noting(*args: Any, **kwargs: Any) -> Any:  # the real factory; notes what it made
        engine = real(*args, **kwargs)
        made.append(type(engine))
        return engine

    monkeypatch.setattr(core_engine, "make_engine", noting)
    results = {}
    with ServeClient(stack.host, stack.port, timeout_s=60) as client:
        for engine in ("core", "python", "auto"):
            r = play_fight(client, "latest", seed=5, options={"max_episode_ticks": 150}, engine=engine)
            results[engine] = (r.outcome, r.ticks, r.hp, r.opponent_hp, r.requests)
    assert made == [CoreEngine, NHEngine, CoreEngine]
    assert results["core"] == results["python"] == results["auto"]
    assert results["core"][1] > 1
