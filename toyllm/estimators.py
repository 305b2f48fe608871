"""
从样本估计一个数：pass@k 的无偏估计、平均值和它的误差棒（Estimate）、采样标准误。

【思路】对一道题采样 n 次，其中 c 次做对。pass@k = "随便挑 k 次，至少一次做对"的概率。
    Chen et al. (2021) 的无偏估计：
        pass@k ≈ 1 − C(n−c, k) / C(n, k) = 1 − ∏_{i=n−c+1}^{n} (1 − k / i)
    右边的乘积形式不需要算大组合数，数值上稳定；组合数之比 C(m, k) / C(n, k) 只在 choose_ratio 里写一次
    （evaluation 的 best-of-k、best@k / worst@k 也用它）。
    估计值总带着噪声：Estimate 把估计值、标准误和置信区间放在一起（estimate_mean：每道题一个分数时的平均值；
    sampling_stderr：题目固定、只算重新采样的波动）。
"""

import math
from dataclasses import dataclass

import numpy as np

from ._checks import as_array, as_int, as_real


def choose_ratio(m, k, n):
    """
    组合数之比 C(m, k) / C(n, k) = ∏_{i=m+1}^{n} (1 − k / i)：从 n 个里不放回地挑 k 个、全部落在某 m 个里的概率。

    【参数】m：0 … n 的整数，或整数数组（逐个元素算）；k：1 … n；n：≥ 1
    【返回】和 m 形状相同的 float 数组；m < k 时为 0
    【例子】choose_ratio(3, 2, 4) → 0.5（C(3, 2) / C(4, 2) = 3 / 6）；choose_ratio([0, 4], 2, 4) → [0, 1]
    """
    n = as_int("n", n, low=1)
    k = as_int("k", k, 1, n)
    m = np.asarray(m)
    if m.dtype == bool or not np.issubdtype(m.dtype, np.integer) or (m.size and not 0 <= m.min() <= m.max() <= n):
        raise ValueError(f"m 必须是 0 … n = {n} 的整数（或整数数组），收到 {m!r}")
    out = np.ones(m.shape)
    for i in range(int(m.min(initial=n)) + 1, n + 1):
        out = np.where(i > m, out * (1.0 - k / i), out)
    return np.where(m >= k, out, 0.0)


def pass_at_k(n, c, k):
    """
    pass@k 的无偏估计（Chen et al. 2021，数值稳定的乘积形式）：1 − C(n − c, k) / C(n, k)。

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
    return 1.0 - float(choose_ratio(n - c, k, n))


# =============================================================================
# 估计值 + 误差
# =============================================================================
LEVEL = 0.95
"""默认的置信水平：95% 置信区间 = 估计值 ± 1.96 × 标准误。"""


# =============================================================================
# 估计值 + 误差
# =============================================================================
@dataclass(frozen=True)
class Estimate:
    """
    一个估计值和它的不确定性。

    【属性】value：估计值；stderr：标准误；ci_low、ci_high：置信区间（正态近似 value ± z · stderr，
        截断到 [0, 1]）；n：独立单位的个数（题数）；level：置信水平（默认 0.95）
    【例子】
        e = Estimate(0.48, 0.012, 0.456, 0.504, 100)
        f"{e:.3f}" → "0.480 ± 0.012"；float(e) → 0.48；str(e) 还带上区间
    【Python 小知识】定义 __format__ 以后，f-string 里的格式说明（例如 :.3f）会交给这个方法处理。
    """
    value: float
    stderr: float
    ci_low: float
    ci_high: float
    n: int
    level: float = LEVEL

    def __float__(self):
        return float(self.value)

    def __format__(self, spec):
        if not spec:
            return str(self)
        return f"{format(self.value, spec)} ± {format(self.stderr, spec)}"

    def __str__(self):
        return (f"{self.value:.3f} ± {self.stderr:.3f}"
                f"（{self.level:.0%} 区间 [{self.ci_low:.3f}, {self.ci_high:.3f}]，n={self.n}）")


def _z(level):
    from statistics import NormalDist                 # 用到时才导入：import toyllm 不必加载 statistics

    return NormalDist().inv_cdf(0.5 + level / 2)


def _check_level(level):
    level = as_real("level", level, 0.0, 1.0)
    if level <= 0 or level >= 1:
        raise ValueError(f"level（置信水平）必须在 0 和 1 之间（不含两端），例如 0.95，收到 {level}")
    return level


def make_estimate(value, stderr, n, level=LEVEL, bounds=(0.0, 1.0)):
    """由估计值和标准误得到 Estimate：区间 = value ± z · stderr（z 由 level 决定，0.95 → 1.96），截断到 bounds。"""
    level = _check_level(level)
    value = as_real("value", value)
    stderr = _as_stderr(stderr)
    n = as_int("n", n, low=0)
    half = _z(level) * stderr
    low, high = value - half, value + half
    if bounds is not None and math.isfinite(half):
        low, high = max(bounds[0], low), min(bounds[1], high)
    return Estimate(value, stderr, low, high, n, level)


def _as_stderr(stderr):
    """标准误：≥ 0 的实数，或 NaN（只有一个样本时无法估计）。"""
    if isinstance(stderr, (float, np.floating)) and math.isnan(stderr):
        return math.nan
    return as_real("stderr", stderr, low=0.0)


def estimate_mean(values, level=LEVEL, bounds=(0.0, 1.0)):
    """
    一组独立的数（例如每道题一个分数）的平均值和它的标准误。

    【思路】标准误 = 样本标准差（除以 n − 1）/ √n：平均值本身会有多大的波动。
    【参数】values：一维的数；level：置信水平；bounds：区间截断到的范围（None 表示不截断）
    【返回】Estimate
    【边界】只有一个数时标准误无法估计，记为 NaN。values 不能为空。
    【例子】estimate_mean([1, 0, 1, 1]) → 0.750 ± 0.250
    """
    if isinstance(values, (str, bytes, dict)):
        raise TypeError(f"values 必须是一组数，例如 [1, 0, 1]，收到 {values!r}")
    values = as_array("values", values).ravel()
    if values.size == 0:
        raise ValueError("values 不能为空（空集合没有平均数）")
    se = values.std(ddof=1) / math.sqrt(values.size) if values.size > 1 else math.nan
    return make_estimate(values.mean(), se, values.size, level, bounds)


def sampling_stderr(correct):
    """
    题目固定时，平均 pass@1 的采样标准误：√(Σ_i p̂_i (1 − p̂_i) / (n − 1)) / P。

    【思路】第 i 道题 n 次采样的平均 p̂_i 的方差是 p_i (1 − p_i) / n，它的无偏估计是 p̂_i (1 − p̂_i) / (n − 1)；
        P 道题互相独立，平均值的方差是各题方差之和 / P²。和"题目层面"的标准误不同，它不包含"换一批题"的波动，
        所以是和**同一批题**上的精确值比较时该用的误差。
    【参数】correct：(P, n) 的 0/1 数组（n ≥ 2）
    【返回】float
    """
    if isinstance(correct, (str, bytes, dict)):
        raise TypeError(f"correct 必须是 (题数, n) 的 0/1 数组，收到 {correct!r}")
    correct = as_array("correct", correct)
    if correct.ndim != 2 or correct.shape[1] < 2:
        raise ValueError(f"correct 必须是 (题数, n) 的二维数组，且 n ≥ 2 才能估计采样误差，收到形状 {correct.shape}")
    P, n = correct.shape
    p = correct.mean(axis=1)
    return math.sqrt(float((p * (1 - p) / (n - 1)).sum())) / P


VERDICTS = ("成立", "不成立", "这个大小上分不出")
"""verdict 的三种结果。"""


def verdict(diff, stderr, z=3.0):
    """
    一个说法的判定：diff 是说法预期为正的那个差（例如 RL 之后的 pass@1 − 之前的），stderr 是它的标准误。

    【思路】差比 z 个标准误还大，才算量出来了：diff > z · stderr → "成立"；diff < −z · stderr → "不成立"（反方向）；
        否则 "这个大小上分不出"（这么多题、这么多种子还不够分辨）。
    【参数】diff：实数；stderr：≥ 0 的标准误（0 表示精确值，没有抽样误差）；z：几个标准误（默认 3）
    【返回】VERDICTS 之一
    【边界】diff = 0 且 stderr = 0 时是 "这个大小上分不出"（精确地相等）。
    【例子】verdict(0.014, 0.0037) → "成立"；verdict(-0.02, 0.005) → "不成立"；verdict(0.01, 0.005) → "这个大小上分不出"
    """
    diff, stderr, z = as_real("diff", diff), as_real("stderr", stderr, low=0.0), as_real("z", z, low=0.0)
    return VERDICTS[0] if diff > z * stderr else VERDICTS[1] if diff < -z * stderr else VERDICTS[2]


T_CRITICAL_1PCT = {1: 63.657, 2: 9.925, 3: 5.841, 4: 4.604, 5: 4.032, 6: 3.707, 7: 3.499, 8: 3.355, 9: 3.250,
                   10: 3.169, 11: 3.106, 12: 3.055, 13: 3.012, 14: 2.977, 15: 2.947, 16: 2.921, 17: 2.898,
                   18: 2.878, 19: 2.861, 20: 2.845, 25: 2.787, 30: 2.750, 40: 2.704, 60: 2.660, 120: 2.617}
"""t 分布两侧 1% 的临界值 t_{0.995}(自由度)：|t| 超过它的概率是 1%（任何统计书的 t 分布表；测试用数值积分核对）。"""


def t_critical(df):
    """
    两侧 1% 的 t 临界值。自由度不在表里时，用表里比它小的最近一个（更保守）。

    【参数】df：≥ 1 的整数（n 个种子时是 n − 1）
    【例子】t_critical(4) → 4.604（5 个种子）；t_critical(50) → 2.704（用 40 的值）
    """
    df = as_int("df", df, low=1)
    return T_CRITICAL_1PCT[max(k for k in T_CRITICAL_1PCT if k <= df)]


def seed_verdict(a, b=None):
    """
    跨训练种子的判定：每个种子一个配对的差 d_s = a_s − b_s（说法预期它为正），看平均差是否超出噪声。

    【思路】SE = std(d_s, ddof = 1) / √n；t = 平均差 / SE；和自由度 n − 1 的两侧 1% 临界值比：
        t > t_crit → "成立"；t < −t_crit → "不成立"；否则 "这个大小上分不出"。种子少时临界值大（5 个种子 4.604），
        所以 3 个标准误在这里不够。一次训练在一批题上的标准误只算了采样的波动，不能拿来代替种子之间的波动。
    【参数】a：每个种子的一个数（n ≥ 2）；b：和 a 一样长（每个种子配对的另一个数），省略时就是 a 本身
    【返回】dict：diff（平均差）、se、t、n、critical、verdict（VERDICTS 之一）
    【例子】seed_verdict([0.05, 0.04, 0.06, 0.05, 0.03]) → diff 0.046、se 0.0051、t 9.0、critical 4.604、"成立"
    """
    d = as_array("a", a).ravel()
    if b is not None:
        d = d - as_array("b", b, (d.size,))
    if d.size < 2:
        raise ValueError(f"a 至少要有 2 个种子的数才能估计种子之间的波动，收到 {d.size} 个")
    diff, se = float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))
    crit = t_critical(d.size - 1)
    t = diff / se if se > 0 else math.copysign(math.inf, diff) if diff else 0.0
    v = VERDICTS[0] if t > crit else VERDICTS[1] if t < -crit else VERDICTS[2]
    return {"diff": diff, "se": se, "t": t, "n": int(d.size), "critical": crit, "verdict": v}
