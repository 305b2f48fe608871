"""
优化器：把梯度变成参数的改变，原地更新。玩具的 rl.train（Δ 表、价值表）和小 transformer 的 sft / rl_train 都用这里的。

【思路】SGD：θ ← θ − lr · g（和参考模块的 apply_grads 一样）。
    Adam（β1 = 0.9、β2 = 0.999、ε = 1e-8，和 torch.optim.AdamW 去掉权重衰减相同）：
        m ← β1 m + (1 − β1) g，v ← β2 v + (1 − β2) g²，θ ← θ − lr · m̂ / (√v̂ + ε)，
        m̂、v̂ 是除以 (1 − β1ᵗ)、(1 − β2ᵗ) 的偏差修正。
    参数是一个数组（玩具），或者"名字 → 数组"的字典（小 transformer）；梯度先转成参数的 dtype：
    float32 的网络整步都是 float32，float64 的玩具是 float64。
【例子】opt = Adam(model.params, lr=3e-4); opt.step(model.params, grads)
"""

import numpy as np

from ._checks import as_real


def _named(x):
    """一个数组当成只有一项的字典。"""
    return x if isinstance(x, dict) else {"": x}


class SGD:
    """朴素的梯度下降：θ ← θ − lr · g，原地更新（params 是数组或字典，见模块说明）。"""

    def __init__(self, params, lr):
        self.lr = as_real("lr（学习率）", lr, low=0.0)

    def step(self, params, grads):
        """用 grads 更新 params（原地）。"""
        grads = _named(grads)
        for k, p in _named(params).items():
            p -= self.lr * grads[k]


class Adam:
    """
    Adam，原地更新（公式见模块说明）。

    【参数】params：参数（数组，或名字 → 数组的字典）：m、v 按它的形状和 dtype 建；lr：学习率（≥ 0）
    【例子】opt = Adam(model.params, 3e-4)；每一步 opt.step(model.params, grads)
    """

    def __init__(self, params, lr, b1=0.9, b2=0.999, eps=1e-8):
        self.lr = as_real("lr（学习率）", lr, low=0.0)
        self.b1, self.b2, self.eps, self.t = b1, b2, eps, 0
        self.m = {k: np.zeros_like(v) for k, v in _named(params).items()}
        self.v = {k: np.zeros_like(v) for k, v in _named(params).items()}

    def step(self, params, grads):
        """用 grads 更新 params（原地）。"""
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        grads = _named(grads)
        for k, p in _named(params).items():
            g = grads[k].astype(p.dtype, copy=False)
            self.m[k] = self.b1 * self.m[k] + (1 - self.b1) * g
            self.v[k] = self.b2 * self.v[k] + (1 - self.b2) * g * g
            p -= (self.lr / c1) * self.m[k] / (np.sqrt(self.v[k] / c2) + self.eps)


__all__ = ["Adam", "SGD"]
