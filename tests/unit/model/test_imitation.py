"""模仿学习：向量化 SFT 和参考模块的 sft 一致；去重；提示的模型；STaR / RFT / 专家迭代提高 pass@1。"""

import dataclasses
import re

import numpy as np
import pytest

from toyllm.exact import correct_paths
from toyllm.imitation import (distinct_mask, expert_iteration, hinted_rollouts, rejection_sampling_ft,
                              rollouts_to_data, sft_counts, sft_loss_grad, sft_rollouts, star, step_counts)
from toyllm.policy import logit_table, softmax_rows
from toyllm.rl import History, default_problems
from toyllm.sampler import sample_rollouts
from toyllm.toy_llm import ToyLLM
from toyllm.trainable import TrainableLLM, log_likelihood, sft

CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def problems():
    train_set, heldout = default_problems(0)
    return train_set, correct_paths(heldout)


@pytest.mark.parametrize("epochs, lr, dedup", [(30, 2.0, False), (7, 0.5, True)])
def test_vectorized_sft_equals_reference_sft(problems, epochs, lr, dedup):
    train_set, _ = problems
    data_problems = train_set[:60]
    start = TrainableLLM(1e9)
    start.params[...] = np.random.default_rng(0).normal(size=(12, 3)) * 0.3
    roll = sample_rollouts(start, data_problems, 4, np.random.default_rng(1))
    keep = distinct_mask(roll, roll.correct) if dedup else roll.correct
    ref, mine = start.copy(), start.copy()
    sft(ref, rollouts_to_data(data_problems, roll, keep), epochs=epochs, lr=lr)
    sft_rollouts(mine, roll, keep, epochs=epochs, lr=lr)
    assert np.abs(ref.params - mine.params).max() < 1e-12
    assert np.abs(mine.params - start.params).max() > 0.05
    assert log_likelihood(mine, rollouts_to_data(data_problems, roll, keep)) > \
        log_likelihood(start, rollouts_to_data(data_problems, roll, keep))


def test_sft_on_nothing_does_nothing_and_checks_shapes():
    m = TrainableLLM(1e9)
    assert sft_counts(m, np.zeros((12, 3))) is m and not m.params.any()
    with pytest.raises(ValueError, match="counts"):
        sft_counts(m, np.zeros((3, 12)))
    with pytest.raises(TypeError, match="TrainableLLM"):
        sft_counts(ToyLLM(1e9), np.zeros((12, 3)))


def test_sft_loss_grad_matches_finite_differences_and_the_reference_log_likelihood(problems):
    """SFT 的损失和梯度写在一处（sft_loss_grad）：梯度和有限差分一致，损失就是参考模块的平均负对数似然。"""
    train_set, _ = problems
    m = TrainableLLM(1e9)
    m.params[...] = np.random.default_rng(3).normal(size=(12, 3)) * 0.3
    roll = sample_rollouts(m, train_set[:30], 4, np.random.default_rng(4))
    counts = step_counts(roll.ctx, roll.actions, roll.mask & roll.correct[:, None])
    loss, grad = sft_loss_grad(m, counts)
    fd, h = np.zeros((12, 3)), 1e-6
    for c, a in np.ndindex(12, 3):
        plus, minus = m.copy(), m.copy()
        plus.params[c, a] += h
        minus.params[c, a] -= h
        fd[c, a] = (sft_loss_grad(plus, counts)[0] - sft_loss_grad(minus, counts)[0]) / (2 * h)
    assert np.abs(grad - fd).max() < 1e-8
    data = rollouts_to_data(train_set[:30], roll, roll.correct)
    assert loss == pytest.approx(-log_likelihood(m, data), rel=1e-12)
    nan_loss, zero = sft_loss_grad(m, np.zeros((12, 3)))
    assert np.isnan(nan_loss) and not zero.any()


def test_step_counts_and_distinct_mask_match_plain_python(problems):
    train_set, _ = problems
    roll = sample_rollouts(TrainableLLM(1e8), train_set[:40], 6, np.random.default_rng(2))
    counts = step_counts(roll.ctx, roll.actions, roll.mask)
    assert counts.sum() == roll.mask.sum() and counts[roll.ctx[0, 0], roll.actions[0, 0]] >= 1
    keep = distinct_mask(roll, roll.correct)
    seen, expect = set(), np.zeros(len(roll), bool)
    for i in range(len(roll)):
        key = (int(roll.problem[i]), tuple(roll.actions[i, :roll.lengths[i]].tolist()))
        if roll.correct[i] and key not in seen:
            seen.add(key)
            expect[i] = True
    np.testing.assert_array_equal(keep, expect)
    assert keep.sum() < roll.correct.sum()                       # 确实有重复的做法序列


def test_hint_model(problems):
    train_set, _ = problems
    subset = train_set[:100]
    model = TrainableLLM(1e9)
    plain = sample_rollouts(model, subset, 4, np.random.default_rng(0))
    same = hinted_rollouts(model, subset, 4, np.random.default_rng(0), hint_boost=0.0)
    assert all(np.array_equal(getattr(plain, f.name), getattr(same, f.name)) for f in dataclasses.fields(plain))
    boost = 3.0
    hinted = hinted_rollouts(model, subset, 4, np.random.default_rng(0), hint_boost=boost)
    # 第 0 步一定在正确路径上：correct 加分，bug 只有不咬人时加分，careless 不加分
    paths = correct_paths(subset)
    rows = hinted.problem
    bonus = boost * np.stack([np.ones(len(rows)), paths.bug_ok[rows, 0], np.zeros(len(rows))], axis=1)
    expect = softmax_rows(logit_table(model)[hinted.ctx[:, 0]] + bonus)
    np.testing.assert_allclose(hinted.probs[:, 0], expect, rtol=1e-12)
    assert hinted.correct.mean() > 0.9 > plain.correct.mean() + 0.3
    # 提示只看数值：做对的解答里仍然有"碰巧没出错"的 bug 步
    lucky = hinted.mask & (hinted.actions == 1) & hinted.correct[:, None]
    assert lucky.any() and hinted.step_ok[lucky].all()
    with pytest.raises(ValueError, match="hint_boost"):
        hinted_rollouts(model, subset, 1, np.random.default_rng(0), hint_boost=-1.0)


def test_star_rft_and_expert_iteration_improve_pass_at_1(problems):
    train_set, paths = problems
    P = len(train_set)
    h_rft = rejection_sampling_ft(TrainableLLM(1e9), train_set, paths, k=4)
    h_star = star(TrainableLLM(1e9), train_set, paths, rounds=3)
    h_ei = expert_iteration(TrainableLLM(1e9), train_set, paths, rounds=3, k=4)
    start = h_rft.meta["start_pass1_exact"]
    for h in (h_rft, h_star, h_ei):
        assert isinstance(h, History) and h["pass1_exact"][-1] > start + 0.15
        assert h.meta["final_pass1_exact"] == h["pass1_exact"][-1]
    # 采样数：RFT 一轮 k × P；专家迭代每轮 k × P；STaR 每轮 k × P 加上提示后重做的题数
    assert h_rft["samples"] == [4 * P]
    assert h_ei["samples"] == [4 * P, 8 * P, 12 * P]
    assert all(r > 0 for r in h_star["rationalized"])
    extra = np.diff([0] + h_star["samples"]) - P
    assert np.all(extra > 0) and np.all(extra >= np.array(h_star["rationalized"]))
    assert h_ei["pass1_exact"][-1] > h_ei["pass1_exact"][0]        # 继续训练：一轮比一轮好
    assert "轮次" in h_star.to_table() and "提示后做对" in h_star.to_table()


def test_restart_only_matters_after_the_first_round(problems):
    train_set, paths = problems
    a, b = TrainableLLM(1e9), TrainableLLM(1e9)
    expert_iteration(a, train_set, paths, rounds=1, k=2, restart=True, seed=3)
    expert_iteration(b, train_set, paths, rounds=1, k=2, restart=False, seed=3)
    assert np.array_equal(a.params, b.params)
    c, d = TrainableLLM(1e9), TrainableLLM(1e9)
    expert_iteration(c, train_set, paths, rounds=2, k=2, restart=True, seed=3)
    expert_iteration(d, train_set, paths, rounds=2, k=2, restart=False, seed=3)
    assert not np.array_equal(c.params, d.params)


def test_imitation_is_deterministic_and_can_be_interrupted(problems):
    train_set, paths = problems
    h1 = star(TrainableLLM(1e9), train_set, paths, rounds=2, seed=5)
    h2 = star(TrainableLLM(1e9), train_set, paths, rounds=2, seed=5)
    assert h1.to_dict() == h2.to_dict()

    def stop(hist, model):
        raise KeyboardInterrupt

    m = TrainableLLM(1e9)
    h = expert_iteration(m, train_set, paths, rounds=4, k=2, callback=stop)
    assert h.interrupted and h.n_rows == 1 and "中断" in h.message and m.params.any()


@pytest.mark.parametrize("kwargs, exc", [({"k": 0}, ValueError), ({"rounds": -1}, ValueError),
                                         ({"restart": 1}, TypeError), ({"lr": float("nan")}, ValueError)])
def test_imitation_bad_arguments(problems, kwargs, exc):
    train_set, paths = problems
    with pytest.raises(exc) as info:
        expert_iteration(TrainableLLM(1e9), train_set, paths, **kwargs)
    assert CHINESE.search(str(info.value))
