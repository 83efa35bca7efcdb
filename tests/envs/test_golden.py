"""The 460 PvP golden cases of the wiki DPS calculator's player-vs-player model (spec §6).

Each case spells out both players (gear by slot, levels, prayers, style, spell or special, the
defender's overhead) and the expected profile of one attack. A faithful implementation of spec §6
reproduces every integer exactly and the hit chance and expected damage to 1e-6.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envs.nh.combat import Method, attack_profile, combat_method, special_for_weapon
from envs.nh.items import Slot, item_by_name
from envs.nh.state import PlayerState
from tests.envs.combat_players import make_player, prayer_named, spell_named

GOLDEN_PATH = Path(__file__).resolve().parents[1] / "data" / "combat-golden.jsonl"
CASES: list[dict[str, Any]] = [
    json.loads(line) for line in GOLDEN_PATH.read_text().splitlines() if line.strip()
]
INTEGER_FIELDS = (
    "attack_roll",
    "defence_roll",
    "defence_bonus_type",
    "max_hit",
    "min_hit",
    "hits_per_attack",
    "max_total_damage_per_attack",
)
TOLERANCE = 1e-6
PLAIN_METHODS = {
    "melee": Method.MELEE,
    "ranged": Method.RANGED,
    "magic_ice_barrage": Method.MAGIC_SPELL,
    "magic_blood_barrage": Method.MAGIC_SPELL,
}


def _attacker(case: dict[str, Any]) -> PlayerState:
    spec = case["attacker"]
    p = make_player(spec["gear"], spec["levels"], spec["prayers"], index=0)
    style_name = spec["fight_style"]["name"].lower()
    if spec["spell"] is None:
        # the case's style must be the default one the equip routine picks (§6.2)
        assert p.style is not None and p.style.name == style_name, (p.style, style_name)
    else:
        p.selected_spell = spell_named(spec["spell"])
    if spec["special_attack"]:
        assert item_by_name(spec["special_weapon"]).id == p.equipment[Slot.WEAPON]
        p.special_armed = True
    return p


def _defender(case: dict[str, Any]) -> PlayerState:
    spec = case["defender"]
    p = make_player(spec["gear"], spec["levels"], spec["prayers"], index=1)
    if spec["overhead"] is not None:
        p.prayers.add(prayer_named(spec["overhead"]))
    return p


def _expected_method(case: dict[str, Any], attacker: PlayerState) -> Method:
    style = case["attack_style"]
    if style in PLAIN_METHODS:
        return PLAIN_METHODS[style]
    special = special_for_weapon(attacker.equipment[Slot.WEAPON])
    assert special is not None
    return special[0]


def test_golden_file_has_all_cases() -> None:
    assert len(CASES) == 460
    assert len({c["case_id"] for c in CASES}) == 460


@pytest.mark.parametrize("case", CASES, ids=[c["case_id"] for c in CASES])
def test_golden_case(case: dict[str, Any]) -> None:
    attacker, defender = _attacker(case), _defender(case)
    method = combat_method(attacker)
    assert method is _expected_method(case, attacker)
    profile = attack_profile(attacker, defender, method)
    expected = case["expected"]
    got = {f: getattr(profile, f) for f in INTEGER_FIELDS}
    assert got == {f: expected[f] for f in INTEGER_FIELDS}
    assert profile.hit_chance == pytest.approx(expected["hit_chance"], abs=TOLERANCE, rel=0)
    assert profile.expected_damage == pytest.approx(expected["expected_damage"], abs=TOLERANCE, rel=0)
