"""Command-line option parsing shared by command groups (`osrs-rllib fight`, `rate`, `play`)."""

from __future__ import annotations

from typing import Any


def parse_set_options(pairs: list[str]) -> dict[str, Any]:
    """Parse repeated ``key=value`` strings; values are YAML scalars (``true``, ``3``, ``[PURE, MED]``).

    Raises:
        ValueError: A pair without ``=``, an empty key or a value that is not valid YAML.
    """
    import yaml

    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--set expects key=value, got {pair!r} (e.g. --set max_episode_ticks=500)")
        try:
            options[key] = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or "invalid YAML"
            raise ValueError(f"--set {key}: cannot parse value {raw!r} as YAML ({problem})") from None
    return options
