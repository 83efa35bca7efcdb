"""The one YAML loader: safe, duplicate keys are errors, and ``1e-4`` is a number (YAML 1.2).

PyYAML silently keeps the last of two equal keys, so a config or data file that sets a key twice would
quietly lose the first value; and its YAML 1.1 resolver reads ``1e-4`` (no dot) as a string. The training
config (`osrs_rllib/config/files.py`) loads with `StrictLoader` as is; the builds and randomisation tables
(`envs/nh/loadouts/tables.py`) add only line positions to its containers, and reuse `duplicate_key` to
word the same problem with their own ``file:line`` prefix. PyYAML is the only import, so every layer may
use this module.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["FLOAT_12", "FLOAT_FIRST_CHARS", "DuplicateKeyError", "StrictLoader", "duplicate_key"]

FLOAT_12 = re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")
"""Exponent floats without a dot (``1e-4``), which YAML 1.2 reads as numbers and PyYAML's 1.1 does not."""
FLOAT_FIRST_CHARS = list("-+0123456789")


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping sets `key` twice; the mark is the second key's position (line numbers in the message)."""

    def __init__(self, key: Any, key_node: yaml.Node) -> None:
        super().__init__(None, None, f"duplicate key {key!r} (the later one would silently win)", key_node.start_mark)
        self.key, self.key_node = key, key_node


def duplicate_key(loader: yaml.SafeLoader, node: yaml.MappingNode) -> None:
    """Raise `DuplicateKeyError` for the first key of `node` that repeats an earlier one."""
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise DuplicateKeyError(key, key_node)
        seen.add(key)


class StrictLoader(yaml.SafeLoader):
    """Safe loading plus YAML 1.2 exponent floats, and duplicate keys as errors (PyYAML keeps the last)."""


def _construct_mapping(loader: StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    duplicate_key(loader, node)
    return loader.construct_mapping(node, deep=True)


StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", FLOAT_12, FLOAT_FIRST_CHARS)
StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
