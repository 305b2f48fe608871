"""
把模型写成数组：每个情境（和步号）下三种做法的 logits 与概率。

【思路】ToyLLM 的 logits 只取决于（情境, 步号）：有思维链时连步号都不需要。
    所以"整个策略"就是一张小表：12 个情境 × 3 种做法。精确计算（exact）和 RL 引擎都在这张表上做数组运算，
    而不是一步一步调用 step_probs。
【边界】这里按 ToyLLM / TrainableLLM 的公式直接算表；如果你写了一个重写 step_logits 的子类，
    数组版本不会知道你的改动（逐步调用的 generate 会）。
"""

import math

import numpy as np

from ._checks import as_real
from .arithmetic import CONTEXTS
from .toy_llm import ALPHA, BETA, LOGIT_BUG, LOGIT_CARELESS, NO_COT_PENALTY, REF_SIZE

CONTEXT_OPS = np.array([op for op, _ in CONTEXTS])
CONTEXT_HARDNESS = np.array([h for _, h in CONTEXTS])


def base_logit_table(size):
    """
    有思维链时、Δ = 0 的 logits 表，形状 (12, 3)：第 i 行是情境 CONTEXTS[i] 的 [correct, bug, careless]。

    【例子】base_logit_table(1e9)[CONTEXTS.index(("mul", 1.5))] → [1.9, 0.0, −0.5]
    """
    size = as_real("size", size, 0.0, low_open=True)
    shift = BETA * math.log10(size / REF_SIZE)
    table = np.empty((len(CONTEXTS), 3))
    table[:, 0] = [ALPHA[op] + shift - h for op, h in CONTEXTS]
    table[:, 1] = LOGIT_BUG
    table[:, 2] = LOGIT_CARELESS
    return table


def logit_table(model, step_index=0):
    """
    模型的 logits 表 (12, 3)：基础 logits，加上 Δ（TrainableLLM 有 params 时），无思维链时再按步号扣分。
    """
    table = base_logit_table(model.size)
    params = getattr(model, "params", None)
    if params is not None:
        table = table + params
    if not model.cot:
        table[:, 0] -= NO_COT_PENALTY * step_index
    return table


def softmax_rows(logits, temperature=1.0):
    """
    对最后一维做 softmax(logits / temperature)。temperature = 0 表示贪心（并列时取下标最小的）。

    【Python 小知识】keepdims=True 让求和后的数组保留那一维（长度 1），可以直接和原数组做广播除法。
    """
    temperature = as_real("temperature", temperature, low=0.0)
    logits = np.asarray(logits, dtype=float)
    if temperature == 0:
        out = np.zeros_like(logits)
        np.put_along_axis(out, np.argmax(logits, axis=-1)[..., None], 1.0, axis=-1)
        return out
    z = logits / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def prob_table(model, temperature=1.0, step_index=0):
    """模型的概率表 (12, 3)：每个情境下 [P(correct), P(bug), P(careless)]。"""
    return softmax_rows(logit_table(model, step_index), temperature)
