"""The action and observation contract of the NH fight (spec §14 action space, §15 observation vector).

Everything the simulator, the policy network, the scripted opponents, the serving layer and an exported
model must agree on is declared here exactly once, and every size is derived from these declarations
rather than typed in a second time (STYLE "How these apply" 6, 7, 9):

* **Action heads (§14.1).** `Head` names the 12 heads in sampling order; one `IntEnum` per head names
  its values (`AttackHead.MAGIC`, `PrayerHead.PROTECT_MELEE`, …), so the §14.1 table reads in code.
  `HEADS` ties each head to its value enum and to the §14.3 mask rule of every value; `HEAD_SIZES`,
  `HEAD_OFFSETS` and `NUM_LOGITS` are derived from it.
* **Dependencies and forcing (§14.2).** `DEPENDENCIES` is the §14.2 table as rows. The environment
  returns the raw §14.3 masks (45 booleans in head order) and does not apply these rules: the action
  *sampler* does, which is either a policy or a scripted opponent calling
  `apply_dependencies_and_force`. `DEP_FORBIDS` is the same table as a fixed-size 45 × 45 matrix so that
  a torch policy can apply it with one matrix product per head (see its docstring).
* **Observation layout (§15.2).** The 176 entries live in `data/observation.csv` (index, id, flags,
  description), loaded and checked at import. `Obs` is an `IntEnum` generated from the ids (the encoder
  writes `out[Obs.PLAYER_USING_MELEE]`), and `PARTIAL_INDICES`, `CONSTANT_INDICES`, `CRITIC_SIZE` and
  `critic_vector` (§15.3) are derived from the flags.
* **Frame stacking (§15.3)** is `FrameStack`, and `contract_dict` / `export_contract_json` write all of
  the above as deterministic JSON for tools outside this package (serving, model export).

This module needs numpy only: no Ray, no torch, no simulator.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from common.atomic_files import write_text_atomic

CONTRACT_VERSION = "nh-contract/1"
"""Version of the contract as exported. Bump it whenever a head, a value, a dependency or an observation
entry (index, id or flag) changes, so that a model trained against one layout is not served another."""

DATA_DIR = Path(str(resources.files("envs.nh") / "data"))
OBSERVATION_CSV = DATA_DIR / "observation.csv"

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]

# ---------------------------------------------------------------------------------------------------------
# Action heads (§14.1)
# ---------------------------------------------------------------------------------------------------------


class Head(IntEnum):
    """The 12 action heads, in the order they are sampled (spec §14.1)."""

    ATTACK = 0
    MELEE_ATTACK_TYPE = 1
    RANGED_ATTACK_TYPE = 2
    MAGE_ATTACK_TYPE = 3
    POTION = 4
    FOOD = 5
    KARAMBWAN = 6
    VENG = 7
    GEAR = 8
    MOVEMENT = 9
    FARCAST_DISTANCE = 10
    PRAYER = 11


class AttackHead(IntEnum):
    """Head 0, attack style (§14.1, §5.7)."""

    NONE = 0
    MAGIC = 1
    RANGED = 2
    MELEE = 3


class MeleeType(IntEnum):
    """Head 1, melee attack type; only meaningful with `AttackHead.MELEE` (§5.7)."""

    NONE = 0
    NORMAL = 1
    SPECIAL = 2


class RangedType(IntEnum):
    """Head 2, ranged attack type; only meaningful with `AttackHead.RANGED` (§5.7)."""

    NONE = 0
    NORMAL = 1
    SPECIAL = 2


class MageType(IntEnum):
    """Head 3, magic attack type; only meaningful with `AttackHead.MAGIC` (§5.7)."""

    NONE = 0
    ICE = 1
    BLOOD = 2
    SPECIAL = 3


class PotionHead(IntEnum):
    """Head 4, potion to drink (§5.3, §8.3)."""

    NONE = 0
    BREW = 1
    RESTORE = 2
    COMBAT = 3
    RANGING = 4


class FoodHead(IntEnum):
    """Head 5, eat the primary food (§5.2)."""

    NONE = 0
    EAT = 1


class KarambwanHead(IntEnum):
    """Head 6, eat a cooked karambwan (§5.4)."""

    NONE = 0
    EAT = 1


class VengHead(IntEnum):
    """Head 7, cast Vengeance (§5.6)."""

    NONE = 0
    CAST = 1


class GearHead(IntEnum):
    """Head 8, tank gear (§5.5); never chosen freely, always forced by §14.2."""

    NO_SWAP = 0
    TANK = 1


class MovementHead(IntEnum):
    """Head 9, movement destination relative to the opponent's tile (§5.8)."""

    STAY = 0
    ADJACENT = 1
    UNDER = 2
    FARCAST = 3
    DIAGONAL = 4


class FarcastHead(IntEnum):
    """Head 10, farcast distance; value v means v + 1 tiles (§14.1, §5.8)."""

    NONE = 0
    DISTANCE_2 = 1
    DISTANCE_3 = 2
    DISTANCE_4 = 3
    DISTANCE_5 = 4
    DISTANCE_6 = 5
    DISTANCE_7 = 6


class PrayerHead(IntEnum):
    """Head 11, overhead prayer to activate (§5.1). `NO_CHANGE` is only ever forced (§14.3)."""

    NO_CHANGE = 0
    PROTECT_MAGIC = 1
    PROTECT_MISSILES = 2
    PROTECT_MELEE = 3
    SMITE = 4
    REDEMPTION = 5


def farcast_distance_tiles(value: int) -> int:
    """Distance in tiles selected by a head-10 value (§5.8: `k = head10 + 1`)."""
    return int(value) + 1


@dataclass(frozen=True, slots=True)
class HeadSpec:
    """One row of §14.1 with the §14.3 mask rule of each value.

    Attributes:
        head: The head.
        values: The IntEnum naming its values (contiguous from 0).
        mask_rules: For each value, the condition under which the environment mask allows it (§14.3).
    """

    head: Head
    values: type[IntEnum]
    mask_rules: tuple[str, ...]

    @property
    def id(self) -> str:
        """The §14.1 id of the head, e.g. ``"melee_attack_type"``."""
        return self.head.name.lower()

    @property
    def size(self) -> int:
        return len(self.values)

    @property
    def value_names(self) -> tuple[str, ...]:
        return tuple(v.name.lower() for v in self.values)


HEADS: tuple[HeadSpec, ...] = (
    HeadSpec(
        Head.ATTACK,
        AttackHead,
        (
            "not canAttack (no attack is only legal while the attack is on cooldown)",
            "iceOK or bloodOK or mageSpecOK",
            "rangedOK or rangedSpecOK",
            "meleeOK or meleeSpecOK",
        ),
    ),
    HeadSpec(Head.MELEE_ATTACK_TYPE, MeleeType, ("always", "meleeOK", "meleeSpecOK")),
    HeadSpec(Head.RANGED_ATTACK_TYPE, RangedType, ("always", "rangedOK", "rangedSpecOK")),
    HeadSpec(Head.MAGE_ATTACK_TYPE, MageType, ("always", "iceOK", "bloodOK", "mageSpecOK")),
    HeadSpec(
        Head.POTION,
        PotionHead,
        (
            "always",
            "POTION free and has a Saradomin brew and brewUseful",
            "POTION free and has a super restore and any of Att/Def/Str/Rng/Mag/Prayer below base",
            "POTION free and has a super combat and any of Att/Str/Def has base + floor(0.15 base) + 5 > "
            "current + 1",
            "POTION free and has a ranging potion and base + floor(0.10 base) + 4 > current + 1",
        ),
    ),
    HeadSpec(
        Head.FOOD,
        FoodHead,
        ("always", "FOOD free and has primary food and HP <= base if it is anglerfish, else HP < base"),
    ),
    HeadSpec(Head.KARAMBWAN, KarambwanHead, ("always", "KARAMBWAN free and has a karambwan and HP < base")),
    HeadSpec(Head.VENG, VengHead, ("always", "VENGEANCE_COOLDOWN remaining = 0 and Lunar spellbook")),
    HeadSpec(Head.GEAR, GearHead, ("always", "opponent ATTACK remaining = 0")),
    HeadSpec(
        Head.MOVEMENT,
        MovementHead,
        (
            "always",
            "moveOK and adjOK",
            "moveOK and underOK",
            "moveOK and (farOK(2) or ... or farOK(7))",
            "moveOK and diagOK",
        ),
    ),
    HeadSpec(
        Head.FARCAST_DISTANCE,
        FarcastHead,
        ("always", *(f"farOK({farcast_distance_tiles(v)})" for v in list(FarcastHead)[1:])),
    ),
    HeadSpec(
        Head.PRAYER,
        PrayerHead,
        (
            "never (value 0 is only forced, when every other value is masked, §14.2)",
            "protectOK and opponent not known to be Lunar",
            "protectOK",
            "protectOK and (canMove or targetCanMove or inMeleeRange)",
            "smiteOK",
            "redemptionOK",
        ),
    ),
)
"""The §14.1 table: one `HeadSpec` per head, in sampling order."""


def _check_heads(heads: Sequence[HeadSpec]) -> None:
    for i, spec in enumerate(heads):
        if spec.head != i:
            raise ValueError(f"HEADS[{i}] is {spec.head!r}; heads must be listed in sampling order (§14.1)")
        if [int(v) for v in spec.values] != list(range(spec.size)):
            raise ValueError(f"{spec.values.__name__}: head values must be contiguous from 0 (§14.1)")
        if len(spec.mask_rules) != spec.size:
            raise ValueError(
                f"{spec.head!r}: {len(spec.mask_rules)} mask rules for {spec.size} values (§14.3)"
            )


_check_heads(HEADS)

NUM_HEADS = len(HEADS)
HEAD_SIZES: tuple[int, ...] = tuple(spec.size for spec in HEADS)
HEAD_OFFSETS: tuple[int, ...] = tuple(itertools.accumulate(HEAD_SIZES[:-1], initial=0))
"""Index of each head's value 0 in the flat 45-entry logit / mask vector."""
NUM_LOGITS = sum(HEAD_SIZES)
MAX_HEAD_SIZE = max(HEAD_SIZES)
HEAD_SLICES: tuple[slice, ...] = tuple(
    slice(off, off + size) for off, size in zip(HEAD_OFFSETS, HEAD_SIZES, strict=True)
)
LOGIT_HEAD: IntArray = np.repeat(np.arange(NUM_HEADS, dtype=np.int64), HEAD_SIZES)
"""Head of each of the 45 logits."""
LOGIT_VALUE: IntArray = np.concatenate([np.arange(size, dtype=np.int64) for size in HEAD_SIZES])
"""Value (within its head) of each of the 45 logits."""
for _arr in (LOGIT_HEAD, LOGIT_VALUE):
    _arr.flags.writeable = False


def masked_random_actions(rng: np.random.Generator, masks: npt.NDArray[np.bool_]) -> npt.NDArray[np.int32]:
    """Random legal actions for masks of shape ``(..., 45)``, for a whole batch in a few numpy calls per head.

    Heads are drawn in order, each uniform over the values its mask allows *and* the §14.2 dependencies on the
    heads drawn before it allow, value 0 where nothing is left (§14.2 forcing): the distribution of
    `apply_dependencies_and_force` with a uniform `choose`, so benchmarks and soaks play the actions a masked
    policy can play, not combinations no policy would send.
    """
    masks = np.asarray(masks, dtype=np.bool_)
    scores = rng.random(masks.shape)
    allowed = masks.copy()
    out = np.empty((*masks.shape[:-1], NUM_HEADS), dtype=np.int32)
    for h, cols in enumerate(HEAD_SLICES):
        value = np.where(allowed[..., cols], scores[..., cols], -1.0).argmax(axis=-1)  # none legal: 0
        out[..., h] = value
        allowed &= ~DEP_FORBIDS[HEAD_OFFSETS[h] + value]
    return out


_HEAD_LIMITS = np.asarray(HEAD_SIZES, dtype=np.int64)
_ACTION_RANGES = ", ".join(f"{spec.id} 0..{spec.size - 1}" for spec in HEADS)


def check_action(action: Any) -> npt.NDArray[np.int64]:
    """`action` as the 12 head values the simulator takes, or a `ValueError` that says what an action is.

    Why not an `assert`: a bad action from a user's code must fail with a message that names the expected
    shape and ranges, also under ``python -O`` (which strips asserts).
    """
    arr = np.asarray(action)
    if arr.shape != (NUM_HEADS,):
        raise ValueError(f"an NH action is {NUM_HEADS} integers, one per head (shape ({NUM_HEADS},)); got shape "
                         f"{arr.shape}. Ranges: {_ACTION_RANGES}")  # fmt: skip
    if arr.dtype.kind not in "iu":
        integral = arr.dtype.kind in "fb" and bool(np.all(np.isfinite(arr))) and bool(np.all(arr == np.floor(arr)))
        if not integral:
            raise ValueError(f"an NH action is {NUM_HEADS} integers; got {arr.tolist()!r} ({arr.dtype})")
    arr = arr.astype(np.int64, copy=False)
    bad = (arr < 0) | (arr >= _HEAD_LIMITS)
    if bad.any():  # checked every tick for every seat: the index search only when something is wrong
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"head {i} ({HEADS[i].id}) value {int(arr[i])} is out of range 0..{HEAD_SIZES[i] - 1}. "
                         f"Ranges: {_ACTION_RANGES}")  # fmt: skip
    return arr


def logit_index(head: int, value: int) -> int:
    """Position of `(head, value)` in the flat 45-entry mask / logit vector (§14.2: head order)."""
    if not 0 <= value < HEAD_SIZES[head]:
        raise ValueError(f"value {value} out of range for head {Head(head).name} (size {HEAD_SIZES[head]})")
    return HEAD_OFFSETS[head] + int(value)


def split_mask(mask: npt.ArrayLike) -> tuple[BoolArray, ...]:
    """Views of a 45-entry mask, one per head (§14.2 layout)."""
    flat = _as_mask(mask)
    return tuple(flat[sl] for sl in HEAD_SLICES)


# ---------------------------------------------------------------------------------------------------------
# Dependencies between heads (§14.2)
# ---------------------------------------------------------------------------------------------------------

DependencyOp = Literal["eq", "ne"]


@dataclass(frozen=True, slots=True)
class Dependency:
    """One row of §14.2: `head.value` is allowed only if `required_head op required_value`."""

    head: Head
    value: int
    required_head: Head
    op: DependencyOp
    required_value: int

    def allows(self, required_head_choice: int) -> bool:
        """Whether this row allows `head.value` given the choice made for `required_head`."""
        return (int(required_head_choice) == self.required_value) == (self.op == "eq")


def _allowed_only_if(
    head: Head, values: Sequence[IntEnum], required_head: Head, op: DependencyOp, required_value: IntEnum
) -> tuple[Dependency, ...]:
    return tuple(Dependency(head, int(v), required_head, op, int(required_value)) for v in values)


DEPENDENCIES: tuple[Dependency, ...] = (
    # Each call: head, its values, then "allowed only if" required_head op required_value (§14.2 order).
    *_allowed_only_if(Head.MELEE_ATTACK_TYPE, [MeleeType.NONE], Head.ATTACK, "ne", AttackHead.MELEE),
    *_allowed_only_if(
        Head.MELEE_ATTACK_TYPE, [MeleeType.NORMAL, MeleeType.SPECIAL], Head.ATTACK, "eq", AttackHead.MELEE
    ),
    *_allowed_only_if(Head.RANGED_ATTACK_TYPE, [RangedType.NONE], Head.ATTACK, "ne", AttackHead.RANGED),
    *_allowed_only_if(
        Head.RANGED_ATTACK_TYPE, [RangedType.NORMAL, RangedType.SPECIAL], Head.ATTACK, "eq", AttackHead.RANGED
    ),
    *_allowed_only_if(Head.MAGE_ATTACK_TYPE, [MageType.NONE], Head.ATTACK, "ne", AttackHead.MAGIC),
    *_allowed_only_if(
        Head.MAGE_ATTACK_TYPE,
        [MageType.ICE, MageType.BLOOD, MageType.SPECIAL],
        Head.ATTACK,
        "eq",
        AttackHead.MAGIC,
    ),
    *_allowed_only_if(Head.GEAR, [GearHead.NO_SWAP], Head.ATTACK, "ne", AttackHead.NONE),
    *_allowed_only_if(Head.GEAR, [GearHead.TANK], Head.ATTACK, "eq", AttackHead.NONE),
    *_allowed_only_if(Head.FARCAST_DISTANCE, [FarcastHead.NONE], Head.MOVEMENT, "ne", MovementHead.FARCAST),
    *_allowed_only_if(
        Head.FARCAST_DISTANCE, list(FarcastHead)[1:], Head.MOVEMENT, "eq", MovementHead.FARCAST
    ),
)
"""The §14.2 table, one row per constrained (head, value). Values without a row are always allowed."""


def _check_dependencies(rows: Sequence[Dependency]) -> None:
    for row in rows:
        if not row.required_head < row.head:
            raise ValueError(f"{row}: a head may only depend on a head sampled before it (§14.1 order)")
        if not 0 <= row.value < HEAD_SIZES[row.head]:
            raise ValueError(f"{row}: value out of range for {row.head.name}")
        if not 0 <= row.required_value < HEAD_SIZES[row.required_head]:
            raise ValueError(f"{row}: required value out of range for {row.required_head.name}")
        if row.op not in ("eq", "ne"):
            raise ValueError(f"{row}: op must be 'eq' or 'ne'")


_check_dependencies(DEPENDENCIES)

_ROWS_BY_LOGIT: tuple[tuple[Dependency, ...], ...] = tuple(
    tuple(row for row in DEPENDENCIES if logit_index(row.head, row.value) == logit)
    for logit in range(NUM_LOGITS)
)

HEAD_PARENTS: tuple[tuple[Head, ...], ...] = tuple(
    tuple(sorted({row.required_head for row in DEPENDENCIES if row.head == head})) for head in Head
)
"""For each head, the earlier heads its legality depends on (§14.2): heads 1, 2, 3, 8 on head 0, head 10
on head 9, the others on none."""


def _build_dep_forbids() -> BoolArray:
    forbids = np.zeros((NUM_LOGITS, NUM_LOGITS), dtype=np.bool_)
    for row in DEPENDENCIES:
        child = logit_index(row.head, row.value)
        for parent_value in range(HEAD_SIZES[row.required_head]):
            if not row.allows(parent_value):
                forbids[logit_index(row.required_head, parent_value), child] = True
    forbids.flags.writeable = False
    return forbids


DEP_FORBIDS: BoolArray = _build_dep_forbids()
"""The §14.2 table as a fixed-size (45, 45) matrix: `DEP_FORBIDS[p, c]` is true when choosing logit `p`
(a value of an earlier head) makes logit `c` illegal.

For a tensor implementation keep a one-hot float vector `chosen` (batch × 45) of the values sampled so
far (zeros for heads not sampled yet). Before sampling head `h`:
``dep_ok = (chosen @ DEP_FORBIDS.float())[:, HEAD_SLICES[h]] == 0``; ``legal = env_mask[h] & dep_ok``;
if ``legal`` has no true entry, value 0 is forced (§14.2), i.e. ``legal[:, 0] |= ~legal.any(-1)``. Only
parents matter because every row refers to an earlier head, so the product never reads unsampled heads.
"""

DEP_ALLOWED_AFTER: BoolArray = ~DEP_FORBIDS
"""`~DEP_FORBIDS`: row `p` is the 45-entry mask of logits still allowed after choosing logit `p`."""
DEP_ALLOWED_AFTER.flags.writeable = False


def dependency_allows(head: int, value: int, chosen: Sequence[int] | npt.NDArray[np.integer]) -> bool:
    """Whether §14.2 allows `head = value` given the values already chosen for the earlier heads.

    Args:
        head: The head about to be sampled.
        value: A value of that head.
        chosen: Values of heads 0, 1, … (at least up to every head `head` depends on); entries for
            `head` and later heads are ignored.

    Returns:
        True if every §14.2 row for `(head, value)` holds (values without a row are always allowed).

    Raises:
        ValueError: `value` is out of range, or `chosen` does not reach a head this value depends on.
    """
    for row in _ROWS_BY_LOGIT[logit_index(head, value)]:
        if row.required_head >= len(chosen):
            raise ValueError(
                f"{Head(head).name}={value} depends on {row.required_head.name}, but only "
                f"{len(chosen)} head(s) are chosen; sample heads in order 0 → 11 (§14.1)"
            )
        if not row.allows(int(chosen[row.required_head])):
            return False
    return True


def dependency_mask(head: int, chosen: Sequence[int] | npt.NDArray[np.integer]) -> BoolArray:
    """The §14.2 dependency mask of `head` (one boolean per value) given the earlier heads' choices."""
    return np.array([dependency_allows(head, v, chosen) for v in range(HEAD_SIZES[head])], dtype=np.bool_)


ChooseFn = Callable[[Head, BoolArray], int]
"""`choose(head, legal)` returns a value of `head` whose entry in `legal` is true. `legal` is a view into
a scratch buffer that is only valid during the call."""

_HEAD_MEMBERS: tuple[Head, ...] = tuple(Head)
_FORBIDDEN_AFTER: tuple[tuple[int, ...], ...] = tuple(
    tuple(int(c) for c in np.flatnonzero(DEP_FORBIDS[p])) for p in range(NUM_LOGITS)
)
"""Row `p` of `DEP_FORBIDS` as the logits it forbids, for the per-head loop of the sampler below."""
_HEAD_LOOP: tuple[tuple[int, int, int, slice, Head, bool], ...] = tuple(
    (head, HEAD_OFFSETS[head], HEAD_SIZES[head], HEAD_SLICES[head], _HEAD_MEMBERS[head], bool(HEAD_PARENTS[head]))
    for head in range(NUM_HEADS)
)
_LEGAL_PATTERNS: dict[tuple[int, tuple[bool, ...]], BoolArray] = {}
"""(head, legal flags) → a read-only bool array of them; `choose` gets a copy in the scratch buffer."""


def _legal_pattern(head: int, flags: tuple[bool, ...]) -> BoolArray:
    pattern = _LEGAL_PATTERNS.get((head, flags))
    if pattern is None:
        pattern = np.array(flags, dtype=np.bool_)
        pattern.flags.writeable = False
        _LEGAL_PATTERNS[(head, flags)] = pattern
    return pattern


def apply_dependencies_and_force(
    env_mask: npt.ArrayLike, choose: ChooseFn, out: IntArray | None = None
) -> IntArray:
    """Sample the 12 heads in order, applying the §14.2 dependencies and forcing.

    For each head 0 → 11 the head's environment mask (§14.3) is AND-ed with its dependency mask given
    the values chosen so far. With no legal value left, value 0 is forced (§14.2); with exactly one, that
    value is taken without asking `choose` (this is how head 8 ends up forced: given head 0, exactly one
    of its values survives the dependencies); otherwise `choose(head, legal)` picks. The result therefore
    never violates the environment mask or the dependency rules except where §14.2 forces 0.

    The loop runs on Python lists (numpy calls on 45 booleans cost more than they save); `legal` is
    still handed to `choose` as a bool array view, as `ChooseFn` promises.

    Args:
        env_mask: The 45 environment-mask booleans in head order (§14.2 layout), as the env returns them.
        choose: Picks a value among the legal ones (see `ChooseFn`).
        out: Optional int64 array of 12 to write the actions into (allocated if None).

    Returns:
        The 12 head values (int64), `out` if given.

    Raises:
        ValueError: The mask does not have 45 entries, or `choose` returned an illegal value.
    """
    flat = _as_mask(env_mask).tolist()
    actions = np.zeros(NUM_HEADS, dtype=np.int64) if out is None else out
    allowed = [True] * NUM_LOGITS
    legal_buf: BoolArray | None = None
    for head, off, size, sl, member, dependent in _HEAD_LOOP:
        if dependent:
            flags = tuple([flat[i] and allowed[i] for i in range(off, off + size)])
        else:  # no §14.2 row constrains this head: its environment mask is its legal set
            flags = tuple(flat[off : off + size])
        n_legal = flags.count(True)
        if n_legal == 0:
            value = 0  # §14.2: nothing legal forces value 0
        elif n_legal == 1:
            value = flags.index(True)
        else:
            if legal_buf is None:
                legal_buf = np.empty(NUM_LOGITS, dtype=np.bool_)
            legal = legal_buf[sl]
            legal[:] = _legal_pattern(head, flags)
            value = int(choose(member, legal))
            if not (0 <= value < size and legal[value]):
                raise ValueError(
                    f"choose() returned {value} for head {member.name}, legal values are "
                    f"{np.flatnonzero(legal).tolist()}"
                )
        actions[head] = value
        for logit in _FORBIDDEN_AFTER[off + value]:
            allowed[logit] = False
    return actions


def _as_mask(mask: npt.ArrayLike) -> BoolArray:
    arr = np.asarray(mask)
    if arr.shape != (NUM_LOGITS,):
        raise ValueError(
            f"action mask must have shape ({NUM_LOGITS},) (heads in order, §14.2), got {arr.shape}"
        )
    return arr if arr.dtype == np.bool_ else arr.astype(np.bool_)


# ---------------------------------------------------------------------------------------------------------
# Observation layout (§15.2)
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ObsEntry:
    """One entry of the observation vector (§15.2).

    Attributes:
        index: Position in the 176-entry vector.
        id: The §15.2 id, e.g. ``"player_using_melee"``.
        partial: Flag `P`: private to the observing player; the critic gets the opponent's copy (§15.3).
        constant: Flag `C`: constant for the whole episode (§15.1).
        description: The §15.2 definition.
    """

    index: int
    id: str
    partial: bool
    constant: bool
    description: str

    @property
    def flags(self) -> str:
        """The flags as the spec writes them: ``""``, ``"P"``, ``"C"`` or ``"P C"``."""
        return " ".join(f for f, on in (("P", self.partial), ("C", self.constant)) if on)


_OBS_COLUMNS = ["index", "id", "flags", "description"]
_ID_RE = re.compile(r"[a-z][a-z0-9_]*\Z")
_FLAGS = frozenset({"P", "C"})


def _data_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """Rows of a CSV data file with their line numbers; `#` lines are comments (as in items.csv)."""
    with path.open(newline="", encoding="utf-8") as fh:
        lines = [(n, line) for n, line in enumerate(fh, start=1) if line.strip() and not line.startswith("#")]
    numbers = [n for n, _ in lines]
    yield from zip(numbers, csv.reader(line for _, line in lines), strict=True)


def load_observation_layout(path: Path | str = OBSERVATION_CSV) -> tuple[ObsEntry, ...]:
    """Load and check an observation layout table (index, id, flags, description).

    Checks: the header, contiguous indices from 0 in row order, unique lower-case ids, flags made of
    `P` and `C`, and non-empty descriptions.

    Raises:
        ValueError: naming the file and line of the first bad row.
    """
    path = Path(path)
    rows = _data_rows(path)
    try:
        line, header = next(rows)
    except StopIteration:
        raise ValueError(f"{path}: empty observation table; expected a header {_OBS_COLUMNS}") from None
    if header != _OBS_COLUMNS:
        raise ValueError(f"{path}:{line}: header must be {_OBS_COLUMNS}, got {header}")
    entries: list[ObsEntry] = []
    seen: dict[str, int] = {}
    for line, row in rows:
        where = f"{path}:{line}"
        if len(row) != len(_OBS_COLUMNS):
            raise ValueError(f"{where}: expected {len(_OBS_COLUMNS)} columns, got {len(row)} (quote commas)")
        index_s, ident, flags_s, description = row
        if not index_s.isdigit() or int(index_s) != len(entries):
            raise ValueError(
                f"{where}: index {index_s!r}, expected {len(entries)} (indices must be contiguous)"
            )
        if not _ID_RE.match(ident):
            raise ValueError(f"{where}: id {ident!r} must be lower-case snake_case")
        if ident in seen:
            raise ValueError(f"{where}: id {ident!r} already used by entry {seen[ident]}")
        flags = flags_s.split()
        if not set(flags) <= _FLAGS or len(set(flags)) != len(flags):
            raise ValueError(f"{where}: flags {flags_s!r} must be a subset of 'P C'")
        if not description.strip():
            raise ValueError(f"{where}: entry {ident!r} has no description")
        seen[ident] = len(entries)
        entries.append(ObsEntry(len(entries), ident, "P" in flags, "C" in flags, description.strip()))
    return tuple(entries)


OBS_LAYOUT: tuple[ObsEntry, ...] = load_observation_layout()
"""The §15.2 table, loaded from `data/observation.csv`."""

OBS_SIZE = len(OBS_LAYOUT)
if OBS_SIZE != 176:  # §15.1: a guard on the data file, not a second declaration of the size
    raise ValueError(f"{OBSERVATION_CSV}: {OBS_SIZE} entries, spec §15.1 has 176")

Obs = IntEnum("Obs", {entry.id.upper(): entry.index for entry in OBS_LAYOUT}, module=__name__)  # type: ignore[misc]
Obs.__doc__ = "Index of each observation entry, named after its §15.2 id (generated from OBS_LAYOUT)."

PARTIAL_INDICES: tuple[int, ...] = tuple(e.index for e in OBS_LAYOUT if e.partial)
"""Entries flagged `P` (§15.1); in this order they form the opponent part of the critic input (§15.3)."""
CONSTANT_INDICES: tuple[int, ...] = tuple(e.index for e in OBS_LAYOUT if e.constant)
"""Entries flagged `C` (§15.1): constant for an episode, excluded from novelty bonuses."""
CRITIC_OPPONENT_INDICES: IntArray = np.array(PARTIAL_INDICES, dtype=np.int64)
CRITIC_OPPONENT_INDICES.flags.writeable = False
CRITIC_SIZE = OBS_SIZE + len(PARTIAL_INDICES)
"""176 own entries followed by the opponent's 93 `P` entries (§15.3)."""


def critic_vector(own: npt.ArrayLike, opp: npt.ArrayLike | None, out: FloatArray | None = None) -> FloatArray:
    """The critic's input for one tick (§15.3): `own[0..175]` followed by `opp[i]` for `i` in
    `PARTIAL_INDICES`.

    Args:
        own: The agent's 176-entry observation.
        opp: The opponent's own observation of the same tick, or None outside training (§15.3: the
            appended part is then zeros).
        out: Optional float32 array of `CRITIC_SIZE` to fill in place.

    Returns:
        The float32 vector of `CRITIC_SIZE` entries (`out` if given).
    """
    own_arr = np.asarray(own)
    if own_arr.shape != (OBS_SIZE,):
        raise ValueError(f"own observation must have shape ({OBS_SIZE},), got {own_arr.shape}")
    if out is None:
        out = np.empty(CRITIC_SIZE, dtype=np.float32)
    elif out.shape != (CRITIC_SIZE,):
        raise ValueError(f"out must have shape ({CRITIC_SIZE},), got {out.shape}")
    out[:OBS_SIZE] = own_arr
    if opp is None:
        out[OBS_SIZE:] = 0.0
    else:
        opp_arr = np.asarray(opp)
        if opp_arr.shape != (OBS_SIZE,):
            raise ValueError(f"opponent observation must have shape ({OBS_SIZE},), got {opp_arr.shape}")
        out[OBS_SIZE:] = opp_arr[CRITIC_OPPONENT_INDICES]
    return out


# ---------------------------------------------------------------------------------------------------------
# Frame stacking (§15.3)
# ---------------------------------------------------------------------------------------------------------


def frame_offsets(offsets: int | Sequence[int]) -> tuple[int, ...]:
    """Normalise a §15.3 frame-offset setting: an integer `n` means offsets `0..n-1`.

    Raises:
        ValueError: `n < 1`, an empty list, or a negative / non-integer offset.
    """
    if isinstance(offsets, bool):
        raise ValueError(f"frame offsets must be an int or a list of ints, got {offsets!r}")
    if isinstance(offsets, int | np.integer):
        if offsets < 1:
            raise ValueError(
                f"frame stack size must be >= 1, got {offsets}; use 1 for the current frame only"
            )
        return tuple(range(int(offsets)))
    result = tuple(offsets)
    if not result:
        raise ValueError("frame offsets must not be empty; use [0] for the current frame only")
    for o in result:
        if isinstance(o, bool) or not isinstance(o, int | np.integer) or o < 0:
            raise ValueError(f"frame offsets must be non-negative ints, got {list(result)}")
    return tuple(int(o) for o in result)


class FrameStack:
    """Stacks a per-tick vector over earlier ticks (§15.3).

    The stacked vector is `[vec(t - o) for o in offsets]` flattened, newest first for the default
    ascending offsets; frames before the episode start are zero vectors. Call `reset()` at the start of
    an episode and `push` every vector of it, starting with the reset observation. Works for the
    176-entry actor vector as well as the 269-entry critic vector (`size`).

    Args:
        offsets: Frame offsets, or an integer `n` for offsets `0..n-1` (default in §15.3: `[0]`).
        size: Length of one frame.
    """

    def __init__(self, offsets: int | Sequence[int], size: int, dtype: npt.DTypeLike = np.float32) -> None:
        if size < 1:
            raise ValueError(f"frame size must be >= 1, got {size}")
        self.offsets: tuple[int, ...] = frame_offsets(offsets)
        self.size = int(size)
        self.stacked_size = len(self.offsets) * self.size
        self._depth = max(self.offsets) + 1
        self._frames = np.zeros((self._depth, self.size), dtype=dtype)
        self._newest = -1  # ring index of the newest frame
        self._pushed = 0  # frames pushed since reset

    def reset(self) -> None:
        """Forget all frames: a new episode begins (earlier frames read as zeros)."""
        self._newest = -1
        self._pushed = 0

    def push(self, vec: npt.ArrayLike, out: npt.NDArray[Any] | None = None) -> npt.NDArray[Any]:
        """Record this tick's vector and return the stacked vector.

        Args:
            vec: This tick's vector of `size` entries.
            out: Optional array of `stacked_size` to fill in place (a new one is allocated otherwise, so
                the result may be kept by the caller).
        """
        v = np.asarray(vec)
        if v.shape != (self.size,):
            raise ValueError(f"frame must have shape ({self.size},), got {v.shape}")
        self._newest = (self._newest + 1) % self._depth
        self._frames[self._newest] = v
        self._pushed += 1
        if out is None:
            if self.offsets == (0,):  # the current frame only (frame_stack 1, every tick of every seat): a copy
                return self._frames[0].copy()
            out = np.empty(self.stacked_size, dtype=self._frames.dtype)
        elif out.shape != (self.stacked_size,):
            raise ValueError(f"out must have shape ({self.stacked_size},), got {out.shape}")
        for k, offset in enumerate(self.offsets):
            dst = out[k * self.size : (k + 1) * self.size]
            if offset < self._pushed:
                dst[:] = self._frames[(self._newest - offset) % self._depth]
            else:
                dst[:] = 0
        return out


# ---------------------------------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------------------------------

FORCING_RULE = (
    "Heads are sampled in order 0 -> 11. Each head's environment mask is AND-ed with its dependency mask "
    "given the earlier heads' values; if no value is legal, value 0 is forced (spec §14.2)."
)
MASK_LAYOUT = (
    "45 booleans in head order (head 0 values 0-3, then head 1, ..., head 11), as returned by the "
    "environment without the dependency rules; a head may have no legal value (spec §14.2, §14.3)."
)


def contract_dict() -> dict[str, Any]:
    """The whole contract as plain JSON-able data (heads, dependencies, masks, observation, critic).

    Everything is derived from the declarations above, so the export cannot drift from the code.
    """
    return {
        "version": CONTRACT_VERSION,
        "spec": "nh-mechanics.md §14 (action space), §15 (observation vector)",
        "action": {
            "num_heads": NUM_HEADS,
            "num_logits": NUM_LOGITS,
            "head_sizes": list(HEAD_SIZES),
            "head_offsets": list(HEAD_OFFSETS),
            "sampling_order": list(range(NUM_HEADS)),
            "heads": [
                {
                    "index": int(spec.head),
                    "id": spec.id,
                    "size": spec.size,
                    "offset": HEAD_OFFSETS[spec.head],
                    "values": list(spec.value_names),
                    "mask": list(spec.mask_rules),
                }
                for spec in HEADS
            ],
            "dependencies": [
                {
                    "head": int(row.head),
                    "value": row.value,
                    "required_head": int(row.required_head),
                    "op": row.op,
                    "required_value": row.required_value,
                }
                for row in DEPENDENCIES
            ],
            "forcing": FORCING_RULE,
            "mask_layout": MASK_LAYOUT,
        },
        "observation": {
            "size": OBS_SIZE,
            "dtype": "float32",
            "entries": [
                {
                    "index": e.index,
                    "id": e.id,
                    "flags": e.flags,
                    "partial": e.partial,
                    "constant": e.constant,
                    "description": e.description,
                }
                for e in OBS_LAYOUT
            ],
            "partial_indices": list(PARTIAL_INDICES),
            "constant_indices": list(CONSTANT_INDICES),
        },
        "critic": {
            "size": CRITIC_SIZE,
            "layout": "own[0..175] followed by opp[i] for i in opponent_indices; zeros when no opponent "
            "observation is available (spec §15.3)",
            "opponent_indices": list(PARTIAL_INDICES),
        },
        "frame_stacking": {
            "default_offsets": [0],
            "rule": "stacked = [vec(t - o) for o in offsets], concatenated; an integer n means offsets "
            "0..n-1; frames before the episode start are zero vectors (spec §15.3)",
        },
    }


def contract_json() -> str:
    """`contract_dict()` as deterministic JSON text (sorted keys, fixed indentation, trailing newline)."""
    return json.dumps(contract_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def export_contract_json(path: Path | str) -> Path:
    """Write `contract_json()` to `path` (UTF-8), atomically: a temp file is `os.replace`d into place.

    Returns:
        The path written.
    """
    return write_text_atomic(path, contract_json())
