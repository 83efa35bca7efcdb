"""Models fight: one way to play side A against side B, and everything that counts the results.

`batched` steps many fights in lockstep (one forward pass per tick for a model), `match` seats two sides over a plan of
builds, fight types and seats (`play_match`), `stratified` spreads fights evenly and splits results by them. On top:
`fight` (``osrs-rllib fight``: named sides, model files, replays), `policy_fights` (a policy against the baseline and
the ladder, or a frozen model: training's evaluation and the exploiter's), `rate` (the round-robin tournament),
`outcome` and `calibration` (the per-tick win-probability model) and `episode_metrics` (a fight from the learner's seat,
summed for TensorBoard).
"""

from __future__ import annotations

from common.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "LadderSeat": "batched",
    "Seat": "batched",
    "SeatNoise": "batched",
    "play_fights": "batched",
    "seat_seed": "batched",
    "EpisodeMetrics": "episode_metrics",
    "BASELINE": "fight",
    "FightSummary": "fight",
    "FightsStopped": "fight",
    "MODEL_SUFFIX": "fight",
    "ModelSide": "fight",
    "SideSeat": "fight",
    "is_model_path": "fight",
    "plan_matchup": "fight",
    "resolve_side": "fight",
    "run_fights": "fight",
    "wilson_interval": "fight",
    "FightHooks": "match",
    "FightRecord": "match",
    "PolicySide": "match",
    "SeatedPlayer": "match",
    "play_match": "match",
    "OutcomeError": "outcome",
    "check_winrate": "outcome",
    "parse_mix": "outcome",
    "train_winrate": "outcome",
    "EvalResult": "policy_fights",
    "Shards": "policy_fights",
    "evaluate": "policy_fights",
    "evaluate_vs_model": "policy_fights",
    "network_act_fn": "policy_fights",
    "resolve_players": "rate",
    "save_table": "rate",
    "table_json": "rate",
    "tournament": "rate",
    "tournament_params": "rate",
    "format_split": "stratified",
    "parse_builds": "stratified",
    "spread": "stratified",
    "trained_builds": "stratified",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
