"""
从采样结果估计 pass@k。

【思路】对一道题采样 n 次，其中 c 次做对。pass@k = "随便挑 k 次，至少一次做对"的概率。
    Chen et al. (2021) 的无偏估计：
        pass@k ≈ 1 − C(n−c, k) / C(n, k) = 1 − ∏_{i=n−c+1}^{n} (1 − k / i)
    右边的乘积形式不需要算大组合数，数值上稳定。
"""

import math

from ._checks import as_int


def pass_at_k(n, c, k):
    """
    pass@k 的无偏估计（Chen et al. 2021，数值稳定的乘积形式）。

    【参数】n：采样次数（≥ 1）；c：其中做对的次数（0 … n）；k：1 … n
    【返回】float，在 [0, 1] 里
    【边界】n − c < k 时，任挑 k 个必然至少有一个对的，返回 1.0；c = 0 时返回 0.0。
    【例子】pass_at_k(4, 1, 1) → 0.25；pass_at_k(4, 1, 2) → 0.5；pass_at_k(4, 3, 2) → 1.0
    """
    n = as_int("n", n, low=1)
    c = as_int("c", c, low=0)
    k = as_int("k", k, low=1)
    if c > n:
        raise ValueError(f"c（做对的次数）不能大于 n（采样次数），收到 c={c}、n={n}")
    if k > n:
        raise ValueError(f"k 不能大于 n（采样次数），收到 k={k}、n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))
