"""向量化采样器：和 ToyLLM.generate 的分布相同，和精确值一致。"""

import random

import numpy as np
import pytest

from toyllm import CONTEXTS, ToyLLM, TrainableLLM, make_problem_set
from toyllm.exact import exact_pass_at_1
from toyllm.sampler import prepare_problems, sample_rollouts
from toyllm.trainable import step_records


def _generate_counts(model, problems, n, seed):
    rng = random.Random(seed)
    visits = np.zeros((12, 3))
    correct = np.zeros(len(problems))
    for i, p in enumerate(problems):
        for _ in range(n):
            s = model.generate(p, rng)
            correct[i] += s.correct
            for key, a in step_records(p, s):
                visits[CONTEXTS.index(key), a] += 1
    return visits, correct / n


@pytest.mark.parametrize("model", [TrainableLLM(1e9), ToyLLM(1e9, cot=False)])
def test_sampler_matches_generate_in_distribution(model):
    problems = make_problem_set(random.Random(0), 40, 3, 8)
    n = 100
    v_gen, c_gen = _generate_counts(model, problems, n, 1)
    r = sample_rollouts(model, problems, n, np.random.default_rng(1))
    v_vec = np.zeros((12, 3))
    np.add.at(v_vec, (r.ctx[r.mask], r.actions[r.mask]), 1)
    # 每个 (情境, 做法) 格子的访问次数：两边独立同分布，差的方差约为 2 × 计数（泊松近似）
    diff = np.abs(v_gen - v_vec)
    tol = 5 * np.sqrt(v_gen + v_vec + 1) + 2
    assert np.all(diff <= tol), (diff, tol)
    # 每道题的正确率：两个二项分布的差
    c_vec = r.correct.reshape(len(problems), n).mean(axis=1)
    p = (c_gen + c_vec) / 2
    se = np.sqrt(2 * p * (1 - p) / n) + 1e-9
    assert np.all(np.abs(c_gen - c_vec) <= 5 * se + 1e-9)


def test_sampler_agrees_with_exact_pass_at_1():
    problems = make_problem_set(random.Random(0), 100, 3, 8)
    m = TrainableLLM(1e9)
    r = sample_rollouts(m, problems, 200, np.random.default_rng(0))
    exact = exact_pass_at_1(m, problems)
    se = np.sqrt(exact * (1 - exact) / r.correct.size)
    # 采样值可以略高于"每一步都对"的概率（错误被后面的错误修好），但差距远小于标准误
    assert abs(r.correct.mean() - exact) < 5 * se


def test_rollout_fields_are_consistent():
    problems = make_problem_set(random.Random(3), 25, 3, 8)
    m = TrainableLLM(1e8)
    r = sample_rollouts(m, prepare_problems(problems), 4, np.random.default_rng(5))
    assert len(r) == 100 and r.n == 4
    assert np.array_equal(r.problem, np.repeat(np.arange(25), 4))
    assert np.array_equal(r.lengths, [len(problems[i].steps) for i in r.problem])
    rows = np.arange(len(r))
    assert np.array_equal(r.final, r.values[rows, r.lengths - 1])
    assert np.allclose(np.exp(r.logp[r.mask]), r.probs[r.mask][np.arange(r.mask.sum()), r.actions[r.mask]])
    assert np.all(r.step_ok[r.mask][r.actions[r.mask] == 0])          # correct 这一步一定对
    assert not np.any(r.step_ok[r.mask][r.actions[r.mask] == 2])      # careless 一定错


def test_same_seed_same_rollouts_and_greedy():
    problems = make_problem_set(random.Random(3), 10, 3, 8)
    m = TrainableLLM(1e9)
    a = sample_rollouts(m, problems, 3, np.random.default_rng(7))
    b = sample_rollouts(m, problems, 3, np.random.default_rng(7))
    assert all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("actions", "values", "correct"))
    g = sample_rollouts(m, problems, 2, np.random.default_rng(0), temperature=0)
    assert np.all(g.actions[g.mask] == 0) and g.correct.all()


def test_sampler_bad_input():
    problems = make_problem_set(random.Random(3), 2, 3, 4)
    with pytest.raises(TypeError):
        sample_rollouts(TrainableLLM(1e9), problems, 2, random.Random(0))
    with pytest.raises(ValueError):
        sample_rollouts(TrainableLLM(1e9), problems, 0, np.random.default_rng(0))
    with pytest.raises(ValueError):
        sample_rollouts(TrainableLLM(1e9), [], 2, np.random.default_rng(0))
