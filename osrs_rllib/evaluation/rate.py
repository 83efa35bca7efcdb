"""`osrs-rllib rate`: a round-robin tournament between model files, the ladder and the baseline, rated with
Elo and openskill (`league.ratings`).

Players are model files (``*.nhmodel``; an experiment directory contributes the model of every kept
checkpoint), ladder rungs and the in-simulator ``baseline``. Every pair plays `fights` fights, seats
alternating (the baseline always sits in seat 1: the simulator's bot can sit nowhere else), with seeds
``seed + k`` so that every pair meets the same builds and spawns. Fights of a pair run `parallel` at a time
in lockstep (`osrs_rllib.evaluation.match.play_match`, as evaluation's do) and each model acts for all of its seats in
one forward pass, outside RLlib's sampling loop. Ladder rungs get fresh bots for every fight, so a pair's results do not
depend on which pairs were played before it.

The prescient rung (an upper bound that must see its opponent's action of the tick) cannot meet the baseline,
whose action is decided inside the simulator: that one pair is skipped (`can_meet`), like baseline against
itself, and its rating comes from its games against everyone else.

Games are rated in a fixed interleaved order (round by round over the pairs), so Elo, which depends on
order, does not favour the pair that happened to be played last.
"""

from __future__ import annotations

import csv
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from envs.nh.loadouts import Build
from envs.nh.params import FightParams
from envs.nh.sim import Outcome
from envs.opponents import LADDER, needs_opponent_action
from league.players import GameResult
from league.players import Outcome as LeagueOutcome
from league.ratings import RatingRow, ratings_table
from osrs_rllib.evaluation.batched import LadderSeat, Seat
from osrs_rllib.evaluation.fight import BASELINE, MODEL_SUFFIX, is_model_path
from osrs_rllib.evaluation.match import SideFactory, play_match
from osrs_rllib.evaluation.stratified import spread
from policies.fight_rules import FightRules, fight_rules_of, resolve_fight_rules
from policies.mixture_draw import fight_members

DEFAULT_PARALLEL = 32
_TO_LEAGUE = {Outcome.WON: LeagueOutcome.WIN, Outcome.LOST: LeagueOutcome.LOSS, Outcome.TIED: LeagueOutcome.DRAW}


class Player:
    """A tournament player: acts for a batch of seats at once."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.frame_stack: Any = 1

    def act(self, obs: np.ndarray, masks: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        raise NotImplementedError


class ModelPlayer(Player):
    def __init__(self, path: str, label: str | None = None) -> None:
        from policies.model_file import load_model_file

        super().__init__(label or path)
        self.model = load_model_file(path)
        self.frame_stack = self.model.frame_stack

    def act(self, obs: np.ndarray, masks: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        members = fight_members(seeds, self.model.member_count) if self.model.member_count > 1 else None
        return np.asarray(self.model.act(obs, masks.astype(np.float32), deterministic=True, members=members))


class LadderPlayer(Player):
    """A ladder rung; each match gets fresh bots (`seat`), one per fight, seeded by fight seed and seat."""

    def seat(self, seat: int) -> LadderSeat:
        return LadderSeat(self.name, lambda fight_seed: int(fight_seed * 2 + seat))


def tournament_params(
    players: Sequence[Player], options: Mapping[str, Any] | None = None
) -> tuple[FightParams, FightRules]:
    """The fight parameters of a tournament and the rules they carry (`policies.fight_rules`).

    The settings (builds, gear and fight-type randomisation, spawns, fight length) are those the first model
    player trained with, so models are rated in the conditions they learned; the rules are every model player's
    training rules, which must agree. `options` (``--set``) override both. Without a model player: the spec's
    defaults.

    Raises:
        RulesConflict: Model players trained under different rules that `options` leave open.
        ParamError: A bad option.
    """
    models = [fight_rules_of(p.model, name=p.name) for p in players if isinstance(p, ModelPlayer)]
    rules = resolve_fight_rules(models, options)
    settings = dict(models[0].training_options) if models else {}
    return FightParams.from_options({**settings, **rules.options(), **(options or {})}), rules


def resolve_players(specs: Sequence[str], with_ladder: bool = True) -> list[Player]:
    """Model files, experiment directories (every kept checkpoint's model), ladder names and ``baseline``."""
    players: list[Player] = []
    for spec in specs:
        path = Path(spec)
        if spec == BASELINE or spec in LADDER:
            players.append(Player(BASELINE) if spec == BASELINE else LadderPlayer(spec))
        elif path.is_dir():
            from osrs_rllib.experiments import MODEL_NAME, Experiment

            exp = Experiment(path.parent, path.name)
            kept = exp.checkpoints()
            if not kept:
                raise ValueError(f"{path} has no kept checkpoints with a model (is it an experiment directory?)")
            players += [ModelPlayer(str(c.path / MODEL_NAME), f"{path.name}@{c.path.name}") for c in kept]
        elif is_model_path(spec):
            players.append(ModelPlayer(spec, path.stem if path.exists() else spec))
        else:
            raise ValueError(
                f"unknown player {spec!r}: expected a model file (*{MODEL_SUFFIX}), an experiment directory, "
                f"'baseline' or a ladder name ({', '.join(LADDER)})"
            )
    if with_ladder:
        names = {p.name for p in players}
        players += [LadderPlayer(n) for n in LADDER if n not in names]
        if BASELINE not in names:
            players.append(Player(BASELINE))
    labels = [p.name for p in players]
    duplicates = {n for n in labels if labels.count(n) > 1}
    if duplicates:
        raise ValueError(f"players named twice: {sorted(duplicates)}")
    return players


def can_meet(a: Player, b: Player) -> bool:
    """Whether a and b can play each other: not two baselines (the simulator's bot sits in seat 1 only), not
    a prescient rung against the baseline (its action is not known first) nor against another prescient one."""
    names = (a.name, b.name)
    prescient = sum(isinstance(p, LadderPlayer) and needs_opponent_action(p.name) for p in (a, b))
    if names == (BASELINE, BASELINE) or prescient == 2:
        return False
    return not (prescient and BASELINE in names)


def play_pair(
    a: Player,
    b: Player,
    fights: int,
    params: FightParams | Sequence[FightParams],
    seed: int,
    parallel: int,
    builds_out: list[str] | None = None,
    engine: str = "auto",
) -> list[GameResult]:
    """`fights` fights between a and b (seats alternate; the baseline always sits in seat 1).

    `params` is one set for all fights or one per fight; `builds_out`, if given, receives the build each
    returned game was played with (in the same order). `engine` picks the simulator (`make_engine`: ``auto``,
    ``core``, ``python``); both give the same games.
    """
    per_fight = [params] * fights if isinstance(params, FightParams) else list(params)
    if a.name == BASELINE and b.name == BASELINE:
        raise ValueError("two baselines cannot fight: the simulator's bot plays only seat 1")
    if not can_meet(a, b):
        raise ValueError(
            f"{a.name} and {b.name} cannot fight: a prescient rung must see its opponent's action of the tick, "
            "which the in-simulator baseline (or another prescient rung) cannot give first"
        )
    # seats alternate, A first; the baseline can sit in seat 1 only, so against it seats never alternate
    seats = [1 if a.name == BASELINE else 0 if b.name == BASELINE else k % 2 for k in range(fights)]
    records = play_match(
        _side(a), _side(b), per_fight, [seed + k for k in range(fights)], seats, parallel=parallel, engine=engine
    )
    if builds_out is not None:
        builds_out += [r.build for r in records]
    seated = {0: (a.name, b.name), 1: (b.name, a.name)}
    return [GameResult(*seated[r.seat], _TO_LEAGUE[r.outcomes[0] or Outcome.TIED]) for r in records]


def _side(player: Player) -> SideFactory | None:
    """A player as `play_match` seats it: None for the in-simulator baseline."""
    if player.name == BASELINE:
        return None
    if isinstance(player, LadderPlayer):
        return player.seat
    return lambda _seat: _PlayerSide(player)


class _PlayerSide:
    """A model (or any acting) player in a seat: it acts for every live fight, with no per-fight state."""

    def __init__(self, player: Player) -> None:
        self.player = player

    def seat(self) -> Seat:
        return Seat(lambda obs, masks, fight_seeds: self.player.act(obs, masks, fight_seeds), self.player.frame_stack)

    def forget(self, fight_seed: int) -> None:
        return None


def tournament(
    players: Sequence[Player],
    fights: int,
    params: FightParams | None = None,
    seed: int = 0,
    parallel: int = DEFAULT_PARALLEL,
    progress: Callable[[str, str], None] | None = None,
    builds: Sequence[Build] | None = None,
    by_build: dict[str, dict[str, list[float]]] | None = None,
    engine: str = "auto",
) -> tuple[list[RatingRow], list[GameResult]]:
    """Round robin: every pair plays `fights` fights; returns the ratings table and every game.

    With `builds`, or when `params` randomises the build, every pair's fights are spread evenly over the
    builds (each build from both seats, `osrs_rllib.evaluation.stratified.spread`), so no pair meets a luckier mix of
    builds than another. `by_build`, if given, is filled with ``player → build → [score, games]`` (score: wins plus
    half the ties), the per-build table of `osrs-rllib rate`. `engine` picks the simulator (`make_engine`:
    ``auto`` = the compiled core when built, else the Python engine with one log line; ``core``; ``python``):
    the games are the same on both. Without `params`: `tournament_params(players)`, the model players' training
    settings and rules (the spec's defaults without a model player), as ``osrs-rllib rate`` plays.
    """
    params = params or tournament_params(players)[0]
    plan: FightParams | list[FightParams] = (
        spread(params, fights, builds, repeat=2) if builds or params.randomize_build else params
    )
    per_pair: list[list[GameResult]] = []
    for a, b in itertools.combinations(players, 2):
        if not can_meet(a, b):
            continue
        if progress is not None:
            progress(a.name, b.name)
        played_builds: list[str] = []
        games = play_pair(a, b, fights, plan, seed, parallel, played_builds, engine)
        per_pair.append(games)
        if by_build is not None:
            for game, build in zip(games, played_builds, strict=True):
                score_a = float(game.outcome.value)  # the first player's score: 1 win, ½ draw, 0 loss
                for name, score in ((game.player_a, score_a), (game.player_b, 1 - score_a)):
                    cell = by_build.setdefault(name, {}).setdefault(build, [0.0, 0.0])
                    cell[0] += score
                    cell[1] += 1
    interleaved = [g for round_ in itertools.zip_longest(*per_pair) for g in round_ if g is not None]
    return ratings_table(interleaved), interleaved


def save_table(
    rows: Sequence[RatingRow], games: Sequence[GameResult], out_dir: Path, rules: FightRules | None = None
) -> list[Path]:
    """Write ``ratings.json`` (table, every game and the rules played by) and ``ratings.csv``; returns the paths."""
    from common.atomic_files import write_json_atomic, write_text_atomic

    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, csv_path = out_dir / "ratings.json", out_dir / "ratings.csv"
    table: dict[str, Any] = {
        "ratings": [r.to_dict() for r in rows],
        "games": [[g.player_a, g.player_b, g.outcome.value] for g in games],
    }
    if rules is not None:
        table["rules"] = rules.to_dict()
    write_json_atomic(json_path, table)
    import io

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0].to_dict()) if rows else ["name"])
    writer.writeheader()
    for r in rows:
        writer.writerow(r.to_dict())
    write_text_atomic(csv_path, buf.getvalue())
    return [json_path, csv_path]


def table_json(
    rows: Sequence[RatingRow],
    rules: FightRules | None = None,
    by_build: Mapping[str, Mapping[str, Sequence[float]]] | None = None,
) -> str:
    """``rate --json``: the ratings, the rules the games were played by and each player's score per build
    (`tournament`'s `by_build` as ``player → build → {score, games}``; score: wins plus half the ties)."""
    builds = {
        name: {build: {"score": cell[0], "games": int(cell[1])} for build, cell in sorted(per.items())}
        for name, per in (by_build or {}).items()
    }
    ratings = [r.to_dict() for r in rows]
    return json.dumps({"ratings": ratings, "rules": None if rules is None else rules.to_dict(), "by_build": builds})
