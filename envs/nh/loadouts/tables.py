"""Reading the loadout data tables: YAML that remembers its lines, and name lookups with clear errors.

`builds.yml` and `randomisation.yml` share these helpers so that every problem in either file is a
`DataError` naming the file, the line and (for a misspelt name) the closest valid one.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

import yaml

from common.suggest import did_you_mean
from common.yaml_loader import DuplicateKeyError, StrictLoader, duplicate_key
from envs.nh.items import (
    CONSUMABLES,
    ITEMS,
    ConsumableKind,
    DataError,
    Slot,
    item_by_name,
)
from envs.nh.prayers import Prayer


class _Located(dict[str, Any]):
    """A YAML mapping that remembers the file and line it starts on, for error messages."""

    where: str = "?"


class _LocatedList(list[Any]):
    """A YAML sequence that remembers the file and line it starts on, for error messages."""

    where: str = "?"


class _LineLoader(StrictLoader):
    """The shared strict loader (`common.yaml_loader`) whose mappings and sequences carry their position."""


def _where(node: yaml.Node) -> str:
    return f"{Path(str(node.start_mark.name)).name}:{node.start_mark.line + 1}"


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> _Located:
    try:
        duplicate_key(loader, node)
    except DuplicateKeyError as exc:
        raise DataError(f"{_where(exc.key_node)}: duplicate key {exc.key!r}") from None
    out = _Located(loader.construct_mapping(node, deep=True))
    out.where = _where(node)
    return out


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> _LocatedList:
    out = _LocatedList(loader.construct_sequence(node, deep=True))
    out.where = _where(node)
    return out


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def _load_yaml(path: Path) -> _Located:
    with path.open(encoding="utf-8") as fh:
        doc = yaml.load(fh, Loader=_LineLoader)  # a SafeLoader subclass
    if not isinstance(doc, _Located):
        raise DataError(f"{path.name}: expected a mapping of build name to block")
    return doc


def _where_of(obj: object, fallback: str) -> str:
    return getattr(obj, "where", fallback)


_suggest = did_you_mean


def _check_keys(m: object, where: str, required: Collection[str], optional: Collection[str] = ()) -> _Located:
    if not isinstance(m, _Located):
        raise DataError(f"{where}: expected a mapping, got {m!r}")
    allowed = set(required) | set(optional)
    for key in m:
        if key not in allowed:
            raise DataError(f"{m.where}: unknown key {key!r}{_suggest(str(key), allowed)}")
    missing = [k for k in required if k not in m]
    if missing:
        raise DataError(f"{m.where}: missing key(s) {missing}")
    return m


def _gear_id(name: object, where: str, slot: Slot | None = None) -> int:
    """Item id of a wearable by its items.csv name (and slot, where a name is shared)."""
    try:
        return item_by_name(str(name), slot).id
    except KeyError:
        names = {it.name for it in ITEMS.values() if slot is None or it.slot is slot}
        in_slot = f" in the {slot.name.lower()} slot" if slot is not None else ""
        raise DataError(
            f"{where}: unknown item {name!r}{in_slot}{_suggest(str(name), names)} "
            "(names are those of envs/nh/data/items.csv)"
        ) from None


def _consumable_id(name: object, where: str, kinds: Collection[ConsumableKind] | None = None) -> int:
    """Id of a consumable by its consumables.csv name, optionally restricted to some kinds."""
    for c in CONSUMABLES.values():
        if c.name.lower() == str(name).lower() and (kinds is None or c.kind in kinds):
            return c.id
    names = {c.name for c in CONSUMABLES.values() if kinds is None or c.kind in kinds}
    raise DataError(
        f"{where}: unknown consumable {name!r}{_suggest(str(name), names)} "
        "(names are those of envs/nh/data/consumables.csv)"
    )


_E = TypeVar("_E", bound=Enum)


def _enum_value(enum: type[_E], value: object, where: str, *, by_name: bool = False) -> _E:
    choices = [e.name if by_name else str(e.value) for e in enum]
    if value not in choices:
        raise DataError(f"{where}: {value!r} is not one of {choices}")
    return enum[str(value)] if by_name else enum(value)


def _prayer(name: object, where: str) -> Prayer:
    key = str(name).upper().replace(" ", "_")
    if key not in Prayer.__members__:
        choices = [p.name.replace("_", " ").title() for p in Prayer]
        raise DataError(f"{where}: unknown prayer {name!r}{_suggest(str(name), choices)}")
    return Prayer[key]
