"""
logits 变成概率：最后一维上的 softmax 和 log-softmax（数组），全包只有这一份。

【思路】先减去最大值再取指数：结果不变，但不会溢出。数组是什么 dtype，结果就是什么 dtype：
    小 transformer 整步都是 float32（注意力、输出层），玩具的概率表是 float64（policy.softmax_rows / log_softmax_rows）。
    第 1 讲的 toy_llm.softmax 是同一个公式的纯 Python 写法（list 进、list 出），只为逐位复现第 1 讲种子模块的数字。
【边界】这里不检查参数：公开的入口（policy.softmax_rows、TinyLM 的函数）已经检查过了。
"""

import numpy as np


def softmax(z, temperature=1.0):
    """
    最后一维的 softmax(z / temperature)：e = exp(z / T − max)，再除以 Σ e。

    【边界】temperature = 0 表示贪心：最大的 logit 概率为 1（并列时取下标最小的那个）。
    【例子】softmax(np.zeros(4)) → [0.25, 0.25, 0.25, 0.25]
    """
    if temperature == 0:
        out = np.zeros_like(z)
        np.put_along_axis(out, np.argmax(z, axis=-1)[..., None], 1.0, axis=-1)
        return out
    z = z / temperature
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def log_softmax(z, temperature=1.0):
    """最后一维的 log softmax(z / temperature)（temperature > 0）：z − max z − log Σ exp(z − max z)，比 log(softmax(z)) 更稳。"""
    z = z / temperature
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


__all__ = ["log_softmax", "softmax"]
