"""Every mirror of a Python definition in the compiled core covers every field.

The core mirrors `FightParams` (reset parameters), `PlayerState` with `PendingHit` and `Loadout`,
`TickEvents` with `HitRecord`, the §17.1 signals and `RewardWeights`. `envs/nh/core/mirrors.py` says where
each field lives in C; `gen_tables.py` renders the binding's tables from it and refuses a field without an
entry; `offsetof` in the rendered tables makes the C compiler refuse an entry without a C member; and these
tests hold the other copies (the built module, the tests' snapshots, the fight tools' views, the numbers C
reads) to the Python definitions, so a new field fails somewhere until every mirror follows.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from envs.nh import combat, rewards
from envs.nh.core import gen_tables, mirrors, reset_params
from envs.nh.core.gen_tables import MirrorError, check_mirror
from envs.nh.items import CombatStyle
from envs.nh.loadouts.loadout import Loadout
from envs.nh.params import FightParams
from envs.nh.rewards import REWARD_COMPONENTS, RewardWeights
from envs.nh.sim import FightSim
from envs.nh.state import PendingHit, PlayerState
from envs.nh.stats import HitRecord, TickEvents
from tests.envs import core_snapshots as snapshots

SRC = Path(gen_tables.__file__).parent / "src"
BINDING = ("nhcore_module.c", "nhcore_testing.c")
"""The binding's files: a member the binding reads does not count as read by the core."""


def _names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def _core_c_text() -> str:
    """The core's C sources (not the binding's, not the generated tables)."""
    return "\n".join(p.read_text() for p in sorted(SRC.glob("nh_*.c")) if p.name != "nh_data.c")


def _extended(cls: type, name: str, annotation: Any, default: Any) -> type:
    """A stand-in for `cls` with one field more, as a developer adding a field would make it."""
    fields = [(f.name, f.type, dataclasses.field(default=None)) for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(cls.__name__, [*fields, (name, annotation, dataclasses.field(default=default))])


def _compile_error(fields_header: str, tmp_path: Path) -> str:
    """The C compiler's complaint about the binding with `fields_header` as nh_fields.h ("" when it compiles)."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    shutil.copy(SRC / "nhcore_binding.h", tmp_path / "nhcore_binding.h")  # so that its "nh_fields.h" is ours
    (tmp_path / "nh_fields.h").write_text(fields_header)
    (tmp_path / "unit.c").write_text('#include "nhcore_binding.h"\n')
    include = sysconfig.get_paths()["include"]
    cmd = [cc, "-fsyntax-only", "-std=c11", "-DNH_SOURCE_HASH=\"\"", f"-I{SRC}", f"-I{include}", "unit.c"]
    result = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    return "" if result.returncode == 0 else result.stderr


# ---- FightParams -------------------------------------------------------------------------------------------------


def test_every_fight_param_reaches_the_core_or_says_why() -> None:
    assert check_mirror(FightParams, mirrors.RESET_PARAMS, "RESET_PARAMS") == _names(FightParams)
    keys = set(mirrors.RESET_INTS) | set(mirrors.RESET_LISTS)
    for options in ({}, {"randomize_build": True, "agent": "x"}, {"opponent": "agent", "fight_type": "LMS"}):
        assert set(reset_params(FightParams.from_options(options))) == keys
    core = snapshots.compiled_core(testing=False)
    assert core.FIELDS["reset_params"] == mirrors.RESET_INTS, "the build's table is not mirrors.RESET_INTS: rebuild"
    c_text = _core_c_text()
    members = (*mirrors.RESET_INTS, *mirrors.RESET_LISTS)
    unread = [m for m in members if not re.search(rf"(params|prm)(->|\.){m}\b", c_text)]
    assert not unread, f"nh_reset_params members the core never reads: {unread} (an option the core would ignore)"


def test_a_new_fight_param_fails_until_the_core_mirrors_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A simulator option added to FightParams stops the generator until mirrors.py names it, then the C compiler
    until nh_reset_params has the member (and the unread-member check above until the core reads it)."""
    monkeypatch.setattr(gen_tables, "FightParams", _extended(FightParams, "new_option", bool, False))
    with pytest.raises(MirrorError, match=r"FightParams .*\['new_option'\].*mirrors\.py"):
        gen_tables.render_fields()
    monkeypatch.setitem(mirrors.RESET_PARAMS, "new_option", mirrors.COPIED)
    with pytest.raises(MirrorError, match="RESET_INTS"):
        gen_tables.render_fields()
    monkeypatch.setattr(mirrors, "RESET_INTS", (*mirrors.RESET_INTS, "new_option"))
    header = gen_tables.render_fields()
    assert "offsetof(nh_reset_params, new_option)" in header
    assert header != gen_tables.FIELDS_PATH.read_text()  # test_core_tables fails until it is regenerated
    assert "new_option" in _compile_error(header, tmp_path)  # and the build until nh_reset_params has it
    assert _compile_error(gen_tables.FIELDS_PATH.read_text(), tmp_path) == ""


# ---- PlayerState and what holds it ---------------------------------------------------------------------------------


def test_every_player_field_is_in_every_snapshot() -> None:
    sim = FightSim(FightParams())
    sim.reset(seed=3)
    core = snapshots.compiled_core(testing=False)
    fields = _names(PlayerState)
    assert check_mirror(PlayerState, mirrors.PLAYER_FIELDS, "PLAYER_FIELDS") == fields
    assert list(core.FIELDS["player"]) == fields, "the build's player table is not PlayerState's fields: rebuild"
    assert list(snapshots.player(sim.players[0])) == fields  # the tests' mirror (tests/envs/core_snapshots.py)
    assert list(core.FIELDS["pending_hit"]) == _names(PendingHit)
    assert list(snapshots._hit(PendingHit(sim.players[1], [1], True, 1, CombatStyle.MELEE))) == _names(PendingHit)
    loadout = [n for n in _names(Loadout) if isinstance(mirrors.LOADOUT_FIELDS[n], mirrors.CField)]
    assert list(core.FIELDS["loadout"]) == loadout
    assert set(snapshots.loadout(sim.players[0].loadout)) == set(loadout)


def test_a_new_player_field_fails_until_the_core_mirrors_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(gen_tables, "PlayerState", _extended(PlayerState, "new_counter", int, 0))
    with pytest.raises(MirrorError, match=r"PlayerState .*\['new_counter'\]"):
        gen_tables.render_fields()
    monkeypatch.setitem(mirrors.PLAYER_FIELDS, "new_counter", mirrors.CField("int"))
    header = gen_tables.render_fields()
    assert "offsetof(nh_player, new_counter)" in header
    assert "new_counter" in _compile_error(header, tmp_path)  # nh_state.h's nh_player must follow


def test_tick_events_and_signals_are_mirrored_whole() -> None:
    core = snapshots.compiled_core(testing=False)
    assert list(core.FIELDS["events"]) == check_mirror(TickEvents, mirrors.TICK_EVENTS_FIELDS, "TICK_EVENTS_FIELDS")
    check_mirror(HitRecord, mirrors.HIT_RECORD_FIELDS, "HIT_RECORD_FIELDS")
    assert set(snapshots.events(TickEvents())) == set(core.FIELDS["events"])
    assert list(core.FIELDS["signals"]) == list(mirrors.SIGNALS)
    assert _signal_keys() == set(mirrors.SIGNALS), "rewards.signals_for's keys and mirrors.SIGNALS differ"


def _signal_keys() -> set[str]:
    """Every key `rewards.signals_for` can put in its dict, read from its source (dict literal and `s[...] =`)."""
    tree = ast.parse(inspect.getsource(rewards.signals_for))
    keys: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.slice, ast.Constant):
            keys.add(node.slice.value)
    return keys


def test_hit_effect_tags_are_numbered_once() -> None:
    """combat._effect's tags are mirrors.EFFECTS, which numbers them for C (NH_EFFECT_*) and the tests."""
    tree = ast.parse(inspect.getsource(combat._effect))
    returns = [n.value for n in ast.walk(tree) if isinstance(n, ast.Return)]
    returned = {v.value for v in returns if isinstance(v, ast.Constant)}
    assert returned == set(mirrors.EFFECTS)
    header = gen_tables.HEADER_PATH.read_text()
    for k, tag in enumerate(mirrors.EFFECTS):
        assert f"#define NH_EFFECT_{(tag or 'none').upper()} {k}" in header


# ---- the fight tools' views (osrs_rllib) -------------------------------------------------------------------------

NOT_READ_BY_THE_FIGHT_TOOLS = {
    "spellbook", "fight_mode", "is_baseline", "bonuses", "style", "timer_uncapped", "prayer_drain_acc",
    "prayer_drain_running", "gmaul_queued", "special_regen_running", "last_attacker", "last_hit_received_tick",
    "selected_spell", "previous_spell", "auto_retaliate", "hit_queue", "damage_queue", "walk_queue", "moving",
    "running", "last_run_recovery_tick", "spawn", "pid", "pid_countdown", "dying", "remembered_target",
}  # fmt: skip
"""PlayerState fields `osrs_rllib/replay/engine_views.py`'s `CorePlayerView` leaves out: no fight tool (analysis,
replays) reads them. A new PlayerState field must be added to the view or here, on purpose."""


def test_the_fight_tools_view_covers_every_player_field_or_says_so() -> None:
    from osrs_rllib.replay.engine_views import CorePlayerView, PlayerLike

    view = _names(CorePlayerView)
    assert set(view) <= set(_names(PlayerState)), "CorePlayerView names fields PlayerState does not have"
    unclassified = set(_names(PlayerState)) - set(view) - NOT_READ_BY_THE_FIGHT_TOOLS
    assert not unclassified, f"fields in neither CorePlayerView nor NOT_READ_BY_THE_FIGHT_TOOLS: {unclassified}"
    assert not (set(view) & NOT_READ_BY_THE_FIGHT_TOOLS)
    assert set(PlayerLike.__annotations__) <= set(view), "the tools read a field the core's view does not carry"


def test_replays_number_hit_effects_as_the_core_does() -> None:
    from osrs_rllib.replay.state import EFFECT_NAMES

    assert tuple(EFFECT_NAMES) == mirrors.EFFECTS


# ---- RewardWeights, components, constants -------------------------------------------------------------------------


def test_every_reward_weight_is_read_by_the_core() -> None:
    core = snapshots.compiled_core(testing=False)
    assert set(_names(RewardWeights)) == {n for g in core.FIELDS["reward_weights"] for n in g}
    assert tuple(core.REWARD_COMPONENTS) == REWARD_COMPONENTS
    assert not _unread_weights(gen_tables.render()), "RewardWeights fields the core's rewards never read"


def _unread_weights(header: str) -> list[str]:
    rewards_c = (SRC / "nh_rewards.c").read_text()
    names = re.findall(r"#define (NH_(?:W|FW|SW|RC)_\w+) \d+", header)
    return [n for n in names if not re.search(rf"\b{n}\b", rewards_c)]


def test_a_new_reward_weight_fails_until_the_core_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gen_tables, "RewardWeights", _extended(RewardWeights, "new_bonus", "Schedule", 0.0))
    assert _unread_weights(gen_tables.render()) == ["NH_W_NEW_BONUS"]
    monkeypatch.setattr(gen_tables, "RewardWeights", _extended(RewardWeights, "odd", "complex", 0j))
    with pytest.raises(MirrorError, match=r"RewardWeights\.odd"):
        gen_tables.render()


HAND_TYPED_ALLOWED = {
    # units
    "NH_PERCENT": "per cent (formulas.c)", "PERCENT": "per cent (baseline.c)", "PCT_NEUTRAL": "100 %: no prayer",
    "NH_PERCENT_DIVISOR": "per cent (operations.h)",
    # numpy's PCG64 and Generator.random(), not the game's (nh_rng.h)
    "NH_PCG64_MULT_HIGH": "numpy", "NH_PCG64_MULT_LOW": "numpy", "NH_RNG_DOUBLE_SHIFT": "numpy",
    "NH_RNG_DOUBLE_SCALE": "numpy",
    # sentinels for None
    "NH_NO_PLAYER": "None", "NH_NO_SPELL": "None", "NH_NO_VALUE": "None", "NH_NO_STYLE": "None",
    "NH_BOLT_NONE": "None", "NO_COST": "None",
    # the differential drivers' output shape (nhcore_testing.c)
    "HIT_OUT_COLUMNS": "Rng.hits' columns",
}  # fmt: skip
"""The C numbers that are not the Python engine's: units, numpy's generator, sentinels. Capacities
(`NH_MAX_*`) and error codes (`NH_ERR_*`) are the C port's own and pass by name."""


def test_no_game_number_is_typed_into_c() -> None:
    """Every numeric #define in the hand-written C is a unit, numpy's, a sentinel, a capacity or an error code;
    the game's numbers come from gen_tables.py (nh_tables.h)."""
    generated = {"nh_tables.h", "nh_data.c", "nh_fields.h"}
    typed = []
    for path in sorted(SRC.iterdir()):
        if path.suffix not in (".c", ".h") or path.name in generated:
            continue
        for name in re.findall(r"^#define (\w+) \(?-?(?:[0-9]|INT32_MIN|UINT64_C|\(1\.0)", path.read_text(), re.M):
            if not (name in HAND_TYPED_ALLOWED or name.startswith(("NH_MAX_", "NH_ERR_"))):
                typed.append(f"{path.name}: {name}")
    assert not typed, f"hand-typed numbers in C (name them in Python and generate them): {typed}"
