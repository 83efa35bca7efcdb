"""The plain torch policy network: masking, dependencies, log-probabilities, normalisation, TorchScript."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from envs.nh.contract import (
    CRITIC_SIZE,
    DEP_FORBIDS,
    HEAD_OFFSETS,
    HEAD_SIZES,
    MAX_HEAD_SIZE,
    NUM_HEADS,
    NUM_LOGITS,
    OBS_SIZE,
    AttackHead,
    GearHead,
    Head,
    MeleeType,
    dependency_allows,
    logit_index,
)
from policies.network import NHPolicyNetwork, RunningNorm, batch_moments, combine_moments
from policies.network_config import NetworkConfig, NetworkConfigError


def random_masks(rng: np.random.Generator, n: int) -> torch.Tensor:
    """Masks of every density, including heads with nothing legal (which must force value 0)."""
    density = rng.uniform(0.0, 1.0, size=(n, 1))
    masks = rng.random((n, NUM_LOGITS)) < density
    return torch.as_tensor(masks, dtype=torch.float32)


def violations(actions: np.ndarray, masks: np.ndarray) -> list[str]:
    """Every head value that is neither legal (env mask and §14.2) nor the forced 0 of a head with nothing legal."""
    found = []
    for row, (act, mask) in enumerate(zip(actions, masks > 0.5, strict=True)):
        for h in range(NUM_HEADS):
            legal = [
                bool(mask[HEAD_OFFSETS[h] + v]) and dependency_allows(h, v, act[:h]) for v in range(HEAD_SIZES[h])
            ]
            v = int(act[h])
            if not (0 <= v < HEAD_SIZES[h]):
                found.append(f"row {row} head {h}: value {v} out of range")
            elif not legal[v] and not (v == 0 and not any(legal)):
                found.append(f"row {row} head {Head(h).name}: value {v} illegal, legal {legal}")
    return found


@pytest.fixture(scope="module")
def net() -> NHPolicyNetwork:
    torch.manual_seed(0)
    network = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(64, 64), critic_hidden=(64,)))
    # Non-trivial statistics, so that normalisation is part of what the tests compare.
    rng = np.random.default_rng(1)
    network.update_normalizers(
        torch.as_tensor(rng.normal(2.0, 3.0, (500, OBS_SIZE)), dtype=torch.float32),
        torch.as_tensor(rng.normal(-1.0, 0.5, (500, CRITIC_SIZE)), dtype=torch.float32),
        torch.as_tensor(np.stack([rng.integers(0, s, 500) for s in HEAD_SIZES], axis=1)),
    )
    return network


def test_no_illegal_action_in_100k_samples(net: NHPolicyNetwork) -> None:
    """Issue bar: ≥ 100,000 sampled actions on random observations and masks, none masked or dependency-violating."""
    rng = np.random.default_rng(7)
    torch.manual_seed(7)
    total, batch = 0, 5000
    with torch.no_grad():
        while total < 100_000:
            obs = torch.as_tensor(rng.normal(0, 5, (batch, OBS_SIZE)), dtype=torch.float32)
            masks = random_masks(rng, batch)
            deterministic = total % 20_000 == 0
            actions, logp = net(obs, masks, deterministic)
            a, m = actions.numpy(), masks.numpy()
            # Fast vectorised check of the whole batch, then the readable per-row check on a slice.
            onehot = np.zeros((batch, NUM_LOGITS), dtype=bool)
            onehot[np.arange(batch)[:, None], a + np.array(HEAD_OFFSETS)] = True
            forbidden = (onehot.astype(np.int64) @ DEP_FORBIDS.astype(np.int64)) > 0
            legal = (m > 0.5) & ~forbidden
            for h in range(NUM_HEADS):
                sl = slice(HEAD_OFFSETS[h], HEAD_OFFSETS[h] + HEAD_SIZES[h])
                chosen_legal = legal[np.arange(batch), HEAD_OFFSETS[h] + a[:, h]]
                forced = (a[:, h] == 0) & ~legal[:, sl].any(1)
                assert np.all(chosen_legal | forced), f"head {Head(h).name} produced an illegal value"
            assert torch.isfinite(logp).all()
            assert violations(a[:40], m[:40]) == []
            total += batch
    assert total >= 100_000


def test_sampling_logp_equals_teacher_forced(net: NHPolicyNetwork) -> None:
    rng = np.random.default_rng(3)
    obs = torch.as_tensor(rng.normal(0, 2, (512, OBS_SIZE)), dtype=torch.float32)
    masks = random_masks(rng, 512)
    with torch.no_grad():
        actions, logp = net(obs, masks)
        forced_logp, entropy = net.evaluate(obs, masks, actions)
    assert torch.allclose(logp, forced_logp, atol=1e-5)
    assert entropy.shape == (512, NUM_HEADS)
    assert (entropy >= -1e-6).all()


def test_head_with_single_legal_value_has_zero_logp_and_entropy(net: NHPolicyNetwork) -> None:
    """Head 8 (tank gear) is always forced by §14.2 given head 0; forced heads carry no probability mass."""
    obs = torch.zeros(64, OBS_SIZE)
    masks = torch.ones(64, NUM_LOGITS)
    with torch.no_grad():
        actions, _ = net(obs, masks)
        per_head, entropy = net.evaluate_from_features(net.features(obs), masks, actions)
    gear = int(Head.GEAR)
    assert torch.allclose(per_head[:, gear], torch.zeros(64), atol=1e-6)
    assert torch.allclose(entropy[:, gear], torch.zeros(64), atol=1e-6)
    attack_none = actions[:, Head.ATTACK] == AttackHead.NONE
    assert (actions[attack_none, gear] == GearHead.TANK).all()
    assert (actions[~attack_none, gear] == GearHead.NO_SWAP).all()


def test_sub_head_is_forced_by_the_main_head(net: NHPolicyNetwork) -> None:
    """Only MELEE leaves the melee-type head free (§14.2): with MAGIC forced, melee type must be NONE."""
    masks = torch.ones(256, NUM_LOGITS)
    for v in (AttackHead.NONE, AttackHead.RANGED, AttackHead.MELEE):
        masks[:, logit_index(Head.ATTACK, v)] = 0.0
    with torch.no_grad():
        actions, _ = net(torch.randn(256, OBS_SIZE), masks)
    assert (actions[:, Head.ATTACK] == AttackHead.MAGIC).all()
    assert (actions[:, Head.MELEE_ATTACK_TYPE] == MeleeType.NONE).all()


def test_same_noise_same_actions_and_deterministic_is_greedy(net: NHPolicyNetwork) -> None:
    rng = np.random.default_rng(5)
    obs = torch.as_tensor(rng.normal(0, 1, (128, OBS_SIZE)), dtype=torch.float32)
    masks = random_masks(rng, 128)
    noise = torch.rand(128, NUM_HEADS, MAX_HEAD_SIZE)
    with torch.no_grad():
        a1, l1 = net(obs, masks, False, noise)
        a2, l2 = net(obs, masks, False, noise)
        greedy, _ = net(obs, masks, True)
        probs = net.probabilities(obs, masks, greedy)
    assert torch.equal(a1, a2) and torch.equal(l1, l2)
    chosen = probs.gather(-1, greedy.unsqueeze(-1)).squeeze(-1)
    assert torch.all(chosen >= probs.max(-1).values - 1e-6), "deterministic sampling must take each head's argmax"
    assert torch.allclose(probs.sum(-1), torch.ones(128, NUM_HEADS), atol=1e-5)


def test_actions_only_sampling_takes_the_same_actions_eager_and_scripted(net: NHPolicyNetwork) -> None:
    """`sample_actions` (a frozen opponent's sampling) skips the log-probability pass, not a single draw."""
    rng = np.random.default_rng(6)
    obs = torch.as_tensor(rng.normal(0, 1, (64, OBS_SIZE)), dtype=torch.float32)
    masks = random_masks(rng, 64)
    noise = torch.rand(64, NUM_HEADS, MAX_HEAD_SIZE)
    scripted = torch.jit.script(net)
    with torch.no_grad():
        features = net.features(obs)
        for deterministic in (True, False):
            full, _, _ = net.sample_from_features(features, masks, deterministic, noise)
            for model in (net, scripted):
                assert torch.equal(model.sample_actions(features, masks, deterministic, noise), full)
        torch.manual_seed(3)
        drawn = net.sample_actions(features, masks, False, None)
        torch.manual_seed(3)
        again, _, _ = net.sample_from_features(features, masks, False, None)
    assert torch.equal(drawn, again)  # the same random stream either way


def test_sampling_with_logp_takes_the_same_actions_and_the_teacher_forced_logp(net: NHPolicyNetwork) -> None:
    """`sample_with_logp` (what a learner's sampler records) reads each head's log-probability as it samples: the same
    draws as `sample_from_features`, and the loss's teacher-forced log-probability to float rounding, eager and
    scripted, on peaked heads and moved context statistics (where the two computations' orders differ most)."""
    rng = np.random.default_rng(8)
    peaked = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig())
    with torch.no_grad():
        peaked.head_out_weight.mul_(300.0)  # near-deterministic heads: log-probabilities far from uniform
        peaked.context_norm.update(torch.as_tensor(rng.integers(0, 2, (256, NUM_LOGITS)), dtype=torch.float32))
    obs = torch.as_tensor(rng.normal(0, 1, (256, OBS_SIZE)), dtype=torch.float32)
    masks = random_masks(rng, 256)
    noise = torch.rand(256, NUM_HEADS, MAX_HEAD_SIZE)
    for model in (net, peaked):
        scripted = torch.jit.script(model)
        with torch.no_grad():
            features = model.features(obs)
            for deterministic in (True, False):
                full, full_logp, _ = model.sample_from_features(features, masks, deterministic, noise)
                assert full_logp.min() < -1.0  # not all near zero: the check below has something to compare
                for twin in (model, scripted):
                    actions, logp = twin.sample_with_logp(features, masks, deterministic, noise)
                    assert torch.equal(actions, full)
                    forced, _ = model.evaluate_from_features(features, masks, actions)
                    assert torch.allclose(logp, forced.sum(-1), atol=1e-5)
            torch.manual_seed(4)
            drawn, _ = model.sample_with_logp(features, masks, False, None)
            torch.manual_seed(4)
            again, _, _ = model.sample_from_features(features, masks, False, None)
        assert torch.equal(drawn, again)  # the same random stream


def test_a_head_with_nothing_legal_samples_value_0_at_the_extremes_of_the_noise(net: NHPolicyNetwork) -> None:
    """The sampling loop has no correction step for a head with nothing legal: every entry is MASKED_LOGIT and no
    Gumbel perturbation moves it (float32's spacing there is 64). Pinned at the noise's extremes, eager and
    scripted, with and without the log-probability."""
    rng = np.random.default_rng(12)
    obs = torch.as_tensor(rng.normal(0, 1, (6, OBS_SIZE)), dtype=torch.float32)
    masks = torch.ones(6, NUM_LOGITS)
    emptied = [h for h in range(NUM_HEADS) if h % 2 == 1]
    for h in emptied:
        masks[:, HEAD_OFFSETS[h] : HEAD_OFFSETS[h] + HEAD_SIZES[h]] = 0.0
    top = float(np.nextafter(np.float32(1.0), np.float32(0.0)))  # the largest uniform below 1
    scripted = torch.jit.script(net)
    with torch.no_grad():
        features = net.features(obs)
        for fill in (0.0, top):
            noise = torch.full((6, NUM_HEADS, MAX_HEAD_SIZE), fill)
            noise[::2, :, 1:] = top - fill  # other entries at the opposite extreme in half the rows
            for model in (net, scripted):
                actions = model.sample_actions(features, masks, False, noise)
                with_logp, logp = model.sample_with_logp(features, masks, False, noise)
                assert torch.equal(actions, with_logp)
                assert (actions[:, emptied] == 0).all()
                forced, _ = net.evaluate_from_features(features, masks, actions)
                assert torch.allclose(logp, forced.sum(-1), atol=1e-5)
                assert (forced[:, emptied] == 0).all()  # the forced value has probability 1


def test_sampling_follows_the_distribution() -> None:
    """Gumbel-max draws match the softmax probabilities (chi-square-free check with a generous tolerance)."""
    torch.manual_seed(11)
    network = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(32,), critic_hidden=(32,)))
    with torch.no_grad():
        network.head_out_bias[Head.ATTACK, :4] = torch.tensor([0.0, 1.0, 2.0, -1.0])
        obs = torch.zeros(20_000, OBS_SIZE)
        masks = torch.ones(20_000, NUM_LOGITS)
        actions, _ = network(obs, masks)
        probs = network.probabilities(obs[:1], masks[:1], actions[:1])[0, Head.ATTACK, :4]
    freq = torch.bincount(actions[:, Head.ATTACK], minlength=4).float() / 20_000
    assert torch.allclose(freq, probs, atol=0.015)


def test_torchscript_matches_eager(net: NHPolicyNetwork) -> None:
    scripted = torch.jit.script(net)
    rng = np.random.default_rng(9)
    obs = torch.as_tensor(rng.normal(0, 1, (64, OBS_SIZE)), dtype=torch.float32)
    masks = random_masks(rng, 64)
    noise = torch.rand(64, NUM_HEADS, MAX_HEAD_SIZE)
    critic = torch.randn(64, CRITIC_SIZE)
    with torch.no_grad():
        for deterministic in (True, False):
            ea, el = net(obs, masks, deterministic, noise)
            sa, sl = scripted(obs, masks, deterministic, noise)
            assert torch.equal(ea, sa)
            assert torch.allclose(el, sl, atol=1e-6)
        assert torch.allclose(net.value(critic), scripted.value(critic), atol=1e-6)
        ev, _ = net.evaluate(obs, masks, ea)
        sv, _ = scripted.evaluate(obs, masks, ea)
        assert torch.allclose(ev, sv, atol=1e-6)


@pytest.mark.parametrize(
    "config",
    [
        NetworkConfig(actor_hidden=(32,), critic_hidden=(32,), head_hidden=0),
        NetworkConfig(actor_hidden=(32,), critic_hidden=(32,), frame_encoder=(24,), activation="tanh"),
        NetworkConfig(actor_hidden=(32,), critic_hidden=(32,), share_trunk=True, normalize_obs=False),
    ],
    ids=["linear-heads", "frame-encoder", "shared-trunk"],
)
def test_variants_sample_legally_script_and_backprop(config: NetworkConfig) -> None:
    frames = 2
    network = NHPolicyNetwork(OBS_SIZE * frames, CRITIC_SIZE * frames, config)
    rng = np.random.default_rng(0)
    obs = torch.as_tensor(rng.normal(0, 1, (256, OBS_SIZE * frames)), dtype=torch.float32)
    critic = torch.randn(256, CRITIC_SIZE * frames)
    masks = random_masks(rng, 256)
    actions, logp = network(obs, masks)
    assert violations(actions.numpy(), masks.numpy()) == []
    forced, _ = network.evaluate(obs, masks, actions)
    assert torch.allclose(logp, forced, atol=1e-5)
    features = network.features(obs)
    loss = -forced.mean() + network.value(critic, features).pow(2).mean()
    loss.backward()
    missing = [name for name, p in network.named_parameters() if p.grad is None]
    assert missing == [], f"parameters without gradient: {missing}"
    torch.jit.script(network)


def test_running_norm_matches_direct_statistics() -> None:
    rng = np.random.default_rng(2)
    data = rng.normal(3.0, 2.0, (1000, 5))
    norm = RunningNorm(5, clip=100.0, epsilon=1e-8)
    for chunk in np.array_split(data, 7):
        norm.update(torch.as_tensor(chunk))
    assert float(norm.count) == 1000
    np.testing.assert_allclose(norm.mean.numpy(), data.mean(0), rtol=1e-9)
    np.testing.assert_allclose(norm.var.numpy(), data.var(0), rtol=1e-9)
    out = norm(torch.as_tensor(data[:3], dtype=torch.float32)).numpy()
    np.testing.assert_allclose(out, (data[:3] - data.mean(0)) / data.std(0), rtol=1e-4, atol=1e-5)
    # Worker-side moments combined on the driver give the same answer.
    count, mean, var = combine_moments([batch_moments(c) for c in np.array_split(data, 3)])
    assert count == 1000
    np.testing.assert_allclose(mean, data.mean(0), rtol=1e-9)
    np.testing.assert_allclose(var, data.var(0), rtol=1e-9)


def test_normalisation_clips() -> None:
    norm = RunningNorm(2, clip=5.0, epsilon=1e-8)
    norm.update(torch.tensor([[0.0, 0.0], [2.0, 2.0]]))
    out = norm(torch.tensor([[1000.0, -1000.0]]))
    assert out.tolist() == [[5.0, -5.0]]


def test_state_dict_carries_statistics(net: NHPolicyNetwork) -> None:
    state = net.state_dict()
    assert "obs_norm.mean" in state and "critic_norm.var" in state and "context_norm.count" in state
    copy = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, net.config)
    copy.load_state_dict(state)
    obs = torch.randn(8, OBS_SIZE)
    masks = torch.ones(8, NUM_LOGITS)
    with torch.no_grad():
        assert torch.equal(copy(obs, masks, True)[0], net(obs, masks, True)[0])


def test_network_config_errors_name_the_key() -> None:
    with pytest.raises(NetworkConfigError, match=r"actor_hiden: unknown key; .* \(did you mean 'actor_hidden'"):
        NetworkConfig.from_dict({"actor_hiden": [64]})
    with pytest.raises(NetworkConfigError, match=r"activation: got 'sigmoid' .*; expected one of"):
        NetworkConfig.from_dict({"activation": "sigmoid"})
    with pytest.raises(NetworkConfigError, match="critic_hidden: layer widths must be positive"):
        NetworkConfig.from_dict({"critic_hidden": [64, 0]})
    cfg = NetworkConfig.from_dict({"actor_hidden": [128, 64], "head_hidden": 0})
    assert NetworkConfig.from_dict(cfg.to_dict()) == cfg
