"""Scripted opponents that act through the policy's own interface (spec §14, §15).

`ladder` holds the hand-written rungs, `nh_ladder` the graded NH family (novice … expert, and the
prescient upper bound), `registry` the whole ladder by name in its measured order (docs/strength.md),
`hosting` the one adapter that lets a bot act for a batch of rows (docs/architecture.md: hosting).
"""

from envs.opponents.hosting import act_rows
from envs.opponents.ladder import (
    NoOp,
    PrayerSwitcher,
    RandomLegal,
    ScriptedPolicy,
    StayAlive,
    Tribrid,
)
from envs.opponents.nh_ladder import LEVELS, GradedNH, NHSkill
from envs.opponents.registry import LADDER, PRESCIENT, make_opponent, needs_opponent_action

__all__ = [
    "LADDER",
    "LEVELS",
    "PRESCIENT",
    "GradedNH",
    "NHSkill",
    "NoOp",
    "PrayerSwitcher",
    "RandomLegal",
    "ScriptedPolicy",
    "StayAlive",
    "Tribrid",
    "act_rows",
    "make_opponent",
    "needs_opponent_action",
]
