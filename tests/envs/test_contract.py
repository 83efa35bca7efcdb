"""The action / observation contract against spec §14 and §15 (numbers copied from the spec)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from envs.nh import contract as c
from envs.nh.contract import (
    CONSTANT_INDICES,
    CRITIC_SIZE,
    DEP_FORBIDS,
    DEPENDENCIES,
    HEAD_OFFSETS,
    HEAD_SIZES,
    HEADS,
    NUM_HEADS,
    NUM_LOGITS,
    OBS_LAYOUT,
    OBS_SIZE,
    PARTIAL_INDICES,
    AttackHead,
    FarcastHead,
    FrameStack,
    GearHead,
    Head,
    MageType,
    MeleeType,
    MovementHead,
    Obs,
    PotionHead,
    PrayerHead,
    RangedType,
    apply_dependencies_and_force,
    critic_vector,
    dependency_allows,
    dependency_mask,
    load_observation_layout,
    logit_index,
)


def _expand(*parts: int | tuple[int, int]) -> list[int]:
    out: list[int] = []
    for p in parts:
        out += list(range(p[0], p[1] + 1)) if isinstance(p, tuple) else [p]
    return out


# §15.3, verbatim: "10, 11, 22–28, 34–40, 42, 43, 46, 51, 54, 58–62, 65, 103–159, 165, 168–175"
SPEC_PARTIAL = _expand(
    10, 11, (22, 28), (34, 40), 42, 43, 46, 51, 54, (58, 62), 65, (103, 159), 165, (168, 175)
)
# §15.1: "the 49 C entries are 96–141, 160, 161 and 164"
SPEC_CONSTANT = _expand((96, 141), 160, 161, 164)

# §14.2 table: (head, values) allowed only if (required head, op, required value)
SPEC_DEPENDENCIES = [
    (1, [0], 0, "ne", 3),
    (1, [1, 2], 0, "eq", 3),
    (2, [0], 0, "ne", 2),
    (2, [1, 2], 0, "eq", 2),
    (3, [0], 0, "ne", 1),
    (3, [1, 2, 3], 0, "eq", 1),
    (8, [0], 0, "ne", 0),
    (8, [1], 0, "eq", 0),
    (10, [0], 9, "ne", 3),
    (10, [1, 2, 3, 4, 5, 6], 9, "eq", 3),
]


# ----------------------------------------------------------------------------------------------- heads


def test_head_sizes_follow_spec_14_1() -> None:
    assert HEAD_SIZES == (4, 3, 3, 4, 5, 2, 2, 2, 2, 5, 7, 6)
    assert NUM_HEADS == 12
    assert NUM_LOGITS == 45
    assert HEAD_OFFSETS == (0, 4, 7, 10, 14, 19, 21, 23, 25, 27, 32, 39)
    assert [spec.id for spec in HEADS] == [
        "attack",
        "melee_attack_type",
        "ranged_attack_type",
        "mage_attack_type",
        "potion",
        "food",
        "karambwan",
        "veng",
        "gear",
        "movement",
        "farcast_distance",
        "prayer",
    ]


def test_head_values_read_like_the_table() -> None:
    assert (AttackHead.NONE, AttackHead.MAGIC, AttackHead.RANGED, AttackHead.MELEE) == (0, 1, 2, 3)
    assert (MeleeType.NORMAL, MeleeType.SPECIAL) == (1, 2)
    assert (RangedType.NORMAL, RangedType.SPECIAL) == (1, 2)
    assert (MageType.ICE, MageType.BLOOD, MageType.SPECIAL) == (1, 2, 3)
    assert (PotionHead.BREW, PotionHead.RESTORE, PotionHead.COMBAT, PotionHead.RANGING) == (1, 2, 3, 4)
    assert GearHead.TANK == 1
    assert (MovementHead.ADJACENT, MovementHead.UNDER, MovementHead.FARCAST, MovementHead.DIAGONAL) == (
        1,
        2,
        3,
        4,
    )
    assert [c.farcast_distance_tiles(v) for v in FarcastHead][1:] == [2, 3, 4, 5, 6, 7]
    assert (PrayerHead.PROTECT_MAGIC, PrayerHead.PROTECT_MISSILES, PrayerHead.PROTECT_MELEE) == (1, 2, 3)
    assert (PrayerHead.SMITE, PrayerHead.REDEMPTION) == (4, 5)
    for spec in HEADS:
        assert len(spec.mask_rules) == spec.size


def test_logit_layout() -> None:
    assert logit_index(Head.PRAYER, PrayerHead.REDEMPTION) == 44
    assert logit_index(Head.MELEE_ATTACK_TYPE, MeleeType.NONE) == 4
    assert c.LOGIT_HEAD.tolist() == [h for h, n in enumerate(HEAD_SIZES) for _ in range(n)]
    assert c.LOGIT_VALUE.tolist() == [v for n in HEAD_SIZES for v in range(n)]
    with pytest.raises(ValueError, match="out of range"):
        logit_index(Head.FOOD, 2)
    parts = c.split_mask(np.arange(45) % 2 == 0)
    assert [len(p) for p in parts] == list(HEAD_SIZES)


# ----------------------------------------------------------------------------------------- dependencies


def test_dependency_rows_equal_spec_14_2() -> None:
    expected = {
        (head, value, req, op, req_value)
        for head, values, req, op, req_value in SPEC_DEPENDENCIES
        for value in values
    }
    got = [(int(r.head), r.value, int(r.required_head), r.op, r.required_value) for r in DEPENDENCIES]
    assert len(got) == len(set(got))
    assert set(got) == expected


def _spec_allows(head: int, value: int, chosen: list[int]) -> bool:
    for h, values, req, op, req_value in SPEC_DEPENDENCIES:
        if h == head and value in values:
            return (chosen[req] == req_value) == (op == "eq")
    return True


@pytest.mark.parametrize("head", list(Head))
def test_dependency_allows_every_value_against_every_parent_choice(head: Head) -> None:
    parents = c.HEAD_PARENTS[head]
    parent_choices = [[0] * NUM_HEADS]
    for parent in parents:
        parent_choices = [
            [*ch[:parent], v, *ch[parent + 1 :]] for ch in parent_choices for v in range(HEAD_SIZES[parent])
        ]
    for chosen in parent_choices:
        mask = dependency_mask(head, chosen)
        assert mask.dtype == np.bool_ and mask.shape == (HEAD_SIZES[head],)
        for value in range(HEAD_SIZES[head]):
            assert dependency_allows(head, value, chosen) == _spec_allows(head, value, chosen)
            assert mask[value] == _spec_allows(head, value, chosen)
        # the fixed-size form: one-hot of the choices so far times DEP_FORBIDS
        onehot = np.zeros(NUM_LOGITS)
        for h in range(head):
            onehot[HEAD_OFFSETS[h] + chosen[h]] = 1.0
        dep_ok = (onehot @ DEP_FORBIDS.astype(np.float64))[c.HEAD_SLICES[head]] == 0
        np.testing.assert_array_equal(dep_ok, mask)


def test_head_parents() -> None:
    assert c.HEAD_PARENTS == ((), (0,), (0,), (0,), (), (), (), (), (0,), (), (9,), ())


def test_dependency_allows_needs_the_parent_chosen() -> None:
    with pytest.raises(ValueError, match="ATTACK"):
        dependency_allows(Head.GEAR, GearHead.TANK, [])
    assert dependency_allows(Head.POTION, PotionHead.BREW, [])  # no dependency: nothing needed


# ------------------------------------------------------------------------------------------------ forcing


def _mask(**legal: list[int]) -> np.ndarray:
    """A 45-mask with the listed values of the named heads legal (e.g. ``ATTACK=[0, 3]``)."""
    m = np.zeros(NUM_LOGITS, dtype=bool)
    for name, values in legal.items():
        for v in values:
            m[logit_index(Head[name], v)] = True
    return m


class _Recorder:
    def __init__(self, picks: dict[Head, int] | None = None) -> None:
        self.calls: list[tuple[Head, list[int]]] = []
        self.picks = picks or {}

    def __call__(self, head: Head, legal: np.ndarray) -> int:
        values = np.flatnonzero(legal).tolist()
        self.calls.append((head, values))
        return self.picks.get(head, values[-1])


def test_tank_gear_forced_to_1_without_attack_when_allowed() -> None:
    mask = np.ones(NUM_LOGITS, dtype=bool)
    rec = _Recorder({Head.ATTACK: AttackHead.NONE})
    actions = apply_dependencies_and_force(mask, rec)
    assert actions[Head.ATTACK] == AttackHead.NONE
    assert actions[Head.GEAR] == GearHead.TANK
    # sub-heads of the three styles are forced to 0 (only value 0 passes §14.2)
    assert (
        actions[Head.MELEE_ATTACK_TYPE]
        == actions[Head.RANGED_ATTACK_TYPE]
        == actions[Head.MAGE_ATTACK_TYPE]
        == 0
    )
    called = [h for h, _ in rec.calls]
    assert Head.GEAR not in called
    assert Head.MELEE_ATTACK_TYPE not in called


def test_tank_gear_forced_to_0_without_attack_when_masked() -> None:
    mask = _mask(ATTACK=[0], GEAR=[0], PRAYER=[1, 2, 3])
    actions = apply_dependencies_and_force(mask, _Recorder())
    assert actions[Head.ATTACK] == AttackHead.NONE
    assert actions[Head.GEAR] == GearHead.NO_SWAP  # nothing legal: 0 forced


def test_tank_gear_forced_to_0_with_an_attack() -> None:
    mask = np.ones(NUM_LOGITS, dtype=bool)
    rec = _Recorder({Head.ATTACK: AttackHead.MELEE, Head.MELEE_ATTACK_TYPE: MeleeType.SPECIAL})
    actions = apply_dependencies_and_force(mask, rec)
    assert actions[Head.ATTACK] == AttackHead.MELEE
    assert actions[Head.MELEE_ATTACK_TYPE] == MeleeType.SPECIAL
    assert actions[Head.RANGED_ATTACK_TYPE] == 0 and actions[Head.MAGE_ATTACK_TYPE] == 0
    assert actions[Head.GEAR] == GearHead.NO_SWAP
    assert (Head.MELEE_ATTACK_TYPE, [1, 2]) in rec.calls


def test_farcast_distance_follows_movement() -> None:
    mask = np.ones(NUM_LOGITS, dtype=bool)
    actions = apply_dependencies_and_force(mask, _Recorder({Head.MOVEMENT: MovementHead.ADJACENT}))
    assert actions[Head.FARCAST_DISTANCE] == FarcastHead.NONE
    rec = _Recorder({Head.MOVEMENT: MovementHead.FARCAST, Head.FARCAST_DISTANCE: FarcastHead.DISTANCE_4})
    actions = apply_dependencies_and_force(mask, rec)
    assert actions[Head.FARCAST_DISTANCE] == FarcastHead.DISTANCE_4
    assert (Head.FARCAST_DISTANCE, [1, 2, 3, 4, 5, 6]) in rec.calls


def test_style_with_no_legal_subhead_forces_0() -> None:
    # Head 0 says melee but neither melee type is legal: head 1 is forced to 0 (§14.2);
    # §5 then skips the attack step.
    mask = _mask(ATTACK=[3], MELEE_ATTACK_TYPE=[0], PRAYER=[1])
    actions = apply_dependencies_and_force(mask, _Recorder())
    assert actions[Head.ATTACK] == AttackHead.MELEE
    assert actions[Head.MELEE_ATTACK_TYPE] == 0


def test_empty_heads_force_0_and_choose_only_sees_real_choices() -> None:
    rec = _Recorder()
    actions = apply_dependencies_and_force(np.zeros(NUM_LOGITS, dtype=bool), rec)
    assert actions.tolist() == [0] * NUM_HEADS
    assert rec.calls == []
    # a single legal value is taken without asking
    actions = apply_dependencies_and_force(_mask(ATTACK=[2], RANGED_ATTACK_TYPE=[1], PRAYER=[3]), rec)
    assert actions[Head.ATTACK] == 2 and actions[Head.RANGED_ATTACK_TYPE] == 1 and actions[Head.PRAYER] == 3
    assert rec.calls == []


def test_forcing_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="shape"):
        apply_dependencies_and_force(np.ones(44, dtype=bool), _Recorder())
    mask = np.ones(NUM_LOGITS, dtype=bool)
    mask[logit_index(Head.PRAYER, PrayerHead.NO_CHANGE)] = False  # as the env always sends it (§14.3)

    def keep_prayer(head: Head, legal: np.ndarray) -> int:
        return PrayerHead.NO_CHANGE if head == Head.PRAYER else int(legal.argmax())

    with pytest.raises(ValueError, match="PRAYER"):
        apply_dependencies_and_force(mask, keep_prayer)


def test_forcing_writes_into_out() -> None:
    out = np.full(NUM_HEADS, -1, dtype=np.int64)
    result = apply_dependencies_and_force(np.ones(NUM_LOGITS, dtype=np.int8), _Recorder(), out=out)
    assert result is out
    assert out.dtype == np.int64 and (out >= 0).all()


# ------------------------------------------------------------------------------------------- observation


def test_observation_sizes_and_flags_follow_spec_15() -> None:
    assert OBS_SIZE == 176
    assert [e.index for e in OBS_LAYOUT] == list(range(176))
    assert list(PARTIAL_INDICES) == SPEC_PARTIAL
    assert len(PARTIAL_INDICES) == 93
    assert list(CONSTANT_INDICES) == SPEC_CONSTANT
    assert len(CONSTANT_INDICES) == 49
    assert CRITIC_SIZE == 269
    both = [e.index for e in OBS_LAYOUT if e.partial and e.constant]
    assert both == list(range(103, 142))
    assert OBS_LAYOUT[103].flags == "P C" and OBS_LAYOUT[96].flags == "C" and OBS_LAYOUT[0].flags == ""


@pytest.mark.parametrize(
    ("name", "index"),
    [
        ("PLAYER_USING_MELEE", 0),
        ("SPECIAL_ENERGY_PERCENT", 4),
        ("TARGET_HEALTH_PERCENT", 11),
        ("TARGET_USING_MAGE", 14),
        ("TARGET_MAGIC_PRAYER", 18),
        ("PRAYER_POINTS", 28),
        ("PLAYER_LOCATION_CAN_MELEE", 33),
        ("ATTACK_CYCLE_TICKS", 39),
        ("TOTAL_DAMAGE_DEALT_SCALE", 65),
        ("TARGET_CORRECT_PRAY_PERCENT", 81),
        ("RECENT_TARGET_MELEE_HIT_PERCENT", 82),
        ("RECENT_TARGET_MAGIC_HIT_PERCENT", 83),
        ("RECENT_TARGET_RANGED_HIT_PERCENT", 84),
        ("RECENT_PLAYER_MELEE_HIT_PERCENT", 85),
        ("RECENT_PLAYER_RANGED_HIT_PERCENT", 87),
        ("RECENT_TARGET_NUMBER_OF_HITS_OFF_PRAYER", 88),
        ("RECENT_TARGET_MAGIC_PRAYER_PERCENT", 89),
        ("RECENT_TARGET_RANGED_PRAYER_PERCENT", 90),
        ("RECENT_TARGET_MELEE_PRAYER_PERCENT", 91),
        ("RECENT_PLAYER_MAGIC_PRAYER_PERCENT", 92),
        ("RECENT_PLAYER_MELEE_PRAYER_PERCENT", 94),
        ("RECENT_TARGET_CORRECT_PRAY_PERCENT", 95),
        ("ABSOLUTE_ATTACK_LEVEL", 96),
        ("IS_MELEE_SPEC_GMAUL", 120),
        ("TARGET_MELEE_GEAR_MELEE_DEFENCE", 159),
        ("IS_TARGET_LUNAR_SPELLBOOK", 165),
        ("IS_FOOD_ANGLERFISH", 175),
    ],
)
def test_obs_enum_names(name: str, index: int) -> None:
    assert Obs[name] == index
    assert OBS_LAYOUT[index].id == name.lower()


def test_obs_enum_covers_the_layout() -> None:
    assert len(Obs) == OBS_SIZE
    assert len({e.id for e in OBS_LAYOUT}) == OBS_SIZE
    for entry in OBS_LAYOUT:
        assert Obs[entry.id.upper()] == entry.index
        assert entry.description


_HEADER = "# comment\nindex,id,flags,description\n"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("0,a,,x\n2,b,,y\n", "expected 1"),
        ("0,a,,x\n1,a,,y\n", "already used"),
        ("0,a,Q,x\n", "flags"),
        ("0,A,,x\n", "snake_case"),
        ("0,a,P,\n", "no description"),
        ("0,a,P,x,extra\n", "columns"),
    ],
)
def test_layout_loader_names_the_bad_row(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "obs.csv"
    path.write_text(_HEADER + body, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as err:
        load_observation_layout(path)
    assert str(path) in str(err.value)


def test_layout_loader_checks_the_header(tmp_path: Path) -> None:
    path = tmp_path / "obs.csv"
    path.write_text("idx,id,flags,description\n0,a,,x\n", encoding="utf-8")
    with pytest.raises(ValueError, match="header"):
        load_observation_layout(path)
    path.write_text(_HEADER + '0,a,P C,"x, with a comma"\n', encoding="utf-8")
    (entry,) = load_observation_layout(path)
    assert entry.partial and entry.constant and entry.description == "x, with a comma"


# ------------------------------------------------------------------------------------------------ critic


def test_critic_vector_appends_the_opponents_partial_entries() -> None:
    own = np.arange(OBS_SIZE, dtype=np.float32)
    opp = 1000 + np.arange(OBS_SIZE, dtype=np.float32)
    vec = critic_vector(own, opp)
    assert vec.shape == (269,) and vec.dtype == np.float32
    np.testing.assert_array_equal(vec[:176], own)
    np.testing.assert_array_equal(vec[176:], 1000 + np.array(SPEC_PARTIAL, dtype=np.float32))
    out = np.full(CRITIC_SIZE, 7.0, dtype=np.float32)
    assert critic_vector(own, None, out=out) is out
    np.testing.assert_array_equal(out[:176], own)
    assert not out[176:].any()  # outside training the appended part is zeros (§15.3)


def test_critic_vector_rejects_wrong_shapes() -> None:
    with pytest.raises(ValueError, match="own"):
        critic_vector(np.zeros(175), None)
    with pytest.raises(ValueError, match="opponent"):
        critic_vector(np.zeros(176), np.zeros(269))
    with pytest.raises(ValueError, match="out"):
        critic_vector(np.zeros(176), None, out=np.zeros(176, dtype=np.float32))


# ---------------------------------------------------------------------------------------- frame stacking


def test_frame_stack_is_newest_first_with_zero_frames_before_the_start() -> None:
    fs = FrameStack(3, size=2)
    assert fs.offsets == (0, 1, 2) and fs.stacked_size == 6
    a, b, cc, d = ([float(k), float(k) + 0.5] for k in (1, 2, 3, 4))
    assert fs.push(a).tolist() == [*a, 0, 0, 0, 0]
    assert fs.push(b).tolist() == [*b, *a, 0, 0]
    assert fs.push(cc).tolist() == [*cc, *b, *a]
    assert fs.push(d).tolist() == [*d, *cc, *b]
    fs.reset()
    assert fs.push(a).tolist() == [*a, 0, 0, 0, 0]


def test_frame_stack_with_explicit_offsets() -> None:
    fs = FrameStack([0, 2], size=1)
    assert fs.push([1.0]).tolist() == [1, 0]
    assert fs.push([2.0]).tolist() == [2, 0]
    assert fs.push([3.0]).tolist() == [3, 1]
    out = np.zeros(2, dtype=np.float32)
    assert fs.push([4.0], out=out) is out
    assert out.tolist() == [4, 2]


def test_frame_stack_default_is_the_current_frame_of_either_vector() -> None:
    fs = FrameStack([0], size=CRITIC_SIZE)
    vec = np.arange(CRITIC_SIZE, dtype=np.float32)
    stacked = fs.push(vec)
    np.testing.assert_array_equal(stacked, vec)
    vec[0] = 99  # the result is a copy, not a view of the caller's array
    assert stacked[0] == 0


@pytest.mark.parametrize("offsets", [0, -1, [], [0, -1], [0, 1.5], True])
def test_frame_offsets_rejects_bad_settings(offsets: object) -> None:
    with pytest.raises(ValueError):
        FrameStack(offsets, size=4)  # type: ignore[arg-type]


def test_frame_stack_rejects_a_wrong_frame() -> None:
    with pytest.raises(ValueError, match="shape"):
        FrameStack(2, size=3).push(np.zeros(4))


# -------------------------------------------------------------------------------------------------- export


def test_contract_json_round_trips_and_is_deterministic(tmp_path: Path) -> None:
    first = c.export_contract_json(tmp_path / "a" / "contract.json")
    second = c.export_contract_json(tmp_path / "b.json")
    assert first.read_bytes() == second.read_bytes()
    loaded = json.loads(first.read_text(encoding="utf-8"))
    assert loaded == c.contract_dict()
    text = first.read_text(encoding="utf-8")
    assert text == json.dumps(loaded, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert not list(tmp_path.glob("**/*.tmp"))


def test_contract_json_content() -> None:
    d = json.loads(c.contract_json())
    assert d["version"] == c.CONTRACT_VERSION
    action = d["action"]
    assert [h["size"] for h in action["heads"]] == list(HEAD_SIZES)
    assert action["heads"][11]["values"] == [
        "no_change",
        "protect_magic",
        "protect_missiles",
        "protect_melee",
        "smite",
        "redemption",
    ]
    assert action["num_logits"] == 45
    assert len(action["dependencies"]) == len(DEPENDENCIES) == 19
    assert {"head": 8, "value": 1, "required_head": 0, "op": "eq", "required_value": 0} in action[
        "dependencies"
    ]
    obs = d["observation"]
    assert obs["size"] == 176 and len(obs["entries"]) == 176
    assert obs["entries"][82]["id"] == "recent_target_melee_hit_percent"
    assert obs["partial_indices"] == SPEC_PARTIAL
    assert obs["constant_indices"] == SPEC_CONSTANT
    assert d["critic"] == {"size": 269, "layout": d["critic"]["layout"], "opponent_indices": SPEC_PARTIAL}


def test_batched_random_actions_respect_masks_and_dependencies() -> None:
    """`masked_random_actions` (benchmarks, soaks) draws what `apply_dependencies_and_force` allows: replaying
    each of its actions through the one-at-a-time sampler, choosing the same values, must be accepted value for
    value, on real masks of self-play fights; and it reaches every value the one-at-a-time sampler with a
    uniform choice reaches on the same masks."""
    from envs.nh.contract import masked_random_actions
    from envs.nh.engine import NHEngine
    from envs.nh.params import OPPONENT_AGENT, FightParams

    rng = np.random.default_rng(0)
    uniform = np.random.default_rng(1)
    engine = NHEngine(FightParams(opponent=OPPONENT_AGENT, randomize_gear=True), observe_all=True)
    engine.reset(seed=1)
    seen: list[set[int]] = [set() for _ in range(NUM_HEADS)]
    reached: list[set[int]] = [set() for _ in range(NUM_HEADS)]
    for _ in range(1500):
        drawn = masked_random_actions(rng, engine.masks)
        assert drawn.shape == (2, NUM_HEADS)
        for i in range(2):
            row = drawn[i]
            replayed = apply_dependencies_and_force(engine.masks[i], lambda head, legal, row=row: int(row[int(head)]))
            np.testing.assert_array_equal(replayed, row)
            other = apply_dependencies_and_force(
                engine.masks[i], lambda head, legal: int(uniform.choice(np.flatnonzero(legal)))
            )
            for h in range(NUM_HEADS):
                seen[h].add(int(row[h]))
                reached[h].add(int(other[h]))
        step = engine.step([drawn[0], drawn[1]])
        if step.terminated or step.truncated:
            engine.reset()
    assert seen == reached
    assert sum(len(values) > 1 for values in seen) >= 9
