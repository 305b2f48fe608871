"""
toyllm.gradcheck：有限差分、compare_grads 的判断和中文输出、常见错误的提示。
"""

import random
import re

import numpy as np
import pytest

from toyllm import CONTEXT_NAMES, CONTEXTS, ToyLLM, TrainableLLM, make_problem_set
from toyllm.exact import expected_reward, grad_expected_reward
from toyllm.gradcheck import (GradCheckResult, as_grad_array, compare_grads, diagnose, finite_difference_grad,
                              objective_function)

CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def problems():
    return make_problem_set(random.Random(1), 20, 3, 6)


@pytest.fixture()
def model():
    m = TrainableLLM(1e9)
    m.params[...] = np.random.default_rng(0).normal(size=m.params.shape)
    return m


def test_finite_difference_of_known_function():
    a = np.arange(36, dtype=float).reshape(12, 3) / 10
    theta = np.random.default_rng(1).normal(size=(12, 3))
    before = theta.copy()
    fd = finite_difference_grad(lambda t: float((a * t ** 3).sum()), theta, h=1e-5)
    assert np.allclose(fd, 3 * a * theta ** 2, rtol=1e-7, atol=1e-8)
    assert np.array_equal(theta, before)                       # 不修改输入


def test_objective_function_does_not_touch_model(model, problems):
    f = objective_function(model, problems)
    before = model.params.copy()
    assert f(model.params) == pytest.approx(expected_reward(model, problems), rel=1e-14)
    assert f(np.zeros((12, 3))) == pytest.approx(expected_reward(TrainableLLM(1e9), problems), rel=1e-14)
    assert np.array_equal(model.params, before)


def test_correct_gradient_passes_and_prints_chinese_table(model, problems, capsys):
    result = compare_grads("期望奖励的梯度", grad_expected_reward(model, problems), model=model, problems=problems)
    out = capsys.readouterr().out
    assert isinstance(result, GradCheckResult) and result
    assert result.close and result.max_abs_diff < 1e-8
    assert "梯度检查：期望奖励的梯度" in out and "在容差内" in out and "✓ 全部 12 个情境都在容差内" in out
    assert all(CONTEXT_NAMES[key] in out for key in CONTEXTS)


def test_identical_gradient_is_exact(model, problems, capsys):
    g = grad_expected_reward(model, problems)
    result = compare_grads("自己和自己比", g, g.copy())
    assert result.exact and result.close and result.max_abs_diff == 0.0
    assert "✓" in capsys.readouterr().out


def test_wrong_gradient_fails_and_names_the_context(model, problems, capsys):
    g = grad_expected_reward(model, problems)
    i = CONTEXTS.index(("mul", 1.5))
    g[i] += [0.01, -0.005, -0.005]
    result = compare_grads("改坏一行", g, model=model, problems=problems)
    out = capsys.readouterr().out
    assert not result and not result.close
    assert result.worst == ("mul", 1.5)
    assert [row[0] for row in result.rows if not row[2]] == [("mul", 1.5)]
    assert "✗ 有 1 个情境不一致" in out and "乘两位数" in out


def test_hints_for_typical_mistakes(model, problems):
    g = grad_expected_reward(model, problems)
    assert "负号" in diagnose(-g, g)
    assert "倍" in diagnose(len(problems) * g, g)
    assert "减 π" in diagnose(g + 0.1, g)
    assert "全是 0" in diagnose(np.zeros_like(g), g)
    assert diagnose(g, g) == ""


def test_dict_gradient_and_callable_reference(model, problems):
    g = grad_expected_reward(model, problems)
    as_dict = {key: g[i].tolist() for i, key in enumerate(CONTEXTS) if np.any(g[i])}
    assert compare_grads("字典", as_dict, model=model, problems=problems, verbose=False)
    f = objective_function(model, problems, "log_expected_reward")                  # ∇ log J = ∇J / J
    assert compare_grads("函数参考", g / expected_reward(model, problems), f, model=model, verbose=False)


def test_reference_at_delta_zero_for_plain_toyllm(problems):
    """ToyLLM 没有 params：有限差分在 Δ = 0 处做。"""
    model = ToyLLM(1e9, cot=False)
    assert compare_grads("无思维链", grad_expected_reward(model, problems), model=model, problems=problems,
                         verbose=False)


def test_verbose_false_prints_nothing(model, problems, capsys):
    compare_grads("安静", grad_expected_reward(model, problems), model=model, problems=problems, verbose=False)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("call,exc", [
    (lambda m, ps: compare_grads("x", np.zeros((12, 2)), np.zeros((12, 3))), ValueError),
    (lambda m, ps: compare_grads("x", {("mul", 9.9): [0, 0, 0]}, np.zeros((12, 3))), ValueError),
    (lambda m, ps: compare_grads("x", {("mul", 1.5): [0, 0]}, np.zeros((12, 3))), ValueError),
    (lambda m, ps: compare_grads("x", np.full((12, 3), np.nan), np.zeros((12, 3))), ValueError),
    (lambda m, ps: compare_grads("x", "abc", np.zeros((12, 3))), TypeError),
    (lambda m, ps: compare_grads("x", np.zeros((12, 3))), ValueError),                 # 缺 model
    (lambda m, ps: compare_grads("x", np.zeros((12, 3)), model=m), ValueError),        # 缺 problems
    (lambda m, ps: compare_grads("x", np.zeros((12, 3)), model=m, problems=ps, objective="loss"), ValueError),
    (lambda m, ps: compare_grads(3, np.zeros((12, 3)), np.zeros((12, 3))), TypeError),
    (lambda m, ps: compare_grads("x", np.zeros((12, 3)), np.zeros((12, 3)), rtol=-1), ValueError),
    (lambda m, ps: finite_difference_grad(3, np.zeros(3)), TypeError),
    (lambda m, ps: finite_difference_grad(lambda t: 0.0, np.zeros(3), h=0), ValueError),
    (lambda m, ps: finite_difference_grad(lambda t: "a", np.zeros(3)), TypeError),
    (lambda m, ps: as_grad_array("g", [[1, 2, 3]]), ValueError),
])
def test_bad_inputs_raise_chinese_errors(model, problems, call, exc):
    with pytest.raises(exc) as info:
        call(model, problems)
    assert CHINESE.search(str(info.value))
