"""Scripted ladder opponents: always legal (§14.2, §14.3), and the behaviour each one promises."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from envs.nh.contract import (
    HEAD_OFFSETS,
    HEAD_SIZES,
    NUM_HEADS,
    NUM_LOGITS,
    OBS_SIZE,
    AttackHead,
    FoodHead,
    GearHead,
    Head,
    KarambwanHead,
    MageType,
    MeleeType,
    MovementHead,
    Obs,
    PotionHead,
    PrayerHead,
    RangedType,
    VengHead,
    dependency_allows,
    logit_index,
)
from envs.opponents import (
    LADDER,
    NoOp,
    PrayerSwitcher,
    RandomLegal,
    ScriptedPolicy,
    StayAlive,
    Tribrid,
    make_opponent,
)
from envs.opponents.registry import MEASURED_ORDER


def assert_legal(actions: np.ndarray, mask: np.ndarray) -> None:
    """Every head holds a value legal under the env mask and §14.2, or 0 where nothing is legal."""
    assert actions.shape == (NUM_HEADS,)
    assert actions.dtype == np.int64
    for head in range(NUM_HEADS):
        legal = [
            v
            for v in range(HEAD_SIZES[head])
            if mask[HEAD_OFFSETS[head] + v] and dependency_allows(head, v, actions.tolist())
        ]
        if legal:
            assert actions[head] in legal, (Head(head).name, int(actions[head]), legal)
        else:
            assert actions[head] == 0, (Head(head).name, int(actions[head]))


_values = st.one_of(
    st.sampled_from([0.0, 1.0, -1.0, 0.5, 0.2, 3.0, 100.0]),
    st.floats(width=32, allow_nan=True, allow_infinity=True),
)
observations = arrays(np.float32, OBS_SIZE, elements=_values)
masks = arrays(np.bool_, NUM_LOGITS)


def env_like_masks() -> st.SearchStrategy[np.ndarray]:
    """Masks shaped like §14.3's: value 0 of heads 1–10 always legal, prayer 0 never."""

    def fix(m: np.ndarray) -> np.ndarray:
        m = m.copy()
        for head in range(1, 11):
            m[HEAD_OFFSETS[head]] = True
        m[logit_index(Head.PRAYER, PrayerHead.NO_CHANGE)] = False
        return m

    return masks.map(fix)


@pytest.mark.parametrize("name", list(LADDER))
@settings(max_examples=300, deadline=None)
@given(obs=observations, mask=st.one_of(masks, env_like_masks()), seed=st.integers(0, 2**32 - 1))
def test_ladder_never_acts_illegally(name: str, obs: np.ndarray, mask: np.ndarray, seed: int) -> None:
    policy = make_opponent(name, seed=seed)
    obs_before, mask_before = obs.copy(), mask.copy()
    rng = np.random.default_rng(seed)
    for _ in range(3):
        # a prescient rung is shown some opponent action of the tick; the others must not be shown one
        seen = {"opponent_action": rng.integers(0, HEAD_SIZES)} if policy.needs_opponent_action else {}
        assert_legal(policy.act(obs, mask, **seen), mask)
    np.testing.assert_array_equal(obs, obs_before, strict=True)  # inputs are not modified
    np.testing.assert_array_equal(mask, mask_before, strict=True)


def test_ladder_order_and_registry() -> None:
    assert list(LADDER) == list(MEASURED_ORDER)  # the measured order, docs/strength.md
    assert {"noop", "random", "stay_alive", "prayer_switcher", "tribrid"} <= set(LADDER)
    for name in LADDER:
        policy = make_opponent(name)
        assert isinstance(policy, ScriptedPolicy)
        assert policy.name == name


def test_unknown_opponent_lists_the_valid_names() -> None:
    with pytest.raises(ValueError, match=", ".join(MEASURED_ORDER)):
        make_opponent("baseline")


def test_act_rejects_wrong_shapes() -> None:
    for name in LADDER:
        policy = make_opponent(name, seed=0)
        if policy.needs_opponent_action:
            policy = _Shown(policy)
        with pytest.raises(ValueError, match="observation"):
            policy.act(np.zeros(OBS_SIZE - 1, dtype=np.float32), np.ones(NUM_LOGITS, dtype=bool))
        with pytest.raises(ValueError, match="mask"):
            policy.act(np.zeros(OBS_SIZE, dtype=np.float32), np.ones(NUM_LOGITS + 1, dtype=bool))


class _Shown:
    """A prescient rung shown a passive opponent action every tick (what its host would pass)."""

    def __init__(self, policy: ScriptedPolicy) -> None:
        self.policy = policy

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.policy.act(obs, mask, opponent_action=np.zeros(NUM_HEADS, dtype=np.int64))


# ------------------------------------------------------------------------------------ hand-built situations


def make_obs(**entries: float) -> np.ndarray:
    """A plausible observation: full HP and prayer, unboosted levels, nobody frozen; then `entries`."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    defaults = {
        "PLAYER_HEALTH_PERCENT": 1.0,
        "TARGET_HEALTH_PERCENT": 1.0,
        "PRAYER_POINTS": 1.0,
        "STRENGTH_LEVEL": 1.0,
        "ATTACK_LEVEL": 1.0,
        "DEFENSE_LEVEL": 1.0,
        "RANGED_LEVEL": 1.0,
        "MAGIC_LEVEL": 1.0,
        "SPECIAL_ENERGY_PERCENT": 100.0,
        "TARGET_USING_MELEE": 1.0,
        "TICKS_UNTIL_HIT_ON_TARGET": -1.0,
        "TICKS_UNTIL_HIT_ON_PLAYER": -1.0,
    }
    for name, value in {**defaults, **entries}.items():
        obs[Obs[name]] = value
    return obs


def make_mask(attack_ready: bool = True, **legal: list[int]) -> np.ndarray:
    """An env-like mask: value 0 of heads 1–10 legal, all three protection prayers legal, every style
    and normal attack legal (no attack only on cooldown, §14.3 head 0); then the heads named in `legal`
    replaced by exactly those values."""
    m = np.zeros(NUM_LOGITS, dtype=bool)
    base: dict[str, list[int]] = {
        "ATTACK": [1, 2, 3] if attack_ready else [0, 1, 2, 3],
        "MELEE_ATTACK_TYPE": [0, 1],
        "RANGED_ATTACK_TYPE": [0, 1],
        "MAGE_ATTACK_TYPE": [0, 1, 2],
        "POTION": [0],
        "FOOD": [0],
        "KARAMBWAN": [0],
        "VENG": [0],
        "GEAR": [0],
        "MOVEMENT": [0],
        "FARCAST_DISTANCE": [0],
        "PRAYER": [1, 2, 3],
    }
    for name, values in {**base, **legal}.items():
        for v in values:
            m[logit_index(Head[name], v)] = True
    return m


def test_noop_is_passive_on_cooldown_and_forced_into_tank_gear() -> None:
    mask = make_mask(attack_ready=False, GEAR=[0, 1], FOOD=[0, 1], POTION=[0, 1, 2])
    actions = NoOp().act(make_obs(PLAYER_HEALTH_PERCENT=0.2), mask)
    assert actions[Head.ATTACK] == AttackHead.NONE
    assert actions[Head.GEAR] == GearHead.TANK  # forced (§14.2), not chosen
    assert actions[Head.FOOD] == FoodHead.NONE and actions[Head.POTION] == PotionHead.NONE
    assert actions[Head.MOVEMENT] == MovementHead.STAY
    assert actions[Head.PRAYER] == PrayerHead.PROTECT_MAGIC  # lowest legal: "no change" is never legal


def test_random_legal_is_seeded_and_covers_the_legal_values() -> None:
    obs, mask = make_obs(), np.ones(NUM_LOGITS, dtype=bool)
    a, b = RandomLegal(seed=7), make_opponent("random", seed=7)
    seq_a = [a.act(obs, mask).tolist() for _ in range(50)]
    seq_b = [b.act(obs, mask).tolist() for _ in range(50)]
    assert seq_a == seq_b
    a.reset(7)
    assert [a.act(obs, mask).tolist() for _ in range(50)] == seq_a
    a.reset(8)
    assert [a.act(obs, mask).tolist() for _ in range(50)] != seq_a
    seen_prayers = {row[Head.PRAYER] for row in seq_a}
    assert seen_prayers == set(range(HEAD_SIZES[Head.PRAYER]))
    assert {row[Head.ATTACK] for row in seq_a} == {0, 1, 2, 3}


def test_stay_alive_eats_brews_and_combo_eats_when_low() -> None:
    mask = make_mask(FOOD=[0, 1], KARAMBWAN=[0, 1], POTION=[0, 1, 2])
    actions = StayAlive().act(make_obs(PLAYER_HEALTH_PERCENT=0.3), mask)
    assert actions[Head.FOOD] == FoodHead.EAT
    assert actions[Head.KARAMBWAN] == KarambwanHead.EAT
    assert actions[Head.POTION] == PotionHead.BREW


def test_stay_alive_attacks_in_its_style_when_healthy_and_keeps_its_prayer() -> None:
    mask = make_mask(FOOD=[0, 1], KARAMBWAN=[0, 1], POTION=[0, 1, 2])
    obs = make_obs(PLAYER_HEALTH_PERCENT=0.95, PLAYER_RANGED_PRAYER=1.0)
    actions = StayAlive().act(obs, mask)
    assert actions[Head.ATTACK] == AttackHead.RANGED
    assert actions[Head.RANGED_ATTACK_TYPE] == RangedType.NORMAL
    assert actions[Head.FOOD] == FoodHead.NONE and actions[Head.POTION] == PotionHead.NONE
    assert actions[Head.PRAYER] == PrayerHead.PROTECT_MISSILES  # re-selects the active protection
    melee = StayAlive(style=AttackHead.MELEE, prayer=PrayerHead.PROTECT_MAGIC).act(make_obs(), mask)
    assert melee[Head.ATTACK] == AttackHead.MELEE and melee[Head.MELEE_ATTACK_TYPE] == MeleeType.NORMAL
    assert melee[Head.PRAYER] == PrayerHead.PROTECT_MAGIC


def test_stay_alive_restores_prayer() -> None:
    actions = StayAlive().act(make_obs(PRAYER_POINTS=0.1), make_mask(POTION=[0, 2]))
    assert actions[Head.POTION] == PotionHead.RESTORE


def test_stay_alive_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="style"):
        StayAlive(style=AttackHead.NONE)
    with pytest.raises(ValueError, match="protection prayer"):
        StayAlive(prayer=PrayerHead.SMITE)


@pytest.mark.parametrize(
    ("style_entry", "prayer"),
    [
        ("TARGET_USING_MELEE", PrayerHead.PROTECT_MELEE),
        ("TARGET_USING_RANGED", PrayerHead.PROTECT_MISSILES),
        ("TARGET_USING_MAGE", PrayerHead.PROTECT_MAGIC),
    ],
)
def test_prayer_switcher_prays_against_the_visible_weapon(style_entry: str, prayer: PrayerHead) -> None:
    obs = make_obs(**{"TARGET_USING_MELEE": 0.0, "PLAYER_MAGIC_PRAYER": 1.0, style_entry: 1.0})
    actions = PrayerSwitcher().act(obs, make_mask())
    assert actions[Head.PRAYER] == prayer
    assert actions[Head.ATTACK] == AttackHead.RANGED


def test_prayer_switcher_keeps_its_protection_when_the_right_one_is_masked() -> None:
    obs = make_obs(TARGET_USING_MELEE=1.0, PLAYER_RANGED_PRAYER=1.0)
    actions = PrayerSwitcher().act(obs, make_mask(PRAYER=[1, 2]))  # protect melee masked (§14.3)
    assert actions[Head.PRAYER] == PrayerHead.PROTECT_MISSILES


def test_tribrid_attacks_off_the_opponents_prayer() -> None:
    obs = make_obs(TARGET_RANGED_PRAYER=1.0, TARGET_FROZEN_TICKS=10.0)
    actions = Tribrid().act(obs, make_mask())
    assert actions[Head.ATTACK] == AttackHead.MAGIC  # ranged protected, melee out of distance
    obs = make_obs(TARGET_RANGED_PRAYER=1.0, TARGET_FROZEN_TICKS=10.0, PLAYER_LOCATION_CAN_MELEE=1.0)
    actions = Tribrid().act(obs, make_mask())
    assert actions[Head.ATTACK] == AttackHead.MELEE
    assert actions[Head.MELEE_ATTACK_TYPE] == MeleeType.NORMAL
    obs = make_obs(TARGET_MAGIC_PRAYER=1.0, TARGET_FROZEN_TICKS=10.0)
    assert Tribrid().act(obs, make_mask())[Head.ATTACK] == AttackHead.RANGED


def test_tribrid_freezes_an_unfrozen_target_it_can_hit_with_magic() -> None:
    obs = make_obs(TARGET_MELEE_PRAYER=1.0)
    actions = Tribrid().act(obs, make_mask())
    assert actions[Head.ATTACK] == AttackHead.MAGIC
    assert actions[Head.MAGE_ATTACK_TYPE] == MageType.ICE
    immune = make_obs(TARGET_MELEE_PRAYER=1.0, TARGET_FROZEN_IMMUNITY_TICKS=3.0)
    assert Tribrid().act(immune, make_mask())[Head.ATTACK] == AttackHead.RANGED
    protected = make_obs(TARGET_MAGIC_PRAYER=1.0)
    assert Tribrid().act(protected, make_mask())[Head.ATTACK] == AttackHead.RANGED


def test_tribrid_specs_a_low_target_with_an_unprotected_style() -> None:
    obs = make_obs(TARGET_HEALTH_PERCENT=0.3, TARGET_FROZEN_TICKS=10.0, TARGET_RANGED_PRAYER=1.0)
    mask = make_mask(MELEE_ATTACK_TYPE=[0, 1, 2], RANGED_ATTACK_TYPE=[0, 1, 2])
    actions = Tribrid().act(obs, mask)
    assert actions[Head.ATTACK] == AttackHead.MELEE
    assert actions[Head.MELEE_ATTACK_TYPE] == MeleeType.SPECIAL
    # melee protected and no energy for the ranged special (masked): a normal unprotected attack instead
    obs = make_obs(TARGET_HEALTH_PERCENT=0.3, TARGET_FROZEN_TICKS=10.0, TARGET_MELEE_PRAYER=1.0)
    actions = Tribrid().act(obs, make_mask(MELEE_ATTACK_TYPE=[0, 1, 2]))
    assert actions[Head.ATTACK] == AttackHead.RANGED
    assert actions[Head.RANGED_ATTACK_TYPE] == RangedType.NORMAL
    # healthy target: no special
    obs = make_obs(TARGET_FROZEN_TICKS=10.0, TARGET_RANGED_PRAYER=1.0, PLAYER_LOCATION_CAN_MELEE=1.0)
    assert Tribrid().act(obs, mask)[Head.MELEE_ATTACK_TYPE] == MeleeType.NORMAL


def test_tribrid_tanks_on_cooldown_and_casts_vengeance() -> None:
    obs = make_obs(ATTACK_CYCLE_TICKS=3.0, TARGET_USING_RANGED=1.0, TARGET_USING_MELEE=0.0)
    actions = Tribrid().act(obs, make_mask(attack_ready=False, GEAR=[0, 1], VENG=[0, 1]))
    assert actions[Head.ATTACK] == AttackHead.NONE
    assert actions[Head.GEAR] == GearHead.TANK
    assert actions[Head.VENG] == VengHead.CAST
    assert actions[Head.PRAYER] == PrayerHead.PROTECT_MISSILES


def test_tribrid_supplies() -> None:
    mask = make_mask(FOOD=[0, 1], KARAMBWAN=[0, 1], POTION=[0, 1, 2, 3, 4])
    low = Tribrid().act(make_obs(PLAYER_HEALTH_PERCENT=0.4), mask)
    assert low[Head.FOOD] == FoodHead.EAT and low[Head.KARAMBWAN] == KarambwanHead.EAT
    assert low[Head.POTION] == PotionHead.BREW
    drained = Tribrid().act(make_obs(MAGIC_LEVEL=0.8), mask)
    assert drained[Head.POTION] == PotionHead.RESTORE
    unboosted = Tribrid().act(make_obs(RANGED_LEVEL=0.84, STRENGTH_LEVEL=0.84), mask)
    assert unboosted[Head.POTION] == PotionHead.RANGING
    assert unboosted[Head.FOOD] == FoodHead.NONE
