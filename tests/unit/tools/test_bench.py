"""维护者的工具：tools/bench.py 的朴素循环和引擎是同一个算法，tools/floor.py 的地板和引擎训练出逐位相同的 Δ；tools/codelines.py 数代码行。"""

import random

import numpy as np

from tools.bench import plain_grpo_gradient
from tools.codelines import code_lines
from tools.floor import floor_grpo
from toyllm.arithmetic import CONTEXTS, make_problem_set
from toyllm.problems import default_problems
from toyllm.rl import RLConfig, group_advantages, policy_loss, preset, train
from toyllm.sampler import sample_rollouts
from toyllm.toy_llm import Sample
from toyllm.trainable import TrainableLLM


def test_bench_plain_loop_is_the_same_algorithm():
    """基准里的朴素循环（add_grad 逐步累加）和引擎在同一批解答上给出同一个梯度。"""
    problems = make_problem_set(random.Random(0), 12, 3, 8)
    model = TrainableLLM(1e9)
    model.params[...] = np.random.default_rng(0).normal(size=(12, 3)) * 0.3
    roll = sample_rollouts(model, problems, 8, np.random.default_rng(1))
    groups = []
    for p_i, p in enumerate(problems):
        rows = np.flatnonzero(roll.problem == p_i)
        groups.append((p, [Sample(tuple(int(v) for v in roll.values[i, :roll.lengths[i]]),
                                  tuple(("correct", "bug", "careless")[a] for a in roll.actions[i, :roll.lengths[i]]),
                                  bool(roll.correct[i])) for i in rows]))
    grads = plain_grpo_gradient(model, groups, batch_problems=len(problems), std_eps=1e-4)
    plain = np.array([grads.get(k, [0.0, 0.0, 0.0]) for k in CONTEXTS])
    adv = group_advantages(roll.correct.astype(float), 8)
    engine = policy_loss(model, roll, adv, RLConfig()).grad
    assert np.abs(plain + engine).max() < 1e-12 and np.abs(plain).max() > 1e-3


def test_floor_trains_the_same_delta_as_the_engine():
    """地板（什么都不记的最精简循环）和 rl.train(model, "grpo") 用同样的随机数、同样的规则：Δ 逐位相同。"""
    train_set, heldout = default_problems(0)
    model = TrainableLLM(1e9)
    train(model, preset("grpo", iterations=8, batch_problems=32, group_size=8, seed=3), train_set, heldout[:1])
    floor = floor_grpo(1e9, train_set, iterations=8, seed=3)
    assert np.array_equal(floor, model.params) and np.abs(floor).max() > 1e-3


def test_code_lines_skip_docstrings_comments_and_blank_lines():
    """tools/codelines.py：文档字符串、注释、空行不算；一句跨两行的代码算两行。"""
    source = '"""模块说明\n第二行"""\n\nimport math  # 注释\n\n\ndef f(x):\n    """一行说明。"""\n    # 注释\n' \
             '    return math.sqrt(\n        x)\n'
    assert code_lines(source) == 4
