"""
三种常见错误各有一条说出错在哪里的提示（issue #38）：作业一任务 2 只在选中的做法上加 1 − π_a、
作业二 pass@k 的 n − c <= k（差一个）、作业三均值和标准差都按整批算。错误写法照同学会写的样子写出来，
不借用检查器里生成错误答案的函数；对的写法仍然通过。
"""

import math

import numpy as np
import pytest

from toyllm import step_records
from toyllm.arithmetic import CONTEXT_INDEX, CONTEXTS
from toyllm.homework import framework
from toyllm.homework.hw1 import check_solution_grad
from toyllm.homework.hw2 import check_pass_at_k
from toyllm.homework.hw3 import check_group_advantages


def _softmax(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max())
    return e / e.sum()


def solution_grad(model, problem, sample):
    g = np.zeros((len(CONTEXTS), 3))
    for key, a in step_records(problem, sample):
        p = _softmax(model.context_logits(key))
        g[CONTEXT_INDEX[key]] += np.eye(3)[a] - p
    return g


def solution_grad_chosen_only(model, problem, sample):
    """只在选中的做法上加 1 − π_a，忘了其他做法的 −π_j。"""
    g = np.zeros((len(CONTEXTS), 3))
    for key, a in step_records(problem, sample):
        p = _softmax(model.context_logits(key))
        g[CONTEXT_INDEX[key], a] += 1 - p[a]
    return g


def pass_at_k(n, c, k):
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k_off_by_one(n, c, k):
    if n - c <= k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k_off_by_one_product(n, c, k):
    if n - c <= k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def group_advantages(rewards, group_size):
    r = np.asarray(rewards, dtype=float).reshape(-1, group_size)
    return ((r - r.mean(axis=1, keepdims=True)) / (r.std(axis=1, ddof=1, keepdims=True) + 1e-4)).reshape(-1)


def group_advantages_whole_batch(rewards, group_size):
    r = np.asarray(rewards, dtype=float)
    return (r - r.mean()) / (r.std(ddof=1) + 1e-4)


def group_advantages_whole_batch_np_std(rewards, group_size):
    r = np.asarray(rewards, dtype=float)
    return (r - r.mean()) / (r.std() + 1e-4)                 # np.std 默认 ddof=0：最顺手的写法


MISTAKES = [
    (check_solution_grad, solution_grad_chosen_only, "忘了其他做法 j ≠ a_t 上的 −π(j | c_t)"),
    (check_pass_at_k, pass_at_k_off_by_one, "不是 n − c <= k"),
    (check_pass_at_k, pass_at_k_off_by_one_product, "不是 n − c <= k"),
    (check_group_advantages, group_advantages_whole_batch, "均值和标准差都要按组算"),
    (check_group_advantages, group_advantages_whole_batch_np_std, "均值和标准差都要按组算"),
]


@pytest.mark.parametrize("check, fn, hint", MISTAKES, ids=[fn.__name__ for _, fn, _ in MISTAKES])
def test_the_mistake_gets_a_hint_that_names_it(check, fn, hint, capsys, monkeypatch):
    monkeypatch.setattr(framework, "CALL_SECONDS", 300)      # 看的是提示，不是时限
    result = check(fn)
    out = capsys.readouterr().out
    assert result.status == "fail" and hint in result.hint, result.message
    assert out.startswith("✗") and hint in out


@pytest.mark.parametrize("check, fn", [(check_solution_grad, solution_grad), (check_pass_at_k, pass_at_k),
                                       (check_group_advantages, group_advantages)],
                         ids=["solution_grad", "pass_at_k", "group_advantages"])
def test_the_right_answer_still_passes(check, fn, capsys):
    assert check(fn).status == "pass"


def test_the_off_by_one_differs_only_where_n_minus_c_equals_k():
    """pass@k 差一个的写法只在 n − c = k 时不对，检查用的题里有这种 (n, c, k)，提示说的正是它。"""
    from toyllm.homework.hw2 import PASS_AT_K_CASES

    differ = [(n, c, k) for n, c, k in PASS_AT_K_CASES
              if not math.isclose(pass_at_k_off_by_one(n, c, k), pass_at_k(n, c, k), rel_tol=1e-12, abs_tol=1e-15)]
    assert differ and all(n - c == k for n, c, k in differ)
