"""Scripted opponents that act through the policy's own interface (spec §14, §15); see `ladder`."""

from envs.opponents.ladder import (
    LADDER,
    NoOp,
    PrayerSwitcher,
    RandomLegal,
    ScriptedPolicy,
    StayAlive,
    Tribrid,
    make_opponent,
)

__all__ = [
    "LADDER",
    "NoOp",
    "PrayerSwitcher",
    "RandomLegal",
    "ScriptedPolicy",
    "StayAlive",
    "Tribrid",
    "make_opponent",
]
