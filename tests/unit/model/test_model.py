"""第 1 讲的 ToyLLM：logits、概率、温度、生成、定标，以及 pass@k、表格小工具。"""

import itertools
import math
import random
import subprocess
import sys

import pytest

from toyllm import (ALPHA, BETA, LOGIT_BUG, LOGIT_CARELESS, REF_SIZE, TrainableLLM, ToyLLM, bar, display_width, evaluate,
                    fmt_size, make_problem_set, mean, pad, pass_at_k, step_hardness)
from toyllm.exact import exact_pass_at_1


def test_step_logits_formula():
    m = ToyLLM(3e10)
    for op, a, b in [("mul", 472, 12), ("add", 47, 38), ("sub", 1000, 1)]:
        z = m.step_logits(op, a, b, 0)
        assert z == [ALPHA[op] + BETA * math.log10(3e10 / REF_SIZE) - step_hardness(op, a, b), LOGIT_BUG,
                     LOGIT_CARELESS]


def test_no_cot_gets_harder_with_step_index():
    m = ToyLLM(1e9, cot=False)
    zs = [m.step_logits("add", 12, 34, i)[0] for i in range(5)]
    assert all(x > y for x, y in zip(zs, zs[1:]))
    assert ToyLLM(1e9).step_logits("add", 12, 34, 4) == ToyLLM(1e9).step_logits("add", 12, 34, 0)


def test_probabilities_and_temperature():
    m = ToyLLM(1e9)
    p = m.step_probs("mul", 47, 12, 0, 1.0)
    assert math.isclose(sum(p), 1.0) and all(0 < q < 1 for q in p)
    assert m.step_probs("mul", 47, 12, 0, 0) == [1.0, 0.0, 0.0]
    hot = m.step_probs("mul", 47, 12, 0, 1e6)
    assert all(abs(q - 1 / 3) < 1e-5 for q in hot)
    cold = m.step_probs("mul", 47, 12, 0, 0.05)
    assert cold[0] > 0.999


def test_generate_uses_own_values_and_subclass_override():
    class AlwaysBug(ToyLLM):
        def step_logits(self, op, a, b, step_index):
            return [-50.0, 50.0, -50.0]

    problems = make_problem_set(random.Random(0), 30, 3, 8)
    rng = random.Random(0)
    for p in problems:
        s = AlwaysBug(1e9).generate(p, rng)
        assert s.procs == ("bug",) * len(p.steps)
        x = p.start
        from toyllm import apply_op
        for step, v in zip(p.steps, s.values):
            assert v == apply_op(step.op, x, step.operand, "bug")   # 输入是自己上一步写下的值
            x = v
        assert s.correct == (s.values[-1] == p.answer)


def test_calibration_for_the_lecture():
    problems = make_problem_set(random.Random(0), 100, 3, 8)
    p1b = evaluate(ToyLLM(1e9), problems, random.Random(1), n=8)[1]
    assert 0.25 <= p1b <= 0.6
    exact = [exact_pass_at_1(ToyLLM(s), problems) for s in (1e8, 1e9, 1e10, 1e11, 1e12)]
    assert all(x < y for x, y in zip(exact, exact[1:]))
    assert exact[-1] > 0.85 and 0.25 <= exact[1] <= 0.6
    long = [p for p in problems if len(p.steps) >= 6]
    assert exact_pass_at_1(ToyLLM(1e9, cot=False), long) < 0.6 * exact_pass_at_1(ToyLLM(1e9), long)


def test_trainable_with_zero_delta_equals_base():
    base, tr = ToyLLM(2e9), TrainableLLM(2e9)
    for op, a, b, i in [("mul", 472, 12, 0), ("add", 5, 6, 3), ("sub", 52, 17, 1)]:
        assert tr.step_probs(op, a, b, i) == base.step_probs(op, a, b, i)
    problems = make_problem_set(random.Random(0), 10, 3, 8)
    r1, r2 = random.Random(9), random.Random(9)
    assert [base.generate(p, r1) for p in problems] == [tr.generate(p, r2) for p in problems]


def test_pass_at_k_matches_brute_force():
    for n in range(1, 8):
        for c in range(n + 1):
            outcomes = [1] * c + [0] * (n - c)
            for k in range(1, n + 1):
                subsets = list(itertools.combinations(outcomes, k))
                brute = sum(any(s) for s in subsets) / len(subsets)
                assert math.isclose(pass_at_k(n, c, k), brute, abs_tol=1e-12)


@pytest.mark.parametrize("args, word", [((3, 4, 1), "c"), ((3, 1, 4), "k"), ((3, -1, 1), "c"), ((0, 0, 1), "n"),
                                        ((3, 1, 0), "k"), ((3.0, 1, 1), "n")])
def test_pass_at_k_bad_input(args, word):
    with pytest.raises((ValueError, TypeError)) as info:
        pass_at_k(*args)
    assert word in str(info.value)


@pytest.mark.parametrize("call, word", [
    (lambda: ToyLLM(0), "size"), (lambda: ToyLLM(-1e9), "size"), (lambda: ToyLLM(float("inf")), "size"),
    (lambda: ToyLLM(float("nan")), "size"), (lambda: ToyLLM("1B"), "size"), (lambda: ToyLLM(1e9, cot="yes"), "cot"),
    (lambda: ToyLLM(1e9).step_probs("add", 1, 2, 0, -1), "temperature"),
    (lambda: ToyLLM(1e9).step_probs("add", 1, 2, 0, float("nan")), "temperature"),
    (lambda: ToyLLM(1e9).step_logits("pow", 1, 2, 0), "op"),
    (lambda: ToyLLM(1e9).step_logits("add", 1, 2, -1), "step_index"),
])
def test_model_bad_input(call, word):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert word in str(info.value)


def test_text_helpers():
    assert fmt_size(1e9) == "1B" and fmt_size(1.5e9) == "1.5B" and fmt_size(1e8) == "100M" and fmt_size(1e12) == "1T"
    assert fmt_size(1e3) == "1K" and fmt_size(5) == "5"
    assert display_width("乘一位数") == 8 and pad("乘一位数", 10) == "乘一位数  "
    assert pad("ab", 5, "right") == "   ab" and pad("很长的名字", 2) == "很长的名字"
    assert bar(0.5, 10) == "█████·····" and bar(0, 4) == "····" and bar(1, 4) == "████"
    assert mean(x for x in [1, 2, 3]) == 2.0
    with pytest.raises(ValueError):
        mean([])
    with pytest.raises(ValueError):
        bar(1.5)
    with pytest.raises(ValueError):
        fmt_size(0)


SCRIPT = """
import random
from toyllm import ToyLLM, make_problem_set
ps = make_problem_set(random.Random(4), 20, 3, 8)
rng = random.Random(5)
print([ToyLLM(1e9).generate(p, rng) for p in ps])
"""


def test_determinism_across_hash_seeds():
    outs = {subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout for seed in ("0", "12345")}
    assert len(outs) == 1 and "Sample(" in outs.pop()
