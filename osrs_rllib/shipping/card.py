"""The card section of a shipped model, printed from ``osrs-rllib ship``'s measurement record
(`osrs_rllib/shipping/ship.py`).

Why printed, not written by hand: a card's figures must be the ones the shipping command measured, and its
provenance (config, command, commit, env steps, seeds) the file's own metadata. The card is a markdown section in
the form of `docs/models.md`'s (a ``### `NAME.nhmodel``` heading, then its identity table), so
``tests/test_shipped_models.py`` reads it like the hand-written ones: ``models/NAME.card.md`` beside the model.
Every percentage is `pct` of a number in the record, so a test can compare the two.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from policies.model_file import read_model_meta

MODE_WORDS = {"deterministic": "greedy", "stochastic": "sampling"}


def pct(x: float) -> str:
    """A win rate as the card writes it (one decimal)."""
    return f"{x:.1%}"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _interval(row: dict[str, Any]) -> str:
    return f"{pct(row['win_rate'])} [{pct(row['win_rate_low'])}, {pct(row['win_rate_high'])}]"


def _commit(recipe: dict[str, Any]) -> str:
    if not recipe.get("commit"):
        return "unknown (not trained from a git checkout)"
    return f"`{recipe['commit']}`" + (" (with uncommitted changes)" if recipe.get("dirty") else "")


def _members_line(row: dict[str, Any]) -> list[str]:
    """The identity table's line naming a per-fight mixture's members (none for a single model)."""
    members = row.get("members") or []
    if not members:
        return []
    listed = "; ".join(f"m{m['member']} {m.get('label') or 'model'}, iteration {m.get('iteration')}, "
                       f"{int(m.get('env_steps') or 0):,} env steps" for m in members)  # fmt: skip
    return [f"| members | {len(members)}, one drawn per fight by its seed: {listed} |"]


def _floor_words(floor: dict[str, Any] | None) -> str:
    """The rung's floor as the card's sentence states it (none: nothing)."""
    if not floor:
        return ""
    return (f"; a candidate had to win at least {pct(floor['mean'])} in each mode (the mean of the builds) and "
            f"{pct(floor['every_build'])} with every build to compete")  # fmt: skip


def card_markdown(model: Path, record: dict[str, Any]) -> str:
    """The card of the shipped file `model`, from its metadata and the measurement `record` (``ship.json``)."""
    meta = read_model_meta(model)
    trained = meta.get("metadata", {})
    recipe = trained.get("recipe", {})
    rule = record["rule"]
    rung = rule["rung"]
    picked = next(r for r in record["candidates"] if r["label"] == record["picked"])
    lines = [
        f"### `{model.name}`",
        "",
        "| | |",
        "|---|---|",
        f"| sha256 | `{_sha256(model)}` |",
        f"| size | {model.stat().st_size:,} bytes |",
        f"| weights checksum | `{meta['tensor_sha256']}` |",
        f"| trained | experiment `{record['experiment']}` (phase run `{trained.get('experiment')}`), iteration "
        f"{trained.get('iteration')}, {int(trained.get('env_steps') or 0):,} env steps |",
        f"| recipe | `{recipe.get('config')}`, {int(recipe.get('env_steps') or 0):,} env steps in all"
        + "".join(f"; {p['name']} {int(p['env_steps'] or 0):,}" for p in recipe.get("phases", []))
        + " |",
        f"| command | `{recipe.get('command')}` |",
        f"| commit | {_commit(recipe)} |",
        f"| seeds | training {recipe.get('seeds', {}).get('training')}, rung {rung['seed']}, exploit "
        f"{recipe.get('seeds', {}).get('exploit') or '–'} |",
        f"| shipped by | `{record['command']}` |",
        f"| default play | {record['play_mode']} |",
        *_members_line(picked),
        "",
        f"Picked {record['picked']}: {record['why']}. Each candidate played {rung['fights']} fights per trained build "
        f"against {rung['opponent']} (seed {rung['seed']}, held out), its score the mean of its modes"
        + _floor_words(rung.get("floor"))
        + "; 95 % intervals:",
        "",
        "| candidate | env steps | "
        + " | ".join(f"{rung['opponent']}, {MODE_WORDS[m]}" for m in rung["modes"])
        + " | score | exploitability |",
        "|---|---|" + "---|" * len(rung["modes"]) + "---|---|",
    ]
    for row in record["candidates"]:
        ex = row.get("exploitability")
        mark = " (shipped)" if row is picked else " (under the floor)" if row.get("floor_misses") else ""
        lines.append(
            f"| {row['label']}{mark} | {row['env_steps']:,} | "
            + " | ".join(_interval(row["rung"][m]) for m in rung["modes"])
            + f" | {pct(row['score'])} | {pct(ex['win_rate']) + ' (' + MODE_WORDS[ex['mode']] + ')' if ex else '–'} |"
        )
    builds = list(picked["rung"][rung["modes"][0]]["by_build"])
    lines += ["", f"The shipped candidate per build against {rung['opponent']}:", "",
              "| mode | " + " | ".join(builds) + " |", "|---|" + "---|" * len(builds)]  # fmt: skip
    for m in rung["modes"]:
        split = picked["rung"][m]["by_build"]
        lines.append(f"| {MODE_WORDS[m]} | " + " | ".join(pct(split[b]["win_rate"]) for b in builds) + " |")
    if picked.get("exploit_runs"):
        lines += ["", "Exploit runs against it (`osrs-rllib exploit`; the exploiter's better mode, final fights "
                  "from both seats):", "", "| model play | seed | env steps | exploiter win rate | passed 50 % at |",
                  "|---|---|---|---|---|"]  # fmt: skip
        for r in picked["exploit_runs"]:
            passed = f"{r['steps_to_pass_half']:,}" if r.get("steps_to_pass_half") else "never"
            lines.append(f"| {MODE_WORDS[r['model_mode']]} | {r['seed']} | {int(r['budget_env_steps'] or 0):,} | "
                         f"{_interval(r)} | {passed} |")  # fmt: skip
        ex = picked["exploitability"]
        modes = ", ".join(f"{MODE_WORDS[m]} {pct(w)}" for m, w in ex["by_mode"].items())
        default = f"the model's, in its default play ({MODE_WORDS[ex['mode']]}): **{pct(ex['win_rate'])}**"
        lines += ["", f"Exploitability, the worst run of each mode: {modes}; {default}."]
    return "\n".join(lines) + "\n"
