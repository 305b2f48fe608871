"""
toyllm.evaluation（和它用到的 toyllm.estimators）：手工样本上已知答案的 maj@k / best-of-n，组合公式对照穷举，
统计量对照理论值和精确值；toyllm.experiments 的一次做完的实验；toyllm.scaling.scaling_curve。
"""

import itertools
import math
import random
import re

import numpy as np
import pytest

from toyllm import ToyLLM, TrainableLLM, make_problem_set, pass_at_k
from toyllm.estimators import VERDICTS, Estimate, choose_ratio, estimate_mean, make_estimate, sampling_stderr, verdict
from toyllm.evaluation import (SampleSet, best_of_k, best_of_k_from_verdicts, best_of_n, default_ks, draw_samples,
                               maj_at_k, maj_vote, mean_best_worst, pass_at_k_sampled, verify)
from toyllm.experiments import compare_exact_sampled, evaluate_sampled, inference_curves
from toyllm.scaling import scaling_curve
from toyllm.exact import answer_probs, exact_pass_at_1
from toyllm.policy import prob_table

CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def problems():
    return make_problem_set(random.Random(0), 100, 3, 8)


# -----------------------------------------------------------------------------
# 纯函数：手工数据
# -----------------------------------------------------------------------------
def test_verdict_three_standard_errors():
    """判定（notebook 09、讲义 §10.4）：差 > 3 个标准误成立，< −3 个不成立，中间分不出；边界上分不出。"""
    assert verdict(0.0139, 0.0037) == "成立"
    assert verdict(-0.0139, 0.0037) == "不成立"
    assert verdict(0.0100, 0.0037) == verdict(-0.0100, 0.0037) == "这个大小上分不出"
    assert verdict(0.3, 0.1) == verdict(-0.3, 0.1) == "这个大小上分不出"      # 正好 3 个标准误：不算
    assert verdict(1e-12, 0) == "成立" and verdict(0, 0) == "这个大小上分不出"   # 精确值（标准误 0）
    assert verdict(0.02, 0.01, z=1.96) == "成立" and verdict(0.02, 0.01) == "这个大小上分不出"
    assert set(VERDICTS) == {"成立", "不成立", "这个大小上分不出"}
    with pytest.raises(ValueError, match="stderr"):
        verdict(0.1, -0.01)


def test_maj_vote_hand_made():
    assert maj_vote([5, 7, 7, 5, 3]) == 5            # 平票：5 先出现
    assert maj_vote([7, 5, 5, 7, 3]) == 7
    assert maj_vote([1, 2, 2]) == 2
    assert maj_vote([3]) == 3
    assert maj_vote(["b", "a", "a", "b"]) == "b"
    assert maj_vote(np.array([4, 4, 9])) == 4


def test_best_of_n_hand_made():
    assert best_of_n([7, 5, 9], [0, 1, 1]) == 5       # 平票取先出现
    assert best_of_n([7, 5, 9], [0.2, 0.9, 0.5]) == 5
    assert best_of_n([7, 5], [0, 0]) == 7
    assert best_of_n([7, 5, 6], lambda a: a == 6) == 6


def test_verify():
    assert verify([3, 4, 3], 3) == [1, 0, 1]
    assert verify([3, 4, 3], 3, error_rate=1.0, rng=np.random.default_rng(0)) == [0, 1, 0]
    a = verify(list(range(50)), 7, 0.3, np.random.default_rng(1))
    assert a == verify(list(range(50)), 7, 0.3, np.random.default_rng(1))      # 同一个种子，同样的判断


def test_sample_set_from_lists():
    s = SampleSet.from_lists([[42, 41, 42], [7, 7, 8]], [42, 8])
    assert s.n == 3 and len(s) == 2
    assert s.correct.tolist() == [[True, False, True], [False, False, True]]


def test_maj_at_k_hand_made_known_answers():
    s = SampleSet.from_lists([[5, 7, 7, 5], [3, 3, 4, 4], [1, 2, 2, 2]], [5, 4, 1])
    per = maj_at_k(s, (1, 4), per_problem=True)
    assert per[4].tolist() == [1.0, 0.0, 0.0]          # 平票取先出现：5 对、3 错；2 有 3 票
    assert per[1].tolist() == [0.5, 0.5, 0.25]         # k = 1：没有投票，就是对的比例
    est = maj_at_k(s, 4)[4]
    assert est.value == pytest.approx(1 / 3) and est.n == 3


def brute_force_maj(answers, truth, k):
    """对全部有序的 k 元排列投票（平票取先出现），取平均。"""
    hits = [maj_vote([answers[i] for i in perm]) == truth for perm in itertools.permutations(range(len(answers)), k)]
    return sum(hits) / len(hits)


def test_maj_at_k_monte_carlo_matches_brute_force():
    answers = [[5, 7, 7, 5, 3], [1, 1, 2, 3, 4], [9, 8, 8, 9, 9]]
    truth = [5, 1, 8]
    s = SampleSet.from_lists(answers, truth)
    subsets = 4000
    per = maj_at_k(s, (2, 3, 4), rng=np.random.default_rng(3), subsets=subsets, per_problem=True)
    for k in (2, 3, 4):
        for i in range(3):
            exact = brute_force_maj(answers[i], truth[i], k)
            se = math.sqrt(exact * (1 - exact) / subsets)
            assert abs(per[k][i] - exact) <= 5 * se + 1e-12


def brute_force_best(correct, judged, k):
    """对全部有序的 k 元排列：best_of_n 选分最高的（平票取先出现）。"""
    idx = range(len(correct))
    hits = [correct[best_of_n(list(perm), [judged[i] for i in perm])]
            for perm in itertools.permutations(idx, k)]
    return sum(hits) / len(hits)


def test_best_of_k_formula_matches_brute_force():
    rng = np.random.default_rng(11)
    for _ in range(20):
        n = int(rng.integers(1, 7))
        correct = rng.random(n) < 0.5
        judged = rng.random(n) < 0.5
        for k in range(1, n + 1):
            got = best_of_k_from_verdicts(correct[None], judged[None], k)[0]
            assert got == pytest.approx(brute_force_best(correct, judged, k), abs=1e-12)


def test_choose_ratio_is_the_ratio_of_binomials():
    for n in range(1, 13):
        for k in range(1, n + 1):
            want = [math.comb(m, k) / math.comb(n, k) for m in range(n + 1)]
            assert np.allclose(choose_ratio(np.arange(n + 1), k, n), want, rtol=1e-13, atol=0)
            assert [pass_at_k(n, c, k) for c in range(n + 1)] == [1.0 - float(choose_ratio(n - c, k, n))
                                                                 for c in range(n + 1)]


def test_best_of_k_with_exact_verifier_is_pass_at_k():
    s = SampleSet.from_lists([[1, 2, 2, 2], [3, 3, 4, 3], [5, 6, 7, 8], [9, 9, 9, 9]], [1, 3, 0, 9])
    bo = best_of_k(s, (1, 2, 3, 4), per_problem=True)
    c = s.correct.sum(axis=1)
    for k in (1, 2, 3, 4):
        assert np.allclose(bo[k], [pass_at_k(4, int(cc), k) for cc in c], atol=1e-12)
    pk = pass_at_k_sampled(s, (1, 2))
    assert pk[2].value == pytest.approx(np.mean([pass_at_k(4, int(cc), 2) for cc in c]))
    # 验证器总是判反：选中的总是错的答案（只要有错的）
    wrong = best_of_k(s, 4, verifier_error=1.0, rng=np.random.default_rng(0), per_problem=True)[4]
    assert wrong.tolist() == [0.0, 0.0, 0.0, 1.0]


def test_mean_best_worst_hand_made():
    s = SampleSet.from_lists([[1, 1, 1, 0]], [1])
    out = mean_best_worst(s)
    assert (out["mean"].value, out["best"].value, out["worst"].value) == (0.75, 1.0, 0.0)
    out2 = mean_best_worst(s, k=2)
    assert out2["best"].value == 1.0 and out2["worst"].value == pytest.approx(3 / 6)
    assert out2["mean"].value == 0.75


def test_estimate_mean_and_format():
    e = estimate_mean([1, 0, 1, 1])
    assert e.value == 0.75 and e.stderr == pytest.approx(0.25) and e.n == 4
    assert e.ci_low == pytest.approx(0.75 - 1.959964 * 0.25, abs=1e-6) and e.ci_high == 1.0   # 截断到 1
    assert f"{e:.2f}" == "0.75 ± 0.25" and float(e) == 0.75
    assert "95%" in str(e)
    one = estimate_mean([0.3])
    assert math.isnan(one.stderr)
    assert make_estimate(0.5, 0.1, 10, level=0.9).ci_high == pytest.approx(0.5 + 1.644854 * 0.1, abs=1e-6)


def test_default_ks():
    assert default_ks(1) == (1,)
    assert default_ks(16) == (1, 2, 4, 8, 16)
    assert default_ks(20) == (1, 2, 4, 8, 16, 20)


# -----------------------------------------------------------------------------
# 统计：构造的情况，理论值已知
# -----------------------------------------------------------------------------
def synthetic(p, P, n, seed):
    """P 道题，每个样本以概率 p[i] 等于正确答案 0，否则是一个互不相同的错误答案。"""
    rng = np.random.default_rng(seed)
    right = rng.random((P, n)) < np.asarray(p)[:, None]
    wrong = np.arange(1, P * n + 1).reshape(P, n)
    return SampleSet(np.where(right, 0, wrong).astype(np.int64), np.zeros(P, dtype=np.int64))


def test_estimators_match_theory_on_constructed_case():
    """
    每道题的正确率 p 已知、错误答案互不相同时：
        pass@k = 1 − (1 − p)^k；maj@k = P(C ≥ 2) + P(C = 1) / k（C ~ 二项分布(k, p)：只有一个对的时候所有答案各 1 票，
        平票取先出现的，在随机顺序里是 1/k 的机会）；best-of-k（验证器以 ε 判反）见 best_of_k 的说明。
    估计值和理论值的差在 5 个（题目层面的）标准误以内。
    """
    P, n, eps = 400, 12, 0.2
    p = np.linspace(0.05, 0.9, P)
    s = synthetic(p, P, n, seed=5)
    rng = np.random.default_rng(6)
    pk = pass_at_k_sampled(s, (1, 3, 6))
    mj = maj_at_k(s, (3, 6), rng=rng, subsets=100)
    bo = best_of_k(s, (3, 6), verifier_error=eps, rng=rng)
    for k in (1, 3, 6):
        assert abs(pk[k].value - np.mean(1 - (1 - p) ** k)) < 5 * pk[k].stderr
    for k in (3, 6):
        theory = np.mean(1 - (1 - p) ** k - k * p * (1 - p) ** (k - 1) + p * (1 - p) ** (k - 1))
        assert abs(mj[k].value - theory) < 5 * mj[k].stderr
        judged_right = p * (1 - eps) + (1 - p) * eps
        q = (1 - judged_right) ** k
        theory = np.mean((1 - q) * p * (1 - eps) / judged_right + q * p * eps / (1 - judged_right))
        assert abs(bo[k].value - theory) < 5 * bo[k].stderr


def test_compare_exact_sampled(problems):
    r = compare_exact_sampled(ToyLLM(1e9), problems, 64, np.random.default_rng(0))
    assert r.exact == pytest.approx(float(answer_probs(ToyLLM(1e9), problems).mean()))
    assert r.path == pytest.approx(exact_pass_at_1(ToyLLM(1e9), problems)) and r.path <= r.exact
    assert abs(r.z) < 4.5
    assert abs(r.steps_right.value - r.path) < 4.5 * r.steps_right.stderr
    assert 0 <= r.repaired < 0.01
    assert r.sampled.value == pytest.approx(r.steps_right.value + r.repaired)
    assert "pass@1 精确值" in str(r)


def test_sampling_stderr_formula():
    c = np.array([[1, 0, 1, 1], [0, 0, 0, 1]], dtype=float)
    p = c.mean(axis=1)
    assert sampling_stderr(c) == pytest.approx(math.sqrt(float((p * (1 - p) / 3).sum())) / 2)


# -----------------------------------------------------------------------------
# 一次做完的函数
# -----------------------------------------------------------------------------
def test_evaluate_sampled(problems):
    model = ToyLLM(1e9)
    ev = evaluate_sampled(model, problems, 16, np.random.default_rng(0))
    assert ev.ks == (1, 2, 4, 8, 16)
    q = answer_probs(model, problems)                           # 采样的 pass@k 估计的是 1 − (1 − q)^k 的平均
    for k in ev.ks:
        assert abs(ev.pass_at_k[k].value - (1 - (1 - q) ** k).mean()) < 5 * max(ev.pass_at_k[k].stderr, 1e-3)
        assert ev.best_of_k[k].value == pytest.approx(ev.pass_at_k[k].value)
        assert ev.maj_at_k[k].value <= ev.pass_at_k[k].value + 1e-12
    assert ev.mean.value == pytest.approx(ev.pass_at_k[1].value)
    assert ev.best.value == pytest.approx(ev.pass_at_k[16].value)
    text = str(ev)
    assert "pass@k" in text and "maj@k" in text
    again = evaluate_sampled(model, problems, 16, np.random.default_rng(0))
    assert again.table() == ev.table()                          # 同一个种子，完全相同


def test_draw_samples_matches_rollouts(problems):
    s = draw_samples(TrainableLLM(1e9), problems[:10], 5, np.random.default_rng(0))
    assert s.answers.shape == (10, 5)
    assert np.array_equal(s.correct.ravel(), s.rollouts.correct)


def test_inference_curves(problems):
    models = [ToyLLM(1e9), ToyLLM(1e9, cot=False)]
    data = inference_curves(models, problems[:40], 8, np.random.default_rng(0), subsets=50)
    assert data["ks"] == [1, 2, 4, 8] and data["n"] == 8 and data["problems"] == 40
    assert [m["cot"] for m in data["models"]] == [True, False]
    for m in data["models"]:
        for key in ("exact_pass_at_k", "pass_at_k", "pass_at_k_se", "maj_at_k", "maj_at_k_se", "best_of_k",
                    "best_of_k_se", "best_of_k_noisy", "best_of_k_noisy_se"):
            assert len(m[key]) == 4 and all(isinstance(v, float) for v in m[key])
        assert all(0 <= v <= 1 for v in m["pass_at_k"] + m["maj_at_k"] + m["best_of_k_noisy"])
        assert m["exact_pass_at_k"] == sorted(m["exact_pass_at_k"])
    q = answer_probs(models[0], problems[:40])
    assert data["models"][0]["exact_pass_at_k"][2] == pytest.approx(float((1 - (1 - q) ** 4).mean()), rel=1e-12)
    assert inference_curves(models, problems[:40], 8, np.random.default_rng(0), subsets=50) == data


def test_scaling_curve(problems):
    data = scaling_curve(problems, np.random.default_rng(0), sizes=(1e8, 1e10, 1e12), n=32)
    assert data["names"] == ["100M", "10B", "1T"]
    assert data["exact"] == sorted(data["exact"])
    for e, s, se in zip(data["exact"], data["sampled"], data["sampled_se"]):
        assert abs(s - e) < 4.5 * se                        # 采样 pass@1 估计的就是答对的概率
    for size, ce in zip((1e8, 1e10, 1e12), data["context_exact"]):
        assert np.allclose(ce, prob_table(ToyLLM(size))[:, 0])
    cs, cse, cnt = (np.array(data[k], dtype=float) for k in ("context_sampled", "context_se", "context_counts"))
    ok = cnt > 50
    assert np.all(np.abs(cs[ok] - np.array(data["context_exact"])[ok]) < 5 * cse[ok] + 1e-9)
    nocot = scaling_curve(problems, np.random.default_rng(0), sizes=(1e9,), n=8, cot=False)
    assert nocot["exact"][0] == pytest.approx(float(answer_probs(ToyLLM(1e9, cot=False), problems).mean()))


# -----------------------------------------------------------------------------
# 参数检查
# -----------------------------------------------------------------------------
HAND = SampleSet.from_lists([[1, 2, 2, 2]], [1])


@pytest.mark.parametrize("call,exc", [
    (lambda ps: maj_vote([]), ValueError),
    (lambda ps: maj_vote(5), TypeError),
    (lambda ps: best_of_n([1, 2], [1]), ValueError),
    (lambda ps: verify([1], 1, error_rate=1.5), ValueError),
    (lambda ps: verify([1, 2], 1, error_rate=0.5), TypeError),                   # 有噪声时必须给 rng
    (lambda ps: SampleSet.from_lists([[1, 2], [3]], [1, 2]), ValueError),
    (lambda ps: SampleSet.from_lists([[1, 2]], [1, 2]), ValueError),
    (lambda ps: pass_at_k_sampled([[1, 2]], 1), TypeError),
    (lambda ps: pass_at_k_sampled(HAND, 5), ValueError),
    (lambda ps: pass_at_k_sampled(HAND, 0), ValueError),
    (lambda ps: maj_at_k(HAND, 2, rng=random.Random(0)), TypeError),
    (lambda ps: maj_at_k(HAND, 2, subsets=0), ValueError),
    (lambda ps: best_of_k(HAND, 2, verifier_error=-0.1), ValueError),
    (lambda ps: estimate_mean([]), ValueError),
    (lambda ps: make_estimate(0.5, 0.1, 3, level=1.0), ValueError),
    (lambda ps: choose_ratio([1, 5], 2, 4), ValueError),
    (lambda ps: choose_ratio([1.0, 2.0], 2, 4), ValueError),
    (lambda ps: draw_samples(ToyLLM(1e9), ps, 4, random.Random(0)), TypeError),
    (lambda ps: evaluate_sampled(ToyLLM(1e9), ps, 0, np.random.default_rng(0)), ValueError),
    (lambda ps: compare_exact_sampled(ToyLLM(1e9), ps, 1, np.random.default_rng(0)), ValueError),
    (lambda ps: inference_curves("1B", ps, 4, np.random.default_rng(0)), TypeError),
    (lambda ps: scaling_curve(ps, np.random.default_rng(0), sizes=(1e9, -1)), ValueError),
    (lambda ps: scaling_curve(ps, np.random.default_rng(0), cot="yes"), TypeError),
])
def test_bad_inputs_raise_chinese_errors(problems, call, exc):
    with pytest.raises(exc) as info:
        call(problems[:5])
    assert CHINESE.search(str(info.value))


def test_estimate_is_a_dataclass_with_fields():
    e = Estimate(0.5, 0.1, 0.3, 0.7, 10)
    assert (e.value, e.stderr, e.ci_low, e.ci_high, e.n, e.level) == (0.5, 0.1, 0.3, 0.7, 10, 0.95)


def test_t_critical_values_leave_one_percent_in_the_two_tails():
    """表里的每个临界值 c：t 分布（自由度 df）在 [0, c] 上的积分是 0.495（数值积分，梯形法）。"""
    from toyllm.estimators import T_CRITICAL_1PCT, t_critical
    for df, c in T_CRITICAL_1PCT.items():
        x = np.linspace(0.0, c, 200001)
        pdf = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi) \
            * (1 + x ** 2 / df) ** (-(df + 1) / 2)
        area = float(((pdf[1:] + pdf[:-1]) / 2 * np.diff(x)).sum())
        assert abs(0.5 + area - 0.995) < 2e-5, (df, c, area)
    assert t_critical(4) == 4.604 and t_critical(50) == 2.704 and t_critical(1000) == 2.617


def test_seed_verdict_uses_the_paired_per_seed_differences():
    from toyllm.estimators import seed_verdict
    a, b = [0.30, 0.32, 0.29, 0.35, 0.31], [0.26, 0.27, 0.26, 0.28, 0.28]
    d = np.subtract(a, b)
    out = seed_verdict(a, b)
    assert out["diff"] == pytest.approx(d.mean()) and out["n"] == 5 and out["critical"] == 4.604
    assert out["se"] == pytest.approx(d.std(ddof=1) / math.sqrt(5))
    assert out["t"] == pytest.approx(d.mean() / out["se"]) and out["verdict"] == "成立"
    assert seed_verdict(-d)["verdict"] == "不成立"
    # 3.9 个标准误：3 个标准误的规则算成立，5 个种子的 t 临界值 4.604 不算
    close = seed_verdict([0.03, 0.01, 0.025, 0.01, 0.04])
    assert 3.8 < close["t"] < 4.0 and verdict(close["diff"], close["se"]) == "成立"
    assert close["verdict"] == "这个大小上分不出"
    with pytest.raises(ValueError, match="至少要有 2 个种子"):
        seed_verdict([0.1])
    with pytest.raises(ValueError, match="b 的形状"):
        seed_verdict([0.1, 0.2], [0.1])
