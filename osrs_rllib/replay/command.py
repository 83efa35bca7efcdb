"""``osrs-rllib replay FILE [-o fight.html] [--verify] [--json]``: the command's body, kept out of the shared CLI
module."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import typer

from envs.nh.core_engine import check_engine
from envs.nh.params import FightParams
from osrs_rllib.replay.format import ReplayError, load_replay
from osrs_rllib.replay.verify import verify as verify_replay
from osrs_rllib.replay.viewer import write_html
from policies.fight_rules import FightRules


def replay_command(
    file: Path,
    out: Path | None,
    verify: bool,
    fail: Callable[[str], typer.Exit],
    engine: str = "auto",
    as_json: bool = False,
) -> int:
    """Verify (on `engine`) or render one replay; returns the exit status (0 ok, 1 the replay differs, 2 bad
    input). Either way the rules the fight was played by are printed: a replay holds its fight's parameters, so
    it re-runs under the rules it was recorded with (a model's training rules, `policies.fight_rules`).
    `as_json` prints one JSON object instead, for scripts: the check (``ok``, ``ticks``, ``problems``) or the page
    written, with the ``rules``."""
    try:
        check_engine(engine)
    except ValueError as exc:
        raise fail(str(exc)) from None
    try:
        rep = load_replay(file)
        if verify:
            check = verify_replay(rep, engine=engine)
            check.path = str(file)
            if as_json:
                facts = {"path": check.path, "engine": engine, "ok": check.ok, "ticks": check.ticks,
                         "problems": check.problems}  # fmt: skip
                typer.echo(json.dumps({**facts, "rules": _rules(rep.params).to_dict()}))
            else:
                typer.echo(check.summary())
                typer.echo(_rules_line(rep.params))
            return 0 if check.ok else 1
        target = out if out is not None else file.with_suffix(".html")
        write_html(rep, target)
    except ReplayError as exc:
        raise fail(str(exc)) from None
    if as_json:
        written = {"path": str(file), "written": str(target), "ticks": len(rep.ticks) - 1}
        typer.echo(json.dumps({**written, "rules": _rules(rep.params).to_dict()}))
        return 0
    players = " vs ".join(p["name"] for p in rep.players)
    typer.echo(f"{players}: {len(rep.ticks) - 1} ticks written to {target} (open it in any browser, offline)")
    typer.echo(_rules_line(rep.params))
    return 0


def _rules(params: FightParams) -> FightRules:
    return FightRules.from_params(params, "recorded in the replay")


def _rules_line(params: FightParams) -> str:
    return _rules(params).describe()
