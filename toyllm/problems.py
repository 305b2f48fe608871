"""
课上用的题目集合，和"一批题"这个参数的检查（第 6 讲：训练题与留出题）。

【思路】RL、模仿学习、评估都要"一批题"：训练用一批，算路径 pass@1 用另一批没见过的（留出题）。
    default_problems 用一个种子出这两批题；check_problems 是所有接受"一批题"的公开函数共用的入口检查。
"""

import random

from ._checks import as_int, as_list
from .arithmetic import Problem, make_problem_set


def default_problems(seed=0, n_train=256, n_heldout=200, min_steps=3, max_steps=8):
    """
    课上用的训练题和留出题（两批不同的题，同一个种子总是同样的题）。

    【参数】seed：出题的随机种子（≥ 0）；n_train、n_heldout：题数（≥ 1）；min_steps、max_steps：每道题的步数范围
    【返回】(train, heldout)：两个 list of Problem
    【例子】train_set, heldout = default_problems(0)
    """
    seed = as_int("seed", seed, low=0)
    n_train = as_int("n_train", n_train, low=1)
    n_heldout = as_int("n_heldout", n_heldout, low=1)
    rng = random.Random(seed)
    train_set = make_problem_set(rng, n_train, min_steps, max_steps)
    heldout = make_problem_set(rng, n_heldout, min_steps, max_steps)
    return train_set, heldout


def check_problems(name, problems):
    """
    检查 problems 是非空的 Problem 列表（任何可迭代对象都行），返回 tuple of Problem。

    【边界】None、字符串、不可迭代的东西、里面有不是 Problem 的项：TypeError；空列表：ValueError。都写出参数名 name。
    【例子】check_problems("train_problems", make_problem_set(random.Random(0), 10))
    """
    problems = tuple(as_list(name, problems, "Problem", "make_problem_set(...) 的结果"))
    for p in problems:
        if not isinstance(p, Problem):
            raise TypeError(f"{name} 里的每一项都必须是 Problem，收到 {type(p).__name__}：{p!r}")
    return problems


__all__ = ["check_problems", "default_problems"]
