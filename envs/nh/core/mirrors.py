"""How each field of the Python engine's state and options reaches the compiled core.

The core mirrors four Python definitions: `FightParams` (the reset's parameters, `nh_reset_params`),
`PlayerState` with its `PendingHit`s and `Loadout` (`nh_player`), `TickEvents` with its `HitRecord`s
(`nh_tick_events`) and `RewardWeights` (`nh_reward_weights`), plus the §17.1 signal names. This module says,
for every field, which C member holds it and how it is marshalled; `gen_tables.py` renders the binding's
field tables (`src/nh_fields.h`) and the weight and component numbering from it, and refuses to render when
a field of the Python definitions has no entry here. So a new field is a generation error naming it, not an
option the core silently ignores: add it here, to the C struct, and where the core reads it.

Plain data, no engine imports: `envs.nh.core.reset_params` reads `RESET_PARAMS` on every reset.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CField:
    """One field as the core holds it, and how the binding turns it into a Python value and back.

    Kinds: ``int``, ``bool`` and ``double`` (one C member); ``opt_int`` (an int where the C value `none`
    means None); ``ints`` (a fixed array of `length`, a list) and ``int_tuple`` (the same, a tuple);
    ``int_list`` (an array of capacity `length` whose count is the member `count`); ``structs`` (an array
    of `struct` rows of capacity `length`, count `count`, each a dict by the table `table`); ``prayers``
    (a bit mask, a sorted list of prayer numbers); ``style`` (weapon class and style index, the
    `(class, style, stance, style type)` tuple); ``walk_queue`` (a ring of tiles, a list of `(x, y)`);
    ``gear_sets`` (sets by `set_len`, a list of lists); ``struct`` (one nested `struct` by `table`, a dict);
    ``style_name`` (a combat style number, its §17.1 name or "null").
    """

    kind: str
    member: str = ""
    """The C member, when it is not the Python name (a nested one may use `a.b`)."""
    length: str = ""
    """A C expression: the fixed length (`ints`) or the capacity (`int_list`, `structs`)."""
    count: str = ""
    """The C member holding the number of items (`int_list`, `structs`)."""
    none: str = ""
    """The C value that stands for None (`opt_int`)."""
    table: str = ""
    """The generated table of a row's fields (`structs`)."""
    struct: str = ""
    """The C type of a row (`structs`)."""
    aux: str = ""
    """A second C member some kinds need (`walk_queue`: the ring's head)."""
    present: str = ""
    """A C member that says whether the key is in the dict at all (signals "present if", §17.1)."""


@dataclass(frozen=True)
class Outside:
    """A field the core does not hold, and why (the reason is the documentation; the generator checks that
    every field is either mirrored or named here)."""

    reason: str


# ---- FightParams -> nh_reset_params ------------------------------------------------------------------------

RESET_INTS: tuple[str, ...] = (
    "build",
    "randomize_build",
    "randomize_fight_type",
    "fight_type",
    "randomize_gear",
    "self_play",
    "first_player_baseline",
    "training",
    "death_match",
    "max_episode_ticks",
    "only_switch_prayer_when_about_to_attack",
    "only_switch_gear_when_attack_soon",
    "allow_smite",
    "allow_redemption",
    "allow_moving_if_can_attack",
)
"""The int members of `nh_reset_params` the binding fills from `reset_params`' dict, by name; the build
options and weights are lists (`RESET_LISTS`)."""
RESET_LISTS: tuple[str, ...] = ("build_options", "build_weights")

COPIED = "copied"
"""A `RESET_PARAMS` value: the FightParams field goes to the `nh_reset_params` member of its name, as an int."""

RESET_PARAMS: dict[str, str | tuple[str, ...] | Outside] = {
    "account_build": ("build",),
    "randomize_build": ("randomize_build",),
    "random_build_options": ("build_options",),
    "random_build_weights": ("build_weights",),
    "randomize_gear": COPIED,
    "randomize_fight_type": COPIED,
    "fight_type": ("fight_type",),
    "only_switch_prayer_when_about_to_attack": COPIED,
    "only_switch_gear_when_attack_soon": COPIED,
    "allow_smite": COPIED,
    "allow_redemption": COPIED,
    "allow_moving_if_can_attack": COPIED,
    "agent": ("build", "randomize_build"),
    "target": ("build", "randomize_build"),
    "episode_id": Outside("reported back in the info by the engine (CoreEngine.info), no effect on the fight"),
    "opponent": ("self_play",),
    "training": COPIED,
    "death_match": COPIED,
    "max_episode_ticks": COPIED,
    "include_opponent_observation": Outside("the engine's critic input (CoreEngine.critic_obs), not the fight's"),
    "first_player_baseline": COPIED,
    "extra": Outside("options for wrappers (the scripted opponent's name), not the simulator's"),
}
"""Every `FightParams` field: `COPIED`, the `nh_reset_params` members `reset_params` derives it into (enum
positions, the §12.7 identifier rule resolved into a fixed build, the opponent into `self_play`), or why the
core does not see it."""

# ---- PlayerState -> nh_player --------------------------------------------------------------------------------

PENDING_HIT_FIELDS: dict[str, CField] = {
    "attacker": CField("int"),
    "damages": CField("int_list", length="NH_MAX_HIT_DAMAGES", count="n_damages"),
    "accurate": CField("bool"),
    "delay": CField("int"),
    "style": CField("int"),
    "effect": CField("int"),
}
"""`state.PendingHit` -> `nh_pending_hit` (the attacker as its player index, the effect as `EFFECTS`' position)."""

LOADOUT_FIELDS: dict[str, CField | Outside] = {
    "build": CField("int"),
    "base_levels": Outside("the player's `base` holds them"),
    "spellbook": CField("int"),
    "fight_mode": CField("int"),
    "sets": CField("gear_sets", length="NH_NUM_GEAR_SETS", count="set_len"),
    "set_prayers": Outside("the build's, in NH_BUILD_SPECS (generated): no per-player copy"),
    "equipment": CField("ints", length="NH_NUM_SLOTS"),
    "inventory": CField("ints", length="NH_INVENTORY_SIZE"),
    "primary_food": CField("int"),
    "melee_special_weapon": CField("opt_int", none="NH_EMPTY"),
    "ranged_weapon": CField("int"),
    "ranged_special": CField("bool"),
    "magic_weapon": CField("opt_int", none="NH_EMPTY"),
    "has_nightmare_staff": CField("bool"),
}
"""`loadouts.Loadout` -> `nh_loadout`."""

PLAYER_FIELDS: dict[str, CField] = {
    "index": CField("int"),
    "loadout": CField("struct", table="NH_LOADOUT_FIELDS", struct="nh_loadout"),
    "base": CField("ints", length="NH_NUM_SKILLS"),
    "level": CField("ints", length="NH_NUM_SKILLS"),
    "equipment": CField("ints", length="NH_NUM_SLOTS"),
    "inventory": CField("ints", length="NH_INVENTORY_SIZE"),
    "spellbook": CField("int"),
    "fight_mode": CField("int"),
    "is_baseline": CField("bool"),
    "bonuses": CField("ints", length="NH_NUM_BONUSES"),
    "style": CField("style", member="weapon_class", count="style"),
    "timer_ticks": CField("ints", length="NH_NUM_TIMER_IDS"),
    "timer_uncapped": CField("ints", length="NH_NUM_TIMER_IDS"),
    "prayers": CField("prayers"),
    "prayer_drain_acc": CField("double"),
    "prayer_drain_running": CField("bool"),
    "special_energy": CField("int"),
    "special_armed": CField("bool"),
    "gmaul_queued": CField("int"),
    "special_regen_running": CField("bool"),
    "vengeance": CField("bool"),
    "target": CField("opt_int", none="NH_NO_PLAYER"),
    "last_attacker": CField("opt_int", none="NH_NO_PLAYER"),
    "last_hit_received_tick": CField("int"),
    "selected_spell": CField("opt_int", none="NH_NO_SPELL"),
    "previous_spell": CField("opt_int", none="NH_NO_SPELL"),
    "auto_retaliate": CField("bool"),
    "hit_queue": CField(
        "structs",
        length="NH_MAX_HIT_QUEUE",
        count="n_hit_queue",
        table="NH_PENDING_HIT_FIELDS",
        struct="nh_pending_hit",
    ),
    "damage_queue": CField("int_list", length="NH_MAX_DAMAGE_QUEUE", count="n_damage_queue"),
    "hitsplats": CField("int_list", length="NH_MAX_HITSPLATS", count="n_hitsplats"),
    "x": CField("int"),
    "y": CField("int"),
    "walk_queue": CField("walk_queue", length="NH_MAX_WALK_QUEUE", count="n_walk_queue", aux="walk_head"),
    "moving": CField("bool"),
    "running": CField("bool"),
    "run_energy": CField("int"),
    "last_run_recovery_tick": CField("int"),
    "spawn": CField("int_tuple", length="2"),
    "pid": CField("double"),
    "pid_countdown": CField("int"),
    "poison_damage": CField("int"),
    "dying": CField("bool"),
    "remembered_target": CField("opt_int", none="NH_NO_PLAYER"),
}
"""`state.PlayerState` -> `nh_player`, in the dataclass's field order: the snapshot `FightBatch.player`
returns (and the test drivers' `set_player` loads) is made from this table alone."""

# ---- TickEvents -> nh_tick_events ------------------------------------------------------------------------------

HIT_RECORD_HIT_FIELDS: dict[str, CField] = {
    name: CField(f.kind, member=f"hit.{name}", length=f.length, count=f"hit.{f.count}" if f.count else "")
    for name, f in PENDING_HIT_FIELDS.items()
    if name != "delay"
}
"""A `HitRecord`'s hit, inlined: its `PendingHit` fields but the delay (the record holds a copy of the hit
taken at creation, whose delay nothing reads, nh_state.h)."""

HIT_RECORD_FIELDS: dict[str, CField | Outside] = {
    "hit": Outside("inlined: its fields but the delay are the record's keys (HIT_RECORD_HIT_FIELDS)"),
    "attack_speed": CField("int"),
    "defender_protection": CField("opt_int", none="-1"),
    "smite": CField("bool"),
}
"""`stats.HitRecord` -> `nh_hit_record`."""

TICK_EVENTS_FIELDS: dict[str, CField] = {
    "hits": CField("structs", length="NH_MAX_TICK_HITS", count="n_hits", table="NH_HIT_RECORD_FIELDS",
                   struct="nh_hit_record"),
    "extra_damage_dealt": CField("int"),
    "healed": CField("int"),
    "eat_at_hp": CField("opt_int", none="NH_NO_VALUE"),
    "wasted_food": CField("int"),
    "wasted_brew": CField("int"),
}
"""`stats.TickEvents` -> `nh_tick_events` (`FightBatch.events`)."""

EFFECTS: tuple[str, ...] = ("", "statius", "ags_sacrifice", "morrigan_bleed")
"""`PendingHit.effect`'s tags (combat._effect) in the order of the core's numbering (`NH_EFFECT_*`)."""

# ---- signals (§17.1) -> nh_signals -------------------------------------------------------------------------------

SIGNALS: dict[str, CField] = {
    "damageGeneratedOnTargetScale": CField("double", "damage_generated_on_target_scale"),
    "damageGeneratedOnPlayerScale": CField("double", "damage_generated_on_player_scale"),
    "damageDealt": CField("double", "damage_dealt"),
    "damageReceived": CField("double", "damage_received"),
    "extraDamageDealtOnTargetScale": CField("double", "extra_damage_dealt_on_target_scale"),
    "extraDamageDealtOnPlayerScale": CField("double", "extra_damage_dealt_on_player_scale"),
    "hitWithSmite": CField("bool", "hit_with_smite"),
    "targetAttackedWithSmite": CField("bool", "target_attacked_with_smite"),
    "playerHealedScale": CField("double", "player_healed_scale"),
    "targetHealedScale": CField("double", "target_healed_scale"),
    "currentTargetPrayerType": CField("style_name", "current_target_prayer_type"),
    "targetAttackStyleType": CField("style_name", "target_attack_style_type"),
    "playerFrozenTicks": CField("int", "player_frozen_ticks"),
    "targetFrozenTicks": CField("int", "target_frozen_ticks"),
    "currentPrayerPercent": CField("double", "current_prayer_percent"),
    "attackLevelScale": CField("double", "attack_level_scale"),
    "strengthLevelScale": CField("double", "strength_level_scale"),
    "defenceLevelScale": CField("double", "defence_level_scale"),
    "rangedLevelScale": CField("double", "ranged_level_scale"),
    "magicLevelScale": CField("double", "magic_level_scale"),
    "remainingFoodScale": CField("double", "remaining_food_scale"),
    "targetRemainingFoodScale": CField("double", "target_remaining_food_scale"),
    "remainingBrewScale": CField("double", "remaining_brew_scale"),
    "targetRemainingBrewScale": CField("double", "target_remaining_brew_scale"),
    "protectedPrayer": CField("bool", "protected_prayer", present="has_received"),
    "targetHitAttackSpeed": CField("int", "target_hit_attack_speed", present="has_received"),
    "attackTypeReceived": CField("style_name", "attack_type_received", present="has_received"),
    "playerPrayerType": CField("style_name", "player_prayer_type", present="has_received"),
    "hitOffPrayer": CField("bool", "hit_off_prayer", present="has_hit"),
    "playerHitAttackSpeed": CField("int", "player_hit_attack_speed", present="has_hit"),
    "attackTypeHit": CField("style_name", "attack_type_hit", present="has_hit"),
    "targetPrayerType": CField("style_name", "target_prayer_type", present="has_hit"),
    "eatAtFoodScale": CField("double", "eat_at_food_scale", present="has_eat_at"),
    "wastedFoodScale": CField("double", "wasted_food_scale", present="has_wasted_food"),
    "wastedBrewScale": CField("double", "wasted_brew_scale", present="has_wasted_brew"),
}
"""`rewards.signals_for`'s keys -> `nh_signals` (`FightBatch.signals` builds the dict from this table; the
differential tests compare it with the Python dict key for key)."""

# ---- RewardWeights -> nh_reward_weights ---------------------------------------------------------------------------

@dataclass(frozen=True)
class WeightGroup:
    """The `RewardWeights` fields of one declared type, as `nh_reward_weights` holds them."""

    prefix: str
    """C numbering of the fields (`<prefix><FIELD>`), indices into the struct's array."""
    count: str
    """C name of the number of fields."""
    names: str
    """C name of the generated table of field names the binding reads them by."""


WEIGHT_GROUPS: dict[str, WeightGroup] = {
    "Schedule": WeightGroup("NH_W_", "NH_NUM_SCHEDULED_WEIGHTS", "NH_SCHEDULED_WEIGHT_NAMES"),
    "float": WeightGroup("NH_FW_", "NH_NUM_FLOAT_WEIGHTS", "NH_FLOAT_WEIGHT_NAMES"),
    "bool": WeightGroup("NH_SW_", "NH_NUM_WEIGHT_SWITCHES", "NH_SWITCH_NAMES"),
}
"""`RewardWeights` fields by declared type: schedules (`scheduled[]`), plain floats (`floats[]`) and switches
(`switches[]`) of `nh_reward_weights`. A field of another type stops the generation."""
