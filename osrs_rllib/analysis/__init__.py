"""Analysis of trained agents in Python and Jupyter: experiments, checkpoints and fights as DataFrames.

Nothing here needs Ray: checkpoints are read through their model files (torch only) and fights run in the
lockstep loop of `osrs_rllib.evaluation.batched`. Install the notebook tools with ``pip install -e
'.[analysis]'`` and open ``notebooks/analyze_checkpoints.ipynb``.

Example:
    >>> from osrs_rllib import analysis  # doctest: +SKIP
    >>> exp = analysis.open_experiment("experiments/nh")  # doctest: +SKIP
    >>> fights = analysis.play(exp.checkpoint("latest"), "baseline", fights=200)  # doctest: +SKIP
    >>> fights.won.mean(), fights.correct_prayer_rate.mean()  # doctest: +SKIP
    >>> _ = analysis.play(exp.checkpoint("latest"), "baseline", fights=5, record="replays")  # doctest: +SKIP
    >>> analysis.show_replay("replays/fight-000000.nhreplay")  # doctest: +SKIP
"""

from osrs_rllib.analysis.experiments import ExperimentView, open_experiment, scalars
from osrs_rllib.analysis.fights import ACTION_COLUMNS, STYLES, play
from osrs_rllib.analysis.policies import AnalysisError, Policy, load_policy
from osrs_rllib.analysis.tables import action_distribution, checkpoint_table, table_ratings
from osrs_rllib.replay.viewer import show_replay

__all__ = [
    "ACTION_COLUMNS",
    "STYLES",
    "AnalysisError",
    "ExperimentView",
    "Policy",
    "action_distribution",
    "checkpoint_table",
    "load_policy",
    "open_experiment",
    "play",
    "scalars",
    "show_replay",
    "table_ratings",
]
