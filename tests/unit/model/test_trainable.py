"""第 6 讲的可训练模型：Δ 的数组与字典视图、梯度、SFT、评估。"""

import math
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from toyllm import (CONTEXTS, HARD_CONTEXTS, PROCEDURES, ToyLLM, TrainableLLM, add_grad, apply_grads, context_key,
                    context_report, entropy_of, evaluate, log_likelihood, make_problem_set, probs_for, sft,
                    step_records)

from paths import ROOT


def test_delta_is_a_view_of_params():
    m = TrainableLLM(1e9)
    assert m.params.shape == (12, 3) and len(m.delta) == 12 and list(m.delta) == list(CONTEXTS)
    m.delta[("mul", 2.2)][0] += 1.5
    assert m.params[CONTEXTS.index(("mul", 2.2)), 0] == 1.5
    m.params[0, 1] = -2.0
    assert m.delta[("add", 0.0)][1] == -2.0
    d = m.delta.setdefault(("sub", 0.8), [0.0, 0.0, 0.0])
    d[2] += 0.25
    assert m.params[CONTEXTS.index(("sub", 0.8)), 2] == 0.25


def test_delta_changes_generation_through_step_logits():
    m = TrainableLLM(1e9, delta={("mul", 1.5): [5.0, 0.0, 0.0]})
    assert m.p_correct(("mul", 1.5)) > 0.99
    assert m.step_probs("mul", 47, 12, 0)[0] == pytest.approx(m.p_correct(("mul", 1.5)), abs=1e-15)
    assert m.step_probs("mul", 47, 3, 0) == ToyLLM(1e9).step_probs("mul", 47, 3, 0)


def test_copy_is_independent():
    m = TrainableLLM(1e9, delta={("add", 0.7): [1.0, 2.0, 3.0]}, name="a")
    c = m.copy()
    c.delta[("add", 0.7)][0] = 9.0
    assert m.delta[("add", 0.7)].tolist() == [1.0, 2.0, 3.0] and c.name == "a"


@pytest.mark.parametrize("delta, exc, word", [
    ({("div", 0.0): [0, 0, 0]}, KeyError, "情境"),
    ({("mul", 1.5): [0, 0]}, ValueError, "3 个数"),
    ({("mul", 1.5): [0, float("nan"), 0]}, ValueError, "NaN"),
    ([1, 2, 3], TypeError, "delta"),
])
def test_bad_delta(delta, exc, word):
    with pytest.raises(exc) as info:
        TrainableLLM(1e9, delta=delta)
    assert word in str(info.value)


def test_delta_cannot_be_deleted():
    with pytest.raises(TypeError):
        del TrainableLLM(1e9).delta[("add", 0.0)]


def test_add_grad_equals_finite_difference_of_log_pi():
    rng = np.random.default_rng(0)
    model = TrainableLLM(1e9)
    model.params[...] = rng.normal(size=(12, 3))
    op, a, b = "mul", 472, 12
    key = context_key(op, a, b)
    for action in range(3):
        grads = {}
        add_grad(grads, key, action, model.step_probs(op, a, b, 0), 1.0)
        h = 1e-6
        for j in range(3):
            plus, minus = model.copy(), model.copy()
            plus.delta[key][j] += h
            minus.delta[key][j] -= h
            fd = (math.log(plus.step_probs(op, a, b, 0)[action]) - math.log(minus.step_probs(op, a, b, 0)[action])) / (2 * h)
            assert abs(grads[key][j] - fd) < 1e-8


def test_step_records_follow_the_models_own_values():
    problems = make_problem_set(random.Random(0), 20, 3, 8)
    m = TrainableLLM(1e8)
    rng = random.Random(1)
    for p in problems:
        s = m.generate(p, rng)
        recs = step_records(p, s)
        assert [PROCEDURES[a] for _, a in recs] == list(s.procs)
        x = p.start
        for (key, _), step, v in zip(recs, p.steps, s.values):
            assert key == context_key(step.op, x, step.operand)
            x = v
        assert len(probs_for(m, p, s)) == len(recs)


def test_sft_raises_log_likelihood_and_moves_toward_data():
    problems = make_problem_set(random.Random(0), 60, 3, 8)
    teacher = ToyLLM(1e12)
    rng = random.Random(2)
    data = [(p, teacher.generate(p, rng)) for p in problems]
    student = TrainableLLM(1e9)
    before = log_likelihood(student, data)
    sft(student, data, epochs=20, lr=2.0)
    after = log_likelihood(student, data)
    assert after > before + 0.05
    assert student.p_correct(("mul", 2.2)) > TrainableLLM(1e9).p_correct(("mul", 2.2))


def test_sft_on_empty_data_does_nothing():
    m = TrainableLLM(1e9)
    assert sft(m, []) is m and not m.params.any()


def test_apply_grads_is_gradient_ascent():
    m = TrainableLLM(1e9)
    apply_grads(m, {("add", 0.0): [1.0, -1.0, 0.0]}, 0.5)
    assert m.delta[("add", 0.0)].tolist() == [0.5, -0.5, 0.0]
    with pytest.raises(ValueError):
        apply_grads(m, {}, float("nan"))


def test_evaluate_entropy_and_report():
    problems = make_problem_set(random.Random(0), 30, 3, 8)
    m = TrainableLLM(1e9)
    res = evaluate(m, problems, random.Random(1), n=4, ks=(1, 2, 4))
    assert 0 <= res[1] <= res[2] <= res[4] <= 1
    h = entropy_of(m, problems, random.Random(1))
    assert 0 < h < math.log(3)
    assert set(context_report(m)) == {name for name, _ in HARD_CONTEXTS}
    with pytest.raises(ValueError) as info:
        evaluate(m, problems, random.Random(1), n=2, ks=(3,))
    assert "k" in str(info.value) and "n" in str(info.value)


def test_reference_module_runs_unchanged_on_toyllm():
    """参考模块（仓库外的 ../shared/reference/trainable_llm.py）原样运行；找不到它时跳过，CI 里 .ci/run 会直接运行这个检查。"""
    reference = Path(os.environ.get("TOYLLM_REFERENCE", ROOT.parent / "shared" / "reference" / "trainable_llm.py"))
    if not reference.is_file():
        pytest.skip(f"参考模块不在 {reference}（它不属于本仓库）")
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "check_reference.py"), str(reference)],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "✓" in out.stdout
