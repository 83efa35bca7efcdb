"""What a person can do on the play page, as the 12 action heads of spec §14, and how a tick's action is built.

Why a table of controls rather than 12 head pickers: an OSRS player thinks "freeze him", "swap to range",
"combo eat", not "head 0 = 1, head 3 = 1". Each `Control` is one button (and one key) that sets a few
(head, value) pairs that belong together, so a control can never break a §14.2 dependency by itself (a spell
always comes with the magic style, a farcast step with its distance). A control is enabled exactly when every
one of its pairs is legal under the person's environment mask (§14.3); the server checks the same rule on
every message, so a page that is tampered with still cannot send what the agent could not.

At each tick the person's choices become one 12-head action through the contract's own sampler,
`apply_dependencies_and_force` (§14.2: dependencies, then value 0 forced where nothing is legal, single legal
values taken as they are): the choice where one was made and is legal, else the default below. Defaults follow
what the game does when you click nothing, within what the contract allows:

* **attack** (heads 0–3): no new attack while yours is on cooldown; when it is ready the contract requires an
  attack (§14.3: "no attack" is legal only during the cooldown), so you keep attacking in the style of the
  weapon you hold (magic: the last spell you cast, ice at first). A special attack is used once.
* **prayer** (head 11): the overhead you chose last stays chosen; without one, the active overhead is kept;
  with neither, the first legal one (§14.3 makes "no change" legal only when nothing else is).
* **food, potions, karambwan, vengeance, movement** (heads 4–7, 9–10): once, on the next tick, then cleared.
* **tank gear** (head 8) is never chosen: §14.2 forces it (worn on ticks without an attack when the opponent's
  attack is ready).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from envs.nh.contract import (
    HEAD_OFFSETS,
    HEADS,
    NUM_HEADS,
    AttackHead,
    FarcastHead,
    FoodHead,
    Head,
    KarambwanHead,
    MageType,
    MeleeType,
    MovementHead,
    PotionHead,
    PrayerHead,
    RangedType,
    VengHead,
    apply_dependencies_and_force,
    check_action,
)

Pair = tuple[int, int]
"""(head, value) of spec §14.1."""

ATTACK_GROUP = "attack"
PRAYER_GROUP = "prayer"
STICKY_GROUPS = frozenset({PRAYER_GROUP})
"""Groups whose choice lasts until changed; every other group's choice is used once, on the next tick."""


@dataclass(frozen=True, slots=True)
class Control:
    """One button of the page and its key.

    Attributes:
        id: Stable name the page sends (``{"type": "control", "id": ...}``).
        label: What the button says.
        group: Choices in one group replace each other (``attack``, ``prayer``, ``potion``, ...).
        pairs: The (head, value) pairs it sets; legal when every pair is legal under the mask (§14.3).
        key: Default keyboard shortcut (``KeyboardEvent.key``, lower case); the page lets the person remap it.
        any_of: For a shortcut that stands for other controls (special attack, combo eat): the controls it may
            pick, in order of preference; it is legal when one of them is.
        all_legal: With `any_of`: pick every legal one (combo eat) instead of the first (special attack).
    """

    id: str
    label: str
    group: str
    pairs: tuple[Pair, ...] = ()
    key: str = ""
    any_of: tuple[str, ...] = ()
    all_legal: bool = False

    def legal(self, mask: npt.NDArray[np.bool_]) -> bool:
        """Whether the environment mask (45 booleans, §14.3) allows every pair of this control."""
        if self.any_of:
            return any(CONTROLS[c].legal(mask) for c in self.any_of)
        return all(bool(mask[HEAD_OFFSETS[h] + v]) for h, v in self.pairs)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "group": self.group,
            "pairs": [list(p) for p in self.pairs],
            "key": self.key,
            "any_of": list(self.any_of),
        }


def _c(id: str, label: str, group: str, *pairs: Pair, key: str = "") -> Control:
    return Control(id, label, group, tuple((int(h), int(v)) for h, v in pairs), key)


_FARCAST = tuple(
    _c(f"farcast_{d}", f"farcast {d}", "movement", (Head.MOVEMENT, MovementHead.FARCAST),
       (Head.FARCAST_DISTANCE, FarcastHead(d - 1)))
    for d in range(2, 8)
)  # fmt: skip

CONTROL_LIST: tuple[Control, ...] = (
    # prayers (head 11)
    _c("protect_magic", "Protect from Magic", PRAYER_GROUP, (Head.PRAYER, PrayerHead.PROTECT_MAGIC), key="q"),
    _c("protect_missiles", "Protect from Missiles", PRAYER_GROUP, (Head.PRAYER, PrayerHead.PROTECT_MISSILES), key="w"),
    _c("protect_melee", "Protect from Melee", PRAYER_GROUP, (Head.PRAYER, PrayerHead.PROTECT_MELEE), key="e"),
    _c("smite", "Smite", PRAYER_GROUP, (Head.PRAYER, PrayerHead.SMITE), key="r"),
    _c("redemption", "Redemption", PRAYER_GROUP, (Head.PRAYER, PrayerHead.REDEMPTION), key="t"),
    # gear switches are attacks: a style equips its set (§5.7); heads 0-3
    _c("ice", "Ice spell (freeze)", ATTACK_GROUP, (Head.ATTACK, AttackHead.MAGIC),
       (Head.MAGE_ATTACK_TYPE, MageType.ICE), key="1"),
    _c("blood", "Blood spell", ATTACK_GROUP, (Head.ATTACK, AttackHead.MAGIC),
       (Head.MAGE_ATTACK_TYPE, MageType.BLOOD), key="2"),
    _c("ranged", "Ranged", ATTACK_GROUP, (Head.ATTACK, AttackHead.RANGED),
       (Head.RANGED_ATTACK_TYPE, RangedType.NORMAL), key="3"),
    _c("melee", "Melee", ATTACK_GROUP, (Head.ATTACK, AttackHead.MELEE),
       (Head.MELEE_ATTACK_TYPE, MeleeType.NORMAL), key="4"),
    _c("melee_spec", "Melee special", ATTACK_GROUP, (Head.ATTACK, AttackHead.MELEE),
       (Head.MELEE_ATTACK_TYPE, MeleeType.SPECIAL), key="5"),
    _c("ranged_spec", "Ranged special", ATTACK_GROUP, (Head.ATTACK, AttackHead.RANGED),
       (Head.RANGED_ATTACK_TYPE, RangedType.SPECIAL), key="6"),
    _c("magic_spec", "Magic special", ATTACK_GROUP, (Head.ATTACK, AttackHead.MAGIC),
       (Head.MAGE_ATTACK_TYPE, MageType.SPECIAL), key="7"),
    _c("no_attack", "No new attack", ATTACK_GROUP, (Head.ATTACK, AttackHead.NONE), key="x"),
    Control("freeze", "Freeze", ATTACK_GROUP, key="f", any_of=("ice",)),
    Control("special", "Special attack", ATTACK_GROUP, key="s", any_of=("melee_spec", "ranged_spec", "magic_spec")),
    # inventory (heads 4-7)
    _c("eat", "Eat food", "food", (Head.FOOD, FoodHead.EAT), key="a"),
    _c("karambwan", "Karambwan", "karambwan", (Head.KARAMBWAN, KarambwanHead.EAT), key="k"),
    _c("brew", "Saradomin brew", "potion", (Head.POTION, PotionHead.BREW), key="b"),
    _c("restore", "Super restore", "potion", (Head.POTION, PotionHead.RESTORE), key="n"),
    _c("combat", "Super combat", "potion", (Head.POTION, PotionHead.COMBAT), key="m"),
    _c("ranging", "Ranging potion", "potion", (Head.POTION, PotionHead.RANGING), key="j"),
    Control("combo", "Combo eat", "combo", key="c", any_of=("eat", "brew", "karambwan"), all_legal=True),
    _c("vengeance", "Vengeance", "veng", (Head.VENG, VengHead.CAST), key="v"),
    # movement (heads 9-10)
    _c("adjacent", "Step next to", "movement", (Head.MOVEMENT, MovementHead.ADJACENT), key="h"),
    _c("under", "Step under", "movement", (Head.MOVEMENT, MovementHead.UNDER), key="u"),
    _c("diagonal", "Step diagonal", "movement", (Head.MOVEMENT, MovementHead.DIAGONAL), key="y"),
    Control("farcast", "Farcast (chosen distance)", "movement", key="l",
            any_of=tuple(c.id for c in _FARCAST)),
    *_FARCAST,
)  # fmt: skip
"""Every control of the page, in the order it lays them out."""

CONTROLS: dict[str, Control] = {c.id: c for c in CONTROL_LIST}
_OVERHEAD_VALUES = {
    "protect_from_magic": PrayerHead.PROTECT_MAGIC,
    "protect_from_missiles": PrayerHead.PROTECT_MISSILES,
    "protect_from_melee": PrayerHead.PROTECT_MELEE,
    "smite": PrayerHead.SMITE,
    "redemption": PrayerHead.REDEMPTION,
}
"""A replay state's ``overhead`` name (`osrs_rllib.replay.state.overhead`) → its head-11 value."""
_WEAPON_STYLE = {"magic": AttackHead.MAGIC, "ranged": AttackHead.RANGED, "melee": AttackHead.MELEE}
_SUBHEAD = {AttackHead.MELEE: Head.MELEE_ATTACK_TYPE, AttackHead.RANGED: Head.RANGED_ATTACK_TYPE,
            AttackHead.MAGIC: Head.MAGE_ATTACK_TYPE}  # fmt: skip


class InputError(ValueError):
    """A choice the page sent that cannot be taken: unknown, malformed or not legal now (the message says which)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _check_mask(mask: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    return np.asarray(mask, dtype=bool).reshape(-1)


def _describe(pairs: Sequence[Pair]) -> str:
    return ", ".join(f"{HEADS[h].id}={HEADS[h].value_names[v]}" for h, v in pairs)


@dataclass
class Choices:
    """What the person has chosen for the next tick(s): one control per group, or a whole raw action.

    Attributes:
        chosen: Group → control id (`CONTROLS`); `STICKY_GROUPS` survive a tick, the others are used once.
        raw: A full 12-head action sent as such (tools, tests); used once, ahead of every control.
        last_spell: The magic sub-type cast last (ice or blood): the default spell of a magic attack.
    """

    chosen: dict[str, str] = field(default_factory=dict)
    raw: tuple[int, ...] | None = None
    last_spell: int = int(MageType.ICE)

    def choose(self, control_id: Any, mask: npt.ArrayLike) -> list[str]:
        """Take the control `control_id` if it is legal under `mask` (a shortcut takes the controls it stands
        for); returns the ids taken.

        Raises:
            InputError: Unknown id, or not legal now (``illegal``: its head values are masked, §14.3).
        """
        m = _check_mask(mask)
        if not isinstance(control_id, str) or control_id not in CONTROLS:
            raise InputError("unknown_control", f"unknown control {control_id!r}; valid: {', '.join(CONTROLS)}")
        control = CONTROLS[control_id]
        if not control.legal(m):
            what = _describe(control.pairs) if control.pairs else " or ".join(control.any_of)
            raise InputError("illegal", f"{control.label} is not legal now ({what} is masked, spec §14.3)")
        if control.any_of:
            legal = [c for c in control.any_of if CONTROLS[c].legal(m)]
            taken = legal if control.all_legal else legal[:1]
        else:
            taken = [control.id]
        for cid in taken:
            self.chosen[CONTROLS[cid].group] = cid
        self.raw = None
        return taken

    def set_raw(self, action: Any, mask: npt.ArrayLike) -> tuple[int, ...]:
        """Take a whole action for the next tick, checked with the contract's validator (`check_action`: 12
        integers in range) and against the mask and the §14.2 dependencies.

        Raises:
            InputError: ``bad_action`` (not 12 head values in range) or ``illegal`` (a head value the mask or a
                dependency forbids; value 0 where it is forced is fine).
        """
        try:
            values = check_action(action)
        except ValueError as exc:
            raise InputError("bad_action", str(exc)) from None
        m = _check_mask(mask)

        def same(head: Head, legal: npt.NDArray[np.bool_]) -> int:
            v = int(values[head])
            if not legal[v]:
                allowed = [HEADS[head].value_names[i] for i in np.flatnonzero(legal)]
                raise InputError("illegal", f"head {int(head)} ({HEADS[head].id}) = {HEADS[head].value_names[v]} is "
                                 f"not legal now; legal: {', '.join(allowed)} (spec §14.2, §14.3)")  # fmt: skip
            return v

        built = apply_dependencies_and_force(m, same)
        if not np.array_equal(built, values):
            h = int(np.flatnonzero(built != values)[0])
            raise InputError("illegal", f"head {h} ({HEADS[h].id}) must be {HEADS[h].value_names[built[h]]} here: "
                             "the only legal value (spec §14.2 forcing)")  # fmt: skip
        self.raw = tuple(int(v) for v in values)
        return self.raw

    def clear(self) -> None:
        """Forget every choice that is used once (the sticky prayer stays)."""
        self.chosen = {g: c for g, c in self.chosen.items() if g in STICKY_GROUPS}
        self.raw = None

    def pending(self) -> list[str]:
        """The chosen control ids (what the page highlights)."""
        return sorted(self.chosen.values())

    def action(self, mask: npt.ArrayLike, me: Mapping[str, Any]) -> npt.NDArray[np.int64]:
        """This tick's 12-head action from the choices and the defaults of the module docstring.

        Args:
            mask: The person's environment mask for this tick (§14.3).
            me: The person's state as a replay stores it (`osrs_rllib.replay.state.player_state`): the weapon
                style and the active overhead set the defaults.
        """
        m = _check_mask(mask)
        if self.raw is not None:
            raw = self.raw
            return apply_dependencies_and_force(m, lambda head, legal: raw[head] if legal[raw[head]] else _first(legal))
        wanted = np.zeros(NUM_HEADS, dtype=np.int64)
        set_heads: set[int] = set()
        for cid in self.chosen.values():
            for h, v in CONTROLS[cid].pairs:
                wanted[h] = v
                set_heads.add(h)
        default_style = _WEAPON_STYLE.get(str(me.get("weapon_style")), AttackHead.MAGIC)
        overhead = _OVERHEAD_VALUES.get(str(me.get("overhead")))

        def choose(head: Head, legal: npt.NDArray[np.bool_]) -> int:
            if head in set_heads and legal[wanted[head]]:
                return int(wanted[head])
            if head == Head.ATTACK:
                if legal[AttackHead.NONE]:
                    return int(AttackHead.NONE)
                return int(default_style) if legal[default_style] else _first(legal)
            if head in (Head.MELEE_ATTACK_TYPE, Head.RANGED_ATTACK_TYPE):
                return 1 if legal[1] else _first(legal)
            if head == Head.MAGE_ATTACK_TYPE:
                for v in (self.last_spell, MageType.ICE, MageType.BLOOD):
                    if legal[v]:
                        return int(v)
                return _first(legal)
            if head == Head.PRAYER and overhead is not None and legal[overhead]:
                return int(overhead)
            return 0 if legal[0] else _first(legal)

        return apply_dependencies_and_force(m, choose)

    def after_tick(self, action: Sequence[int]) -> None:
        """The tick used the choices: drop the ones used once, remember the spell cast."""
        if int(action[Head.ATTACK]) == AttackHead.MAGIC and int(action[Head.MAGE_ATTACK_TYPE]) in (
            MageType.ICE,
            MageType.BLOOD,
        ):
            self.last_spell = int(action[Head.MAGE_ATTACK_TYPE])
        self.clear()


def _first(legal: npt.NDArray[np.bool_]) -> int:
    return int(np.flatnonzero(legal)[0])


def enabled_controls(mask: npt.ArrayLike) -> list[str]:
    """Ids of the controls legal under `mask` (the page computes the same from the mask bits and `pairs`)."""
    m = _check_mask(mask)
    return [c.id for c in CONTROL_LIST if c.legal(m)]


def describe_action(action: Sequence[int]) -> str:
    """An action in words, non-zero heads only (``attack=magic, mage_attack_type=ice, prayer=protect_magic``)."""
    parts = [(h, int(v)) for h, v in enumerate(action) if int(v) != 0]
    return _describe(parts) if parts else "nothing"
