"""
用采样来评估（真实系统的做法）：pass@k、maj@k、best-of-n、mean@n / best@n / worst@n，都带上误差棒（第 6 讲"评估与测试时计算"）。

【思路】真正的 LLM 只能"采样 n 次、数一数"：估计值总带着噪声。玩具模型还能精确地算出真值（toyllm.exact），
    所以这里的每个估计都可以和它要估计的那个数放在一起看。
    · pass@k：k 次里至少一次对。用 Chen et al. 的无偏估计（estimators.pass_at_k），从 n ≥ k 个样本一次算出所有 k。
    · maj@k（self-consistency，多数投票）：k 个最终答案里出现次数最多的那个对不对。
      平票时取**在这 k 个样本里最先出现**的那个答案（确定性的规则，见 maj_vote）。
    · best-of-k：一个"验证器"（verifier）给每个答案打分，选分最高的；验证器只看最终答案：
      精确的验证器（答案等于正确答案就给 1 分），或者有噪声的验证器（每个判断以 error_rate 的概率判反）。
      平票时取最先出现的那个。精确验证器的 best-of-k 就是 pass@k。
    · mean@n / best@n / worst@n（verl 的验证指标）：n 个样本的平均分 / 最好 / 最差。
    k < n 时怎么从 n 个样本得到 k 个的指标：
    · pass@k、best-of-k、best / worst：**精确的组合公式**（对全部 C(n, k) 个子集取平均，不需要随机数）；
    · maj@k：随机抽 subsets 个大小为 k 的子集（随机顺序，固定种子），取平均 —— 投票的组合公式太复杂。
      k = n 时直接对全部 n 个样本（按采样顺序）投一次票。
    误差棒（Estimate）：默认是"题目层面"的标准误：每道题一个分数，标准误 = 样本标准差 / √题数，
    它同时包含了"换一批题"和"重新采样"两种波动。和精确值比较时（同一批题），用 compare_exact_sampled，
    它的标准误只包含采样的波动。

【用法】
    import random
    import numpy as np
    from toyllm import ToyLLM, make_problem_set
    from toyllm.evaluation import evaluate_sampled

    problems = make_problem_set(random.Random(0), 100, 3, 8)
    print(evaluate_sampled(ToyLLM(1e9), problems, n=16, rng=np.random.default_rng(0)))
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from ._checks import as_int, as_real
from .arithmetic import CONTEXT_NAMES, CONTEXTS
from .estimators import pass_at_k
from .exact import correct_paths, exact_pass_at_1, exact_pass_at_k, path_probs
from .policy import prob_table
from .sampler import prepare_problems, sample_rollouts
from .text import fmt_size, pad

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


def _as_numbers(name, values):
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} 必须是一组数，例如 [1, 0, 1]，收到 {values!r}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} 里有 NaN 或无穷")
    return arr


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
    values = _as_numbers("values", values).ravel()
    if values.size == 0:
        raise ValueError("values 不能为空（空集合没有平均数）")
    se = values.std(ddof=1) / math.sqrt(values.size) if values.size > 1 else math.nan
    return make_estimate(values.mean(), se, values.size, level, bounds)


# =============================================================================
# 手工数据也能用的小函数：多数投票、验证器、best-of-n
# =============================================================================
def _as_list(name, answers):
    if isinstance(answers, (str, bytes)) or not isinstance(answers, (Sequence, np.ndarray)):
        raise TypeError(f"{name} 必须是答案的列表，例如 [42, 41, 42]，收到 {type(answers).__name__}")
    answers = list(answers)
    if not answers:
        raise ValueError(f"{name} 不能为空：至少要有一个答案")
    return answers


def maj_vote(answers):
    """
    多数投票：出现次数最多的答案。平票时取**在列表里最先出现**的那个。

    【思路】self-consistency（Wang et al. 2022）：多采几个解答，相信大多数。平票规则必须固定，
        否则同样的样本会给出不同的结果；"最先出现"不依赖答案的大小，也不用随机数。
    【参数】answers：答案的列表（任何可以比较相等的东西：int、str……）
    【返回】得票最多的答案
    【边界】列表不能为空。
    【例子】maj_vote([5, 7, 7, 5, 3]) → 5（5 和 7 各 2 票，5 先出现）；maj_vote([1, 2, 2]) → 2
    【Python 小知识】dict 记住插入顺序（Python 3.7 起），所以第一个达到最高票数的键就是最先出现的答案。
    """
    answers = _as_list("answers", answers)
    counts = {}
    for a in answers:
        counts[a] = counts.get(a, 0) + 1
    top = max(counts.values())
    return next(a for a, c in counts.items() if c == top)


def verify(answers, truth, error_rate=0.0, rng=None):
    """
    验证器：判断每个最终答案对不对（1 / 0），可以带噪声。

    【思路】精确的验证器（error_rate = 0）就是"答案等于正确答案"。有噪声的验证器每个判断独立地以
        error_rate 的概率判反（对的判成错、错的判成对），像一个会出错的奖励模型。
    【参数】answers：答案列表；truth：正确答案；error_rate：0 … 1；rng：numpy.random.Generator（error_rate > 0 时需要）
    【返回】list of int（1 = 判为对）
    【例子】verify([3, 4, 3], 3) → [1, 0, 1]
    """
    answers = _as_list("answers", answers)
    if isinstance(truth, (bool, np.bool_)) or not isinstance(truth, (int, np.integer)):
        raise TypeError(f"truth（正确答案）必须是一个整数，收到 {truth!r}（类型 {type(truth).__name__}）")
    error_rate = as_real("error_rate", error_rate, 0.0, 1.0)
    right = np.array([a == truth for a in answers], dtype=bool)
    return _noisy(right, error_rate, rng).astype(int).tolist()


def _noisy(right, error_rate, rng):
    if error_rate == 0:
        return right.copy()
    rng = _as_np_rng(rng, required=True)
    return right ^ (rng.random(right.shape) < error_rate)


def best_of_n(answers, scores):
    """
    best-of-n：选验证器打分最高的答案；平票时取最先出现的那个。

    【参数】answers：答案列表；scores：同样长的分数列表，或者一个函数 score(answer) → 数
    【返回】选中的答案
    【例子】best_of_n([7, 5, 9], [0, 1, 1]) → 5；best_of_n([7, 5], lambda a: a == 5) → 5；
        所有分数都一样时选第一个：best_of_n([7, 5], [0, 0]) → 7
    """
    answers = _as_list("answers", answers)
    if callable(scores):
        scores = [scores(a) for a in answers]
    scores = [float(x) if isinstance(x, (bool, np.bool_)) else as_real("scores 里的分数", x)
              for x in _as_list("scores", scores)]
    if len(scores) != len(answers):
        raise ValueError(f"scores 的长度必须和 answers 相同，收到 {len(scores)} 个分数、{len(answers)} 个答案")
    best = max(range(len(answers)), key=lambda i: (scores[i], -i))
    return answers[best]


# =============================================================================
# 一批样本
# =============================================================================
@dataclass(frozen=True, eq=False)
class SampleSet:
    """
    P 道题、每道 n 个样本的最终答案。

    【属性】answers：(P, n) 的 int64 数组；truth：(P,) 正确答案；rollouts：采样得到的 Rollouts（手工构造时为 None）
    【例子】SampleSet.from_lists([[42, 41, 42], [7, 7, 8]], [42, 8]) —— 2 道题、每道 3 个样本
    """
    answers: np.ndarray
    truth: np.ndarray
    rollouts: object = field(default=None, repr=False)

    @property
    def correct(self):
        """(P, n) 的 bool 数组：每个样本对不对。"""
        return self.answers == self.truth[:, None]

    @property
    def n(self):
        """每道题的样本数。"""
        return self.answers.shape[1]

    def __len__(self):
        return self.answers.shape[0]

    @classmethod
    def from_lists(cls, answers, truth):
        """
        从手写的列表构造：answers[i] 是第 i 道题的 n 个答案（每道题一样多），truth[i] 是它的正确答案。

        【边界】答案必须是整数；每道题的样本数必须相同且 ≥ 1。
        """
        try:
            a = np.array(answers)
            t = np.array(truth)
        except (TypeError, ValueError):
            a = t = None
        if a is None or a.ndim != 2 or a.shape[1] == 0 or not np.issubdtype(a.dtype, np.integer):
            raise ValueError("answers 必须是整数的二维列表，每道题的答案一样多，例如 [[42, 41, 42], [7, 7, 8]]，"
                             f"收到 {answers!r}")
        if t.shape != (a.shape[0],) or not np.issubdtype(t.dtype, np.integer):
            raise ValueError(f"truth 必须是 {a.shape[0]} 个整数（每道题一个正确答案），收到 {truth!r}")
        return cls(a.astype(np.int64), t.astype(np.int64))


def _as_np_rng(rng, required=False):
    if rng is None and not required:
        return np.random.default_rng(0)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng 必须是 numpy.random.Generator（例如 np.random.default_rng(0)），收到 {rng!r}")
    return rng


def _as_samples(samples):
    if not isinstance(samples, SampleSet):
        raise TypeError("samples 必须是 SampleSet（用 draw_samples(...) 采样得到，或 SampleSet.from_lists(...) 手工构造），"
                        f"收到 {type(samples).__name__}")
    return samples


def _ks_for(samples, ks):
    if isinstance(ks, (int, np.integer)) and not isinstance(ks, bool):
        ks = (ks,)
    if not isinstance(ks, (Sequence, np.ndarray)) or isinstance(ks, str):
        raise TypeError(f"ks 必须是一个整数或一串整数，例如 (1, 2, 4)，收到 {ks!r}")
    ks = tuple(as_int("ks 里的 k", k, low=1) for k in ks)
    if not ks:
        raise ValueError("ks 不能为空，例如 ks=(1, 2, 4)")
    for k in ks:
        if k > samples.n:
            raise ValueError(f"ks 里的 k 不能大于 n（每道题的样本数），收到 k={k}、n={samples.n}")
    return ks


def default_ks(n):
    """1, 2, 4, … 直到 n（n 本身也放进去）。【例子】default_ks(20) → (1, 2, 4, 8, 16, 20)"""
    n = as_int("n", n, low=1)
    ks = [1 << i for i in range(n.bit_length()) if (1 << i) <= n]
    return tuple(ks if ks[-1] == n else ks + [n])


def draw_samples(model, problems, n, rng, temperature=1.0):
    """
    让模型把每道题做 n 遍（向量化的 sample_rollouts），只留下最终答案。

    【参数】model：ToyLLM 或 TrainableLLM；problems：list of Problem（或 sampler.ProblemBatch）；n：≥ 1；
        rng：numpy.random.Generator，例如 np.random.default_rng(0)；temperature：≥ 0
    【返回】SampleSet（.rollouts 里有每一步的细节）
    【例子】s = draw_samples(ToyLLM(1e9), problems, 16, np.random.default_rng(0))；s.correct.mean() ≈ 0.48
    """
    batch = prepare_problems(problems)
    r = sample_rollouts(model, batch, n, rng, temperature)
    return SampleSet(r.final.reshape(len(batch), r.n).astype(np.int64), batch.answer.astype(np.int64), r)


# =============================================================================
# 从 n 个样本估计 k 个样本的指标
# =============================================================================
def _choose_ratio(m, k, n):
    """C(m, k) / C(n, k)（逐个元素，m 是数组）= ∏_{i<k} (m − i) / (n − i)；m < k 时为 0。"""
    m = np.asarray(m, dtype=float)
    out = np.ones_like(m)
    for i in range(k):
        out *= np.clip(m - i, 0.0, None) / (n - i)
    return out


def pass_at_k_sampled(samples, ks=(1,), level=LEVEL):
    """
    pass@k 的无偏估计（Chen et al. 2021），一次算出多个 k。

    【思路】每道题 n 个样本里 c 个对，pass@k ≈ 1 − C(n − c, k) / C(n, k)（estimators.pass_at_k）；
        它是"从 n 个里不放回地挑 k 个、至少一个对"的概率，对全部子集精确平均，期望等于真正的 pass@k。
        先把 c = 0 … n 的值各算一次，再按每道题的 c 查表。
    【参数】samples：SampleSet；ks：一个或一串 k（1 ≤ k ≤ n）；level：置信水平
    【返回】{k: Estimate}（误差是题目层面的标准误）
    【例子】pass_at_k_sampled(SampleSet.from_lists([[1, 2, 2, 2]], [1]), (1, 2))[2].value → 0.5
    """
    samples = _as_samples(samples)
    ks = _ks_for(samples, ks)
    n = samples.n
    c = samples.correct.sum(axis=1)
    return {k: estimate_mean(np.array([pass_at_k(n, cc, k) for cc in range(n + 1)])[c], level) for k in ks}


def _first_codes(answers):
    """每个样本的答案编号 = 同一道题里这个答案第一次出现的位置（0 … n−1）。"""
    eq = answers[:, :, None] == answers[:, None, :]
    return eq.argmax(axis=2)


def maj_at_k(samples, ks=(1,), rng=None, subsets=200, level=LEVEL, per_problem=False):
    """
    maj@k：k 个样本多数投票，投出来的答案对不对（平票取这 k 个里最先出现的答案）。

    【思路】k = n：对全部 n 个样本（按采样顺序）投一次票；k = 1：没有投票，就是每个样本对不对的平均。
        1 < k < n：每道题随机打乱 subsets 次，取前 k 个投票（随机顺序，平票取其中最先出现的），对这些结果取平均 ——
        这是"对所有大小为 k 的子集取平均"的无偏蒙特卡罗估计。同一次打乱的前 k 个用于所有的 k（嵌套子集）。
        数组实现：把每道题的答案编成 0 … n−1 的编号，用 np.bincount 一次数出所有子集里每个编号的票数。
    【参数】samples：SampleSet；ks：一个或一串 k；rng：numpy.random.Generator（默认 np.random.default_rng(0)，
        结果可重复）；subsets：每道题抽几个子集；level：置信水平；per_problem：True 时返回每道题的值 {k: (P,) 数组}
    【返回】{k: Estimate}
    【边界】k = 1 和 k = n 的结果不用随机数；只有 1 < k < n 才抽子集（结果有一点蒙特卡罗误差，subsets 越大越小）。
    【例子】两道题 [[5, 7, 7, 5], [3, 3, 4, 4]]，正确答案 [5, 4]：maj@4 是 [1, 0] 的平均 0.5
        （第 1 题 5 和 7 平票，5 先出现；第 2 题 3 和 4 平票，3 先出现，错）。
    【Python 小知识】np.argmax 返回**第一个**最大值的位置，这正好实现了"平票取最先出现"。
    """
    samples = _as_samples(samples)
    ks = _ks_for(samples, ks)
    subsets = as_int("subsets", subsets, low=1)
    P, n = samples.answers.shape
    codes = _first_codes(samples.answers)
    right = samples.correct                                   # right[p, code]：编号 code 的答案对不对
    out = {}
    if 1 in ks:
        out[1] = right.mean(axis=1)                           # 一个样本不用投票：精确的平均
    if n in ks:
        out[n] = _vote(codes[None], right, n).mean(axis=0)
    small = [k for k in ks if 1 < k < n]
    if small:
        rng = _as_np_rng(rng)
        sums = {k: np.zeros(P) for k in small}
        chunk = max(1, min(subsets, 2_000_000 // max(1, P * n)))
        done = 0
        while done < subsets:
            s = min(chunk, subsets - done)
            order = np.argsort(rng.random((s, P, n)), axis=2)
            sub = np.take_along_axis(np.broadcast_to(codes, (s, P, n)), order, axis=2)
            for k in small:
                sums[k] += _vote(sub[..., :k], right, n).sum(axis=0)
            done += s
        for k in small:
            out[k] = sums[k] / subsets
    if per_problem:
        return {k: out[k] for k in ks}
    return {k: estimate_mean(out[k], level) for k in ks}


def _vote(sub, right, n):
    """sub：(S, P, k) 的答案编号；返回 (S, P) 的 0/1：多数票（平票取先出现的）对不对。"""
    S, P, k = sub.shape
    flat = sub.reshape(S * P, k) + (np.arange(S * P) * n)[:, None]
    counts = np.bincount(flat.ravel(), minlength=S * P * n)
    votes = counts[flat]                                      # 每个位置上的答案得了几票
    pos = votes.argmax(axis=1)                                # 第一个得票最多的位置
    winner = sub.reshape(S * P, k)[np.arange(S * P), pos].reshape(S, P)
    return right[np.arange(P)[None, :], winner].astype(float)


def best_of_k(samples, ks=(1,), verifier_error=0.0, rng=None, level=LEVEL, per_problem=False):
    """
    best-of-k：验证器在 k 个样本里选一个判为对的（有多个时选最先出现的；一个都没有时选第一个），它真的对吗？

    【思路】精确的组合公式，不需要抽子集。每个样本有"真的对不对"和"验证器判的对不对"（有噪声时固定判一次），
        把一道题的 n 个样本分成四类：a = 判对且真对，b = 判对但真错，d = 判错但真对，e = 判错且真错。
        随机挑 k 个（随机顺序）：
            · 里面有判对的（概率 1 − q，q = C(d + e, k) / C(n, k)）：选中的是第一个判对的，它在所有判对的样本里
              是均匀的，真对的概率 a / (a + b)；
            · 一个判对的都没有（概率 q）：选第一个，真对的概率 d / (d + e)。
        所以 best-of-k = (1 − q) · a / (a + b) + q · d / (d + e)。
        验证器没有噪声时 b = d = 0，公式变成 1 − C(n − c, k) / C(n, k)，正好是 pass@k 的无偏估计。
    【参数】samples：SampleSet；ks：一个或一串 k；verifier_error：验证器判反的概率（0 … 1）；
        rng：numpy.random.Generator（verifier_error > 0 时用来决定哪些判断出错；默认 np.random.default_rng(0)）；
        level；per_problem：True 时返回 {k: (P,) 数组}
    【返回】{k: Estimate}
    【例子】best_of_k(SampleSet.from_lists([[1, 2, 2, 2]], [1]), 2)[2].value → 0.5（和 pass@2 相同）
    """
    samples = _as_samples(samples)
    ks = _ks_for(samples, ks)
    verifier_error = as_real("verifier_error", verifier_error, 0.0, 1.0)
    right = samples.correct
    judged = _noisy(right, verifier_error, _as_np_rng(rng) if verifier_error > 0 else None)
    out = {k: best_of_k_from_verdicts(right, judged, k) for k in ks}
    if per_problem:
        return out
    return {k: estimate_mean(v, level) for k, v in out.items()}


def best_of_k_from_verdicts(correct, judged, k):
    """
    best-of-k 的组合公式（见 best_of_k）：已知每个样本真的对不对、验证器判的对不对，对全部 k 子集精确平均。

    【参数】correct、judged：(P, n) 的 bool 数组；k：1 … n
    【返回】(P,) 数组：每道题 best-of-k 选中正确答案的概率
    【例子】best_of_k_from_verdicts([[True, False]], [[False, True]], 1) → [0.5]
    """
    right = np.asarray(correct, dtype=bool)
    judged = np.asarray(judged, dtype=bool)
    if right.ndim != 2 or right.shape != judged.shape:
        raise ValueError(f"correct 和 judged 必须是形状相同的 (题数, n) 二维数组，收到 {right.shape} 和 {judged.shape}")
    n = right.shape[1]
    k = as_int("k", k, 1, n)
    a = (judged & right).sum(axis=1).astype(float)
    b = (judged & ~right).sum(axis=1).astype(float)
    d = (~judged & right).sum(axis=1).astype(float)
    e = (~judged & ~right).sum(axis=1).astype(float)
    first = np.divide(a, a + b, out=np.zeros_like(a), where=(a + b) > 0)
    rest = np.divide(d, d + e, out=np.zeros_like(d), where=(d + e) > 0)
    q = _choose_ratio(d + e, k, n)
    return (1 - q) * first + q * rest


def mean_best_worst(samples, k=None, level=LEVEL):
    """
    verl 的三个验证指标：mean@k（平均分）、best@k（k 个里最好的）、worst@k（k 个里最差的）。

    【思路】奖励是 0 / 1 时：mean@k 的期望就是 pass@1（和 k 无关）；best@k = 至少一个对 = pass@k；
        worst@k = k 个全对 = C(c, k) / C(n, k)。k < n 时同样对全部大小为 k 的子集精确平均。
    【参数】samples：SampleSet；k：默认 n（也就是 mean@n / best@n / worst@n）；level
    【返回】{"mean": Estimate, "best": Estimate, "worst": Estimate}
    【例子】一道题 4 个样本对了 3 个：mean@4 = 0.75，best@4 = 1，worst@4 = 0
    """
    samples = _as_samples(samples)
    k = samples.n if k is None else _ks_for(samples, k)[0]
    n = samples.n
    c = samples.correct.sum(axis=1).astype(float)
    return {"mean": estimate_mean(c / n, level),
            "best": estimate_mean(1 - _choose_ratio(n - c, k, n), level),
            "worst": estimate_mean(_choose_ratio(c, k, n), level)}


# =============================================================================
# 一次做完：评估报告、精确 vs 采样、测试时计算曲线、规模曲线
# =============================================================================
@dataclass(frozen=True)
class SampledEval:
    """
    evaluate_sampled 的结果。

    【属性】name：模型名；n：每道题的样本数；problems：题数；ks；verifier_error；
        pass_at_k、maj_at_k、best_of_k、best_of_k_noisy：{k: Estimate}；mean、best、worst：Estimate（mean@n 等）
    【例子】print(result) 打印一张中文表格；result.pass_at_k[1].value 是 pass@1 的估计
    """
    name: str
    n: int
    problems: int
    ks: tuple
    verifier_error: float
    pass_at_k: dict
    maj_at_k: dict
    best_of_k: dict
    best_of_k_noisy: dict
    mean: Estimate
    best: Estimate
    worst: Estimate

    def table(self, digits=3):
        """中文表格：每个 k 一行，四个指标（值 ± 标准误）。"""
        digits = as_int("digits", digits, 0, 10)
        w = 8 + 2 * digits
        lines = [f"{self.name}：{self.problems} 道题，每道采样 n = {self.n} 次（± 后面是题目层面的标准误）",
                 f"{pad('k', 4)}{pad('pass@k', w)}{pad('maj@k', w)}{pad('best-of-k', w)}"
                 f"best-of-k（验证器错 {self.verifier_error:.0%}）"]
        for k in self.ks:
            lines.append(f"{pad(k, 4)}{pad(format(self.pass_at_k[k], f'.{digits}f'), w)}"
                         f"{pad(format(self.maj_at_k[k], f'.{digits}f'), w)}"
                         f"{pad(format(self.best_of_k[k], f'.{digits}f'), w)}"
                         f"{format(self.best_of_k_noisy[k], f'.{digits}f')}")
        lines.append(f"mean@{self.n} = {self.mean:.{digits}f}，best@{self.n} = {self.best:.{digits}f}，"
                     f"worst@{self.n} = {self.worst:.{digits}f}")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


def evaluate_sampled(model, problems, n, rng, ks=None, temperature=1.0, verifier_error=0.1, subsets=200,
                     level=LEVEL):
    """
    一次采样，算出所有采样指标：pass@k、maj@k、best-of-k（精确 / 有噪声的验证器）、mean@n / best@n / worst@n。

    【思路】所有指标用**同一批**样本（每道题 n 个），所以它们之间的差别不是采样噪声造成的。
    【参数】model；problems：list of Problem；n：每道题的样本数；rng：numpy.random.Generator（采样、验证器的噪声、
        maj@k 的子集都从它来）；ks：默认 1, 2, 4, … , n；temperature；verifier_error：有噪声的验证器判反的概率；
        subsets：maj@k 每道题抽几个子集；level：置信水平
    【返回】SampledEval（print 它得到一张表）
    【例子】print(evaluate_sampled(ToyLLM(1e9), problems, 16, np.random.default_rng(0)))
    """
    rng = _as_np_rng(rng, required=True)
    n = as_int("n", n, low=1)
    samples = draw_samples(model, problems, n, rng, temperature)
    ks = default_ks(n) if ks is None else _ks_for(samples, ks)
    mbw = mean_best_worst(samples, level=level)
    return SampledEval(
        name=str(getattr(model, "name", model)), n=n, problems=len(samples), ks=ks,
        verifier_error=as_real("verifier_error", verifier_error, 0.0, 1.0),
        pass_at_k=pass_at_k_sampled(samples, ks, level),
        maj_at_k=maj_at_k(samples, ks, rng, subsets, level),
        best_of_k=best_of_k(samples, ks, 0.0, None, level),
        best_of_k_noisy=best_of_k(samples, ks, verifier_error, rng, level),
        mean=mbw["mean"], best=mbw["best"], worst=mbw["worst"])


@dataclass(frozen=True)
class ExactVsSampled:
    """
    同一批题上的路径 pass@1 和采样估计。

    【属性】name；exact：精确值（每一步都对的概率，float）；sampled：采样的 pass@1（最终答案对），Estimate，
        标准误只含采样的波动（见 compare_exact_sampled）；steps_right：采样里"每一步都对"的比例（Estimate），
        它和 exact 是同一个量；repaired：做对了、但中间有一步写错（后来被别的错误碰巧修好）的样本比例；
        z：(sampled − exact) / 标准误；n：每道题的样本数
    """
    name: str
    exact: float
    sampled: Estimate
    steps_right: Estimate
    repaired: float
    z: float
    n: int

    def __str__(self):
        return (f"{self.name}：路径 pass@1 = {self.exact:.4f}，采样估计 = {self.sampled:.4f}"
                f"（{self.sampled.level:.0%} 区间 [{self.sampled.ci_low:.4f}, {self.sampled.ci_high:.4f}]），"
                f"相差 {self.z:+.2f} 个标准误")


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
    correct = _as_numbers("correct", correct)
    if correct.ndim != 2 or correct.shape[1] < 2:
        raise ValueError(f"correct 必须是 (题数, n) 的二维数组，且 n ≥ 2 才能估计采样误差，收到形状 {correct.shape}")
    P, n = correct.shape
    p = correct.mean(axis=1)
    return math.sqrt(float((p * (1 - p) / (n - 1)).sum())) / P


def compare_exact_sampled(model, problems, n, rng, temperature=1.0, level=LEVEL):
    """
    路径 pass@1 和采样估计放在一起：估计值、它的误差棒、以及它要估计的真值。

    【思路】采样 n 次的平均是真正 pass@1 的无偏估计。精确值（exact_pass_at_1）算的是"每一步都对"的概率，
        比真正的 pass@1 少了"写错以后又被后面的错误碰巧修好"的样本 —— 这里把这个比例（repaired）也数出来：
        在课上用的题目上它不到 1%（小模型、无思维链时多一些），所以 n 不大时两者在误差棒以内一致；
        n 很大、误差棒很窄时，就能看出采样值略高一点点。"每一步都对"的采样比例（steps_right）和精确值是同一个量。
    【参数】model；problems：list of Problem；n：每道题的样本数（≥ 2）；rng：numpy.random.Generator；
        temperature；level
    【返回】ExactVsSampled（print 它得到一句话）
    【例子】print(compare_exact_sampled(ToyLLM(1e9), problems, 64, np.random.default_rng(0)))
    """
    n = as_int("n", n, low=2)
    problems = prepare_problems(problems).problems
    samples = draw_samples(model, problems, n, rng, temperature)
    r = samples.rollouts
    exact = exact_pass_at_1(model, problems, temperature)
    correct = samples.correct
    all_right = (r.step_ok | ~r.mask).all(axis=1).reshape(correct.shape)
    se = sampling_stderr(correct)
    value = float(correct.mean())
    z = (value - exact) / se if se > 0 else (0.0 if value == exact else math.inf)
    return ExactVsSampled(
        name=str(getattr(model, "name", model)), exact=exact, sampled=make_estimate(value, se, len(samples), level),
        steps_right=make_estimate(all_right.mean(), sampling_stderr(all_right), len(samples), level),
        repaired=float((correct & ~all_right).mean()), z=z, n=n)


def inference_curves(models, problems, n, rng, ks=None, temperature=1.0, verifier_error=0.1, subsets=200,
                      level=LEVEL):
    """
    测试时计算（test-time compute）曲线：每道题花 k 个样本，pass@k、maj@k、best-of-k 随 k 怎么变。

    （名字不叫 test_time_compute：以 test_ 开头的函数被导入测试文件时，pytest 会把它当成一个测试去运行。）

    【思路】同样多的样本，三种用法：pass@k（有一个对就算对 —— 需要一个完美的验证器，是上限）、
        maj@k（不需要验证器，投票）、best-of-k（需要验证器；验证器会出错时介于两者之间或更差）。
        再和模型规模、有没有思维链放在一起比：小模型多采样能不能追上大模型？
    【参数】models：模型的列表（例如 [ToyLLM(1e9), ToyLLM(1e11), ToyLLM(1e9, cot=False)]）；
        problems；n：每道题的样本数；rng：numpy.random.Generator；ks：默认 1, 2, 4, … , n；
        temperature、verifier_error、subsets、level：同 evaluate_sampled
    【返回】可以直接画图的普通数据（dict / list / float）：
        {"ks": [...], "n": n, "problems": P, "verifier_error": ε,
         "models": [{"name", "size", "cot",
                     "exact_pass_at_k", "pass_at_k", "pass_at_k_se", "maj_at_k", "maj_at_k_se",
                     "best_of_k", "best_of_k_se", "best_of_k_noisy", "best_of_k_noisy_se"}, ...]}
        每个列表和 "ks" 一样长；*_se 是标准误（题目层面）。
    【例子】data = inference_curves([ToyLLM(1e9), ToyLLM(1e11)], problems, 32, np.random.default_rng(0))；
        plots.plot_test_time_compute(data)
    """
    models = _as_models(models)
    rng = _as_np_rng(rng, required=True)
    n = as_int("n", n, low=1)
    problems = list(prepare_problems(problems).problems)
    rows, ks_out = [], None
    for model in models:
        ev = evaluate_sampled(model, problems, n, rng, ks, temperature, verifier_error, subsets, level)
        ks_out = list(ev.ks)
        exact = exact_pass_at_k(model, problems, ev.ks, temperature)
        row = {"name": ev.name, "size": float(model.size), "cot": bool(model.cot),
               "exact_pass_at_k": [exact[k] for k in ev.ks]}
        for key, d in (("pass_at_k", ev.pass_at_k), ("maj_at_k", ev.maj_at_k), ("best_of_k", ev.best_of_k),
                       ("best_of_k_noisy", ev.best_of_k_noisy)):
            row[key] = [d[k].value for k in ev.ks]
            row[key + "_se"] = [d[k].stderr for k in ev.ks]
        rows.append(row)
    return {"ks": ks_out, "n": n, "problems": len(problems), "verifier_error": float(verifier_error),
            "models": rows}


def _as_models(models):
    if hasattr(models, "size") and hasattr(models, "cot"):
        return [models]
    if isinstance(models, (str, bytes)) or not isinstance(models, Sequence) or not models:
        raise TypeError(f"models 必须是模型的列表，例如 [ToyLLM(1e9), ToyLLM(1e11)]，收到 {models!r}")
    for m in models:
        if not (hasattr(m, "size") and hasattr(m, "cot")):
            raise TypeError(f"models 里的每一个都必须是 ToyLLM 或 TrainableLLM，收到 {m!r}")
    return list(models)


SCALING_SIZES = tuple(float(10 ** (8 + i / 2)) for i in range(9))
"""规模曲线默认的参数量：1e8 … 1e12，每半个数量级一个点（9 个）。"""


def scaling_curve(problems, rng, sizes=SCALING_SIZES, n=16, cot=True, temperature=1.0, level=LEVEL):
    """
    规模曲线：pass@1 随参数量（1e8 … 1e12）怎么变，精确值和采样估计；以及每个情境选 correct 的概率。

    【思路】ToyLLM 的 correct logit 随 log10(参数量) 线性上升，pass@1 是每一步做对的概率的乘积，
        所以它随 log(参数量) 画出一条 S 形曲线。每个情境单独看：π(correct | 情境) 是一条 sigmoid。
        采样版本的每个情境：在模型自己走过的所有步里，落在这个情境、并且选了 correct 的比例
        （模型做错以后会走到别的情境，所以和精确值略有不同；没有思维链时还和步号有关，精确值取正确路径上的平均）。
    【参数】problems；rng：numpy.random.Generator；sizes：参数量的列表；n：每道题的样本数（≥ 2）；
        cot：有没有思维链；temperature；level
    【返回】可以直接画图的普通数据：
        {"sizes": [...], "names": ["100M", ...], "cot": bool, "n": n, "problems": P,
         "exact": [...], "sampled": [...], "sampled_se": [...]（采样标准误，题目固定）,
         "contexts": [12 个中文情境名], "context_keys": [12 个 (运算, 难度)],
         "context_exact": [[12 个数] × 每个规模], "context_sampled": [...], "context_se": [...],
         "context_counts": [[12 个整数] × 每个规模]（采样时落在这个情境的步数；为 0 时 sampled、se 是 NaN）}
    【例子】data = scaling_curve(problems, np.random.default_rng(0))；plots.plot_scaling(data)
    """
    from .toy_llm import ToyLLM

    rng = _as_np_rng(rng, required=True)
    n = as_int("n", n, low=2)
    if not isinstance(cot, bool):
        raise TypeError(f"cot 必须是 True 或 False，收到 {cot!r}")
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, (Sequence, np.ndarray)) or len(sizes) == 0:
        raise TypeError(f"sizes 必须是参数量的列表，例如 (1e8, 1e9, 1e10)，收到 {sizes!r}")
    sizes = [as_real("sizes 里的参数量", s, 0.0, low_open=True) for s in sizes]
    batch = prepare_problems(problems)
    problems = list(batch.problems)
    paths = correct_paths(problems)
    out = {"sizes": sizes, "names": [fmt_size(s) for s in sizes], "cot": cot, "n": n, "problems": len(problems),
           "exact": [], "sampled": [], "sampled_se": [],
           "contexts": [CONTEXT_NAMES[key] for key in CONTEXTS], "context_keys": [tuple(key) for key in CONTEXTS],
           "context_exact": [], "context_sampled": [], "context_se": [], "context_counts": []}
    K = len(CONTEXTS)
    for size in sizes:
        model = ToyLLM(size, cot=cot)
        r = sample_rollouts(model, batch, n, rng, temperature)
        correct = r.correct.reshape(len(problems), n)
        out["exact"].append(exact_pass_at_1(model, paths, temperature))
        out["sampled"].append(float(correct.mean()))
        out["sampled_se"].append(sampling_stderr(correct))
        if cot:
            ctx_exact = prob_table(model, temperature)[:, 0]
        else:
            pc = path_probs(model, paths, temperature)[..., 0][paths.mask]
            cnt = np.bincount(paths.ctx[paths.mask], minlength=K)
            sums = np.bincount(paths.ctx[paths.mask], weights=pc, minlength=K)
            ctx_exact = np.divide(sums, cnt, out=np.full(K, np.nan), where=cnt > 0)
        ctx = r.ctx[r.mask]
        counts = np.bincount(ctx, minlength=K)
        chose = np.bincount(ctx, weights=(r.actions[r.mask] == 0).astype(float), minlength=K)
        frac = np.divide(chose, counts, out=np.full(K, np.nan), where=counts > 0)
        se = np.sqrt(frac * (1 - frac) / np.where(counts > 0, counts, 1))
        out["context_exact"].append([float(x) for x in ctx_exact])
        out["context_sampled"].append([float(x) for x in frac])
        out["context_se"].append([float(x) for x in se])
        out["context_counts"].append([int(x) for x in counts])
    return out
