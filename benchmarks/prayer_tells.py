"""What an opponent who studies the agent reads: prayers and gear around every attack, per side and style.

An exploit run (`osrs-rllib exploit`) says *that* a fresh learner beats a model; this script says *how*. It plays
fights between A and B (`osrs_rllib.analysis.play`, per-tick rows) and, for every attack either side makes,
looks at the tick it was made and the tick before:

* ``protected``: the defender's protection prayer matched the attack when the hit was created (spec §6.5:
  the prayer that counts is the one active at hit creation, §6.6), read from the hit's own record;
* ``shown``: the defender's overhead *the tick before* matched it: what the attacker saw when it chose;
  Read from the attacker's side, it is how often the attacker attacked into the prayer it had just seen (a
  mixing attacker does so now and then; one that never does is predictable from the defender's own prayer);
* ``baited``: shown but not protected: the defender left the right prayer on the very tick of the attack;
* ``telegraphed``: the attacker already held a weapon of the attack's style the tick before, so a defender who
  reads gear could pray against it in time.

A deterministic policy that reads the opponent's visible prayer and gear and answers with a fixed rule can be
led: show it a prayer or a weapon and it answers the way it always does. docs/league.md ("What the exploiter
finds") keeps the figures this printed for the shipped model against its exploiter and against the expert.

How to run this script::

    .venv/bin/python benchmarks/prayer_tells.py models/nh-main.nhmodel experiments/exploit-nh-main/models/latest.nhmodel
    .venv/bin/python benchmarks/prayer_tells.py models/nh-main.nhmodel expert --fights 120 --sampling

Nothing is asserted: this script prints figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from osrs_rllib import analysis  # noqa: E402

TRAINED_BUILDS = ("LMS_PURE", "LMS_ZERKER", "LMS_MED", "PURE", "ZERKER", "MED")
STYLES = ("melee", "ranged", "magic")
PROTECTS = {"melee": "protect_from_melee", "ranged": "protect_from_missiles", "magic": "protect_from_magic"}
"""The overhead that protects each style (spec §7, the per-tick ``overhead`` column's names)."""
MEASURES = ("protected", "shown", "baited", "telegraphed")


def attack_rows(ticks: pd.DataFrame, attacker: str) -> pd.DataFrame:
    """One row per tick on which `attacker` made an attack, with the five measures for it."""
    t = ticks.sort_values(["fight", "player", "tick"]).copy()
    by_side = t.groupby(["fight", "player"])
    t["overhead_before"] = by_side["overhead"].shift(1)
    t["weapon_style_before"] = by_side["weapon_style"].shift(1)
    defender = "b" if attacker == "a" else "a"
    att = t[(t.player == attacker) & (t.hits > 0)].set_index(["fight", "tick"])
    dfn = t[t.player == defender].set_index(["fight", "tick"])[["overhead_before"]]
    att = att.join(dfn.rename(columns={"overhead_before": "overhead_before_defender"}))
    style = att[[f"hits_{s}" for s in STYLES]].to_numpy().argmax(axis=1)
    rows = pd.DataFrame({"style": [STYLES[k] for k in style]}, index=att.index)
    shown_prayer = att["overhead_before_defender"].to_numpy()
    prot = [PROTECTS[s] for s in rows["style"]]
    rows["protected"] = (att["hits_on_prayer"] > 0).to_numpy()
    rows["shown"] = shown_prayer == prot
    rows["baited"] = rows["shown"] & ~rows["protected"]
    rows["telegraphed"] = (att["weapon_style_before"] == rows["style"]).to_numpy()
    return rows


def summarise(rows: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Rates per style and over all attacks (``n``: the attacks counted)."""
    out: dict[str, dict[str, float]] = {}
    for name, part in [("all", rows), *((s, rows[rows["style"] == s]) for s in STYLES)]:
        if len(part):
            out[name] = {"n": float(len(part)), **{m: float(part[m].mean()) for m in MEASURES}}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="side A: a model file (the agent under study)")
    parser.add_argument("b", help="side B: a model file, a ladder rung or 'baseline'")
    parser.add_argument("--fights", type=int, default=60, help="fights, spread evenly over the six trained builds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sampling", action="store_true", help="both model sides sample instead of greedy")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args(argv)
    _, ticks = analysis.play(
        args.a,
        args.b,
        fights=args.fights,
        seed=args.seed,
        build=list(TRAINED_BUILDS),
        record=True,
        deterministic=not args.sampling,
    )
    result = {
        "a": args.a,
        "b": args.b,
        "fights": args.fights,
        "seed": args.seed,
        "mode": "sampling" if args.sampling else "greedy",
        "a_attacks": summarise(attack_rows(ticks, "a")),
        "b_attacks": summarise(attack_rows(ticks, "b")),
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{args.a} (A) vs {args.b} (B): {args.fights} fights over {', '.join(TRAINED_BUILDS)}, {result['mode']}")
    for side, label in (("a_attacks", "A attacks, B defends"), ("b_attacks", "B attacks, A defends")):
        print(f"\n{label}")
        print(f"| style | attacks | {' | '.join(MEASURES)} |")
        print("|---|---:|" + "---:|" * len(MEASURES))
        for style, row in result[side].items():
            cells = " | ".join(f"{row[m]:.0%}" for m in MEASURES)
            print(f"| {style} | {int(row['n'])} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
