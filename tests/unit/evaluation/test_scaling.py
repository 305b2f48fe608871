"""
toyllm.scaling：S 形计算曲线、它的拟合、到目标要多少计算。

拟合的检查方式：用已知参数造数据，看能不能把参数找回来。
    · 无噪声：参数要在 1e-6 以内找回；
    · 有噪声（固定种子）：误差要在 5 个标准误以内，标准误由 σ²(JᵀJ)⁻¹ 算出（J 用有限差分独立地算）；
      而且拟合的 RMSE 不能比真参数的 RMSE 大（最小二乘的定义）。
"""

import math

import numpy as np
import pytest

from toyllm.rl import History
from toyllm.scaling import SigmoidFit, fit_sigmoid, reach_target, sigmoid_curve

C = np.arange(256, 51201, 256, dtype=float)          # 和训练记录一样：每次迭代 256 份解答，200 次


def raw(C, R0, A, B, C_mid):
    """直接照公式写的曲线（和包里的实现独立）。"""
    return R0 + (A - R0) / (1.0 + (C_mid / np.asarray(C, dtype=float)) ** B)


# =============================================================================
# sigmoid_curve
# =============================================================================
def test_sigmoid_curve_equals_the_formula():
    for R0, A, B, C_mid in [(0.3, 0.95, 1.5, 8000.0), (0.2, 1.0, 0.4, 300.0), (0.8, 0.5, 3.0, 2e4)]:
        np.testing.assert_allclose(sigmoid_curve(C, R0, A, B, C_mid), raw(C, R0, A, B, C_mid), rtol=0, atol=1e-12)


def test_sigmoid_curve_halfway_at_C_mid_and_scalar_in_scalar_out():
    out = sigmoid_curve(8000, 0.3, 0.9, 1.5, 8000)
    assert isinstance(out, float) and out == pytest.approx(0.6, abs=1e-15)
    assert isinstance(sigmoid_curve([8000], 0.3, 0.9, 1.5, 8000), np.ndarray)


def test_sigmoid_curve_does_not_overflow_at_extreme_compute():
    with np.errstate(all="raise"):
        lo, hi = sigmoid_curve([1e-300, 1e300], 0.3, 0.9, 5.0, 8000.0)
    assert lo == pytest.approx(0.3, abs=1e-15) and hi == pytest.approx(0.9, abs=1e-15)


# =============================================================================
# fit_sigmoid：找回已知参数
# =============================================================================
TRUTHS = [(0.3, 0.95, 1.5, 8000.0), (0.2, 0.9, 0.5, 1000.0), (0.2, 0.8, 4.0, 3e4),
          (0.2, 1.2, 0.3, 1e6), (0.6, 0.4, 2.0, 3000.0)]


@pytest.mark.parametrize("R0, A, B, C_mid", TRUTHS)
def test_fit_recovers_parameters_from_noiseless_data(R0, A, B, C_mid):
    fit = fit_sigmoid(C, raw(C, R0, A, B, C_mid), R0)
    assert isinstance(fit, SigmoidFit)
    assert abs(fit.A - A) < 1e-6 and abs(fit.B - B) < 1e-6 and abs(math.log(fit.C_mid / C_mid)) < 1e-6
    assert fit.R0 == R0 and fit.rmse < 1e-9
    np.testing.assert_allclose(fit.predict(C), raw(C, R0, A, B, C_mid), atol=1e-9)


def _standard_errors(R0, A, B, C_mid, sigma):
    """(A, B, log C_mid) 的渐近标准误 σ·√diag((JᵀJ)⁻¹)，J 用中心差分算。"""
    theta = np.array([A, B, math.log(C_mid)])
    f = lambda t: raw(C, R0, t[0], t[1], math.exp(t[2]))    # noqa: E731
    h = 1e-6
    J = np.stack([(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in np.eye(3)], axis=1)
    return sigma * np.sqrt(np.diag(np.linalg.inv(J.T @ J)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fit_recovers_parameters_from_noisy_data_within_5_standard_errors(seed):
    R0, A, B, C_mid, sigma = 0.3, 0.95, 1.5, 8000.0, 0.01
    truth = raw(C, R0, A, B, C_mid)
    R = truth + np.random.default_rng(seed).normal(0.0, sigma, len(C))
    fit = fit_sigmoid(C, R, R0)
    se = _standard_errors(R0, A, B, C_mid, sigma)
    err = np.abs(np.array([fit.A - A, fit.B - B, math.log(fit.C_mid / C_mid)]))
    assert np.all(err <= 5 * se), f"误差 {err}，标准误 {se}"
    assert fit.rmse <= math.sqrt(np.mean((truth - R) ** 2)) + 1e-12      # 最小二乘不会比真参数差
    assert 0.8 * sigma < fit.rmse < 1.2 * sigma                         # 200 个点：RMSE 的相对标准误约 5%


def test_fit_is_deterministic():
    R = raw(C, 0.3, 0.95, 1.5, 8000.0) + np.random.default_rng(5).normal(0.0, 0.02, len(C))
    assert fit_sigmoid(C, R, 0.3) == fit_sigmoid(C, R.copy(), 0.3)


# =============================================================================
# 固定 A、A 的上限
# =============================================================================
def test_fixed_A_recovers_B_and_C_mid_and_keeps_A_exactly():
    fit = fit_sigmoid(C, raw(C, 0.3, 0.95, 1.5, 8000.0), 0.3, A=0.95)
    assert fit.A == 0.95
    assert abs(fit.B - 1.5) < 1e-6 and abs(math.log(fit.C_mid / 8000.0)) < 1e-6 and fit.rmse < 1e-9


def test_fixed_wrong_A_is_kept_and_fits_worse():
    R = raw(C, 0.3, 0.95, 1.5, 8000.0)
    fit = fit_sigmoid(C, R, 0.3, A=0.9)
    assert fit.A == 0.9 and fit.rmse > 1e-3


def test_cap_inactive_when_the_free_fit_is_below_it():
    R = raw(C, 0.3, 0.95, 1.5, 8000.0) + np.random.default_rng(0).normal(0.0, 0.01, len(C))
    free = fit_sigmoid(C, R, 0.3)
    assert free.A < 1.0
    assert fit_sigmoid(C, R, 0.3, A_max=1.0) == free


def test_cap_active_puts_A_on_the_bound_and_is_the_best_feasible_fit():
    R = raw(C, 0.3, 1.05, 1.5, 8000.0) + np.random.default_rng(1).normal(0.0, 0.005, len(C))
    assert fit_sigmoid(C, R, 0.3).A > 1.0
    capped = fit_sigmoid(C, R, 0.3, A_max=1.0)
    assert capped.A == 1.0
    assert capped == fit_sigmoid(C, R, 0.3, A=1.0)
    for A in (0.9, 0.95, 0.98, 0.99):                                  # 上限以内的其他 A 都拟合得更差
        assert capped.rmse <= fit_sigmoid(C, R, 0.3, A=A).rmse


# =============================================================================
# reach_target
# =============================================================================
def test_reach_target_finds_the_first_row_at_or_above_target():
    h = {"iteration": [1, 2, 3, 4], "samples": [256, 512, 768, 1024], "pass1_exact": [0.5, 0.8, 0.7, 0.95]}
    assert reach_target(h, 0.8) == (2, 512)
    assert reach_target(h, 0.9) == (4, 1024)
    assert reach_target(h, 0.99) is None
    assert reach_target(h, 0.6, column="samples") == (1, 256)


def test_reach_target_reads_a_history():
    h = History(["iteration", "samples", "pass1_exact"])
    for i, p in enumerate([0.2, 0.6, 0.91], start=1):
        h.append({"iteration": i, "samples": 256 * i, "pass1_exact": p})
    assert reach_target(h, 0.9) == (3, 768)


# =============================================================================
# 错误的输入
# =============================================================================
@pytest.mark.parametrize("args, kwargs, error, words", [
    (([1, 2, 3], [0.1, 0.2], 0.0), {}, ValueError, "长度"),
    (([1, 0, 3], [0.1, 0.2, 0.3], 0.0), {}, ValueError, "> 0"),
    (([1, -2, 3], [0.1, 0.2, 0.3], 0.0), {}, ValueError, "> 0"),
    (([1, 2], [0.1, 0.2], 0.0), {}, ValueError, "至少需要 3"),
    (([1, 2, 3], [0.1, float("nan"), 0.3], 0.0), {}, ValueError, "NaN"),
    (([1, float("nan"), 3], [0.1, 0.2, 0.3], 0.0), {}, ValueError, "NaN"),
    (([1, 2, 3], [0.1, 0.2, 0.3], float("nan")), {}, ValueError, "R0"),
    (([1, 2, 3], [[0.1, 0.2, 0.3]], 0.0), {}, ValueError, "一维"),
    (([1, 2, 3], "abc", 0.0), {}, TypeError, "R 必须是一串实数"),
    (([1, 2, 3], [0.1, "x", 0.3], 0.0), {}, TypeError, "R 必须是一串实数"),
    (([1, 2, 3], [0.1, 0.2, 0.3], 0.0), {"A": 0.0}, ValueError, "不能等于 R0"),
    (([1, 2, 3], [0.1, 0.2, 0.3], 0.0), {"A_max": -0.1}, ValueError, "A_max"),
    (([1, 2, 3], [0.1, 0.2, 0.3], 0.0), {"A": 1.2, "A_max": 1.0}, ValueError, "A_max"),
    (([1, 2, 3], [0.1, 0.2, 0.3], 0.0), {"A": "1"}, TypeError, "A 必须是实数"),
])
def test_fit_sigmoid_rejects_bad_input_in_chinese(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        fit_sigmoid(*args, **kwargs)


@pytest.mark.parametrize("args, words", [
    (([0, 1], 0.3, 0.9, 1.5, 8000), "C"),
    ((100, 0.3, 0.9, 0.0, 8000), "B"),
    ((100, 0.3, 0.9, 1.5, -1), "C_mid"),
    ((100, 0.3, float("inf"), 1.5, 8000), "A"),
])
def test_sigmoid_curve_rejects_bad_input(args, words):
    with pytest.raises(ValueError, match=words):
        sigmoid_curve(*args)


def test_reach_target_rejects_bad_input():
    with pytest.raises(TypeError, match="history"):
        reach_target([0.5, 0.9], 0.8)
    with pytest.raises(ValueError, match="缺少"):
        reach_target({"iteration": [1], "samples": [256]}, 0.8)
    with pytest.raises(ValueError, match="长度"):
        reach_target({"iteration": [1, 2], "samples": [256], "pass1_exact": [0.1, 0.2]}, 0.8)
    with pytest.raises(ValueError, match="target"):
        reach_target({"iteration": [1], "samples": [256], "pass1_exact": [0.1]}, float("nan"))
