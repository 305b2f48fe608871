"""
第 6 讲 8.5–8.9 节的算法（issue 13）：critic + GAE、GSPO、CISPO、dual-clip、verl / TRL 的聚合、REINFORCE++、
动态采样凑不满、陈旧采样 + TIS。手算的小例子、有限差分、按 TRL / verl 公开的公式重算的归一化、
训练循环确实经过这些函数（spy）、坏参数的中文报错。
"""

import math

import numpy as np
import pytest

from toyllm.exact import correct_paths, exact_pass_at_1
from toyllm.policy import prob_table
from toyllm.rl import (AGGREGATIONS, PRESETS, RLConfig, critic, diff_presets, group_advantages, losses, objective,
                       preset, toy, train)
from toyllm.sampler import prepare_problems, sample_rollouts
from toyllm.trainable import TrainableLLM


from test_rl_losses import _fd, _run, problems  # noqa: F401  （problems 是 pytest 的 fixture）


# =============================================================================
# 聚合：每个名字的归一化，按 TRL / verl 公开的公式（rl-formulas.md）重算
# =============================================================================
def _trl(loss_type, l, m, max_completion_length):
    """TRL GRPOTrainer._compute_loss 的写法（单卡：dapo 的 num_items_in_batch / num_processes 就是本批步数）。"""
    if loss_type == "grpo":
        return ((l * m).sum(-1) / np.maximum(m.sum(-1), 1)).mean()
    if loss_type in ("bnpo", "dapo"):
        return (l * m).sum() / max(m.sum(), 1)
    if loss_type == "dr_grpo":
        return (l * m).sum() / (l.shape[0] * max_completion_length)
    if loss_type == "luspo":          # (per_token_loss * mask.sum(1)).mean()：每行的 l_i 乘长度，再对 B 平均
        return ((l * m).sum(-1)).mean()
    raise KeyError(loss_type)


def _verl(mode, l, m):
    """verl core_algos.agg_loss 的写法（commit b178a3cd：seq_mask = Σ mask > 0 把全空的行排除）。"""
    seq_mask = m.sum(-1) > 0
    if mode == "token-mean":
        return (l * m).sum() / m.sum()
    if mode == "seq-mean-token-sum":
        return ((l * m).sum(-1) * seq_mask).sum() / seq_mask.sum()
    if mode == "seq-mean-token-mean":
        return ((l * m).sum(-1) / (m.sum(-1) + 1e-8) * seq_mask).sum() / seq_mask.sum()
    if mode == "seq-mean-token-sum-norm":
        return (l * m).sum() / m.shape[-1]
    raise KeyError(mode)


def test_every_aggregation_name_computes_what_its_system_computes():
    rng = np.random.default_rng(0)
    m = np.arange(7)[None, :] < rng.integers(1, 8, size=(6, 1))       # 6 份，1~7 步，补齐到 L = 7
    l = rng.normal(size=m.shape)
    max_len = 9                                                        # TRL 的 max_completion_length
    m[2] = False                                                       # 一份全空的行（verl 排除它，TRL 算进 B）
    expected = {"grpo": _trl("grpo", l, m, max_len), "bnpo": _trl("bnpo", l, m, max_len),
                "dapo": _trl("dapo", l, m, max_len), "dr_grpo": _trl("dr_grpo", l, m, max_len),
                "luspo": _trl("luspo", l, m, max_len),
                **{mode: _verl(mode, l, m) for mode in ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean",
                                                        "seq-mean-token-sum-norm")},
                "seq-mean": _trl("grpo", l, m, max_len), "constant": _trl("dr_grpo", l, m, max_len)}
    assert set(expected) == set(AGGREGATIONS) == set(losses.AGGREGATION_TABLE)
    for name, value in expected.items():
        assert losses.aggregate_loss(l, m, name, max_len) == pytest.approx(value, rel=1e-7), name
    # issue 24 第 6(a) 点：有全空的行时 verl 的 seq-mean-token-mean 和 TRL 的 grpo 差一个因子 B / B'
    assert (losses.aggregate_loss(l, m, "seq-mean-token-mean")
            == pytest.approx(6 / 5 * losses.aggregate_loss(l, m, "grpo"), rel=1e-12))
    # issue 15 第 3 点：constant = TRL dr_grpo；一个 micro-batch、一张卡时 verl seq-mean-token-sum-norm 是它的 B 倍
    # （L_max 相同时；多个 micro-batch、多张卡时是 m · L_max / L 倍，讲义 8.7 节，issue 40）
    assert (losses.aggregate_loss(l, m, "seq-mean-token-sum-norm")
            == pytest.approx(m.shape[0] * losses.aggregate_loss(l, m, "constant"), rel=1e-12))


def test_aggregation_hand_computed_and_unknown_names():
    per_step = np.array([[1.0, 1.0, 0.0], [4.0, 0.0, 0.0]])
    mask = np.array([[True, True, False], [True, False, False]])
    assert losses.aggregate_loss(per_step, mask, "seq-mean-token-sum") == pytest.approx(3.0)          # (2 + 4) / 2
    assert losses.aggregate_loss(per_step, mask, "seq-mean-token-sum-norm") == pytest.approx(2.0)     # 6 / 3
    with pytest.raises(ValueError, match="你是不是想写 'token-mean'"):
        losses.aggregation_weights(mask, "token_mean")
    with pytest.raises(ValueError, match="loss_agg.*你是不是想写 'seq-mean-token-sum'"):
        RLConfig(loss_agg="seq-mean-token-summ")


# =============================================================================
# REINFORCE++（verl）和 TRL scale_rewards="batch"
# =============================================================================
def test_reinforce_pp_hand_computed_and_differs_from_trl_batch():
    r = np.array([1.0, 0, 0, 0, 1, 1, 0, 0])
    a = np.array([0.75, -0.25, -0.25, -0.25, 0.5, 0.5, -0.5, -0.5])         # 减组平均
    std = math.sqrt((a ** 2).sum() / 7 + 1e-8)                               # 均值 0，无偏方差 0.25
    assert np.allclose(group_advantages(r, 4, "reinforce_pp"), a / std, atol=1e-12)
    trl = group_advantages(r, 4, "grpo", scale="batch")
    assert np.allclose(trl, a / (r.std(ddof=1) + 1e-4))
    assert np.abs(trl - a / std).max() > 0.05


def test_reinforce_pp_whitens_over_steps_and_keeps_constant_groups_nonzero():
    r = np.array([1.0, 0, 1, 1])                                              # 第二组全对
    mask = np.array([[1, 1, 1], [1, 0, 0], [1, 1, 0], [1, 0, 0]], bool)
    a = np.array([0.5, -0.5, 0.0, 0.0])
    steps = np.repeat(a, mask.sum(axis=1))                                    # verl：铺到每一步再白化
    expected = (a - steps.mean()) / math.sqrt(steps.var(ddof=1) + 1e-8)
    got = losses.reinforce_pp_advantages(r, 2, mask)
    assert np.allclose(got, expected, atol=1e-12)
    assert got[2] != 0 and got[2] == got[3]                                   # 全对的组白化后不是 0
    with pytest.raises(ValueError, match="结果奖励"):
        losses.reinforce_pp_advantages(np.ones((4, 3)), 2)


def test_whiten_hand_computed():
    assert np.allclose(losses.whiten(np.array([1.0, 0.0])), [1 / math.sqrt(2), -1 / math.sqrt(2)], atol=1e-7)
    assert np.array_equal(losses.whiten(np.array([3.0]), np.array([True])), np.array([0.0]))


# =============================================================================
# dual-clip、GSPO、CISPO、TIS
# =============================================================================
def test_dual_clip_hand_computed_and_derivative():
    s = losses.clipped_surrogate(np.array([5.0, 2.0, 5.0, 0.5]), np.array([-1.0, -1.0, 1.0, -1.0]), clip_ratio_c=3.0)
    assert np.allclose(s.loss, [3.0, 2.0, -1.2, 0.8])
    assert np.allclose(s.dloss_dratio, [0.0, 1.0, 0.0, 0.0])
    assert s.dual_clipped.tolist() == [True, False, False, False]
    plain = losses.clipped_surrogate(np.array([5.0]), np.array([-1.0]))
    assert plain.loss[0] == 5.0 and not hasattr(plain, "dual_clipped")
    rng = np.random.default_rng(3)
    ratio, adv = rng.uniform(0.3, 6, 300), rng.normal(size=300)
    keep = (np.abs(ratio - 0.8) > 1e-3) & (np.abs(ratio - 1.2) > 1e-3) & (np.abs(ratio - 3.0) > 1e-3)
    ratio, adv = ratio[keep], adv[keep]
    fd = _fd(lambda x: losses.clipped_surrogate(x, adv, clip_ratio_c=3.0).loss, ratio)
    assert np.allclose(losses.clipped_surrogate(ratio, adv, clip_ratio_c=3.0).dloss_dratio, fd, atol=1e-8)


@pytest.mark.parametrize("c", [1.0, 0.5, -3.0])
def test_dual_clip_bound_must_exceed_one(c):
    with pytest.raises(ValueError, match="clip_ratio_c.*> 1"):
        losses.clipped_surrogate(np.array([1.0]), np.array([1.0]), clip_ratio_c=c)
    with pytest.raises(ValueError, match="clip_ratio_c.*> 1"):
        RLConfig(clip_ratio_c=c)


def test_gspo_hand_computed():
    s = losses.gspo_surrogate(np.log([[1.1, 1.0]]), np.array([1.0]), np.ones((1, 2), bool), 0.2, 0.2)
    assert s.seq_ratio[0] == pytest.approx(math.sqrt(1.1))
    assert np.allclose(s.loss, -math.sqrt(1.1)) and np.allclose(s.dloss_dlogp, -math.sqrt(1.1))
    clipped = losses.gspo_surrogate(np.log([[1.1, 1.0]]), np.array([1.0]), np.ones((1, 2), bool))   # 3e-4 / 4e-4
    assert clipped.clipped_high.all() and np.all(clipped.dloss_dlogp == 0)


def test_gspo_gradient_is_the_derivative_of_the_sequence_mean_loss():
    """verl 的每步导数 s_i（A 按解答相同）乘 seq-mean 的权重 = 聚合后损失对每步 log π 的有限差分。"""
    rng = np.random.default_rng(4)
    mask = np.arange(5)[None, :] < rng.integers(1, 6, size=(6, 1))
    lr = np.where(mask, rng.normal(0, 0.05, mask.shape), 0.0)
    adv = rng.normal(size=6)
    w = losses.aggregation_weights(mask, "seq-mean")

    def total(x):
        return float((w * losses.gspo_surrogate(x, adv, mask, 1.0, 1.0).loss).sum())

    g = w * losses.gspo_surrogate(lr, adv, mask, 1.0, 1.0).dloss_dlogp
    for i, t in zip(*np.nonzero(mask)):
        e = np.zeros(mask.shape)
        e[i, t] = 1e-6
        assert (total(lr + e) - total(lr - e)) / 2e-6 == pytest.approx(g[i, t], abs=1e-8)


def test_cispo_hand_computed_and_both_conventions():
    s = losses.cispo_surrogate(np.array([1.5, 0.5, 1.0]), np.array([1.0, 1.0, -1.0]), np.log([0.5, 0.5, 0.25]),
                               0.2, 0.2)
    assert np.allclose(s.weight, [1.2, 0.8, 1.0])
    assert np.allclose(s.loss, [1.2 * math.log(2), 0.8 * math.log(2), -math.log(4)])
    assert np.allclose(s.dloss_dlogp, [-1.2, -0.8, 1.0])                      # 每一步都有梯度
    assert s.clipped_high.tolist() == [True, False, False] and s.clipped_low.tolist() == [False, True, False]
    fd = _fd(lambda lp: losses.cispo_surrogate(np.array([1.5, 0.5, 1.0]), np.array([1.0, 1.0, -1.0]), lp).loss,
             np.log([0.5, 0.5, 0.25]))
    assert np.allclose(fd, s.dloss_dlogp, atol=1e-8)                          # 权重不求导：∂l/∂log π = −w A
    trl = losses.cispo_surrogate(np.array([0.5, 6.0]), np.array([1.0, 1.0]), np.log([0.5, 0.5]), 0.2, 5.0, "trl")
    assert np.allclose(trl.weight, [0.5, 5.0]) and trl.clipped_high.tolist() == [False, True]
    assert not trl.clipped_low.any()                                           # TRL 只截上面
    ppo = losses.clipped_surrogate(np.array([1.5]), np.array([1.0]))
    assert ppo.dloss_dratio[0] == 0                                            # 同一步 PPO 没有梯度
    with pytest.raises(ValueError, match="你是不是想写 'verl'"):
        losses.cispo_surrogate(np.array([1.0]), np.array([1.0]), np.array([-1.0]), convention="verll")


def test_truncated_is_weights():
    assert np.allclose(losses.truncated_is_weights(np.log([0.5, 0.9]), np.log([0.1, 0.9])), [2.0, 1.0])
    assert np.allclose(losses.truncated_is_weights(np.log([0.5]), np.log([0.1]), math.inf), [5.0])
    assert np.allclose(losses.truncated_is_weights(np.log([0.5]), np.log([0.1]), None), [5.0])
    assert RLConfig(tis_cap=math.inf).tis_cap is None and RLConfig(tis_cap=3).tis_cap == 3.0   # 配置要能写进 JSON
    with pytest.raises(ValueError, match="cap"):
        losses.truncated_is_weights(np.log([0.5]), np.log([0.1]), 0)


# =============================================================================
# critic：GAE、价值损失、精确价值
# =============================================================================
def test_gae_hand_computed():
    mask = np.array([[True, True], [True, False]])
    rewards = np.array([[0.0, 1.0], [0.5, 0.0]])
    values = np.array([[0.5, 0.8], [0.2, 9.9]])                               # 9.9 在 mask 外，不应被用到
    adv, ret = critic.gae(rewards, values, mask, 1.0, 1.0)
    assert np.allclose(adv, [[0.5, 0.2], [0.3, 0.0]]) and np.allclose(ret, [[1.0, 1.0], [0.5, 0.0]])
    adv0, _ = critic.gae(rewards, values, mask, 1.0, 0.0)
    assert np.allclose(adv0, [[0.3, 0.2], [0.3, 0.0]])                        # λ = 0：一步 TD
    adv_h, _ = critic.gae(rewards, values, mask, 0.5, 0.5)
    assert adv_h[0, 1] == pytest.approx(0.2) and adv_h[0, 0] == pytest.approx(-0.1 + 0.25 * 0.2)


@pytest.mark.parametrize("option, value", [("lam", -0.1), ("lam", 1.5), ("gamma", 2.0)])
def test_gae_options_outside_unit_interval(option, value):
    with pytest.raises(ValueError, match=option):
        RLConfig(**{option: value})
    with pytest.raises(ValueError, match=option):
        critic.gae(np.zeros((1, 1)), np.zeros((1, 1)), np.ones((1, 1), bool), **{option: value})


def test_value_loss_and_its_derivative():
    assert critic.value_loss([[0.5]], [[1.0]], [[True]])[0] == pytest.approx(0.125)
    rng = np.random.default_rng(5)
    v, R = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    m = rng.random((4, 3)) < 0.7
    _, d = critic.value_loss(v, R, m)
    for i, t in zip(*np.nonzero(m)):
        e = np.zeros(v.shape)
        e[i, t] = 1e-6
        fd = (critic.value_loss(v + e, R, m)[0] - critic.value_loss(v - e, R, m)[0]) / 2e-6
        assert fd == pytest.approx(d[i, t], abs=1e-8)


def test_exact_values_at_the_start_are_the_exact_pass_at_1(problems):
    train_set, _ = problems
    model = TrainableLLM(1e9)
    paths = correct_paths(train_set)
    roll = sample_rollouts(model, train_set, 4, np.random.default_rng(0))
    v = critic.exact_values(prob_table(model), paths, roll.problem, roll)
    per_problem = exact_pass_at_1(model, train_set, per_problem=True)
    # 第 0 步的 V* 是沿正确路径做对的概率（不含"写错后又被修好"，它们少于 1%）
    assert np.allclose(v[:, 0], np.repeat(per_problem, 4), atol=0.02)
    on = critic.on_path(roll)
    assert np.all(v[~on & roll.mask] == 0) and np.all(v[on & roll.mask] > 0)
    # 最后一步之前的 V* = 这一步做对的概率；按它分组，采样的成功率在 4 个标准误以内
    last = roll.mask.sum(axis=1) - 1
    v_last = v[np.arange(len(last)), last]
    sel = v_last > 0
    ok = roll.correct[sel].astype(float)
    assert abs(ok.mean() - v_last[sel].mean()) < 4 * ok.std() / math.sqrt(sel.sum()) + 0.01


def test_on_path_hand_computed(problems):
    roll = sample_rollouts(TrainableLLM(1e8), problems[0][:20], 4, np.random.default_rng(1))
    on = critic.on_path(roll)
    for i in range(len(roll)):
        ok = True
        for t in range(int(roll.lengths[i])):
            assert on[i, t] == ok
            ok = ok and bool(roll.step_ok[i, t])


def test_ppo_critic_learns_the_exact_value(problems):
    hist = train(TrainableLLM(1e9), preset("ppo_critic", iterations=40, batch_problems=16), *problems)
    assert list(hist)[-2:] == ["value_err", "value_loss"]
    assert hist["value_err"][-1] < 0.5 * hist["value_err"][0]
    L = prepare_problems(problems[0]).mask.shape[1]
    assert np.shape(hist.meta["critic_table"]) == critic.table_shape(L)


def test_process_reward_with_gae_has_no_exact_value(problems):
    hist = train(TrainableLLM(1e9), preset("ppo_critic", iterations=2, batch_problems=8, reward="process"), *problems)
    assert all(math.isnan(x) for x in hist["value_err"]) and all(np.isfinite(hist["value_loss"]))


# =============================================================================
# 引擎：梯度和有限差分一致；训练循环经过这些函数
# =============================================================================
@pytest.mark.parametrize("overrides", [{"policy_loss": "gspo", "seq_eps_low": 0.05, "seq_eps_high": 0.05},
                                       {"clip_ratio_c": 1.5, "loss_agg": "seq-mean-token-sum"},
                                       {"loss_agg": "seq-mean-token-sum-norm", "beta": 0.1}])
def test_engine_gradient_matches_finite_differences_for_new_options(problems, overrides):
    train_set, _ = problems
    model = TrainableLLM(1e9)
    roll = sample_rollouts(model, train_set[:8], 4, np.random.default_rng(0))
    adv = group_advantages(roll.correct.astype(float), 4)
    cfg = RLConfig(group_size=4, **overrides)
    params = np.random.default_rng(1).normal(0, 0.3, (12, 3))                 # ρ 离开 1，裁剪会发生

    def at(p):
        model.params[:] = p
        return toy.policy_loss(model, roll, adv, cfg, max_len=8)

    res = at(params)
    assert res.clip_low + res.clip_high > 0
    for c in range(12):
        for j in range(3):
            e = np.zeros((12, 3))
            e[c, j] = 1e-6
            fd = (at(params + e).loss - at(params - e).loss) / 2e-6
            assert fd == pytest.approx(res.grad[c, j], abs=1e-6)


SPIES = [
    (losses, "gspo_surrogate", {"policy_loss": "gspo", "mu": 2}, 6),
    (losses, "cispo_surrogate", {"policy_loss": "cispo", "mu": 2}, 6),
    (losses, "clipped_surrogate", {"clip_ratio_c": 3.0, "mu": 2}, 6),
    (losses, "reinforce_pp_advantages", {"advantage": "reinforce_pp"}, 3),
    (losses, "truncated_is_weights", {"staleness": 1}, 3),
    (losses, "whiten", {"advantage": "gae"}, 3),
    (critic, "gae", {"advantage": "gae"}, 3),
    (critic, "value_loss", {"advantage": "gae", "mu": 2}, 6),
    (critic, "exact_values", {"advantage": "gae"}, 3),
]


@pytest.mark.parametrize("module, name, cfg, expected", SPIES, ids=[s[1] for s in SPIES])
def test_train_goes_through_the_new_functions(problems, monkeypatch, module, name, cfg, expected):
    baseline_hist, baseline_params = _run(problems, **cfg)
    real, calls = getattr(module, name), []

    def spy(*args, **kwargs):
        calls.append(name)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    hist, params = _run(problems, **cfg)
    assert len(calls) == expected
    assert np.array_equal(params, baseline_params)
    assert all(np.array_equal(hist[c], baseline_hist[c], equal_nan=True) for c in hist)


def test_changing_the_gspo_surrogate_changes_training(problems, monkeypatch):
    base_hist, base_params = _run(problems, policy_loss="gspo")
    def zero(lr, a, m, lo, hi):                      # 学生把 GSPO 换成"什么也不做"：训练就停在原地
        out = losses.Surrogate(np.zeros(m.shape), np.zeros(m.shape, bool), np.zeros(m.shape, bool))
        out.dloss_dlogp = np.zeros(m.shape)
        return out

    monkeypatch.setattr(losses, "gspo_surrogate", zero)
    _, params = _run(problems, policy_loss="gspo")
    assert np.all(params == 0) and not np.all(base_params == 0)


# =============================================================================
# 选项、预设、动态采样凑不满、陈旧采样
# =============================================================================
def test_new_presets_differ_in_exactly_their_options():
    assert diff_presets("ppo", "ppo_critic") == {"advantage": ("grpo", "gae"), "lam": (1.0, 0.95)}
    assert diff_presets("ppo", "ppo_dual_clip") == {"clip_ratio_c": (None, 3.0)}
    assert diff_presets("grpo", "gspo") == {"mu": (1, 4), "policy_loss": ("ppo", "gspo")}
    assert diff_presets("grpo", "cispo") == {"loss_agg": ("seq-mean", "token-mean"), "mu": (1, 4),
                                             "eps_low": (0.2, 1.0), "policy_loss": ("ppo", "cispo")}
    assert diff_presets("grpo", "reinforce_pp") == {"advantage": ("grpo", "reinforce_pp"),
                                                    "loss_agg": ("seq-mean", "token-mean")}
    assert diff_presets("grpo", "grpo_async") == {"staleness": (0, 2)}
    for name in ("ppo_critic", "ppo_dual_clip", "gspo", "cispo", "reinforce_pp", "grpo_async"):
        assert name in PRESETS


def test_cispo_preset_has_no_lower_bound_like_minimax_m1():
    """MiniMax-M1 §3.1：权重不设下界，只截上界（issue 26 第 2 条）；上界用 verl CISPO 示例的 0.2。"""
    cfg = PRESETS["cispo"]
    rho = np.array([1e-3, 0.5, 0.79, 1.0, 1.19, 1.5])
    s = losses.cispo_surrogate(rho, np.ones_like(rho), np.full_like(rho, -1.0), cfg.eps_low, cfg.eps_high)
    np.testing.assert_allclose(s.weight, [1e-3, 0.5, 0.79, 1.0, 1.19, 1.2])
    assert not s.clipped_low.any() and s.clipped_high.tolist() == [False] * 5 + [True]
    assert (cfg.policy_loss, cfg.cispo_clip, cfg.eps_high) == ("cispo", "verl", 0.2)


def test_defaults_of_the_new_options_change_nothing(problems):
    """新选项取默认值（或等价的值）时，历史逐位相同。"""
    hist, params = _run(problems)
    for same in ({"staleness": 0, "tis_cap": 5.0}, {"on_short": "raise"}, {"cispo_clip": "trl"},
                 {"loss_agg": "seq-mean-token-mean"}, {"gamma": 0.5, "lam": 0.3, "critic_lr": 1.0}):
        h, p = _run(problems, **same)
        assert np.array_equal(p, params) and dict(h) == dict(hist), same


@pytest.mark.parametrize("kwargs, match", [({"staleness": -1}, "staleness"), ({"tis_cap": 0.0}, "tis_cap"),
                                           ({"policy_loss": "gpso"}, "你是不是想写 'gspo'"),
                                           ({"advantage": "reinforce++"}, "advantage"),
                                           ({"on_short": "stop"}, "on_short"), ({"vf_coef": 0.0}, "vf_coef"),
                                           ({"seq_eps_low": 1.5}, "seq_eps_low")])
def test_bad_new_options_give_chinese_errors(kwargs, match):
    with pytest.raises(ValueError, match=match) as err:
        RLConfig(**kwargs)
    assert any("\u4e00" <= ch <= "\u9fff" for ch in str(err.value))


def test_short_batches_are_recorded_and_can_stop_training(problems):
    hist = train(TrainableLLM(1e9), preset("dapo", iterations=5, batch_problems=16, max_draws=1, group_size=4,
                                           gen_batch_scale=1), *problems)
    assert 0 < hist.meta["short_batches"] <= 5
    assert all(g <= 16 for g in hist["groups"])
    with pytest.raises(RuntimeError, match="max_draws = 1.*on_short"):
        train(TrainableLLM(1e9), preset("dapo", iterations=5, batch_problems=16, max_draws=1, group_size=4,
                                        gen_batch_scale=1, on_short="raise"), *problems)
    full = train(TrainableLLM(1e9), preset("grpo", iterations=3, batch_problems=8), *problems)
    assert full.meta["short_batches"] == 0


def test_stale_rollouts_sample_from_an_older_policy(problems, monkeypatch):
    seen = []
    real = objective.rl_objective

    def spy(logp, old_logp, adv, m, cfg, *a, behaviour_logp=None, **k):
        # 每步乘的权重 min(π_old / π_behaviour, 2)
        seen.append((logp.copy(), None if behaviour_logp is None else
                     losses.truncated_is_weights(old_logp[m], behaviour_logp[m], cfg.tis_cap)))
        return real(logp, old_logp, adv, m, cfg, *a, behaviour_logp=behaviour_logp, **k)

    monkeypatch.setattr(objective, "rl_objective", spy)
    hist, params = _run(problems, staleness=1, lr=8.0)
    assert seen[0][1] is not None and np.allclose(seen[0][1], 1.0, atol=1e-12)    # 第一次：行为策略 = 现在的策略
    assert np.abs(seen[2][1] - 1).max() > 1e-3 and np.all(seen[2][1] <= 2.0)   # 之后：权重 min(π_old / π_beh, 2)
    fresh_hist, fresh = _run(problems, lr=8.0)
    assert not np.array_equal(params, fresh)
