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
    误差棒（estimators.Estimate）：默认是"题目层面"的标准误：每道题一个分数，标准误 = 样本标准差 / √题数，
    它同时包含了"换一批题"和"重新采样"两种波动。和精确值比较时（同一批题），用 experiments.compare_exact_sampled，
    它的标准误只包含采样的波动。
    一次算完所有指标、精确 vs 采样、测试时计算曲线在 toyllm.experiments；规模曲线在 toyllm.scaling。

【用法】
    import random
    import numpy as np
    from toyllm import ToyLLM, make_problem_set
    from toyllm.evaluation import draw_samples, pass_at_k_sampled

    problems = make_problem_set(random.Random(0), 100, 3, 8)
    samples = draw_samples(ToyLLM(1e9), problems, 16, np.random.default_rng(0))
    print(pass_at_k_sampled(samples, (1, 4, 16))[4])
"""

from dataclasses import dataclass, field

import numpy as np

from ._checks import as_generator, as_int, as_list, as_real
from .estimators import LEVEL, choose_ratio, estimate_mean
from .sampler import prepare_problems, sample_rollouts


# =============================================================================
# 手工数据也能用的小函数：多数投票、验证器、best-of-n
# =============================================================================
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
    answers = as_list("answers", answers, "答案", "[42, 41, 42]")
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
    answers = as_list("answers", answers, "答案", "[42, 41, 42]")
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
    answers = as_list("answers", answers, "答案", "[42, 41, 42]")
    if callable(scores):
        scores = [scores(a) for a in answers]
    scores = [float(x) if isinstance(x, (bool, np.bool_)) else as_real("scores 里的分数", x)
              for x in as_list("scores", scores, "分数")]
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
    return as_generator("rng", rng)


def _as_samples(samples):
    if not isinstance(samples, SampleSet):
        raise TypeError("samples 必须是 SampleSet（用 draw_samples(...) 采样得到，或 SampleSet.from_lists(...) 手工构造），"
                        f"收到 {type(samples).__name__}")
    return samples


def _ks_for(samples, ks):
    if isinstance(ks, (int, np.integer)) and not isinstance(ks, bool):
        ks = (ks,)
    ks = tuple(as_int("ks 里的 k", k, low=1) for k in as_list("ks", ks, "整数 k", "(1, 2, 4)"))
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
    【例子】s = draw_samples(ToyLLM(1e9), problems, 16, np.random.default_rng(0))；s.correct.mean() 是采样的 pass@1
    """
    batch = prepare_problems(problems)
    r = sample_rollouts(model, batch, n, rng, temperature)
    return SampleSet(r.final.reshape(len(batch), r.n).astype(np.int64), batch.answer.astype(np.int64), r)


# =============================================================================
# 从 n 个样本估计 k 个样本的指标
# =============================================================================
def pass_at_k_sampled(samples, ks=(1,), level=LEVEL):
    """
    pass@k 的无偏估计（Chen et al. 2021），一次算出多个 k。

    【思路】每道题 n 个样本里 c 个对，pass@k ≈ 1 − C(n − c, k) / C(n, k)（estimators.pass_at_k，
        所有题一起算：estimators.choose_ratio）；它是"从 n 个里不放回地挑 k 个、至少一个对"的概率，
        对全部子集精确平均，期望等于真正的 pass@k。
    【参数】samples：SampleSet；ks：一个或一串 k（1 ≤ k ≤ n）；level：置信水平
    【返回】{k: Estimate}（误差是题目层面的标准误）
    【例子】pass_at_k_sampled(SampleSet.from_lists([[1, 2, 2, 2]], [1]), (1, 2))[2].value → 0.5
    """
    samples = _as_samples(samples)
    ks = _ks_for(samples, ks)
    n = samples.n
    c = samples.correct.sum(axis=1)
    return {k: estimate_mean(1.0 - choose_ratio(n - c, k, n), level) for k in ks}


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
    a, b, d, e = ((x & y).sum(axis=1) for x in (judged, ~judged) for y in (right, ~right))
    first = np.divide(a, a + b, out=np.zeros(len(a)), where=(a + b) > 0)
    rest = np.divide(d, d + e, out=np.zeros(len(d)), where=(d + e) > 0)
    q = choose_ratio(d + e, k, n)
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
    c = samples.correct.sum(axis=1)
    return {"mean": estimate_mean(c / n, level),
            "best": estimate_mean(1 - choose_ratio(n - c, k, n), level),
            "worst": estimate_mean(choose_ratio(c, k, n), level)}


