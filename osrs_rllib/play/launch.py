"""From the `play` command's settings to the page being served: every input is checked before the page opens, so a
bad opponent or option is one error line and never a half-started server (the command itself,
`osrs_rllib/commands/play.py`, only parses its arguments and prints).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osrs_rllib.play.limits import DEFAULT_DATA_DIR, DEFAULT_PORT

if TYPE_CHECKING:
    from osrs_rllib.play.opponents import Opponent
    from osrs_rllib.play.server import PlayServer


class PlayError(ValueError):
    """What the person must change before the page can open (an opponent, an option, the engine, the port)."""


@dataclass(frozen=True)
class PlaySettings:
    """What ``osrs-rllib play`` was asked for (its options, docs/play.md)."""

    opponents: Sequence[str] = ()
    """Opponent names (`osrs_rllib.play.opponents.resolve_opponents`); none: the shipped models, else a rung."""
    build: str | None = None
    fight_type: str | None = None
    tick_ms: int = 600
    port: int = DEFAULT_PORT
    host: str = "127.0.0.1"
    server: str | None = None
    """HOST:PORT of a running ``osrs-rllib serve`` that decides for the opponent."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Reset options for every game (``--set``, spec §13.1)."""
    seed: int | None = None
    data_dir: Path = DEFAULT_DATA_DIR
    experiments_dir: str = "experiments"
    models_dir: str = "models"
    engine: str = "auto"
    model_sampling: bool | None = None


@dataclass(frozen=True)
class PlayStarted:
    """What the page was opened with: the opponents offered, where games are kept, the URL."""

    opponents: tuple[Opponent, ...]
    data_dir: Path
    url: str
    note: str | None = None
    """Why the default opponent is a ladder rung (no model files), when it is."""


def open_play(settings: PlaySettings) -> tuple[PlayServer, PlayStarted]:
    """Resolve the opponents, check every option against each of them, bind the port and catch stop signals: the
    server, ready to `run`, and what it was opened with.

    Raises:
        PlayError: An unknown opponent or engine, an option the simulator rejects, or a port that cannot be bound.
    """
    from envs.nh.core_engine import check_engine
    from envs.nh.params import ParamError
    from osrs_rllib.play.opponents import OpponentError, default_opponents, resolve_opponents
    from osrs_rllib.play.server import PlayConfig, PlayServer

    note = None
    try:
        check_engine(settings.engine)
        if not settings.opponents and settings.server is None:
            _, note = default_opponents(settings.models_dir)
        found = resolve_opponents(
            list(settings.opponents),
            experiments_dir=settings.experiments_dir,
            models_dir=settings.models_dir,
            server=settings.server,
        )
        for o in found:
            o.params(settings.build, settings.fight_type, settings.options)  # every option checked before the page
    except (OpponentError, ParamError, ValueError) as exc:
        raise PlayError(str(exc)) from None
    config = PlayConfig(
        opponents=found,
        data_dir=settings.data_dir.expanduser(),
        build=settings.build,
        fight_type=settings.fight_type,
        tick_ms=settings.tick_ms,
        options=dict(settings.options),
        seed=settings.seed,
        engine=settings.engine,
        model_sampling=settings.model_sampling,
    )
    try:
        server = PlayServer(config, settings.host, settings.port)
    except OSError as exc:
        raise PlayError(str(exc)) from None
    server.state.load()
    server.catch_stop_signals()
    return server, PlayStarted(tuple(found), config.data_dir, server.url, note)


def run_play(settings: PlaySettings, echo: Callable[[str], None] = print) -> PlayStarted:
    """Open the page and serve it until a stop signal (Ctrl-C, SIGTERM), which is the normal end; `echo` gets the
    lines the person reads (the fallback note, the opponents, where games are kept, the URL, the stop).

    Raises:
        PlayError: See `open_play`; nothing is served then.
    """
    server, started = open_play(settings)
    if started.note:
        echo(started.note)
    echo(f"opponents: {', '.join(f'{o.name} ({o.kind})' for o in started.opponents)}")
    echo(f"games are kept in {started.data_dir} (replays/, scores.json)")
    echo(f"play at {started.url}  (Ctrl-C to stop)")
    server.run()
    echo("play stopped")
    return started
