"""Resolving a training-config file: YAML reading, ``extends:`` chains, ``--set`` overrides and provenance.

Why apart from the schema: resolving knows nothing of the sections (`osrs_rllib/config/schema.py` validates what
comes out); what it adds is the provenance of every key, so that a problem found later blames the file
(through ``extends``) or the ``--set`` that wrote the key. The rules are in `osrs_rllib/config/schema.py`'s docstring.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from common.suggest import closest
from common.validation import KeyPath, compose, describe
from common.yaml_loader import FLOAT_12, FLOAT_FIRST_CHARS, StrictLoader
from osrs_rllib.config.errors import ConfigError

SET_SOURCE = "--set"
"""The 'file' a `ConfigError` names when the bad key came from a command-line override."""

# ---------------------------------------------------------------------------------------------------------
# YAML
# ---------------------------------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Safe dumping that quotes strings `StrictLoader` would read as floats, so a dump loads back equal."""


_Dumper.add_implicit_resolver("tag:yaml.org,2002:float", FLOAT_12, FLOAT_FIRST_CHARS)


def _represent_list(dumper: _Dumper, data: list[Any]) -> yaml.Node:
    """Lists of scalars, and lists of such lists (schedules), on one line; anything else in block style."""
    flat = all(
        not isinstance(x, dict | list) or (isinstance(x, list) and not any(isinstance(y, dict | list) for y in x))
        for x in data
    )
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


_Dumper.add_representer(list, _represent_list)


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"invalid YAML{where}: {problem}"


# ---------------------------------------------------------------------------------------------------------
# Loading: extends, overrides, provenance
# ---------------------------------------------------------------------------------------------------------

Provenance = dict[KeyPath, str]
"""Where each key of the resolved mapping was last written: a file, or `SET_SOURCE`."""


def _replace(path: KeyPath, value: Any, source: str, prov: Provenance) -> None:
    """Record that `source` wrote `value` at `path`: it and every key below it, forgetting earlier writers there."""
    for key in [k for k in prov if k[: len(path)] == path]:
        del prov[key]
    prov[path] = source
    for key, child in value.items() if isinstance(value, Mapping) else ():
        _replace((*path, str(key)), child, source, prov)


def _merge(base: dict[str, Any], over: Mapping[str, Any], source: str, prov: Provenance, prefix: KeyPath = ()) -> None:
    """Deep-merge `over`, written by `source`, into `base` in place: mappings merge, anything else replaces."""
    for key, value in over.items():
        path = (*prefix, str(key))
        if isinstance(value, Mapping) and isinstance(base.get(key), Mapping):
            prov.setdefault(path, source)
            base[key] = dict(base[key])  # a copy: YAML aliases may share the mapping with another key
            _merge(base[key], value, source, prov, path)
        else:
            base[key] = value
            _replace(path, value, source, prov)


def _read_yaml(file: str, sections: Sequence[str]) -> dict[str, Any]:
    try:
        text = Path(file).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(file, None, compose("file not found", "a YAML config file", _sibling_hint(file))) from None
    except IsADirectoryError:
        raise ConfigError(file, None, "is a directory; expected a YAML config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(file, None, f"cannot read the file ({exc})") from None
    try:
        data = yaml.load(text, Loader=StrictLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(file, None, _yaml_problem(exc)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            file, None, f"the top level is {describe(data)}; expected a mapping of sections ({', '.join(sections)})"
        )
    return data


def _sibling_hint(file: str) -> str | None:
    """The closest ``.yml`` file name in the same directory, for a mistyped path."""
    path = Path(file)
    try:
        siblings = [p.name for p in path.parent.iterdir() if p.suffix in (".yml", ".yaml")]
    except OSError:
        return None
    close = closest(path.name, siblings)
    return str(path.parent / close) if close else None


def _chain(file: str, sections: Sequence[str], seen: tuple[str, ...] = ()) -> list[tuple[str, dict[str, Any]]]:
    """`file` and its ``extends`` ancestors with their own data, the root ancestor first (later files win)."""
    data = _read_yaml(file, sections)
    parent = data.pop("extends", None)
    if parent is None:
        return [(file, data)]
    if not isinstance(parent, str) or not parent.strip():
        raise ConfigError(
            file, "extends", f"got {describe(parent)}; expected the path of another config file, relative to this one"
        )
    parent_file = os.path.normpath(os.path.join(os.path.dirname(file), parent))
    if os.path.realpath(parent_file) in [os.path.realpath(f) for f in (*seen, file)]:
        cycle = " -> ".join((*seen, file, parent_file))
        raise ConfigError(
            file, "extends", f"extends cycle {cycle}; expected a chain that ends in a file without extends"
        )
    if not os.path.isfile(parent_file):
        hint = _sibling_hint(parent_file)
        raise ConfigError(
            file,
            "extends",
            compose(f"file {parent_file} not found", "a path relative to this file", hint and Path(hint).name),
        )
    return [*_chain(parent_file, sections, (*seen, file)), (file, data)]


def _apply_override(data: dict[str, Any], prov: Provenance, override: str) -> None:
    """Apply one ``key.path=value`` (value read as YAML) in place; the value replaces what was there."""
    key, sep, raw = override.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(SET_SOURCE, None, f"got {override!r}; expected key.path=value (e.g. ppo.lr=1e-4)")
    path = tuple(part.strip() for part in key.split("."))
    if any(not part for part in path):
        raise ConfigError(SET_SOURCE, key, "empty part in the key path; expected dotted names such as ppo.lr")
    if path[0] == "extends":
        raise ConfigError(SET_SOURCE, key, "extends cannot be overridden; expected it in a config file")
    try:
        value = yaml.load(raw, Loader=StrictLoader) if raw.strip() else None  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(SET_SOURCE, key, f"cannot read the value {raw!r}: {_yaml_problem(exc)}") from None
    node = data
    for depth, part in enumerate(path[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
            prov[path[: depth + 1]] = SET_SOURCE
        elif not isinstance(child, dict):
            raise ConfigError(
                SET_SOURCE,
                key,
                f"{'.'.join(path[: depth + 1])} is {describe(child)}, not a "
                "mapping; expected a key path into a section",
            )
        node = child
    node[path[-1]] = value
    _replace(path, value, SET_SOURCE, prov)


@dataclass(frozen=True)
class _Resolved:
    """A resolved mapping with what is needed to blame the right source for a problem in it."""

    data: dict[str, Any]
    prov: Provenance
    sources: tuple[str, ...]
    """Every source in the order it was applied: the root ancestor first, ``--set`` last."""

    def blame(self, path: KeyPath, related: Sequence[KeyPath] = ()) -> str:
        """The source of the key at `path`: its own for a key that was written; for a section or a key
        left at its default, the last source that wrote anything in the nearest written section. With
        `related` keys (a cross-field check), the last of their sources and that of `path`."""
        if related:
            return max((self.blame(p) for p in (path, *related)), key=self.sources.index)
        for end in range(len(path), 0, -1):
            prefix = path[:end]
            if prefix in self.prov:
                writers = {src for key, src in self.prov.items() if key[:end] == prefix}
                return max(writers, key=self.sources.index)
        return self.sources[-2]  # nothing of it was written: the file named on the command line


def _resolve(path: str | os.PathLike[str], overrides: Sequence[str], sections: Sequence[str]) -> _Resolved:
    """`path` after ``extends`` and `overrides`, with provenance; `sections` are the top-level keys, for errors."""
    file = os.fspath(path)
    chain = _chain(file, sections)
    data: dict[str, Any] = {}
    prov: Provenance = {}
    for source, layer in chain:
        _merge(data, layer, source, prov)
    for override in overrides:
        _apply_override(data, prov, override)
    if "name" not in data:
        data["name"] = Path(file).stem
        prov[("name",)] = file
    return _Resolved(data, prov, (*(source for source, _ in chain), SET_SOURCE))


def _reject_non_finite(node: Any, path: KeyPath, resolved: _Resolved) -> None:
    """NaN and infinity are never a sensible setting (a learning rate, a reward weight, a schedule point): they
    are rejected wherever they appear, before any section's own validation, so no section can forget to."""
    if isinstance(node, float) and not math.isfinite(node):
        key = ".".join(str(p) for p in path if not isinstance(p, int))
        where = "".join(f"[{p}]" for p in path if isinstance(p, int))
        raise ConfigError(resolved.blame(tuple(p for p in path if not isinstance(p, int))), key + where,
                          f"got {node}; expected a finite number")  # fmt: skip
    if isinstance(node, Mapping):
        for k, v in node.items():
            _reject_non_finite(v, (*path, str(k)), resolved)
    elif isinstance(node, list | tuple):
        for i, v in enumerate(node):
            _reject_non_finite(v, (*path, i), resolved)


def to_yaml(data: Mapping[str, Any], header: str | None = None) -> str:
    """`data` as YAML that `StrictLoader` reads back equal, with optional ``# `` comment lines on top."""
    text = yaml.dump(
        dict(data), Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120, allow_unicode=True
    )
    if header:
        text = "".join(f"# {line}\n" for line in header.splitlines()) + text
    return text
