"""Fight replays: record a fight tick by tick, re-run it exactly from its seed, and watch it in a browser.

* `FightRecorder` (driven by `osrs-rllib fight --record DIR` and `analysis.play(..., record=DIR)`) writes
  one ``*.nhreplay`` file per fight; the format is `REPLAY_FORMAT`, documented in docs/replays.md.
* `verify(file)` (``osrs-rllib replay FILE --verify``) re-runs the fight with the recorded actions and checks
  that every tick's state equals the recorded one.
* `engine_views`: what a fight tool reads of a fight after a tick (players, hits), the same on both engines: the
  replay's recorded state and the analysis API's per-tick rows.
* `render_html(file)` (``osrs-rllib replay FILE -o fight.html``) writes one self-contained HTML page, and
  `osrs_rllib.analysis.show_replay` shows the same page inline in Jupyter.
"""

from osrs_rllib.replay.engine_views import CorePlayerView, EventsLike, PlayerLike, players
from osrs_rllib.replay.format import REPLAY_FORMAT, REPLAY_SUFFIX, Replay, ReplayError, load_replay, write_replay
from osrs_rllib.replay.recorder import FightRecorder, ModelReadout, player_info, replay_name
from osrs_rllib.replay.verify import ReplayCheck, verify
from osrs_rllib.replay.viewer import render_html, write_html

__all__ = [
    "REPLAY_FORMAT",
    "REPLAY_SUFFIX",
    "CorePlayerView",
    "EventsLike",
    "FightRecorder",
    "ModelReadout",
    "PlayerLike",
    "Replay",
    "ReplayCheck",
    "ReplayError",
    "load_replay",
    "player_info",
    "players",
    "render_html",
    "replay_name",
    "verify",
    "write_html",
    "write_replay",
]
