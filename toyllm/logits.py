"""
logits 变成概率：最后一维上的 softmax 和 log-softmax，全包只有这一份。

【思路】先减去最大值再取指数：结果不变，但不会溢出。数组是什么 dtype，结果就是什么 dtype：
    小 transformer 整步都是 float32（注意力、输出层），玩具的概率表是 float64（policy.softmax_rows / log_softmax_rows）。
【边界】这里不检查参数（每一步都要调用很多次）：公开的入口（policy.softmax_rows、TinyLM 的函数）已经检查过了。
"""

import numpy as np


def softmax(z):
    """最后一维的 softmax：e = exp(z − max z)，再除以 Σ e。【例子】softmax(np.zeros(4)) → [0.25, 0.25, 0.25, 0.25]"""
    e = np.exp(z - np.maximum.reduce(z, axis=-1, keepdims=True))       # = z.max(-1, keepdims=True)，不走 Python 包装
    return e / np.add.reduce(e, axis=-1, keepdims=True)                # = e.sum(-1, keepdims=True)，逐位相同


def log_softmax(z):
    """最后一维的 log softmax：z − max z − log Σ exp(z − max z)（比 log(softmax(z)) 更稳）。"""
    z = z - np.maximum.reduce(z, axis=-1, keepdims=True)
    return z - np.log(np.add.reduce(np.exp(z), axis=-1, keepdims=True))


__all__ = ["log_softmax", "softmax"]
