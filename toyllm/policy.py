"""
把模型写成数组：每个情境（和步号）下三种做法的 logits 与概率（第 6 讲"参数就是一张 12 × 3 的表"）。

【思路】ToyLLM 的 logits 只取决于（情境, 步号）：有思维链时连步号都不需要。
    所以"整个策略"就是一张小表：12 个情境 × 3 种做法。采样器、精确计算和 RL 引擎都在这张表上做数组运算，
    而不是一步一步调用 step_probs。表里的每个数和逐步的 ToyLLM.step_logits 出自同一个公式
    （toy_llm.base_logits），所以只有一条"模型的路径"。
【边界】如果你写了一个重写 step_logits / context_logits 的子类，表不可能知道你的改动：
    这里会报中文的 TypeError，而不是悄悄地用原来的公式（逐步调用的 generate 照样可以用你的子类）。
"""

import functools

import numpy as np

from ._checks import as_float_array, as_int, as_real
from .arithmetic import CONTEXTS
from .logits import log_softmax, softmax
from .toy_llm import NO_COT_PENALTY, ToyLLM, base_logits
from .trainable import TrainableLLM

CONTEXT_OPS = np.array([op for op, _ in CONTEXTS])
CONTEXT_HARDNESS = np.array([h for _, h in CONTEXTS])

_TABLE_METHODS = ("step_logits", "context_logits", "step_probs")


def base_logit_table(size):
    """
    有思维链时、Δ = 0 的 logits 表，形状 (12, 3)：第 i 行是情境 CONTEXTS[i] 的 [correct, bug, careless]。

    【例子】base_logit_table(1e9)[CONTEXTS.index(("mul", 1.5))] → [1.9, 0.0, −0.5]
    """
    return _base_table(as_real("size", size, 0.0, low_open=True)).copy()


@functools.lru_cache(maxsize=64)
def _base_table(size):
    """按 size 缓存的表（引擎每次迭代都要用；调用者拿到的是 copy，改不坏缓存）。"""
    return np.array([base_logits(size, True, key, 0) for key in CONTEXTS])


def check_table_model(model):
    """
    检查 model 能不能写成表：ToyLLM / TrainableLLM（或没有重写逐步 logits 的子类），
    或者任何只有 size、cot（和可选的 params）的对象（例如 gradcheck 试不同 Δ 用的小对象）。

    【边界】缺 size / cot 报 TypeError；ToyLLM 的子类重写了 step_logits / context_logits / step_probs 也报 TypeError
        （数组版本只认 policy.logit_table 的公式，用不到你的改动）。
    """
    if not isinstance(model, ToyLLM):
        if not (hasattr(model, "size") and hasattr(model, "cot")):
            raise TypeError(f"model 必须是 ToyLLM 或 TrainableLLM，收到 {type(model).__name__}")
        return model
    parent = TrainableLLM if isinstance(model, TrainableLLM) else ToyLLM
    changed = [m for m in _TABLE_METHODS if getattr(type(model), m) is not getattr(parent, m)]
    if changed:
        raise TypeError(f"{type(model).__name__} 重写了 {'、'.join(changed)}：采样器、精确计算和 RL 引擎把模型写成"
                        f" 12 × 3 的表（policy.logit_table），用不到你重写的逐步 logits，结果会和 generate 不一致。"
                        f"请改 Δ（TrainableLLM.params），或者用逐步的 model.generate")
    return model


def logit_table(model, step_index=0):
    """
    模型的 logits 表 (12, 3)：基础 logits，加上 Δ（有 params 时），无思维链时再按步号扣分。

    【边界】model 不是 ToyLLM、或重写了逐步 logits 的子类：TypeError（见 check_table_model）。
    """
    check_table_model(model)
    step_index = as_int("step_index", step_index, low=0)
    table = base_logit_table(model.size)
    params = getattr(model, "params", None)
    if params is not None:
        table = table + params
    if not model.cot:
        table[:, 0] -= NO_COT_PENALTY * step_index
    return table


def softmax_rows(logits, temperature=1.0):
    """
    对最后一维做 softmax(logits / temperature)（logits.softmax，先检查参数）。temperature = 0 表示贪心（并列时取下标最小的）。

    【Python 小知识】keepdims=True 让求和后的数组保留那一维（长度 1），可以直接和原数组做广播除法。
    """
    temperature = as_real("temperature", temperature, low=0.0)
    return softmax(_as_logits(logits), temperature)


def log_softmax_rows(logits, temperature=1.0):
    """对最后一维做 log softmax(logits / temperature)（temperature > 0），比 log(softmax_rows(...)) 更稳。"""
    temperature = as_real("temperature", temperature, 0.0, low_open=True)
    return log_softmax(_as_logits(logits), temperature)


def _as_logits(logits):
    z = as_float_array("logits", logits)
    if z.ndim == 0 or z.shape[-1] == 0:
        raise ValueError(f"logits 至少要有一维、最后一维不能为空，收到形状 {z.shape}")
    if not (z < np.inf).all():                 # NaN 和 +inf 都会让 softmax 得到 NaN；−inf 是合法的（概率 0）
        raise ValueError("logits 里有 NaN 或 +inf（softmax 会得到 NaN）；−inf 可以，表示概率 0")
    return z


def prob_table(model, temperature=1.0, step_index=0):
    """模型的概率表 (12, 3)：每个情境下 [π(correct), π(bug), π(careless)]。"""
    return softmax_rows(logit_table(model, step_index), temperature)
