"""
rl.losses：每个公式的导数和有限差分一致；训练循环确实调用这些函数（换掉一个，训练就跟着变）。
"""

import numpy as np
import pytest

from toyllm.rl import default_problems, groups, losses, preset, train
from toyllm.trainable import TrainableLLM


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_surrogate_derivative_matches_finite_differences_away_from_kinks():
    rng = np.random.default_rng(0)
    ratio = rng.uniform(0.5, 1.5, 200)
    adv = rng.normal(size=200)
    ratio = ratio[(np.abs(ratio - 0.8) > 1e-3) & (np.abs(ratio - 1.28) > 1e-3)]
    adv = adv[:len(ratio)]
    s = losses.clipped_surrogate(ratio, adv, 0.2, 0.28)
    fd = _fd(lambda r: losses.clipped_surrogate(r, adv, 0.2, 0.28).loss, ratio)
    assert np.allclose(s.dloss_dratio, fd, atol=1e-8)
    assert np.all(s.dloss_dratio[s.clipped_low | s.clipped_high] == 0)
    loss, low, high = s                                      # 仍然解包成 3 个
    assert loss is s.loss and len(s) == 3 and s._asdict().keys() == {"loss", "clipped_low", "clipped_high"}


@pytest.mark.parametrize("kind", ["k1", "k2", "k3"])
def test_kl_estimator_derivatives(kind):
    rng = np.random.default_rng(1)
    logp, logp_ref = np.log(rng.uniform(0.05, 1, 50)), np.log(rng.uniform(0.05, 1, 50))
    term = losses.kl_estimator(logp, logp_ref, kind)
    fd = _fd(lambda lp: losses.kl_estimator(lp, logp_ref, kind).value, logp)
    assert np.allclose(term.dvalue_dlogp, fd, atol=1e-7)
    assert np.array_equal(term.value, getattr(losses.kl_estimates(logp, logp_ref), kind))


def test_clamped_k3_stops_the_gradient_above_the_clamp():
    logp = np.log(np.array([1e-8, 0.5]))
    term = losses.kl_estimator(logp, np.log([0.9, 0.5]), "k3", clamp=losses.KL_CLAMP)
    assert term.value[0] == losses.KL_CLAMP and term.dvalue_dlogp[0] == 0
    assert term.value[1] == 0 and term.dvalue_dlogp[1] == 0


def test_entropy_derivative_matches_finite_differences():
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(4, 3))
    T = 0.7

    def H(z):
        p = np.exp(z / T - np.log(np.exp(z / T).sum(axis=-1, keepdims=True)))
        return losses.entropy(p, np.log(p), T).value

    p = np.exp(logits / T) / np.exp(logits / T).sum(axis=-1, keepdims=True)
    d = losses.entropy(p, np.log(p), T).dlogits
    for j in range(3):
        e = np.zeros(3)
        e[j] = 1
        assert np.allclose(d[:, j], _fd(lambda t: H(logits + t * e), 0.0), atol=1e-7)


def test_logged_entropy_is_the_taught_entropy_bit_for_bit():
    """训练记录里的熵用 entropy.entropy_and_grad：和 losses.entropy(...).value 逐位相同，π = 0 的项也一样。"""
    from toyllm.entropy import entropy_and_grad
    from toyllm.logits import log_softmax
    logits = np.random.default_rng(3).normal(size=(12, 3))
    logits[0, 2] = -np.inf                                     # 概率为 0 的做法：0 · log 0 = 0
    logpi = log_softmax(logits / 0.7)
    pi = np.exp(logpi)
    with np.errstate(invalid="ignore"):                        # 0 · (−inf) 先算出 NaN，再被 np.where 换成 0
        assert np.array_equal(entropy_and_grad(pi, logpi)[0], losses.entropy(pi, logpi, 0.7).value)


def test_aggregate_loss_is_the_weighted_sum():
    mask = np.array([[True, True, False], [True, False, False]])
    per_step = np.array([[1.0, 1.0, np.nan], [4.0, np.inf, 7.0]])         # mask 外的值不参与
    assert losses.aggregate_loss(per_step, mask, "seq-mean") == 2.5
    assert losses.aggregate_loss(per_step, mask, "token-mean") == 2.0
    assert losses.aggregate_loss(per_step, mask, "constant") == 1.0


# =============================================================================
# 间谍测试：train 走的就是 losses 里的函数
# =============================================================================
@pytest.fixture(scope="module")
def problems():
    return default_problems(seed=1, n_train=40, n_heldout=30)


def _run(problems, **cfg):
    model = TrainableLLM(1e9)
    hist = train(model, preset("grpo", iterations=3, batch_problems=8, group_size=4, seed=2, **cfg), *problems)
    return hist, model.params.copy()


SPIES = [
    ("clipped_surrogate", {"mu": 2}, lambda r, m: m),                             # 每次更新一次
    ("kl_estimator", {"beta": 0.1, "kl_estimator": "k2"}, lambda r, m: r + m),   # 采样时的记录 + 每次更新
    ("entropy", {"entropy_coef": 0.05}, lambda r, m: m * 1),      # 每次更新一次（记录里的熵直接用 entropy.entropy_and_grad）
    ("aggregation_weights", {"loss_agg": "token-mean"}, lambda r, m: r * 1),     # 每批一次
    ("group_advantages", {}, lambda r, m: r * 1),
    ("step_rewards", {}, lambda r, m: r * 1),                    # 每批采样一次（过滤、记录、优势共用这份奖励）
    ("constant_groups", {}, lambda r, m: r * 2),                   # 过滤一次 + group_advantages 里一次
]


@pytest.mark.parametrize("name, cfg, expected_calls", SPIES, ids=[s[0] for s in SPIES])
def test_train_goes_through_the_taught_function(problems, monkeypatch, name, cfg, expected_calls):
    module = groups if name == "step_rewards" else losses          # 奖励读玩具的解答：它在 groups 里
    real = getattr(module, name)
    baseline_hist, baseline_params = _run(problems, **cfg)
    calls = []

    def spy(*args, **kwargs):
        calls.append(name)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    hist, params = _run(problems, **cfg)
    mu = cfg.get("mu", 1)
    assert len(calls) == expected_calls(3, 3 * mu)
    assert np.array_equal(params, baseline_params) and dict(hist) == dict(baseline_hist)    # 原样转发：结果不变


def test_changing_the_taught_surrogate_changes_training(problems, monkeypatch):
    """学生改了 clipped_surrogate（这里：把损失和导数都翻倍），训练就跟着变：参数走了两倍的步子。"""
    base_hist, base_params = _run(problems)
    real = losses.clipped_surrogate

    def doubled(ratio, adv, eps_low=0.2, eps_high=0.2, **kw):
        s = real(ratio, adv, eps_low, eps_high, **kw)
        out = losses.Surrogate(2 * s.loss, s.clipped_low, s.clipped_high)
        out.dloss_dratio, out.dloss_dlogp = 2 * s.dloss_dratio, 2 * s.dloss_dlogp
        return out

    monkeypatch.setattr(losses, "clipped_surrogate", doubled)
    hist, params = _run(problems)
    assert not np.allclose(params, base_params)
    assert hist["grad_norm"][0] == pytest.approx(2 * base_hist["grad_norm"][0], rel=1e-12)


def test_changing_the_taught_advantage_changes_training(problems, monkeypatch):
    base_hist, base_params = _run(problems)
    monkeypatch.setattr(losses, "group_advantages", lambda r, g, *a, **k: np.zeros_like(np.asarray(r, float)))
    hist, params = _run(problems)
    assert np.all(params == 0) and not np.all(base_params == 0)
    assert hist["grad_norm"] == [0.0, 0.0, 0.0]
