"""The play page's controls as the 12 action heads: a person can send only what the agent could (spec §14.2, §14.3).

Real fights on the engine: at every tick of many games with random choices, every control the rule calls legal is
taken, every other one is refused, and the action the choices make is one the contract's own sampler can make
(`apply_dependencies_and_force` reproduces it), so a page can never send what a policy could not.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.nh.contract import (
    HEAD_OFFSETS,
    HEADS,
    NUM_HEADS,
    AttackHead,
    Head,
    MageType,
    PrayerHead,
    apply_dependencies_and_force,
)
from envs.nh.core_engine import make_engine
from osrs_rllib.play.controls import CONTROL_LIST, CONTROLS, Choices, InputError, enabled_controls
from osrs_rllib.play.opponents import Opponent
from osrs_rllib.replay.engine_views import players as engine_players
from osrs_rllib.replay.recorder import FightRecorder
from osrs_rllib.replay.state import player_state


def _legal_by_sampler(action: np.ndarray, mask: np.ndarray) -> bool:
    """Whether the contract's sampler, choosing `action`'s value wherever it has a choice, makes `action`."""

    def same(head: Head, legal: np.ndarray) -> int:
        return int(action[head]) if legal[action[head]] else int(np.flatnonzero(legal)[0])

    return bool(np.array_equal(apply_dependencies_and_force(mask, same), action))


def _me(engine: object) -> dict:
    return player_state(engine_players(engine)[0])  # type: ignore[arg-type]


@pytest.mark.parametrize("build", ["PURE", "MED", "LMS_ZERKER", "MAXED"])
def test_random_choices_always_make_a_legal_action(build: str) -> None:
    params = Opponent("x", "ladder", "random").params(build, None, {"max_episode_ticks": 120})
    rng = np.random.default_rng(7)
    engine = make_engine("auto", params)
    choices = Choices()
    for game in range(3):
        engine.reset(seed=100 + game, params=params)
        while True:
            mask = engine.masks[0].copy()
            enabled = set(enabled_controls(mask))
            for cid in rng.choice([c.id for c in CONTROL_LIST], size=4, replace=False):
                if cid in enabled:
                    choices.choose(cid, mask)
                else:
                    with pytest.raises(InputError) as err:
                        choices.choose(cid, mask)
                    assert err.value.code == "illegal"
            action = choices.action(mask, _me(engine))
            assert action.shape == (NUM_HEADS,)
            assert _legal_by_sampler(action, mask), (action, mask)
            choices.set_raw(action, mask)  # what the page makes, the raw path accepts
            choices.clear()
            step = engine.step([action, [0] * NUM_HEADS])
            choices.after_tick(action)
            if step.terminated or step.truncated:
                break


def test_a_control_is_legal_exactly_when_its_pairs_are() -> None:
    mask = np.ones(45, dtype=bool)
    assert set(enabled_controls(mask)) == set(CONTROLS)
    mask[HEAD_OFFSETS[Head.PRAYER] + PrayerHead.SMITE] = False
    mask[HEAD_OFFSETS[Head.MAGE_ATTACK_TYPE] + MageType.ICE] = False
    off = set(CONTROLS) - set(enabled_controls(mask))
    assert off == {"smite", "ice", "freeze"}  # the freeze shortcut stands for the ice spell alone
    with pytest.raises(InputError, match="Smite is not legal now"):
        Choices().choose("smite", mask)


def test_prayer_stays_chosen_and_one_offs_are_used_once() -> None:
    params = Opponent("x", "ladder", "random").params("MED", None)
    engine = make_engine("auto", params)
    engine.reset(seed=3, params=params)
    choices = Choices()
    mask = engine.masks[0].copy()
    choices.choose("protect_missiles", mask)
    choices.choose("ranged", mask)
    action = choices.action(mask, _me(engine))
    assert action[Head.PRAYER] == PrayerHead.PROTECT_MISSILES and action[Head.ATTACK] == AttackHead.RANGED
    engine.step([action, [0] * NUM_HEADS])
    choices.after_tick(action)
    assert choices.pending() == ["protect_missiles"]  # the attack was used; the prayer stays
    nxt = choices.action(engine.masks[0], _me(engine))
    assert nxt[Head.PRAYER] == PrayerHead.PROTECT_MISSILES


def test_an_attack_is_required_when_ready_and_follows_the_weapon() -> None:
    """§14.3: "no attack" is legal only during the cooldown; without a choice the person keeps attacking in the
    style of the weapon held (magic at the start of a MED fight: the last spell, ice)."""
    params = Opponent("x", "ladder", "random").params("MED", None)
    engine = make_engine("auto", params)
    engine.reset(seed=3, params=params)
    mask = engine.masks[0]
    assert not mask[HEAD_OFFSETS[Head.ATTACK] + AttackHead.NONE]
    me = _me(engine)
    assert me["weapon_style"] == "magic"
    action = Choices().action(mask, me)
    assert (action[Head.ATTACK], action[Head.MAGE_ATTACK_TYPE]) == (AttackHead.MAGIC, MageType.ICE)
    assert action[Head.PRAYER] != PrayerHead.NO_CHANGE  # a prayer is legal, so one is taken (§14.3)


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ([0] * 11, "bad_action"),  # wrong length
        ([0] * 13, "bad_action"),
        ([9] + [0] * 11, "bad_action"),  # out of its head's range
        (["x"] * 12, "bad_action"),
        ("nonsense", "bad_action"),
        ([2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2], "illegal"),  # ranged without its sub-head (§14.2)
        ([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2], "illegal"),  # no attack while the attack is ready (§14.3)
    ],
)
def test_a_raw_action_is_checked(action: object, code: str) -> None:
    params = Opponent("x", "ladder", "random").params("MED", None)
    engine = make_engine("auto", params)
    engine.reset(seed=3, params=params)
    with pytest.raises(InputError) as err:
        Choices().set_raw(action, engine.masks[0])
    assert err.value.code == code, str(err.value)


def test_unknown_controls_are_refused_with_the_valid_ids() -> None:
    for bad in ("teleport", 3, None, ["eat"]):
        with pytest.raises(InputError, match="unknown control") as err:
            Choices().choose(bad, np.ones(45, dtype=bool))
        assert err.value.code == "unknown_control"
    assert all(c.pairs or c.any_of for c in CONTROL_LIST)
    assert {h for c in CONTROL_LIST for h, _ in c.pairs} == set(range(NUM_HEADS)) - {int(Head.GEAR)}  # tank: forced
    keys = [c.key for c in CONTROL_LIST if c.key]
    assert len(keys) == len(set(keys)), "two controls share a default key"
    assert all(0 <= v < HEADS[h].size for c in CONTROL_LIST for h, v in c.pairs)


def test_the_recorder_accepts_the_human_seat() -> None:
    """A replay of a played game names seat 0 ``human`` and records its actions like any acting seat."""
    params = Opponent("x", "ladder", "random").params("PURE", None, {"max_episode_ticks": 5})
    engine = make_engine("auto", params)
    engine.reset(seed=1, params=params)
    seats = [{"side": "a", "name": "you", "kind": "human", "source": "page"},
             {"side": "b", "name": "r", "kind": "ladder", "source": "random"}]  # fmt: skip
    rec = FightRecorder(engine, 1, seats, (True, True))
    action = Choices().action(engine.masks[0], _me(engine))
    engine.step([action, [0] * NUM_HEADS])
    rec.step(engine, [action, [0] * NUM_HEADS])
    assert rec.ticks[-1]["actions"][0] == [int(v) for v in action]
