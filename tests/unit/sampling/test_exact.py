"""
toyllm.exact：路径 pass@1 / pass@k、期望奖励的精确梯度（对照有限差分和策略梯度定理）、正确路径上的熵。
"""

import itertools
import math
import random
import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from toyllm import (CONTEXTS, Problem, Step, ToyLLM, TrainableLLM, add_grad, bug_bites, make_problem_set, pass_at_k,
                    step_hardness)
from toyllm.exact import (answer_pass_at_k, answer_probs, correct_paths, exact_entropy, exact_pass_at_1, exact_pass_at_k,
                          expected_reward, grad_expected_reward, log_expected_reward, mean_log_reward, path_probs)
from toyllm.gradcheck import finite_difference_grad, objective_function
from toyllm.policy import prob_table
from toyllm.arithmetic import apply_op
from toyllm.sampler import VALUE_LIMIT, sample_rollouts

CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def problems():
    return make_problem_set(random.Random(0), 100, 3, 8)


def random_model(seed, size=1e9, scale=1.0):
    model = TrainableLLM(size)
    model.params[...] = np.random.default_rng(seed).normal(scale=scale, size=model.params.shape)
    return model


# -----------------------------------------------------------------------------
# 正确路径
# -----------------------------------------------------------------------------
def test_correct_paths_matches_step_by_step_definition():
    """向量化的 correct_paths 和逐步调用 step_hardness / bug_bites 的定义完全一致。"""
    problems = make_problem_set(random.Random(42), 300, 1, 12)
    paths = correct_paths(problems)
    for i, p in enumerate(problems):
        x = p.start
        assert paths.lengths[i] == len(p.steps)
        assert not paths.mask[i, len(p.steps):].any()
        for t, (step, value) in enumerate(zip(p.steps, p.correct_values())):
            assert CONTEXTS[paths.ctx[i, t]] == (step.op, step_hardness(step.op, x, step.operand))
            assert paths.bug_ok[i, t] == (not bug_bites(step.op, x, step.operand))
            x = value


# -----------------------------------------------------------------------------
# pass@1 / pass@k
# -----------------------------------------------------------------------------
def test_known_values_of_lecture_problem_set(problems):
    assert exact_pass_at_1(ToyLLM(1e9), problems) == pytest.approx(0.4795, abs=5e-4)
    assert exact_pass_at_1(ToyLLM(1e12), problems) == pytest.approx(0.9386, abs=5e-4)


def test_pass_at_k_formula(problems):
    model = ToyLLM(1e9)
    p = exact_pass_at_1(model, problems, per_problem=True)
    out = exact_pass_at_k(model, problems, (1, 2, 8, 100))
    assert out[1] == pytest.approx(exact_pass_at_1(model, problems), rel=1e-12)
    for k, v in out.items():
        assert v == pytest.approx(float(np.mean(1 - (1 - p) ** k)), rel=1e-12)
    assert exact_pass_at_k(model, problems, 8) == out[8]
    assert np.allclose(exact_pass_at_k(model, problems, 8, per_problem=True), 1 - (1 - p) ** 8)
    assert out[1] < out[2] < out[8] < out[100] <= 1.0
    q = answer_probs(model, problems[:30])
    true = answer_pass_at_k(model, problems[:30], (1, 8))             # 同一个公式，用答对的概率 q
    assert true[1] == pytest.approx(float(q.mean()), rel=1e-12)
    assert true[8] == pytest.approx(float(np.mean(1 - (1 - q) ** 8)), rel=1e-12)
    assert true[8] >= exact_pass_at_k(model, problems[:30], 8)


def test_unbiased_estimator_has_exact_expectation(problems):
    """构造的情况：c ~ Binomial(n, p) 时，Chen 估计的期望（精确地对 c 求和）等于 1 − (1 − p)^k。"""
    p_values = list(exact_pass_at_1(ToyLLM(1e9), problems[:5], per_problem=True)) + [0.0, 0.03, 1.0]
    for p in p_values:
        for n, k in ((5, 1), (10, 3), (20, 20), (16, 7)):
            expectation = math.fsum(math.comb(n, c) * p ** c * (1 - p) ** (n - c) * pass_at_k(n, c, k)
                                    for c in range(n + 1))
            assert expectation == pytest.approx(1 - (1 - p) ** k, abs=1e-12)


@pytest.mark.parametrize("model", [ToyLLM(1e9), ToyLLM(1e10, cot=False), ToyLLM(1e8)], ids=str)
def test_sampled_all_steps_right_agrees_with_exact(problems, model):
    """
    精确值算的是"每一步都对"的概率。采样（n = 200）里每一步都对的比例和它的差在 4.5 个采样标准误以内；
    每道题也检查（Bonferroni：100 道题，每道 5 个标准误，标准误用精确的 p 计算）。
    """
    n = 200
    r = sample_rollouts(model, problems, n, np.random.default_rng(123))
    all_right = (r.step_ok | ~r.mask).all(axis=1).reshape(len(problems), n).astype(float)
    p_hat = all_right.mean(axis=1)
    se = math.sqrt(float((p_hat * (1 - p_hat) / (n - 1)).sum())) / len(problems)
    assert abs(all_right.mean() - exact_pass_at_1(model, problems)) < 4.5 * se
    p = exact_pass_at_1(model, problems, per_problem=True)
    se_i = np.sqrt(np.maximum(p * (1 - p), 1e-12) / n)
    assert np.all(np.abs(p_hat - p) < 5 * se_i + 1e-9)


@pytest.mark.parametrize("model", [ToyLLM(1e8), ToyLLM(1e9), ToyLLM(1e12), ToyLLM(1e9, cot=False)], ids=str)
def test_sampled_pass_at_1_is_exact_plus_rare_repairs(problems, model):
    """
    真正的 pass@1 = 每一步都对 + "写错了又被后面的错误修好"。后者很少：这里测得不到 1% 的样本（种子固定），
    所以采样的 pass@1 不低于精确值（差 > −4.5 个标准误），也不高出 1% 加 4.5 个标准误。
    """
    n = 200
    r = sample_rollouts(model, problems, n, np.random.default_rng(7))
    correct = r.correct.reshape(len(problems), n).astype(float)
    p_hat = correct.mean(axis=1)
    se = math.sqrt(float((p_hat * (1 - p_hat) / (n - 1)).sum())) / len(problems)
    repaired = float((r.correct & ~(r.step_ok | ~r.mask).all(axis=1)).mean())
    assert repaired < 0.01
    diff = correct.mean() - exact_pass_at_1(model, problems)
    assert -4.5 * se < diff < 0.01 + 4.5 * se


# -----------------------------------------------------------------------------
# 答对的概率（所有路径）：answer_probs
# -----------------------------------------------------------------------------
def brute_force_answer_prob(model, problem, temperature=1.0):
    """逐条枚举所有路径（做法 × careless 的位和方向），用逐个版本的 apply_op：和 answer_probs 的写法完全独立。"""
    def walk(t, x, weight):
        if t == len(problem.steps):
            return weight if x == problem.answer else 0.0
        step = problem.steps[t]
        ctx = CONTEXTS.index((step.op, step_hardness(step.op, x, step.operand)))
        pr = prob_table(model, temperature, 0 if model.cot else t)[ctx]
        total = 0.0
        for proc, p in zip(("correct", "bug"), pr[:2]):
            if p > 0:
                total += walk(t + 1, clip(apply_op(step.op, x, step.operand, proc)), weight * p)
        c = apply_op(step.op, x, step.operand, "correct")
        m = abs(c)
        digits = len(str(m))
        for i in range(digits):
            for up in ((True,) if m == 0 else (True, False)):
                v = m + 10 ** i if up else m - 10 ** i
                share = pr[2] / digits / (1 if m == 0 else 2)
                if share > 0:
                    total += walk(t + 1, clip(-v if c < 0 else v), weight * share)
        return total

    def clip(v):
        return max(-VALUE_LIMIT, min(VALUE_LIMIT, v))

    return walk(0, problem.start, 1.0)


HAND_PROBLEMS = [
    Problem(47, (Step("add", 38), Step("sub", 90), Step("mul", 12)), -60),       # 负的正确值：bug 在负数上等于 correct
    Problem(5, (Step("mul", 0), Step("add", 7), Step("mul", 1)), 7),             # 乘 0 把所有路径并到一起
    Problem(99, (Step("mul", 99), Step("sub", 9800)), 1),
    Problem(10, (Step("sub", 10), Step("add", 3)), 3),                           # 中间值 0：careless 只能 +1
]


@pytest.mark.parametrize("seed,cot,temperature", [(0, True, 1.0), (1, False, 1.0), (2, True, 0.5)])
def test_answer_probs_equals_brute_force_enumeration(problems, seed, cot, temperature):
    """answer_probs 和逐条枚举所有路径的结果相同（到浮点舍入），题目包括负数、乘 0、乘 1、中间值 0。"""
    model = random_model(seed, scale=1.5)
    model.cot = cot
    chosen = HAND_PROBLEMS + [p for p in problems if len(p.steps) <= 4][:6]
    got = answer_probs(model, chosen, temperature)
    want = [brute_force_answer_prob(model, p, temperature) for p in chosen]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


@settings(max_examples=30, deadline=None)
@given(start=st.integers(0, 999), raw=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 999)), min_size=1, max_size=4),
       seed=st.integers(0, 9), cot=st.booleans())
def test_answer_probs_property_equals_brute_force(start, raw, seed, cot):
    """
    性质测试：随机的小题（1~4 步，乘 0、乘 1、减成负数都可能出现）上 answer_probs 和逐条枚举相同（相对误差 1e-12）。
    answer_probs 往前走一半、倒着走一半，这里各种步数都有，倒着走的每一种逆（correct、careless、三种 bug）都会被用到。
    """
    steps = tuple(Step(("add", "sub", "mul")[op], b % 100 if op == 2 else b) for op, b in raw)
    values = [start]
    for step in steps:
        values.append(apply_op(step.op, values[-1], step.operand, "correct"))
    assume(max(abs(v) for v in values) <= 9999)
    problem = Problem(start, steps, values[-1])
    model = random_model(seed, scale=1.5)
    model.cot = cot
    np.testing.assert_allclose(answer_probs(model, [problem]), [brute_force_answer_prob(model, problem)],
                               rtol=1e-12, atol=1e-15)


def test_answer_probs_is_path_prob_plus_repairs(problems):
    """答对 ≥ 走对路径（每道题）；一步的题不可能"修好"（至少要两步：先错、再撞回来），两者相等。"""
    model = random_model(3)
    q, p = answer_probs(model, problems[:30]), exact_pass_at_1(model, problems[:30], per_problem=True)
    assert np.all(q >= p - 1e-15) and np.any(q > p + 1e-6)
    one_step = make_problem_set(random.Random(5), 40, 1, 1)
    np.testing.assert_allclose(answer_probs(model, one_step), exact_pass_at_1(model, one_step, per_problem=True),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("model,temperature,repairs_visible",
                         [(ToyLLM(1e8, cot=False), 1.0, True), (ToyLLM(1e9), 1.0, True),
                          (random_model(4, scale=0.8), 0.7, False)], ids=["100M-nocot", "1B", "random-T0.7"])
def test_answer_probs_matches_a_million_samples(problems, model, temperature, repairs_visible):
    """
    10^6 份样本（20 道题 × 50000 遍，种子固定）的 pass@1 和 answer_probs 的平均值相差不到 4 个标准误
    （标准误用精确的 q 计算）；每道题也在 5 个标准误以内（Bonferroni）。课上的模型（100M、1B）"被修好"的样本多，
    走对路径的概率明显偏低（差 > 4 个标准误）；随机模型这个差很小，只检查 q ≥ 走对路径的概率。
    """
    chosen, n = problems[:20], 50_000
    q = answer_probs(model, chosen, temperature)
    r = sample_rollouts(model, chosen, n, np.random.default_rng(2024), temperature)
    q_hat = r.correct.reshape(len(chosen), n).mean(axis=1)
    se = math.sqrt(float((q * (1 - q)).sum()) / n) / len(chosen)
    assert abs(q_hat.mean() - q.mean()) < 4 * se
    assert np.all(np.abs(q_hat - q) < 5 * np.sqrt(q * (1 - q) / n) + 1e-9)
    path = exact_pass_at_1(model, chosen, temperature)
    assert q.mean() >= path
    if repairs_visible:
        assert q_hat.mean() - path > 4 * se


def test_answer_probs_bad_inputs(problems):
    with pytest.raises(TypeError, match="CorrectPaths"):
        answer_probs(ToyLLM(1e9), correct_paths(problems[:3]))
    with pytest.raises(ValueError, match="temperature"):
        answer_probs(ToyLLM(1e9), problems[:3], temperature=-1)


# -----------------------------------------------------------------------------
# 梯度
# -----------------------------------------------------------------------------
def rel_error(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradients_match_central_finite_differences(problems, seed):
    model = random_model(seed)
    subset = problems[10 * seed:10 * seed + 30]
    f = objective_function(model, subset, "expected_reward")
    fd = finite_difference_grad(f, model.params, h=1e-6)
    analytic = grad_expected_reward(model, subset)
    assert analytic.shape == (len(CONTEXTS), 3)
    assert rel_error(analytic, fd) < 1e-6


@pytest.mark.parametrize("model,temperature", [(ToyLLM(1e10, cot=False), 1.0), (ToyLLM(1e9), 0.7)], ids=str)
def test_gradient_without_cot_and_with_temperature(problems, model, temperature):
    """无思维链（logits 还和步号有关）和 temperature ≠ 1 时，梯度对"加在 logits 上的 Δ"同样精确。"""
    f = objective_function(model, problems[:30], "expected_reward", temperature)
    fd = finite_difference_grad(f, np.zeros((len(CONTEXTS), 3)))
    assert rel_error(grad_expected_reward(model, problems[:30], temperature), fd) < 1e-6


def test_gradient_structure(problems):
    model = random_model(5)
    g = grad_expected_reward(model, problems)
    assert np.allclose(g.sum(axis=1), 0, atol=1e-15)                      # Δ 整行加常数不改变 softmax
    per = grad_expected_reward(model, problems, per_problem=True)
    assert per.shape == (len(problems), len(CONTEXTS), 3)
    assert np.allclose(per.mean(axis=0), g, rtol=0, atol=1e-15)
    # 只有乘法的题：加法、减法的情境梯度为 0
    only_mul = [Problem(7, (Step("mul", 3), Step("mul", 12)), 252)]
    g1 = grad_expected_reward(model, only_mul)
    assert not np.any(g1[:8]) and np.any(g1[8:])
    assert log_expected_reward(model, problems) == pytest.approx(math.log(exact_pass_at_1(model, problems)))
    assert mean_log_reward(model, problems) == pytest.approx(
        float(np.log(exact_pass_at_1(model, problems, per_problem=True)).mean()))


def test_gradient_equals_policy_gradient_theorem():
    """
    独立的第二个参照：策略梯度定理 ∇J = E[R · Σ_t ∇ log π(a_t | c_t)]，对短题目枚举全部做法序列精确求期望，
    每一步的 ∇ log π 用 trainable.add_grad（参考模块的写法）。R = 每一步都对。
    """
    model = random_model(7)
    probs_tab = prob_table(model)
    problem_list = [Problem(47, (Step("add", 38), Step("mul", 12), Step("sub", 17)), (47 + 38) * 12 - 17),
                    Problem(12, (Step("add", 34), Step("mul", 3)), 138)]
    paths = correct_paths(problem_list)
    total = np.zeros((len(CONTEXTS), 3))
    for i, prob in enumerate(problem_list):
        L = len(prob.steps)
        grads = {}
        for seq in itertools.product(range(3), repeat=L):
            ok = all(a == 0 or (a == 1 and paths.bug_ok[i, t]) for t, a in enumerate(seq))
            if not ok:
                continue                        # R = 0：对期望没有贡献
            weight = math.prod(probs_tab[paths.ctx[i, t], a] for t, a in enumerate(seq))
            for t, a in enumerate(seq):
                add_grad(grads, CONTEXTS[paths.ctx[i, t]], a, probs_tab[paths.ctx[i, t]].tolist(), weight)
        for key, row in grads.items():
            total[CONTEXTS.index(key)] += row
    total /= len(problem_list)
    assert np.allclose(grad_expected_reward(model, problem_list), total, rtol=1e-12, atol=1e-15)


# -----------------------------------------------------------------------------
# 熵
# -----------------------------------------------------------------------------
def test_exact_entropy_by_hand():
    model = random_model(3)
    prob = Problem(47, (Step("add", 38), Step("mul", 12)), (47 + 38) * 12)
    tab = prob_table(model)
    ctx = correct_paths([prob]).ctx[0]
    hand = np.mean([-(tab[c] * np.log(tab[c])).sum() for c in ctx])
    assert exact_entropy(model, [prob]) == pytest.approx(hand, rel=1e-12)
    assert exact_entropy(model, [prob], temperature=1e9) == pytest.approx(math.log(3), rel=1e-6)
    assert exact_entropy(model, [prob], temperature=0) == 0.0


def test_exact_entropy_matches_path_probs(problems):
    model = ToyLLM(1e9)
    paths = correct_paths(problems)
    pr = path_probs(model, paths)[paths.mask]
    assert exact_entropy(model, problems) == pytest.approx(float(-(pr * np.log(pr)).sum(axis=1).mean()))
    assert 0 < exact_entropy(ToyLLM(1e12), problems) < exact_entropy(ToyLLM(1e9), problems) < math.log(3)


# -----------------------------------------------------------------------------
# 参数检查
# -----------------------------------------------------------------------------
@pytest.mark.parametrize("call,exc", [
    (lambda ps: grad_expected_reward(ToyLLM(1e9), ps, temperature=0), ValueError),
    (lambda ps: exact_pass_at_k(ToyLLM(1e9), ps, 0), ValueError),
    (lambda ps: exact_pass_at_k(ToyLLM(1e9), ps, ()), ValueError),
    (lambda ps: exact_pass_at_k(ToyLLM(1e9), ps, 1.5), TypeError),
    (lambda ps: exact_pass_at_1(ToyLLM(1e9), []), ValueError),
    (lambda ps: grad_expected_reward(ToyLLM(1e9), "abc"), TypeError),
    (lambda ps: exact_entropy(ToyLLM(1e9), ps, temperature=-1), ValueError),
])
def test_bad_inputs_raise_chinese_errors(problems, call, exc):
    with pytest.raises(exc) as info:
        call(problems[:5])
    assert CHINESE.search(str(info.value))
