"""
规模：pass@1 随模型大小（scaling_curve），和 RL 的计算曲线 —— 表现 R 对 RL 计算量 C 的 S 形曲线
（ScaleRL，Khatri et al. 2025），拟合它，读出到目标要多少计算。

【思路】scaling_curve：ToyLLM 的 correct logit 随 log10(参数量) 线性上升，pass@1 随 log(参数量) 是一条 S 形曲线
    （notebook 04；精确值和采样估计放在一起）。
    RL 的计算曲线：ScaleRL 把训练中的表现 R（玩具里是留出题上的路径 pass@1）对 RL 用掉的计算量 C
    （玩具里是累计采样的解答数）写成
        R(C) − R0 = (A − R0) / (1 + (C_mid / C)^B)
    R0 是训练开始时的值（已知，不拟合），A 是渐近线，B 是效率（曲线多陡），C_mid 是拿到一半提升需要的计算量。
    记 x = log C、ℓ = log C_mid，右边就是 (A − R0) · σ(B · (x − ℓ))，σ 是 logistic 函数：
    在对数横轴上，它是一条普通的 S 形曲线。
    · sigmoid_curve：按参数算曲线；
    · fit_sigmoid：最小二乘拟合 A、B、C_mid（确定性的，不用随机数），返回 SigmoidFit；
    · reach_target：训练记录里第一次达到目标值的那一次迭代，和到那时为止的计算量。

【用法】
    from toyllm.scaling import fit_sigmoid
    fit = fit_sigmoid(hist["samples"], hist["pass1_exact"], hist.meta["start_pass1_exact"], A_max=1.0)
    print(fit.A, fit.B, fit.C_mid, fit.rmse, fit.predict(2 * hist["samples"][-1]))
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._checks import as_array, as_bool, as_int, as_list, as_real
from .arithmetic import CONTEXT_NAMES, CONTEXTS
from .estimators import LEVEL, sampling_stderr
from .exact import answer_probs, correct_paths, path_probs
from .policy import prob_table
from .sampler import prepare_problems, sample_rollouts
from .tables import fmt_size
from .toy_llm import ToyLLM

_GRID_B = np.geomspace(0.1, 10.0, 61)     # 起点网格：B 从 0.1 到 10（等比）
_GRID_L = 81                              # log C_mid 取 81 个点，覆盖数据的 log C 范围再向两边各延伸 2
_MAX_ITER = 200                           # Levenberg-Marquardt 最多走多少步
_MAX_LOG = 700.0                          # |log C_mid| 的上限（exp(700) 仍是有限的 float）


# =============================================================================
# 曲线
# =============================================================================
def _logistic(z):
    """σ(z) = 1 / (1 + e^(−z))，用 tanh 写成 (1 + tanh(z / 2)) / 2：z 很大或很小时也不溢出。"""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _as_vector(name, values, *, positive=False):
    """把 values 变成一维 float 数组；不是数、不是一维、含 NaN / 无穷、（positive 时）不是正数都报中文错误。"""
    arr = as_array(name, values, what="一串实数（list 或一维 numpy 数组）")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} 必须是一维的、非空的一串数，收到形状 {arr.shape}")
    if positive and (arr <= 0).any():
        i = int(np.argmax(arr <= 0))
        raise ValueError(f"{name}（计算量）必须全部 > 0（横轴取对数），第 {i} 个是 {arr[i]!r}")
    return arr


def sigmoid_curve(C, R0, A, B, C_mid):
    """
    ScaleRL 的 S 形计算曲线：R(C) = R0 + (A − R0) / (1 + (C_mid / C)^B)。

    【思路】C 从很小到很大时，(C_mid / C)^B 从 ∞ 降到 0，R 从 R0 升到 A；C = C_mid 时正好走到一半。
        B 越大，这一段上升越集中在 C_mid 附近（在对数横轴上越陡）。
    【参数】C：计算量，一个正数或一串正数；R0：起点；A：渐近线；B：效率（> 0）；C_mid：半程计算量（> 0）
    【返回】C 是一个数时返回 float，否则返回和 C 一样长的 numpy 数组
    【边界】A < R0 也可以（曲线往下走）；C 极大或极小时不会溢出，分别趋于 A 和 R0。
    【例子】sigmoid_curve(8000, 0.3, 0.9, 1.5, 8000) → 0.6（半程：0.3 + 0.6 / 2）
        sigmoid_curve([800, 8000, 80000], 0.3, 0.9, 1.0, 8000) → array([0.3545…, 0.6, 0.8454…])
    【Python 小知识】np.ndim(x) == 0 判断 x 是不是"一个数"（包括 numpy 标量）；这样一个函数既能算一点，也能算一整条曲线。
    """
    R0, A = as_real("R0", R0), as_real("A", A)
    B = as_real("B", B, low=0.0, low_open=True)
    C_mid = as_real("C_mid", C_mid, low=0.0, low_open=True)
    scalar = np.ndim(C) == 0
    C = _as_vector("C", [C] if scalar else C, positive=True)
    R = R0 + (A - R0) * _logistic(B * (np.log(C) - math.log(C_mid)))
    return float(R[0]) if scalar else R


# =============================================================================
# 拟合
# =============================================================================
@dataclass(frozen=True)
class SigmoidFit:
    """
    fit_sigmoid 的结果：一条拟合好的 S 形计算曲线。

    【属性】A：渐近线；B：效率；C_mid：半程计算量；R0：起点（拟合时给定的，不是拟合出来的）；
        rmse：拟合误差，√(平均的 (拟合值 − 数据)²)
    【方法】predict(C)：这条曲线在 C 处的值（= sigmoid_curve(C, R0, A, B, C_mid)），可以用来外推
    【例子】fit = fit_sigmoid(C, R, 0.3)；fit.predict(C[-1] * 10) —— 再花 10 倍计算量时的预测
    【Python 小知识】frozen=True 的 dataclass 不能改属性（fit.A = 1 会报错），结果不会被不小心改掉。
    """
    A: float
    B: float
    C_mid: float
    R0: float
    rmse: float

    def predict(self, C):
        """这条曲线在计算量 C（一个正数或一串正数）处的值。"""
        return sigmoid_curve(C, self.R0, self.A, self.B, self.C_mid)


def _sse(p, x, y):
    """参数 p = (A − R0, B, log C_mid) 时的残差平方和。"""
    r = y - p[0] * _logistic(p[1] * (x - p[2]))
    return float(r @ r)


def _grid_start(x, y, amp):
    """在 (B, log C_mid) 的网格上找最小二乘的起点；amp 为 None 时，每个格点上 A − R0 取线性最小二乘的解。"""
    ls = np.linspace(x.min() - 2.0, x.max() + 2.0, _GRID_L)
    S = _logistic(_GRID_B[:, None, None] * (x[None, None, :] - ls[None, :, None]))   # (B, ℓ, 点) 上的曲线形状
    if amp is None:
        amps = (S @ y) / np.maximum(np.sum(S * S, axis=-1), 1e-300)
    else:
        amps = np.full(S.shape[:2], amp)
    sse = np.sum((amps[..., None] * S - y) ** 2, axis=-1)
    i, j = np.unravel_index(int(np.argmin(sse)), sse.shape)                          # 平局时取第一个：确定性
    return np.array([amps[i, j], _GRID_B[i], ls[j]])


def _levenberg_marquardt(p, x, y, free):
    """从 p 出发最小化 _sse；只动 free 里的参数。每一步解 (JᵀJ + λ·diag(JᵀJ)) δ = Jᵀr，变好就接受并减小 λ，否则加大 λ。"""
    cost, lam = _sse(p, x, y), 1e-3
    for _ in range(_MAX_ITER):
        s = _logistic(p[1] * (x - p[2]))
        ds = s * (1.0 - s)
        J = np.stack([s, p[0] * ds * (x - p[2]), -p[0] * ds * p[1]], axis=1)[:, free]
        r = y - p[0] * s
        H, g = J.T @ J, J.T @ r
        D = np.diag(np.maximum(np.diag(H), 1e-12 * max(float(np.max(np.diag(H))), 1e-300)))
        while lam < 1e12:
            try:
                step = np.linalg.solve(H + lam * D, g)
            except np.linalg.LinAlgError:
                lam *= 10.0
                continue
            q = p.copy()
            q[free] += step
            new = _sse(q, x, y) if q[1] > 0 and abs(q[2]) < _MAX_LOG else math.inf
            if new < cost:
                break
            lam *= 10.0
        else:
            return p                                  # 哪个方向都不能再变好：收敛了
        small = np.all(np.abs(q - p) <= 1e-12 * (np.abs(p) + 1e-12))
        p, cost, lam = q, new, max(lam / 10.0, 1e-12)
        if small:
            return p
    return p


def _fit(x, y, amp):
    """amp 为 None 时拟合 (A − R0, B, log C_mid)，否则固定 A − R0 = amp、只拟合后两个。返回参数向量。"""
    free = [0, 1, 2] if amp is None else [1, 2]
    return _levenberg_marquardt(_grid_start(x, y, amp), x, y, free)


def fit_sigmoid(C, R, R0, A=None, A_max=None):
    """
    用最小二乘把 R(C) − R0 = (A − R0) / (1 + (C_mid / C)^B) 拟合到数据上（ScaleRL 的计算曲线）。

    【思路】记 x = log C、ℓ = log C_mid，模型是 R − R0 = (A − R0) · σ(B (x − ℓ))。
        1. 起点：在 (B, ℓ) 的网格上（B 从 0.1 到 10，ℓ 覆盖数据的 log C 范围再向两边各延伸 2）逐点算误差。
           B、ℓ 固定时模型对 A − R0 是线性的，所以每个格点上 A 直接取线性最小二乘的解；取误差最小的格点。
        2. 从这个起点做 Levenberg-Marquardt（带阻尼的 Gauss-Newton），直到误差不能再变小。
        全部是确定性的 numpy 计算，不用随机数：同样的数据得到同样的结果。
        · 给了 A：渐近线固定为 A，只拟合 B 和 C_mid（知道上限时这样外推更可靠）；
        · 给了 A_max：要求 A ≤ A_max（例如 pass@1 不会超过 1）。先自由拟合；拟合出的 A 超过 A_max 时，
          最优解在边界上，于是改成固定 A = A_max 再拟合一次。
    【参数】C：计算量，一串正数（例如累计采样的解答数）；R：同样长的一串表现（例如路径 pass@1）；
        R0：训练开始时的表现（给定，不拟合）；A：None（拟合）或固定的渐近线（≠ R0）；
        A_max：None（不限制）或 A 的上限（> R0）
    【返回】SigmoidFit(A, B, C_mid, R0, rmse)，可以 .predict(C) 外推
    【边界】C、R 长度必须相同、至少 3 个点、不能有 NaN 或无穷；C 必须全部 > 0。
        同时给 A 和 A_max 时要求 A ≤ A_max。数据还没开始"弯"（看不到渐近线）时，自由拟合的 A 几乎没有约束，
        可能偏得很远：这不是程序错误，而是数据本身回答不了"上限在哪里"。R 全等于 R0 时 B、C_mid 没有意义。
    【例子】
        C = np.arange(256, 51201, 256, dtype=float)
        fit = fit_sigmoid(C, sigmoid_curve(C, 0.3, 0.95, 1.5, 8000.0), 0.3)
        → fit.A ≈ 0.95、fit.B ≈ 1.5、fit.C_mid ≈ 8000（误差在 1e-9 以内），fit.rmse ≈ 0
        fit_sigmoid(C, R, R0, A=1.0) —— 渐近线固定为 1；fit_sigmoid(C, R, R0, A_max=1.0) —— 要求 A ≤ 1
    【Python 小知识】np.linalg.solve(M, v) 解线性方程组 M δ = v，比先求逆矩阵再相乘更快、更准。
    """
    C = _as_vector("C", C, positive=True)
    R = _as_vector("R", R)
    if len(C) != len(R):
        raise ValueError(f"C 和 R 的长度必须相同（每个计算量对应一个表现），收到 len(C)={len(C)}、len(R)={len(R)}")
    if len(C) < 3:
        raise ValueError(f"至少需要 3 个数据点才能拟合 A、B、C_mid 三个参数，收到 {len(C)} 个")
    R0 = as_real("R0", R0)
    if A_max is not None:
        A_max = as_real("A_max", A_max)
        if A_max <= R0:
            raise ValueError(f"A_max（渐近线的上限）必须 > R0={R0!r}，收到 {A_max!r}")
    if A is not None:
        A = as_real("A", A)
        if A == R0:
            raise ValueError(f"固定的 A 不能等于 R0={R0!r}：那样曲线是一条水平线，B 和 C_mid 没有意义")
        if A_max is not None and A > A_max:
            raise ValueError(f"固定的 A={A!r} 超过了 A_max={A_max!r}：两者矛盾")

    x, y = np.log(C), R - R0
    if A is None:
        p = _fit(x, y, None)
        A_fit = R0 + float(p[0])
        if A_max is not None and A_fit > A_max:
            A_fit = A_max
            p = _fit(x, y, A_max - R0)
    else:
        A_fit = A
        p = _fit(x, y, A - R0)
    rmse = math.sqrt(_sse(p, x, y) / len(x))
    return SigmoidFit(A=A_fit, B=float(p[1]), C_mid=math.exp(float(p[2])), R0=R0, rmse=rmse)


# =============================================================================
# 规模曲线：pass@1 随参数量
# =============================================================================
SCALING_SIZES = tuple(float(10 ** (8 + i / 2)) for i in range(9))
"""规模曲线默认的参数量：1e8 … 1e12，每半个数量级一个点（9 个）。"""


def scaling_curve(problems, rng, sizes=SCALING_SIZES, n=16, cot=True, temperature=1.0, level=LEVEL):
    """
    规模曲线：pass@1 随参数量（1e8 … 1e12）怎么变，精确值和采样估计；以及每个情境选 correct 的概率。

    【思路】ToyLLM 的 correct logit 随 log10(参数量) 线性上升，pass@1 差不多是每一步做对的概率的乘积，
        所以它随 log(参数量) 画出一条 S 形曲线。精确值是答对的概率（exact.answer_probs 的平均，真正的 pass@1），
        和采样的 pass@1（最终答案对的比例）估计的是同一个数。每个情境单独看：π(correct | 情境) 是一条 sigmoid。
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
    n = as_int("n", n, low=2)
    cot = as_bool("cot", cot)
    sizes = as_list("sizes", sizes, "参数量", "(1e8, 1e9, 1e10)")
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
        out["exact"].append(float(answer_probs(model, batch, temperature).mean()))
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


# =============================================================================
# 到目标要多少计算
# =============================================================================
def reach_target(history, target, column="pass1_exact"):
    """
    训练记录里第一次达到目标值（column ≥ target）的那一次迭代，以及到那时为止一共采样了多少份解答。

    【思路】"到 pass@1 ≥ 0.9 要多少 RL 计算"：沿着训练记录往下找第一行 column ≥ target，
        读出这一行的 iteration 和 samples（累计采样的解答数，也就是到这时为止用掉的 RL 计算量）。
    【参数】history：toyllm.rl.train 返回的 History（或任何有 "iteration"、"samples" 和 column 三列的 Mapping）；
        target：目标值（有限实数）；column：看哪一列，默认 "pass1_exact"（留出题上的路径 pass@1）
    【返回】(iteration, samples) 两个 int；一直没达到时返回 None
    【边界】三列的长度必须相同；空的训练记录返回 None。
    【例子】reach_target({"iteration": [1, 2, 3], "samples": [256, 512, 768], "pass1_exact": [0.5, 0.8, 0.95]}, 0.8)
        → (2, 512)；目标 0.99 → None
    【Python 小知识】next(生成器, 默认值) 取生成器的第一个元素，生成器是空的就返回默认值：正好表达"第一个满足条件的，没有就 None"。
    """
    if not isinstance(history, Mapping):
        raise TypeError(f"history 必须是训练记录（toyllm.rl.train 返回的 History，或 dict），收到 {type(history).__name__}")
    target = as_real("target", target)
    if not isinstance(column, str):
        raise TypeError(f"column 必须是列名（字符串），收到 {column!r}")
    missing = [c for c in ("iteration", "samples", column) if c not in history]
    if missing:
        raise ValueError(f"history 里缺少这些列：{missing}（column = {column!r}）；有的列是 {list(history)}")
    its, samples, values = history["iteration"], history["samples"], history[column]
    if not len(its) == len(samples) == len(values):
        raise ValueError(f"history 的 iteration、samples、{column} 三列长度必须相同，"
                         f"收到 {len(its)}、{len(samples)}、{len(values)}")
    return next(((int(i), int(n)) for i, n, v in zip(its, samples, values) if v >= target), None)
