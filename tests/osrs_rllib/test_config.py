"""The typed training config: presets, ``extends``, ``--set`` and the one-line errors (`osrs_rllib.config.schema`)."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel
from typer.testing import CliRunner

from envs.nh.loadouts import Build
from envs.nh.params import FightParams
from envs.nh.rewards import CORE_REWARD_WEIGHTS, RewardWeights
from envs.opponents import LADDER, PRESCIENT
from osrs_rllib.cli import app
from osrs_rllib.config.schema import (
    OPPONENT_KINDS,
    SET_SOURCE,
    ConfigError,
    StepSchedule,
    TrainConfig,
    dump_config,
    load_config,
    resolve_config_dict,
)
from policies.network_config import NetworkConfig

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"
ALL_PRESETS = tuple(sorted(p.stem for p in CONFIGS.glob("*.yml")))
"""Every preset a user can name (`configs/*.yml`), the study's recipes apart (tests/league checks those)."""
ARCHIVED = tuple(sorted(p.stem for p in (CONFIGS / "archive").glob("*.yml")))
"""Recipes of retired models (`configs/archive/*.yml`): they must still load, so their figures can be reproduced."""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _error(path: Path | str, overrides: tuple[str, ...] = ()) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides)
    err = info.value
    assert "\n" not in str(err)
    assert str(err).startswith(f"{err.file}: ")
    return err


# ---- presets -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", ALL_PRESETS)
def test_preset_loads_and_round_trips_through_dump(preset: str, tmp_path: Path) -> None:
    cfg = load_config(CONFIGS / f"{preset}.yml")
    assert cfg.name == preset  # the file's stem, also for presets that extend nh.yml
    dumped = _write(tmp_path / "dumped.yml", dump_config(cfg, header="a comment"))
    again = load_config(dumped)
    assert again == cfg
    assert dump_config(again) == dump_config(cfg)


def test_main_preset_is_the_spec_core_preset() -> None:
    cfg = load_config(CONFIGS / "nh.yml")
    params = cfg.env.to_fight_params()  # §13.3
    assert params.randomize_build and params.randomize_gear and params.randomize_fight_type
    assert params.random_build_options == (
        Build.LMS_PURE,
        Build.LMS_ZERKER,
        Build.LMS_MED,
        Build.PURE,
        Build.ZERKER,
        Build.MED,
    )
    assert not params.only_switch_prayer_when_about_to_attack and not params.only_switch_gear_when_attack_soon
    assert not (params.allow_smite or params.allow_redemption or params.allow_moving_if_can_attack)
    assert params.training and params.include_opponent_observation and params.death_match
    assert cfg.env.frame_stack == 1
    assert cfg.env.to_reward_weights() == CORE_REWARD_WEIGHTS  # §17.4
    assert cfg.model == NetworkConfig()
    assert cfg.ray.address is None and cfg.runners.num_env_runners == "auto" and cfg.learner.device == "auto"
    ppo = cfg.ppo
    assert (ppo.gamma, ppo.gae_lambda, ppo.clip_param, ppo.grad_clip) == (0.99, 0.95, 0.2, 0.5)
    assert (ppo.train_batch_size, ppo.minibatch_size, ppo.num_epochs) == (8192, 2048, 4)
    assert ppo.lr.initial == 3e-4 and ppo.lr.values[-1] < 3e-4  # annealed
    assert ppo.entropy_coeff.initial == 0.02 and ppo.entropy_coeff.values[-1] < 0.02
    assert ppo.head_entropy_weights == {"attack": 3.0, "prayer": 3.0}
    assert cfg.stop.minutes == 60.0


def test_main_preset_is_hunted_and_its_children_are_not() -> None:
    """The main job plays a main exploiter's snapshots and the expert; the presets built on nh-no-exploiter.yml
    (the smoke run, the recipes' phases, the fine-tunes, the exploiter's learner) train as they did before the main
    job had an exploiter, so their documented figures still hold."""
    main = load_config(CONFIGS / "nh.yml")
    league = main.league
    assert (league.main_exploiters, league.main_share, league.exploiter_step_budget) == (1, 0.5, 1_500_000)
    shares = main.opponents.normalized()
    assert shares["exploiters"] == pytest.approx(0.15) and shares["expert"] == pytest.approx(0.15)
    assert main.mixture.members == 3  # the hour ships its per-fight mixture
    plain = load_config(CONFIGS / "nh-no-exploiter.yml")
    assert plain.league.main_exploiters == 0 and plain.league.main_share is None
    shares = {"baseline": 0.5, "prioritized": 0.2, "self_play": 0.1, "prayer_switcher": 0.1, "tribrid": 0.1}
    assert plain.opponents.normalized() == pytest.approx(shares)
    assert plain.ppo.entropy_coeff.initial == 0.01 and set(plain.ppo.head_entropy_weights.values()) == {1.0}
    for preset in ("smoke", "exploit", "nh-human", "archive/nh-expert-ft"):
        plain_league = load_config(CONFIGS / f"{preset}.yml").league
        assert plain_league.main_exploiters == 0 and plain_league.snapshot_interval == 10, preset


def test_main_job_states_the_rule_that_ships_nh_main() -> None:
    """nh.yml makes the shipped nh-main: its last checkpoint and its parameter average compete, the shipped-model
    bar against the expert is the floor, and each finalist meets two fresh exploiters of 4M env steps. Presets
    without the league inherit no rule (they ship only what they state themselves)."""
    main = load_config(CONFIGS / "nh.yml")
    ship = main.ship
    assert ship is not None and ship.candidates == 1 and ship.average and not ship.mixture
    assert main.ppo.average is not None  # what the average candidate is made of
    assert ship.rung.opponent == "expert" and ship.rung.fights == 500 and ship.rung.modes == ["deterministic"]
    assert ship.rung.floor is not None and (ship.rung.floor.mean, ship.rung.floor.every_build) == (0.93, 0.85)
    probe = ship.exploit
    assert probe is not None and probe.seeds == [0, 1] and probe.env_steps == 4_000_000
    assert probe.final_fights == 600 and probe.config == "configs/exploit.yml"
    assert load_config(CONFIGS.parent / probe.config).ship is None  # relative to the repository, as ship runs
    for preset in ("smoke", "nh-no-exploiter"):
        assert load_config(CONFIGS / f"{preset}.yml").ship is None, preset
    assert load_config(CONFIGS / "nh-human.yml").ship is not None  # states its own


def test_main_preset_writes_every_hyperparameter_out() -> None:
    """RLlib's defaults are not ours: nothing in nh.yml may be left to a schema default."""
    raw = yaml.safe_load((CONFIGS / "nh.yml").read_text(encoding="utf-8"))
    for section, field in TrainConfig.model_fields.items():
        if section in ("name", "phases", "ship"):
            continue  # the file's stem, on purpose; phases: a recipe's; ship: the test above
        assert section in raw, section
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):  # a section model
            assert set(raw[section]) == set(annotation.model_fields), section
    assert set(raw["model"]) == {f.name for f in dataclasses.fields(NetworkConfig)}
    assert set(raw["env"]["reward_weights"]) == {f.name for f in dataclasses.fields(RewardWeights)}
    per_episode = {"extra", "agent", "target", "episode_id", "opponent", "first_player_baseline"}
    assert set(raw["env"]["params"]) == {f.name for f in dataclasses.fields(FightParams)} - per_episode


@pytest.mark.parametrize("preset", ARCHIVED)
def test_archived_preset_loads(preset: str) -> None:
    assert load_config(CONFIGS / "archive" / f"{preset}.yml").name == preset


def test_long_preset_is_the_exploiters_league_at_the_study_budget() -> None:
    """The archived nh-long.yml reproduces the study's `exploiters` model (results/study/README.md): the league
    study's `exploiters` recipe at its 20M env steps, whatever the machine's speed."""
    long, league = load_config(CONFIGS / "archive" / "nh-long.yml"), load_config(CONFIGS / "nh-exploiters.yml")
    assert long.stop.env_steps == 20_000_000 and long.stop.minutes is None and long.stop.iterations is None
    a, b = long.model_dump(), league.model_dump()
    assert {k for k in a if a[k] != b[k]} == {"name", "stop"}
    assert long.league.main_exploiters == 1 and long.league.league_exploiters == 1


def test_smoke_and_cluster_presets_change_only_their_scale() -> None:
    nh, smoke, main = (load_config(CONFIGS / f"{p}.yml") for p in ("nh-no-exploiter", "smoke", "nh"))
    cluster = load_config(CONFIGS / "nh-cluster.yml")  # the main job itself, at cluster scale
    assert smoke.env.reward_weights == nh.env.reward_weights  # inherited through extends
    assert smoke.env.params["max_episode_ticks"] == 300 and smoke.env.params["randomize_build"] is True
    assert smoke.ppo.train_batch_size <= 1024 and smoke.stop.iterations == 3
    assert smoke.model.actor_hidden == (64, 64)
    assert cluster.ray.address == "auto"
    assert cluster.runners.num_env_runners == "auto" and cluster.runners.num_envs_per_env_runner == 16
    assert cluster.ppo.train_batch_size > main.ppo.train_batch_size
    assert cluster.opponents == main.opponents and cluster.league == main.league and cluster.env == main.env


def test_opponent_kinds_and_normalised_mix() -> None:
    league_kinds = {"latest", "prioritized", "pfsp", "exploiters", "exploiters_pfsp", "target"}
    assert set(OPPONENT_KINDS) == {"self_play", "baseline", *LADDER, *league_kinds}
    cfg = load_config(CONFIGS / "nh.yml", ["opponents.mix={baseline: 3, tribrid: 1, noop: 0}"])
    assert cfg.opponents.normalized() == {"baseline": 0.75, "tribrid": 0.25}


def test_config_is_frozen() -> None:
    cfg = load_config(CONFIGS / "smoke.yml")
    with pytest.raises(ValueError, match="frozen"):
        cfg.seed = 3  # type: ignore[misc]


# ---- schedules -----------------------------------------------------------------------------------------


def test_schedule_interpolates_and_holds_the_last_value() -> None:
    s = StepSchedule.parse([[0, 1.0], [100, 0.0], [300, 0.5]])
    assert [s.value_at(t) for t in (0, 50, 100, 200, 300, 10_000)] == [1.0, 0.5, 0.0, 0.25, 0.5, 0.5]
    assert s.to_rllib() == (1.0, [[0, 1.0], [100, 0.0], [300, 0.5]])
    assert StepSchedule.parse(3e-4).to_rllib() == (3e-4, None)
    assert StepSchedule.parse([[0, 2], [1e6, 1]]).points == ((0, 2.0), (1_000_000, 1.0))  # 1e6 is an integer step


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ([[1, 0.1]], "starts at step 1"),
        ([[0, 0.1], [10, 0.2], [10, 0.3]], "not strictly increasing"),
        ([[0, 0.1], [5.5, 0.2]], "non-negative integers"),
        ([0.1, 0.2], "in the schedule"),
        ("fast", "a number or a list"),
        ([], "a number or a list"),
    ],
)
def test_schedule_rejects_malformed_input(raw: object, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        StepSchedule.parse(raw)


# ---- extends -------------------------------------------------------------------------------------------


def test_extends_chain_merges_mappings_and_replaces_lists(tmp_path: Path) -> None:
    _write(tmp_path / "base" / "root.yml", "ppo: {lr: 0.001, gamma: 0.9}\nevaluation: {opponents: [baseline, noop]}\n")
    _write(tmp_path / "base" / "mid.yml", "extends: root.yml\nppo: {gamma: 0.95}\nseed: 7\n")
    leaf = _write(tmp_path / "leaf.yml", "extends: base/mid.yml\nevaluation: {opponents: [tribrid]}\nseed: 8\n")
    raw = resolve_config_dict(leaf)
    assert "extends" not in raw and raw["name"] == "leaf"
    assert raw["ppo"] == {"lr": 0.001, "gamma": 0.95}
    cfg = load_config(leaf)
    assert cfg.seed == 8 and cfg.ppo.gamma == 0.95 and cfg.ppo.lr == StepSchedule.constant(0.001)
    assert cfg.evaluation.opponents == ["tribrid"]  # lists are replaced, not concatenated


def test_extends_cycle_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path / "a.yml", "extends: b.yml\n")
    _write(tmp_path / "b.yml", "extends: a.yml\n")
    err = _error(tmp_path / "a.yml")
    assert err.key == "extends" and err.file == str(tmp_path / "b.yml")
    assert "cycle" in err.message and "a.yml -> " in err.message


def test_extends_of_a_missing_file_names_the_extending_file(tmp_path: Path) -> None:
    _write(tmp_path / "nh.yml", "seed: 1\n")
    child = _write(tmp_path / "child.yml", "extends: hn.yml\n")
    err = _error(child)
    assert (err.file, err.key) == (str(child), "extends")
    assert "not found" in err.message and "did you mean 'nh.yml'?" in err.message


# ---- overrides -----------------------------------------------------------------------------------------


def test_overrides_set_nested_values_lists_and_mappings() -> None:
    cfg = load_config(
        CONFIGS / "smoke.yml",
        [
            "ppo.lr=1e-4",  # YAML 1.1 would read this as a string
            "model.actor_hidden=[32,16]",
            "opponents.mix={baseline: 1}",  # replaces the mix instead of merging into it
            "env.params.max_episode_ticks=50",
            "stop.minutes=null",
        ],
    )
    assert cfg.ppo.lr.to_rllib() == (1e-4, None)
    assert cfg.model.actor_hidden == (32, 16)
    assert cfg.opponents.mix == {"baseline": 1.0}
    assert cfg.env.params["max_episode_ticks"] == 50 and cfg.env.params["training"] is True
    assert cfg.stop.minutes is None and cfg.stop.iterations == 3


def test_override_typo_blames_set() -> None:
    err = _error(CONFIGS / "smoke.yml", ("ppo.minibatch_sise=64",))
    assert (err.file, err.key) == (SET_SOURCE, "ppo.minibatch_sise")
    assert str(err).startswith("--set: ppo.minibatch_sise: unknown key;")
    assert "did you mean 'minibatch_size'?" in str(err)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("ppo", "expected key.path=value"),
        ("ppo..lr=1", "empty part"),
        ("ppo.lr.start=1", "not a mapping"),
        ("extends=nh.yml", "extends cannot be overridden"),
        ("ppo.lr=[1, 2", "cannot read the value"),
    ],
)
def test_malformed_overrides(override: str, expected: str) -> None:
    err = _error(CONFIGS / "smoke.yml", (override,))
    assert err.file == SET_SOURCE and expected in err.message


# ---- unknown keys: the file they came from, the key path and the closest key ------------------------------


@pytest.mark.parametrize(
    ("parent_text", "key", "suggestion"),
    [
        ("sed: 1\n", "sed", "seed"),
        ("ppo:\n  learning_rat: 0.1\n", "ppo.learning_rat", None),
        ("ppo:\n  entropy_coef: 0.1\n", "ppo.entropy_coef", "entropy_coeff"),
        ("env:\n  params:\n    randomise_gear: true\n", "env.params.randomise_gear", "randomize_gear"),
        ("model:\n  critic_hiden: [8]\n", "model.critic_hiden", "critic_hidden"),
        ("env:\n  reward_weights:\n    win_rewards: 2\n", "env.reward_weights.win_rewards", "win_reward"),
        ("opponents:\n  mix:\n    tribird: 1\n", "opponents.mix.tribird", "tribrid"),
    ],
)
def test_unknown_key_in_parent_names_the_parent_file(
    tmp_path: Path, parent_text: str, key: str, suggestion: str | None
) -> None:
    parent = _write(tmp_path / "parent.yml", parent_text)
    child = _write(tmp_path / "child.yml", "extends: parent.yml\nppo: {gamma: 0.9}\nseed: 3\n")
    err = _error(child)
    assert (err.file, err.key) == (str(parent), key)
    assert err.message.startswith("unknown")
    assert "expected" in err.message
    if suggestion is not None:
        assert err.message.endswith(f"(did you mean {suggestion!r}?)")
    assert str(err) == f"{parent}: {key}: {err.message}"


def test_problem_caused_by_child_names_the_child(tmp_path: Path) -> None:
    _write(tmp_path / "parent.yml", "ppo: {train_batch_size: 1024, minibatch_size: 512}\n")
    child = _write(tmp_path / "child.yml", "extends: parent.yml\nppo: {minibatch_size: 2048}\n")
    err = _error(child)
    assert (err.file, err.key) == (str(child), "ppo.minibatch_size")
    # the minibatch size is the schema default; the --set train batch makes it impossible
    err = _error(CONFIGS / "smoke.yml", ("ppo.train_batch_size=64", "ppo.minibatch_size=128"))
    assert err.file == SET_SOURCE


# ---- wrong types and impossible values --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "key", "expected"),
    [
        ('ppo.train_batch_size="8192"', "ppo.train_batch_size", "got '8192' (a string); expected an integer"),
        ("ppo.num_epochs=2.5", "ppo.num_epochs", "expected an integer"),
        ("ppo.gamma=high", "ppo.gamma", "expected a number"),
        ("logging.live=3", "logging.live", "expected true or false"),
        ("ppo=3", "ppo", "got 3 (an integer); expected a mapping"),
        ("env.params.training=maybe", "env.params.training", "got 'maybe' (a string); expected true or false"),
        ("env.reward_weights.win_reward=[1, 2]", "env.reward_weights.win_reward", "[a, b, n]"),
        ("model.head_hidden=wide", "model.head_hidden", "non-negative integer"),
        ("evaluation.opponents=baseline", "evaluation.opponents", "expected a list"),
    ],
)
def test_wrong_type(override: str, key: str, expected: str) -> None:
    err = _error(CONFIGS / "nh.yml", (override,))
    assert (err.file, err.key) == (SET_SOURCE, key)
    assert expected in err.message


@pytest.mark.parametrize(
    ("override", "key", "expected"),
    [
        ("ppo.minibatch_size=16384", "ppo.minibatch_size", "expected minibatch_size ≤ train_batch_size"),
        ("ppo.lr=-0.001", "ppo.lr", "expected values > 0"),
        ("ppo.lr=[[0, 0.001], [100, -0.001]]", "ppo.lr", "expected values > 0"),
        ("ppo.entropy_coeff=[[0, 0.01], [500, 0.0], [400, 0.0]]", "ppo.entropy_coeff", "not strictly increasing"),
        ("ppo.gamma=0", "ppo.gamma", "expected a value > 0"),
        ("ppo.gae_lambda=1.5", "ppo.gae_lambda", "expected a value ≤ 1"),
        ("ppo.train_batch_size=0", "ppo.train_batch_size", "expected a value > 0"),
        ("ppo.rollout_fragment_length=0", "ppo.rollout_fragment_length", '"auto"'),
        ("ppo.head_entropy_weights.prayr=2", "ppo.head_entropy_weights.prayr", "did you mean 'prayer'?"),
        ("ppo.head_entropy_weights.prayer=-1", "ppo.head_entropy_weights.prayer", "expected a weight ≥ 0"),
        ("opponents.mix={baseline: 0, self_play: 0}", "opponents.mix", "every share is zero"),
        ("opponents.mix.baseline=-0.5", "opponents.mix.baseline", "expected a share ≥ 0"),
        ("evaluation.opponents=[tribird]", "evaluation.opponents", "did you mean 'tribrid'?"),
        ("evaluation.opponents=[self_play]", "evaluation.opponents", "unknown opponent 'self_play'"),
        ("env.params.max_episode_ticks=-1", "env.params.max_episode_ticks", "integer ≥ 0"),
        ("env.params.random_build_options=[PURE, FOO]", "env.params.random_build_options", "invalid build 'FOO'"),
        ("env.params.opponent=agent", "env.params.opponent", "opponents.mix"),
        ("env.frame_stack=0", "env.frame_stack", "must be >= 1"),
        ("model.actor_hidden=[]", "model.actor_hidden", "at least one layer"),
        ("model.activation=rleu", "model.activation", "did you mean 'relu'?"),
        ("stop={iterations: null, env_steps: null, minutes: null}", "stop", "at least one of"),
        ("evaluation.interval=0", "checkpoint.keep_best", "keep_best needs evaluation"),
        ("evaluation.deterministic=false", "evaluation.deterministic", "at least one of them"),
        ("logging.log_level=VERBOSE", "logging.log_level", "expected one of DEBUG, ERROR, INFO, WARNING"),
        ("name=my run", "name", "letters, digits"),
        ("ray.dashboard_port=70000", "ray.dashboard_port", "≤ 65535"),
    ],
)
def test_impossible_value(override: str, key: str, expected: str) -> None:
    err = _error(CONFIGS / "nh.yml", (override,))
    assert (err.file, err.key) == (SET_SOURCE, key)
    assert expected in err.message


def test_evaluation_off_allows_no_best_checkpoint() -> None:
    cfg = load_config(CONFIGS / "nh.yml", ["evaluation.interval=0", "checkpoint.keep_best=false"])
    assert cfg.evaluation.interval == 0


# ---- files ---------------------------------------------------------------------------------------------


def test_missing_file_suggests_a_sibling() -> None:
    err = _error("configs/nh.yaml")
    assert (err.file, err.key) == ("configs/nh.yaml", None)
    assert str(err) == "configs/nh.yaml: file not found; expected a YAML config file (did you mean 'configs/nh.yml'?)"


def test_invalid_yaml_reports_the_line(tmp_path: Path) -> None:
    bad = _write(tmp_path / "bad.yml", "ppo:\n  gamma: 0.9\n  lr: [0.1\nseed: 1\n")
    err = _error(bad)
    assert err.file == str(bad) and "invalid YAML at line" in err.message


def test_duplicate_keys_are_an_error(tmp_path: Path) -> None:
    bad = _write(tmp_path / "dup.yml", "ppo:\n  gamma: 0.9\n  gamma: 0.95\n")
    err = _error(bad)
    assert "line 3" in err.message and "duplicate key 'gamma'" in err.message


@pytest.mark.parametrize("text", ["- ppo\n- env\n", "just a string\n"])
def test_top_level_must_be_a_mapping(tmp_path: Path, text: str) -> None:
    err = _error(_write(tmp_path / "list.yml", text))
    assert "expected a mapping of sections" in err.message


def test_empty_file_is_all_defaults(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path / "empty.yml", ""))
    assert cfg == TrainConfig(name="empty")


# ---- the CLI -------------------------------------------------------------------------------------------


def test_config_show_prints_the_resolved_config() -> None:
    result = CliRunner().invoke(app, ["config", "show", "configs/smoke.yml", "--set", "ppo.num_epochs=3"])
    assert result.exit_code == 0, result.output
    shown = yaml.safe_load(result.stdout)
    assert shown["name"] == "smoke" and shown["ppo"]["num_epochs"] == 3
    assert shown["env"]["reward_weights"]["damage_dealt_reward_scale"] == 0.25  # from nh.yml


def test_config_show_error_is_one_line_with_exit_code_2() -> None:
    result = CliRunner().invoke(app, ["config", "show", "configs/smoke.yml", "--set", "ppo.lrr=1"])
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()  # one line: where, which key, what was meant
    assert line.startswith("error: --set: ppo.lrr: unknown key;")
    assert line.endswith("(did you mean 'lr'?)")


def _osrs_rllib(*args: str) -> subprocess.CompletedProcess[str]:
    exe = REPO / ".venv" / "bin" / "osrs-rllib"
    if not exe.exists():
        pytest.skip(f"{exe} is not installed")
    return subprocess.run([str(exe), *args], cwd=REPO, capture_output=True, text=True, timeout=120, check=False)


def test_real_cli_shows_the_smoke_preset() -> None:
    proc = _osrs_rllib("config", "show", "configs/smoke.yml")
    assert proc.returncode == 0, proc.stderr
    assert load_config(CONFIGS / "smoke.yml") == TrainConfig.model_validate(yaml.safe_load(proc.stdout))


def test_real_cli_error_is_one_clear_line(tmp_path: Path) -> None:
    bad = _write(tmp_path / "bad.yml", "extends: " + str(CONFIGS / "nh.yml") + "\nppo:\n  clip_parm: 0.3\n")
    proc = _osrs_rllib("config", "show", str(bad))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {bad}: ppo.clip_parm: unknown key; expected one of ")
    assert lines[0].endswith("(did you mean 'clip_param'?)")


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("ppo.lr=.nan", "ppo.lr"),
        ("ppo.lr=.inf", "ppo.lr"),
        ("ppo.clip_param=.inf", "ppo.clip_param"),
        ("ppo.entropy_coeff=[[0, .nan]]", "ppo.entropy_coeff[0][1]"),
        ("env.reward_weights.win_reward=-.inf", "env.reward_weights.win_reward"),
        ("model.obs_clip=.inf", "model.obs_clip"),
        ("league.eta=.nan", "league.eta"),
    ],
)
def test_non_finite_numbers_are_rejected_everywhere(override: str, key: str, tmp_path: Path) -> None:
    """NaN and infinity fail validation everywhere (ppo.lr, --set ppo.clip_param=.inf)."""
    with pytest.raises(ConfigError) as err:
        load_config(CONFIGS / "smoke.yml", [override])
    assert err.value.file == "--set" and err.value.key == key and "finite" in err.value.message
    nan_file = tmp_path / "nan.yml"
    nan_file.write_text(f"extends: {CONFIGS / 'smoke.yml'}\nppo:\n  lr: .nan\n", encoding="utf-8")
    with pytest.raises(ConfigError) as in_file:
        load_config(nan_file)
    assert in_file.value.file == str(nan_file) and in_file.value.key == "ppo.lr"


def test_non_finite_reward_weights_are_rejected_by_the_environment_too() -> None:
    with pytest.raises(ValueError, match="finite"):
        RewardWeights.from_mapping({"win_reward": float("nan")})
    with pytest.raises(ValueError, match="finite"):
        RewardWeights.from_mapping({"target_frozen_tick_reward": [0.1, float("inf"), 10]})


def test_a_prescient_rung_needs_the_environment_to_host_it() -> None:
    """Only the environment can show a rung the learner's action first: as an RLlib policy it cannot play, so
    the config refuses it in the mix and the league leaves it out of its fixed players."""
    from osrs_rllib.training import fixed_policies, league_rungs

    (prescient,) = PRESCIENT
    mix = f"opponents.mix={{{prescient}: 1, baseline: 1}}"
    with pytest.raises(ConfigError, match=f"opponents.scripted_in_env: '{prescient}' must see the learner's action"):
        load_config(CONFIGS / "smoke.yml", ["opponents.scripted_in_env=false", mix])
    load_config(CONFIGS / "smoke.yml", [mix])  # hosted by the env: fine
    assert prescient in league_rungs(True) and prescient not in league_rungs(False)
    assert f"scripted_{prescient}" in fixed_policies(True) and f"scripted_{prescient}" not in fixed_policies(False)
    assert set(league_rungs(False)) == set(LADDER) - {prescient}


# ---- the best checkpoint -------------------------------------------------------------------------------


def test_best_by_must_be_an_evaluation_opponent() -> None:
    """`nh.yml` judges "best" by the expert (the baseline is saturated); naming an opponent that is not evaluated
    is a one-line error naming the key, not a run whose best.nhmodel silently never updates."""
    assert load_config("configs/nh.yml").checkpoint.best_by == "expert"
    assert load_config("configs/nh.yml", ["checkpoint.best_by=null"]).checkpoint.best_by is None
    with pytest.raises(ConfigError, match=r"checkpoint\.best_by.*not an evaluation opponent"):
        load_config("configs/nh.yml", ["checkpoint.best_by=tribrid"])


def test_the_best_checkpoint_follows_best_by() -> None:
    from types import SimpleNamespace

    from osrs_rllib.training import Trainer

    rows = [
        {"opponent": "baseline", "mode": "deterministic", "win_rate": 0.99},
        {"opponent": "expert", "mode": "deterministic", "win_rate": 0.71},
        {"opponent": "expert", "mode": "stochastic", "win_rate": 0.65},
    ]
    for best_by, expected in ((None, 0.99), ("expert", 0.71), ("baseline", 0.99)):
        fake = SimpleNamespace(cfg=SimpleNamespace(checkpoint=SimpleNamespace(best_by=best_by)))
        assert Trainer._headline_win_rate(fake, rows) == expected  # type: ignore[arg-type]
    fake = SimpleNamespace(cfg=SimpleNamespace(checkpoint=SimpleNamespace(best_by="expert")))
    assert Trainer._headline_win_rate(fake, []) is None  # type: ignore[arg-type]


# ---- the league study's recipes (configs/study/, tools/league_study.py) --------------------------------


def test_league_study_recipes_differ_from_the_main_job_only_where_they_say() -> None:
    """Each recipe is the main job as the study started from it (nh-no-exploiter.yml: no exploiter) with one idea
    changed, so the study compares ideas, not accidents."""
    from tools.league_study import RECIPES

    main = load_config(CONFIGS / "nh-no-exploiter.yml")
    study = {r: load_config(CONFIGS / "study" / f"{r}.yml") for r in RECIPES}
    assert sorted(p.stem for p in (CONFIGS / "study").glob("*.yml")) == sorted(RECIPES)
    same = ("env", "model", "runners", "evaluation", "checkpoint")
    for recipe, cfg in study.items():
        for section in same:
            assert getattr(cfg, section) == getattr(main, section), (recipe, section)
    assert study["mix"].opponents == main.opponents and study["mix"].ppo == main.ppo
    assert study["past-self"].opponents.normalized()["prioritized"] > main.opponents.normalized()["prioritized"]
    assert "prioritized" not in study["pfsp"].opponents.normalized() and study["pfsp"].opponents.normalized()["pfsp"]
    assert study["exploiters"].league.main_exploiters == study["exploiters"].league.league_exploiters == 1
    assert study["expert-entropy"].opponents.normalized()["expert"] > 0
    assert study["expert-entropy"].ppo.entropy_coeff != main.ppo.entropy_coeff
    mixing, exploiters = study["exploiters-mixing"], study["exploiters"]
    assert (mixing.league, mixing.opponents) == (exploiters.league, exploiters.opponents)
    assert mixing.ppo.model_copy(update={"head_entropy_weights": exploiters.ppo.head_entropy_weights}) == exploiters.ppo
    assert set(exploiters.ppo.head_entropy_weights.values()) == {1.0}  # every head alike, as nh-no-exploiter.yml
    assert mixing.ppo.head_entropy_weights == {"attack": 5, "prayer": 5}
    with_expert = study["exploiters-expert"]
    assert (with_expert.league, with_expert.ppo) == (exploiters.league, exploiters.ppo)
    mix, before = with_expert.opponents.normalized(), exploiters.opponents.normalized()
    assert "expert" not in before and mix["expert"] == pytest.approx(0.2)
    assert mix["baseline"] == pytest.approx(before["baseline"] - 0.2)
    assert {k: v for k, v in mix.items() if k not in ("expert", "baseline")} == pytest.approx(
        {k: v for k, v in before.items() if k != "baseline"}
    )
