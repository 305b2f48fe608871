"""
issue 24：verl / TRL 的其他策略损失、优势、rollout 修正、聚合的约定 —— 值和梯度对照同行的公式。

每个参照都是照 verl（commit b178a3cd）verl/trainer/ppo/core_algos.py、rollout_corr_helper.py 和
TRL（commit f2cd5771）trl/trainer/grpo_trainer.py 的代码用 numpy 重写的，不调用 toyllm；
梯度用参照的中心差分（toyllm.gradcheck.finite_difference_grad）对 rl_objective 的 ∂loss/∂log π。
输入有补齐（每行长度不同）和一整行全空。
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from toyllm.gradcheck import finite_difference_grad
import toyllm.peers  # noqa: F401  登记 verl / TRL 的损失、优势、选项和预设
from toyllm.peers import advantages as peer_advantages, losses as peer_losses
from toyllm.rl import RLConfig, losses, preset
from toyllm.rl.objective import rl_objective

LENGTHS = [6, 3, 0, 5, 1, 4]


def _batch(seed=0, spread=0.3):
    rng = np.random.default_rng(seed)
    m = np.arange(6)[None, :] < np.array(LENGTHS)[:, None]          # 第 2 行全空
    logp = np.where(m, np.log(rng.uniform(0.05, 0.95, m.shape)), 0.0)
    old = np.where(m, logp + rng.normal(0, spread, m.shape), 0.0)
    adv = rng.normal(size=len(LENGTHS))
    return logp, old, adv, m


# ---- 同行的聚合（verl agg_loss；TRL _compute_loss） ----
def verl_agg(l, m, mode, scale=None):
    seq_mask = m.sum(-1) > 0
    if mode == "token-mean":
        return (l * m).sum() / m.sum()
    if mode == "seq-mean-token-mean":
        return ((l * m).sum(-1) / (m.sum(-1) + 1e-8) * seq_mask).sum() / seq_mask.sum()
    if mode == "seq-mean-token-sum":
        return ((l * m).sum(-1) * seq_mask).sum() / seq_mask.sum()
    return (l * m).sum() / (m.shape[-1] if scale is None else scale)


def trl_agg(l, m, loss_type):
    if loss_type in ("grpo", "sapo"):
        return ((l * m).sum(-1) / np.maximum(m.sum(-1), 1)).mean()
    if loss_type in ("dapo", "cispo", "vespo"):
        return (l * m).sum() / max(m.sum(), 1)
    raise KeyError(loss_type)


def _check(cfg, ref, logp, old, adv, m, atol=1e-7, **kw):
    """rl_objective 的值 = ref(logp)；∂loss/∂log π = ref 的中心差分（mask 外是 0）。"""
    obj = rl_objective(logp, old, adv, m, cfg, **kw)
    assert obj.loss == pytest.approx(ref(logp), rel=1e-7, abs=1e-12)
    fd = finite_difference_grad(ref, logp)
    assert np.abs(obj.dloss_dlogp - np.where(m, fd, 0.0)).max() < atol
    assert np.all(obj.dloss_dlogp[~m] == 0)
    return obj


# =============================================================================
# verl：sapo、geo_mean、gpg、clip_cov、kl_cov
# =============================================================================
def verl_sapo(logp, old, A, m, tau_pos=1.0, tau_neg=1.05):
    ratio = np.exp(np.clip(logp - old, -20, 20))
    tau = np.where(A > 0, tau_pos, tau_neg)
    gates = 1 / (1 + np.exp(-tau * (ratio - 1))) * (4 / tau)
    return verl_agg(-gates * A, m, "seq-mean-token-mean")


def trl_sapo(logp, old, A, m, level="token", tau_pos=1.0, tau_neg=1.05):
    lr = logp - old
    if level == "sequence":
        lr = ((lr * m).sum(-1) / np.maximum(m.sum(-1), 1))[:, None]
    coef = np.exp(lr)
    t = np.where(A > 0, tau_pos, tau_neg)
    return trl_agg(np.broadcast_to(-(1 / (1 + np.exp(-t * (coef - 1))) * 4 / t) * A, m.shape), m, "sapo")


@pytest.mark.parametrize("tau", [(1.0, 1.05), (0.5, 3.0)])
def test_sapo_matches_verl_and_trl(tau):
    logp, old, adv, m = _batch(0)
    A = np.broadcast_to(adv[:, None], m.shape)
    cfg = RLConfig(policy_loss="sapo", tau_pos=tau[0], tau_neg=tau[1], mu=4)
    _check(cfg.replace(loss_agg="seq-mean-token-mean"), lambda lp: verl_sapo(lp, old, A, m, *tau), logp, old, adv, m)
    _check(cfg.replace(loss_agg="grpo"), lambda lp: trl_sapo(lp, old, A, m, "token", *tau), logp, old, adv, m)
    _check(cfg.replace(loss_agg="grpo", is_level="sequence"), lambda lp: trl_sapo(lp, old, A, m, "sequence", *tau),
           logp, old, adv, m)


def verl_geo_mean(logp, old, A, m, lo, hi):
    x = logp - old
    sgn = np.sign(A)
    xc = np.clip(x, -lo, hi)
    xm = sgn * np.minimum(sgn * x, sgn * xc)
    n = m.sum(-1)
    ratio = np.exp((xm * m).sum(-1) / (n + 1e-8))
    abar = (A * m).sum(-1) / (n + 1e-8)
    return np.mean(-abar * ratio)                    # torch.mean：全空的行也算在 B 里


def test_geo_mean_matches_verl_value_gradient_and_clip_fractions():
    logp, old, adv, m = _batch(1, spread=0.4)
    A = np.broadcast_to(adv[:, None], m.shape)
    obj = _check(preset("gmpo"), lambda lp: verl_geo_mean(lp, old, A, m, 0.4, 0.4), logp, old, adv, m)
    x = logp - old
    clipped = x != np.clip(x, -0.4, 0.4)
    assert clipped[m].any()
    assert obj.clip_high == pytest.approx((clipped & (A > 0))[m].mean())      # verl pg_clipfrac
    assert obj.clip_low == pytest.approx((clipped & (A < 0))[m].mean())       # verl pg_clipfrac_lower


def test_gpg_matches_verl():
    logp, old, adv, m = _batch(2)
    A = np.broadcast_to(adv[:, None], m.shape)
    for agg in ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean"):
        _check(RLConfig(policy_loss="gpg", loss_agg=agg, mu=2), lambda lp: verl_agg(-lp * A, m, agg), logp, old, adv, m)


def _cov(A, lp, m):
    return (A - A[m].mean()) * (lp - lp[m].mean())


def verl_clip_cov(logp, old, A, m, lo, hi, ratio, lb, ub, seed, chosen=None):
    rho = np.exp(logp - old)
    pg1, pg2 = -A * rho, -A * np.clip(rho, 1 - lo, 1 + hi)
    by_origin = (pg2 > pg1) & m
    if chosen is None:
        cov = _cov(A, logp, m)
        cov[~m] = -np.inf
        cov[by_origin] = -np.inf
        num = max(int(ratio * m.sum()), 1)
        idx = np.argwhere((cov < ub) & (cov > lb) & m)                    # torch.nonzero：按行优先的顺序
        chosen = idx[np.random.default_rng(seed).permutation(len(idx))[:min(num, len(idx))]]
    corr = np.ones(m.shape)
    corr[chosen[:, 0], chosen[:, 1]] = 0
    return verl_agg(np.maximum(pg1, pg2) * corr, m, "token-mean"), chosen


def test_clip_cov_matches_verl_with_a_seeded_generator():
    logp, old, adv, m = _batch(3, spread=0.3)
    adv = adv * 3                                                          # 让协方差落进 (lb, ub)
    A = np.broadcast_to(adv[:, None], m.shape)
    cfg = preset("clip_cov", clip_cov_ratio=0.2, clip_cov_lb=0.05)
    _, chosen = verl_clip_cov(logp, old, A, m, 0.2, 0.2, 0.2, 0.05, 5.0, seed=7)
    assert 1 < len(chosen) < m.sum()
    _check(cfg, lambda lp: verl_clip_cov(lp, old, A, m, 0.2, 0.2, 0.2, 0.05, 5.0, 7, chosen)[0], logp, old, adv, m,
           rng=np.random.default_rng(7))
    surr = peer_losses.clip_cov_surrogate(logp - old, adv, logp, m, ratio=0.2, lb=0.05, rng=np.random.default_rng(7))
    assert sorted(map(tuple, np.argwhere(surr.selected))) == sorted(map(tuple, chosen))
    with pytest.raises(TypeError, match="rng 必须是 numpy.random.Generator"):
        rl_objective(logp, old, adv, m, cfg)


def verl_kl_cov(logp, old, A, m, ratio, coef, top=None):
    lr = logp - old
    rho = np.exp(lr)
    loss = -A * rho
    if top is None:
        cov = _cov(A, logp, m)[m]
        k = max(1, int(m.sum() * ratio))
        top = np.flatnonzero(m)[np.argsort(-cov, kind="stable")[:k]]
    flat = loss.ravel().copy()
    flat[top] = (-A * rho + coef * np.abs(lr)).ravel()[top]
    return verl_agg(flat.reshape(m.shape), m, "token-mean"), top


def test_kl_cov_matches_verl():
    logp, old, adv, m = _batch(4)
    A = np.broadcast_to(adv[:, None], m.shape)
    cfg = preset("kl_cov", kl_cov_ratio=0.2, ppo_kl_coef=0.5)
    _, top = verl_kl_cov(logp, old, A, m, 0.2, 0.5)
    assert len(top) == 3
    _check(cfg, lambda lp: verl_kl_cov(lp, old, A, m, 0.2, 0.5, top)[0], logp, old, adv, m)


# =============================================================================
# TRL：vespo、cispo / grpo 的序列级比率、luspo、delta
# =============================================================================
def trl_vespo(logp, old, A, m, k_pos=2.0, l_pos=3.0, k_neg=3.0, l_neg=2.0, phi=None):
    if phi is None:                                                        # φ 不求导（@torch.no_grad）
        seq = (np.clip(logp - old, -20, 20) * m).sum(-1, keepdims=True)
        log_w = np.clip(seq, math.log(1e-8), 20)
        nonneg = A >= 0
        k, lam = np.where(nonneg, k_pos, k_neg), np.maximum(np.where(nonneg, l_pos, l_neg), 1e-4)
        phi = np.exp(lam + k * log_w - lam * np.exp(log_w))
    return trl_agg(-phi * A * logp, m, "vespo"), phi


def test_vespo_matches_trl():
    logp, old, adv, m = _batch(5, spread=0.1)
    A = adv[:, None]
    _, phi = trl_vespo(logp, old, A, m)
    assert np.all(phi > 0) and np.ptp(phi) > 0.01
    _check(RLConfig(policy_loss="vespo", loss_agg="token-mean", mu=2),
           lambda lp: trl_vespo(lp, old, A, m, phi=phi)[0], logp, old, adv, m)


def trl_clip_losses(logp, old, A, m, loss_type, level, eps_low=0.2, eps_high=0.2, delta=None):
    lr = logp - old
    if level == "sequence":
        lr = ((lr * m).sum(-1) / np.maximum(m.sum(-1), 1))[:, None]
    coef_1 = np.exp(lr)
    if loss_type == "cispo":
        per_token = -np.minimum(coef_1, eps_high) * A * logp            # 权重 detach：下面的差分要固定它
        return trl_agg(per_token, m, "cispo"), (coef_1 > eps_high) & (A > 0)
    coef_2 = np.clip(coef_1, 1 - eps_low, 1 + eps_high)
    if delta is not None:
        coef_1 = np.minimum(coef_1, delta)
    per_token = np.broadcast_to(-np.minimum(coef_1 * A, coef_2 * A), m.shape)
    hi = (np.exp(lr) > 1 + eps_high) & (A > 0)
    if loss_type == "luspo":
        return (per_token[:, :1] * m.sum(1, keepdims=True)).mean(), hi
    return trl_agg(per_token, m, "grpo"), hi


def test_cispo_at_sequence_level_matches_trl_and_counts_sequences():
    logp, old, adv, m = _batch(6, spread=0.8)
    A = adv[:, None]
    cfg = RLConfig(policy_loss="cispo", cispo_clip="trl", eps_high=1.1, is_level="sequence", loss_agg="dapo", mu=2)
    s = np.exp(((logp - old) * m).sum(-1) / np.maximum(m.sum(-1), 1))[:, None]
    w = np.minimum(s, 1.1)
    obj = _check(cfg, lambda lp: trl_agg(-w * A * lp, m, "cispo"), logp, old, adv, m)
    _, clipped = trl_clip_losses(logp, old, A, m, "cispo", "sequence", eps_high=1.1)
    assert clipped.any()
    assert obj.clip_high == pytest.approx(clipped.mean())                 # 被截的**解答** / B（TRL）
    tok = rl_objective(logp, old, adv, m, cfg.replace(is_level="token"))  # 逐步：TRL 的 (ρ > ε_high) & (A > 0)
    rho = np.exp(logp - old)
    assert tok.clip_high == pytest.approx(((rho > 1.1) & (A > 0))[m].mean())


def test_grpo_and_luspo_at_sequence_level_match_trl():
    logp, old, adv, m = _batch(7, spread=0.5)
    A = adv[:, None]
    for agg, loss_type in (("grpo", "grpo"), ("luspo", "luspo")):
        cfg = RLConfig(is_level="sequence", loss_agg=agg, mu=2)
        obj = _check(cfg, lambda lp: trl_clip_losses(lp, old, A, m, loss_type, "sequence")[0], logp, old, adv, m)
        _, hi = trl_clip_losses(logp, old, A, m, loss_type, "sequence")
        assert hi.any() and obj.clip_high == pytest.approx(hi.mean())
    # verl 的 gspo 数的是步：同一批、同样的区间，裁剪比例按步算
    g = rl_objective(logp, old, adv, m, RLConfig(policy_loss="gspo", seq_eps_low=0.2, seq_eps_high=0.2, mu=2))
    assert g.clip_high == pytest.approx((np.broadcast_to(hi, m.shape))[m].mean())


def test_delta_is_trls_two_sided_clip_and_verls_dual_clip():
    logp, old, adv, m = _batch(8, spread=0.3)
    old[0] = np.where(m[0], logp[0] - 0.6, 0.0)                           # 第 0 行 ρ ≈ 1.8 > δ，A < 0
    adv[0] = -1.0
    A = np.broadcast_to(adv[:, None], m.shape)
    cfg = RLConfig(delta=1.5, loss_agg="grpo", mu=2)
    _check(cfg, lambda lp: trl_clip_losses(lp, old, A, m, "grpo", "token", delta=1.5)[0], logp, old, adv, m)
    rho = np.exp(logp - old)
    assert ((rho > 1.5) & (A < 0) & m).any()                               # 这个界真的起作用了
    same = rl_objective(logp, old, adv, m, cfg.replace(delta=None, clip_ratio_c=1.5))
    assert same.loss == rl_objective(logp, old, adv, m, cfg).loss


# =============================================================================
# rollout 修正（verl rollout_corr_helper.py）、loss_scale_factor
# =============================================================================
def verl_rollout(old, beh, m, level, cap, rs_tau=None):
    log_ratio = old - beh
    if level == "token":
        w = np.exp(np.clip(log_ratio, -20, 20))
    else:
        w = np.broadcast_to(np.exp(np.clip((log_ratio * m).sum(-1, keepdims=True), -20, 20)), m.shape)
    w = np.minimum(w * m, cap)
    keep = m
    if rs_tau is not None:
        k1 = -np.clip(log_ratio, -20, 20)
        keep = m & (k1 >= math.log(1 / rs_tau)) & (k1 <= math.log(rs_tau))
    return w, keep


@pytest.mark.parametrize("level, rs", [("sequence", None), ("token", 1.5), ("sequence", 1.5)])
def test_rollout_correction_matches_verl(level, rs):
    logp, old, adv, m = _batch(9, spread=0.3)
    beh = np.where(m, old + np.random.default_rng(1).normal(0, 0.3, m.shape), 0.0)
    A = np.broadcast_to(adv[:, None], m.shape)
    w, keep = verl_rollout(old, beh, m, level, 2.0, rs)
    if rs is not None:
        assert 0 < (m & ~keep).sum() < m.sum()

    def ref(lp):
        rho = np.exp(lp - old)
        pg = -np.minimum(rho * A, np.clip(rho, 0.8, 1.2) * A) * w
        return verl_agg(pg, keep, "token-mean")
    cfg = RLConfig(loss_agg="token-mean", staleness=1, rollout_is=level, rollout_rs=None if rs is None else "token_k1",
                   rollout_rs_threshold=rs or 2.0, mu=2)
    _check(cfg, ref, logp, old, adv, m, behaviour_logp=beh)


def test_loss_scale_factor_is_verls_constant_denominator():
    logp, old, adv, m = _batch(10)
    A = np.broadcast_to(adv[:, None], m.shape)
    for scale in (None, 7, 40):
        cfg = RLConfig(loss_agg="seq-mean-token-sum-norm", loss_scale_factor=scale, mu=2)
        ref = (lambda lp, s=scale: verl_agg(-np.minimum(np.exp(lp - old) * A, np.clip(np.exp(lp - old), .8, 1.2) * A),
                                            m, "seq-mean-token-sum-norm", s))
        _check(cfg, ref, logp, old, adv, m)


# =============================================================================
# 优势（verl compute_*_outcome_advantage）
# =============================================================================
def verl_reinforce_plus_plus(token_level_rewards, mask, gamma):
    returns = np.zeros_like(token_level_rewards)
    running = np.zeros(len(token_level_rewards))
    for t in reversed(range(token_level_rewards.shape[1])):
        running = token_level_rewards[:, t] + gamma * running
        returns[:, t] = running
        running = running * mask[:, t]
    mean = returns[mask].mean()
    var = returns[mask].var(ddof=1)
    return np.where(mask, (returns - mean) / np.sqrt(var + 1e-8), 0.0)


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_reinforce_pp_without_baseline_matches_verl(gamma):
    m = np.arange(6)[None, :] < np.array([6, 3, 2, 5, 1, 4, 2, 2])[:, None]
    r = np.array([1.0, 0, 1, 1, 0, 0, 1, 0])
    scores = np.zeros(m.shape)
    scores[np.arange(8), m.sum(1) - 1] = r                                  # 结果奖励放在最后一步
    expected = verl_reinforce_plus_plus(scores, m, gamma)
    got = losses.group_advantages(r, 4, "reinforce_pp_no_baseline", mask=m, gamma=gamma)
    assert np.abs(got - expected).max() < 1e-12


def test_opo_and_gpg_advantages_match_verl():
    m = np.arange(5)[None, :] < np.array([5, 3, 2, 4, 1, 4])[:, None]
    r = np.array([1.0, 0, 1, 0, 0, 0])
    idx = np.array([0, 0, 0, 1, 1, 1])
    n = m.sum(1)
    opo = np.array([r[i] - (n[idx == idx[i]] * r[idx == idx[i]]).sum() / n[idx == idx[i]].sum() for i in range(6)])
    assert np.abs(losses.group_advantages(r, 3, "opo", mask=m) - opo).max() < 1e-12
    alpha = 6 / max(np.count_nonzero(r), 1)
    gpg = np.array([alpha * (r[i] - r[idx == idx[i]].mean()) for i in range(6)])
    assert np.abs(losses.group_advantages(r, 3, "gpg") - gpg).max() < 1e-12


# =============================================================================
# 性质、边界、中文的错误
# =============================================================================
@settings(max_examples=60, deadline=None)
@given(st.floats(-3, 3), st.floats(-5, 5), st.floats(0.2, 5), st.floats(0.2, 5))
def test_sapo_gate_is_ppo_at_ratio_one_and_its_slope_never_exceeds_it(log_ratio, a, tau_pos, tau_neg):
    m = np.ones((1, 1), bool)
    s = peer_losses.sapo_surrogate(np.array([[log_ratio]]), np.array([a]), m, tau_pos, tau_neg)
    rho = math.exp(log_ratio)
    assert abs(s.dloss_dlogp[0, 0]) <= abs(a) * rho + 1e-12                # 斜率 4σ(1 − σ) ≤ 1
    one = peer_losses.sapo_surrogate(np.zeros((1, 1)), np.array([a]), m, tau_pos, tau_neg)
    assert one.dloss_dlogp[0, 0] == pytest.approx(-a)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-2, 2), min_size=4, max_size=4), st.lists(st.floats(-3, -0.01), min_size=4, max_size=4))
def test_at_ratio_one_vespo_and_kl_cov_are_the_plain_policy_gradient(adv, logp):
    m = np.ones((2, 2), bool)
    lp, a = np.array(logp).reshape(2, 2), np.array(adv).reshape(2, 2)
    zero = np.zeros((2, 2))
    plain = -a
    assert np.allclose(peer_losses.vespo_surrogate(zero, a, lp, m).dloss_dlogp, plain)
    assert np.allclose(peer_losses.kl_cov_surrogate(zero, a, lp, m, ratio=0.5).dloss_dlogp, plain)
    assert np.allclose(peer_losses.gpg_surrogate(a, lp, m).dloss_dlogp, plain)


def test_fully_masked_batch_gives_zero_loss_and_gradient():
    m = np.zeros((2, 3), bool)
    z = np.zeros((2, 3))
    for name in ("sapo", "gmpo", "gpg", "kl_cov"):
        obj = rl_objective(z, z, np.ones(2), m, name)
        assert obj.loss == 0 and not obj.dloss_dlogp.any(), name


@pytest.mark.parametrize("changes, message", [
    ({"delta": 1.1}, "delta（TRL δ）必须 > 1 \\+ eps_high = 1.2"),
    ({"delta": 2.0, "clip_ratio_c": 3.0}, "delta = 2 只配"),
    ({"delta": 2.0, "policy_loss": "cispo"}, "delta = 2 只配"),
    ({"is_level": "sequence", "policy_loss": "gspo"}, "is_level=\"sequence\" 只配"),
    ({"loss_agg": "luspo"}, "loss_agg=\"luspo\" 只配"),
    ({"loss_scale_factor": 8}, "loss_scale_factor = 8 只配"),
    ({"rollout_rs": "seq_sum_k1"}, "rollout_rs（rollout 拒绝）"),
    ({"rollout_rs_threshold": 1.0}, "rollout_rs_threshold（拒绝的界 τ）"),
    ({"is_level": "seq"}, "is_level（比率的级别）"),
    ({"tau_neg": 0}, "tau_neg（SAPO τ_neg）"),
    ({"clip": False, "policy_loss": "sapo"}, "clip=False 只配"),
    ({"clip": False, "policy_loss": "gspo"}, "clip=False 只配"),
])
def test_refused_combinations_say_why_in_chinese(changes, message):
    with pytest.raises(ValueError, match=message):
        RLConfig(**changes)


def test_peer_functions_refuse_bad_inputs_in_chinese():
    m = np.ones((1, 2), bool)
    with pytest.raises(ValueError, match="adv 的形状必须是"):
        peer_losses.sapo_surrogate(np.zeros((1, 2)), np.zeros(3), m)
    with pytest.raises(ValueError, match="log_ratio 在 mask 内必须都是有限的数"):
        peer_losses.gmpo_surrogate(np.array([[np.nan, 0]]), np.zeros(1), m)
    with pytest.raises(ValueError, match="level（rollout 修正的级别）"):
        peer_losses.rollout_correction(np.zeros((1, 2)), np.zeros((1, 2)), m, "seq")
    with pytest.raises(ValueError, match="opo 需要 \\(4, L\\) 的 bool mask"):
        losses.group_advantages([1, 0, 0, 1], 2, "opo")
    with pytest.raises(ValueError, match="scale_factor（verl 的 loss_scale_factor）只对"):
        losses.aggregation_weights(m, "token-mean", scale_factor=3)


# =============================================================================
# 预设：只差在自己的选项；玩具的训练走的是自己的函数；新选项的默认值不改变任何数
# =============================================================================
def test_new_presets_differ_in_exactly_their_options():
    from toyllm.rl import diff_presets
    assert diff_presets("reinforce_pp", "reinforce_pp_no_baseline") == {
        "advantage": ("reinforce_pp", "reinforce_pp_no_baseline")}
    assert diff_presets("grpo", "sapo") == {"mu": (1, 4), "policy_loss": ("ppo", "sapo")}
    assert diff_presets("grpo", "gmpo") == {"mu": (1, 4), "eps_low": (0.2, 0.4), "eps_high": (0.2, 0.4),
                                            "policy_loss": ("ppo", "geo_mean")}
    assert diff_presets("grpo", "gpg") == {"advantage": ("grpo", "gpg"), "loss_agg": ("seq-mean", "token-mean"),
                                           "policy_loss": ("ppo", "gpg")}
    for name in ("clip_cov", "kl_cov"):
        assert diff_presets("grpo", name) == {"loss_agg": ("seq-mean", "token-mean"), "mu": (1, 4),
                                              "policy_loss": ("ppo", name)}


TOY_REACHES = [("reinforce_pp_no_baseline", "reinforce_pp_no_baseline_advantages"), ("sapo", "sapo_surrogate"),
               ("gmpo", "gmpo_surrogate"), ("gpg", "gpg_surrogate"), ("clip_cov", "clip_cov_surrogate"),
               ("kl_cov", "kl_cov_surrogate")]


@pytest.mark.parametrize("name, function", TOY_REACHES)
def test_each_new_preset_trains_through_its_own_function(monkeypatch, name, function):
    """把这个函数换成"全零"：训练就停在原地 —— 预设确实走的是它（而不是别的公式）。"""
    from toyllm import TrainableLLM
    from toyllm.rl import default_problems, train
    problems = default_problems(seed=1, n_train=40, n_heldout=30)
    cfg = preset(name, iterations=3, batch_problems=8, group_size=4, seed=2)
    model = TrainableLLM(1e9)
    train(model, cfg, *problems)
    assert np.abs(model.params).max() > 1e-3

    def zero(*args, **kwargs):
        if function.endswith("advantages"):
            return np.zeros(np.shape(args[0]) + ((np.shape(args[1])[1],) if np.ndim(args[1]) == 2 else ()))
        m = np.asarray(kwargs.get("mask", args[2] if function != "gpg_surrogate" else args[2]), bool)
        out = losses.Surrogate(np.zeros(m.shape), np.zeros(m.shape, bool), np.zeros(m.shape, bool))
        out.dloss_dlogp = np.zeros(m.shape)
        return out
    monkeypatch.setattr(peer_advantages if function.endswith("advantages") else peer_losses, function, zero)
    model = TrainableLLM(1e9)
    train(model, cfg, *problems)
    assert np.all(model.params == 0)


def test_defaults_of_the_new_options_change_nothing():
    """新选项取默认值（或不起作用的值）时，GRPO 的历史逐位相同。"""
    from toyllm import TrainableLLM
    from toyllm.rl import default_problems, train
    problems = default_problems(seed=1, n_train=40, n_heldout=30)

    def run(**changes):
        model = TrainableLLM(1e9)
        hist = train(model, preset("grpo", iterations=3, batch_problems=8, group_size=4, seed=2, **changes), *problems)
        return dict(hist), model.params.copy()
    hist, params = run()
    for same in ({"is_level": "token", "tau_pos": 3.0, "vespo_k_pos": 0.5, "clip_cov_ratio": 0.5, "ppo_kl_coef": 1.0},
                 {"rollout_is": "sequence", "rollout_rs": "token_k1"},          # staleness = 0：π_behaviour = π_old
                 {"is_level": "sequence"}):                                     # μ = 1：s = ρ = 1
        h, p = run(**same)
        assert np.array_equal(p, params) and h == hist, same
