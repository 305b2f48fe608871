"""题目、三种做法、难度和情境（第 1 讲的算术部分）。"""

import random

import numpy as np
import pytest

from toyllm import (BUG_NAMES, CONTEXTS, MAX_STEPS, MAX_VALUE, PROCEDURES, Problem, Step, apply_op, bug_bites,
                    context_key, count_borrows, count_carries, make_problem, make_problem_set, step_hardness)


@pytest.mark.parametrize("op, a, b, correct, bug", [
    ("add", 12, 34, 46, 46),        # 无进位：bug 恰好对
    ("add", 47, 38, 85, 75),        # 忘记进位
    ("add", 999, 1, 1000, 990),
    ("sub", 58, 17, 41, 41),        # 无借位：bug 恰好对
    ("sub", 52, 17, 35, 45),        # 大减小
    ("sub", 1000, 1, 999, 1001),
    ("mul", 47, 3, 141, 141),       # 乘一位数：部分积不用错位，bug 恰好对
    ("mul", 47, 12, 564, 141),      # 47×1 + 47×2
    ("mul", 472, 12, 5664, 1416),
])
def test_procedures_on_chosen_numbers(op, a, b, correct, bug):
    assert apply_op(op, a, b, "correct") == correct
    assert apply_op(op, a, b, "bug") == bug
    assert (bug == correct) == (not bug_bites(op, a, b))


def test_careless_is_always_wrong_and_seeded():
    rng = random.Random(0)
    for a in range(0, 300, 7):
        for op in ("add", "sub", "mul"):
            slip = apply_op(op, a, 13, "careless", rng)
            assert slip != apply_op(op, a, 13, "correct")
            # 只差某一位上的 1：|差| 是 10 的幂
            diff = abs(slip - apply_op(op, a, 13, "correct"))
            assert str(diff).strip("0") == "1" and str(diff).startswith("1")
    assert apply_op("add", 47, 38, "careless", random.Random(5)) == apply_op("add", 47, 38, "careless", random.Random(5))


def test_bug_on_negative_input_equals_correct():
    assert apply_op("sub", -5, 17, "bug") == -22
    assert not bug_bites("add", -5, 17)


def test_reference_contexts():
    assert context_key("add", 12, 34) == ("add", 0.0)
    assert context_key("mul", 47, 3) == ("mul", 0.0)
    assert context_key("mul", 47, 12) == ("mul", 1.5)
    assert context_key("mul", 472, 12) == ("mul", 2.2)
    assert count_carries(999, 1) == 3 and count_borrows(52, 17) == 1


def test_hardness_values_are_one_decimal_and_listed():
    rng = random.Random(1)
    listed = set(CONTEXTS)
    for _ in range(20000):
        op = rng.choice(("add", "sub", "mul"))
        a = rng.randint(-10 ** 7, 10 ** 7)
        b = rng.randint(0, 10 ** 4)
        h = step_hardness(op, a, b)
        assert round(h, 1) == h
        assert (op, h) in listed


def test_every_context_reachable_on_correct_paths():
    seen = set()
    for p in make_problem_set(random.Random(0), 400, 3, 8):
        x = p.start
        for s in p.steps:
            seen.add(context_key(s.op, x, s.operand))
            x = apply_op(s.op, x, s.operand, "correct")
    assert seen == set(CONTEXTS)
    assert len(CONTEXTS) == 12


def test_problem_invariants():
    problems = make_problem_set(random.Random(2), 300, 1, MAX_STEPS)
    for p in problems:
        assert 1 <= len(p.steps) <= MAX_STEPS
        values = p.correct_values()
        assert values[-1] == p.answer
        assert all(1 <= v <= MAX_VALUE for v in values)
        assert 2 <= p.start <= 99
    counts = [len(p.steps) for p in make_problem_set(random.Random(3), 200, 3, 8)]
    assert min(counts) == 3 and max(counts) == 8


def test_problem_display():
    p = Problem(37, (Step("mul", 12), Step("add", 458)), 902)
    assert str(p) == "37 × 12 + 458"
    assert p.correct_values() == [444, 902]


def test_same_seed_same_problems():
    assert make_problem_set(random.Random(7), 20, 3, 8) == make_problem_set(random.Random(7), 20, 3, 8)
    assert make_problem(random.Random(7), 5) != make_problem(random.Random(8), 5)


def test_names_cover_everything():
    assert set(BUG_NAMES) == {"add", "sub", "mul"}
    assert PROCEDURES == ("correct", "bug", "careless")


@pytest.mark.parametrize("call, exc, words", [
    (lambda: apply_op("div", 1, 2, "correct"), ValueError, ["op", "div"]),
    (lambda: apply_op("add", 1, 2, "lucky"), ValueError, ["procedure", "lucky"]),
    (lambda: apply_op("add", 1.5, 2, "correct"), TypeError, ["a", "1.5"]),
    (lambda: apply_op("add", 1, "2", "correct"), TypeError, ["b"]),
    (lambda: apply_op("add", 1, 2, "careless"), ValueError, ["rng"]),
    (lambda: step_hardness("mul", 2, 3.0), TypeError, ["b", "3.0"]),
    (lambda: make_problem_set(random.Random(0), 10, 5, 3), ValueError, ["min_steps", "max_steps"]),
    (lambda: make_problem_set(random.Random(0), -1, 3, 5), ValueError, ["count", "-1"]),
    (lambda: make_problem(random.Random(0), 10000), ValueError, ["n_steps", "10000", str(MAX_STEPS)]),
    (lambda: make_problem(random.Random(0), 0), ValueError, ["n_steps"]),
    (lambda: make_problem(0, 3), TypeError, ["rng"]),
])
def test_bad_input_is_rejected_in_chinese(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    assert "必须" in message or "不能" in message or "需要" in message
    for w in words:
        assert w in message


@pytest.mark.parametrize("make, exc, word", [
    (lambda: Problem(3, (Step("add", 1),) * 10000, 10003), ValueError, "steps"),
    (lambda: Problem(3, (), 3), ValueError, "steps"),
    (lambda: Problem(3, (Step("add", 4),), 8), ValueError, "answer"),
    (lambda: Problem(3037000499, (Step("mul", 2),), 6074000998), ValueError, "start"),
    (lambda: Problem(99, (Step("mul", 99), Step("mul", 99)), 970299), ValueError, "中间值"),
    (lambda: Problem(3, ("add 4",), 7), TypeError, "Step"),
    (lambda: Step("mul", 3037000499), ValueError, "operand"),
    (lambda: Step("pow", 2), ValueError, "op"),
    (lambda: Step("add", 2.5), TypeError, "operand"),
])
def test_hand_made_problems_are_checked(make, exc, word):
    with pytest.raises(exc) as info:
        make()
    assert word in str(info.value)


def test_sampler_never_overflows_on_wrong_paths():
    """错值一直变大时（每一步都粗心、又一直乘 99），int64 也不溢出：超过 10^16 的错值按上限继续算。"""
    import numpy as np
    from toyllm import TrainableLLM
    from toyllm.sampler import VALUE_LIMIT, sample_rollouts
    p = Problem(1, (Step("mul", 99), Step("sub", 98)) * 10, 1)
    model = TrainableLLM(1e9, delta={key: [-30.0, -30.0, 30.0] for key in CONTEXTS})   # 几乎总是粗心
    r = sample_rollouts(model, [p], 50, np.random.default_rng(0))
    assert np.all(np.abs(r.values) <= VALUE_LIMIT * 99 + 10 ** 16)
    assert not r.correct.any()


@pytest.mark.parametrize("top,operand_top", [(10 ** 4, 1000), (10 ** 9, 100), (10 ** 16, 10 ** 4), (10 ** 6, 10 ** 7)])
def test_fast_context_and_bug_match_the_general_algorithm(top, operand_top):
    """context_ids_np 和 bug 的快速算法（只看操作数的几位）和通用算法逐个相同，
    包括负数、0、10 的幂附近的值、很大的值和很大的操作数（交给通用算法）。"""
    from toyllm.arithmetic_np import _bug_general, _context_ids_general, bug_np, context_ids_np, exact_np
    rng = np.random.default_rng(top % 997 + operand_top % 991)
    n = 20000
    op = rng.integers(0, 3, n)
    x = rng.integers(-top, top, n)
    x[::5] = 10 ** rng.integers(0, len(str(top)), len(x[::5])) - rng.integers(0, 2, len(x[::5]))
    x[::11] = 0
    b = rng.integers(0, operand_top, n)
    b[::7] = 10 ** rng.integers(0, len(str(operand_top)), len(b[::7])) - 1
    exact = exact_np(op, x, b)
    np.testing.assert_array_equal(context_ids_np(op, x, b), _context_ids_general(op, np.abs(x), np.abs(b)))
    np.testing.assert_array_equal(bug_np(op, x, b, exact), _bug_general(op, x, b, exact))
