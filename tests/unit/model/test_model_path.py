"""
一条模型路径：逐步的 API（step_logits / step_probs / generate）和数组版本（policy 的表）出自同一个公式；
重写了逐步 logits 的子类会被数组版本拒绝（中文报错），而不是被悄悄忽略。
"""

import random

import numpy as np
import pytest

from toyllm.arithmetic import CONTEXTS, PROCEDURES, make_problem_set
from toyllm.exact import exact_pass_at_1
from toyllm.policy import logit_table, prob_table
from toyllm.rl import default_problems, preset, train
from toyllm.sampler import sample_rollouts
from toyllm.toy_llm import ToyLLM
from toyllm.trainable import TrainableLLM, context_key


@pytest.mark.parametrize("model", [ToyLLM(3e8), ToyLLM(1e10, cot=False), TrainableLLM(1e9)], ids=repr)
def test_per_step_api_reads_the_same_numbers_as_the_table(model):
    if isinstance(model, TrainableLLM):
        model.params[...] = np.random.default_rng(0).normal(size=(12, 3))
    for t in range(3):
        table = logit_table(model, t)
        probs = prob_table(model, 1.0, t)
        for i, key in enumerate(CONTEXTS):
            assert model.context_logits(key, t) == table[i].tolist()              # 逐位相同
    problems = make_problem_set(random.Random(0), 60, 3, 6)
    for t, p in enumerate(problems):                              # 每道题的第一步（输入就是 p.start），步号轮换
        step, t = p.steps[0], t % 3
        i = CONTEXTS.index(context_key(step.op, p.start, step.operand))
        assert model.step_logits(step.op, p.start, step.operand, t) == logit_table(model, t)[i].tolist()
        assert np.allclose(model.step_probs(step.op, p.start, step.operand, t), prob_table(model, 1.0, t)[i],
                           rtol=0, atol=1e-15)


class AlwaysCareless(TrainableLLM):
    """重写 step_logits：总是选 careless。"""

    def step_logits(self, op, a, b, step_index):
        return [-50.0, -50.0, 50.0]


class Renamed(TrainableLLM):
    """不重写逐步 logits 的子类：数组版本照常接受。"""


def test_generate_uses_the_override():
    model = AlwaysCareless(1e9)
    problems = make_problem_set(random.Random(1), 5, 3, 5)
    rng = random.Random(0)
    assert all(set(model.generate(p, rng).procs) == {PROCEDURES[2]} for p in problems)


@pytest.mark.parametrize("call", [
    lambda m, t, h: sample_rollouts(m, t, 2, np.random.default_rng(0)),
    lambda m, t, h: exact_pass_at_1(m, h),
    lambda m, t, h: prob_table(m),
    lambda m, t, h: train(m, preset("grpo", iterations=1, batch_problems=4, group_size=2), t, h),
], ids=["sample_rollouts", "exact_pass_at_1", "prob_table", "train"])
def test_array_path_rejects_an_overriding_subclass(call):
    train_set, heldout = default_problems(seed=0, n_train=10, n_heldout=5)
    with pytest.raises(TypeError) as info:
        call(AlwaysCareless(1e9), train_set, heldout)
    msg = str(info.value)
    assert "AlwaysCareless" in msg and "step_logits" in msg and "重写" in msg
    call(Renamed(1e9), train_set, heldout)                       # 没有重写：照常运行
