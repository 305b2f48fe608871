"""
作业三 · GRPO 的检查：check_group_advantages、check_clipped_surrogate（框架见 framework.py）。
"""

import numpy as np

from .._checks import as_generator
from .framework import all_close, as_array, call, close, failed, fmt, passed, run

ADVANTAGE_CASES = (
    ([1, 0, 0, 0], 4), ([1, 1, 0, 0, 1, 1, 1, 1], 4), ([0, 0, 0, 0, 1, 0, 1, 1], 4),
    ([1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1], 8), ([1, 0], 2), ([0.5, 1.0, 0.0, 0.25, 0.75, 0.5], 3),
)
"""check_group_advantages 用的 (rewards, group_size)：有全对、全错的组，也有不是 0 / 1 的奖励。"""
STD_EPS = 1e-4


def _grpo_adv(r, g, eps=STD_EPS, ddof=1, baseline="mean", scale="group", eps_where="std"):
    """GRPO 优势和几种常见的写错方式（给检查用）。"""
    grp = np.asarray(r, dtype=float).reshape(-1, g)
    if baseline == "mean":
        centred = grp - grp.mean(axis=1, keepdims=True)
    elif baseline == "batch":
        centred = grp - grp.mean()
    elif baseline == "loo":
        centred = grp - (grp.sum(axis=1, keepdims=True) - grp) / (g - 1)
    else:
        centred = grp
    if scale == "none":
        return centred.reshape(-1)
    var = (grp.var(axis=1, ddof=ddof, keepdims=True) if scale == "group" else np.asarray(r, dtype=float).var(ddof=ddof))
    with np.errstate(all="ignore"):
        return _scaled(centred, var, eps, eps_where).reshape(-1)


def _scaled(centred, var, eps, eps_where):
    if eps_where == "std":
        out = centred / (np.sqrt(var) + eps)
    elif eps_where == "var":
        out = centred / np.sqrt(var + eps)
    else:
        out = centred / np.sqrt(var)
    return out


def fresh_advantage_cases(rng, n=4):
    """评分时新抽的 (rewards, group_size)：n 份，每份 1 … 4 组、G = 2 … 8，奖励是 0 / 1 或 0 … 1 之间的数。"""
    cases = []
    for i in range(n):
        g, groups = int(rng.integers(2, 9)), int(rng.integers(1, 5))
        r = rng.integers(0, 2, g * groups).astype(float) if i % 2 == 0 else rng.random(g * groups).round(3)
        cases.append((r.tolist(), g))
    return tuple(cases)


def check_group_advantages(fn, rng=None):
    """
    检查 fn(rewards, group_size) 是否是 GRPO 的组内标准化优势：A_i = (r_i − mean(r)) / (std(r) + 1e-4)，
    均值和标准差都在同一组（同一道题的 G 份解答，连续排列）里算，std 是样本标准差（除以 G − 1，同 TRL）。

    【参数】fn：你的函数，rewards 是 (B,) 数组，B 是 group_size 的倍数；返回 (B,) 数组；
        rng：numpy Generator，给了时再加几组随机抽的奖励（自动评分用，每次评分都不同）
    【返回】CheckResult
    【边界】会试奖励全相同的组（std = 0，优势应该全是 0，不能是 NaN）和不是 0 / 1 的奖励。
    【例子】check_group_advantages(group_advantages)
    """
    from ..rl import losses

    advantages = [f for n, f in vars(losses).items() if n.endswith("advantages") and callable(f)]
    extra = () if rng is None else fresh_advantage_cases(as_generator("rng", rng))
    return run(fn, "group_advantages", lambda name, fn: _check_group_advantages(name, fn, ADVANTAGE_CASES + extra),
               advantages)


def _check_group_advantages(name, fn, table):
    from ..rl import group_advantages

    cases = [(np.array(r, dtype=float), g) for r, g in table]
    got = [as_array(call(fn, r.copy(), g)) for r, g in cases]
    want = [group_advantages(r, g, "grpo", "group", STD_EPS) for r, g in cases]
    tol = dict(rtol=1e-6, atol=1e-8)
    if all_close(got, want, **tol):
        return passed(name, f"通过（{len(cases)} 组奖励，包括全对、全错的组和 G = 2、3、4、8）")
    if any(g is None for g in got):
        return failed(name, "你的函数没有返回数组（是不是忘了 return？）")
    for (r, g), x in zip(cases, got):
        if x.shape != r.shape:
            return failed(name, f"形状不对：应该返回和 rewards 一样的形状 {r.shape}（每份解答一个优势），"
                                f"你返回的是 {x.shape}。可以先 reshape(-1, G) 按组算，最后再 reshape(-1)。",
                          [f"rewards = {fmt(r)}，group_size = {g}"])
    const = [i for i, (r, g) in enumerate(cases) if np.any(np.ptp(r.reshape(-1, g), axis=1) == 0)]
    if any(not np.all(np.isfinite(got[i])) for i in const):
        return failed(name, "奖励全相同的组，标准差是 0，你得到了 NaN 或无穷大：分母要加上 eps（std + 1e-4），"
                            "这样这一组的优势就是 0 —— 它对梯度没有贡献。", _adv_example(cases, got, want))
    wrong = {
        "用了总体标准差（除以 G），GRPO 用样本标准差（除以 G − 1，np.std(..., ddof=1)，和 TRL 一样）。":
            dict(ddof=0),
        "忘了减去基线（组平均）：只除以了标准差。做错的解答优势应该是负的。": dict(baseline="none"),
        "忘了除以标准差：这是 Dr. GRPO 的「减组平均」，GRPO 还要除以 (std + eps)。": dict(scale="none"),
        "差了 G/(G−1) 倍：你减的是同组「其他人」的平均（留一法，RLOO）。GRPO 减的是包括自己在内的组平均。":
            dict(baseline="loo"),
        "基线要按组算：你减的是整批的平均。每道题难度不同，要和同一道题的其他解答比。": dict(baseline="batch"),
        "标准差要按组算：你除的是整批的标准差（那是 TRL 的 scale_rewards=\"batch\"）。": dict(scale="batch"),
        "均值和标准差都要按组算：你减的是整批的平均、除的是整批的标准差。每道题难度不同，"
        "要和同一道题的 G 份解答比（reshape(-1, G) 以后沿 axis=1 算），全对或全错的组优势才是 0。":
            (dict(baseline="batch", scale="batch"), dict(baseline="batch", scale="batch", ddof=0)),
        "eps 要加在标准差上：(std + eps)，不是加在方差里 sqrt(var + eps)。": dict(eps_where="var"),
    }
    for eps in (0.0, 1e-8, 1e-6, 1e-5, 1e-3):
        other = [np.nan_to_num(_grpo_adv(r, g, eps=eps)) if eps == 0 else _grpo_adv(r, g, eps=eps) for r, g in cases]
        if all_close(got, other, **tol):
            return failed(name, f"几乎对了，只是分母里的 eps 不一样：请用 std + 1e-4（和 TRL 一样），"
                                f"你的结果像是用了 {eps:g}。", _adv_example(cases, got, want))
    if all(close(-x, w, **tol) for x, w in zip(got, want)):
        return failed(name, "符号反了：做对的解答（奖励高于组平均）优势应该是正的。", _adv_example(cases, got, want))
    for hint, kws in wrong.items():                         # 一个提示可以对应几种写法（元组）
        if any(all_close(got, [_grpo_adv(r, g, **kw) for r, g in cases], **tol)
               for kw in (kws if isinstance(kws, tuple) else (kws,))):
            return failed(name, hint, _adv_example(cases, got, want))
    return failed(name, "对比一下下面这个例子：A_i = (r_i − 组平均) / (组内样本标准差 + 1e-4)。", _adv_example(cases, got, want))


def _adv_example(cases, got, want):
    for (r, g), x, w in zip(cases, got, want):
        if not close(x, w, rtol=1e-6, atol=1e-8):
            return [f"例子：rewards = {fmt(r)}，group_size = {g}", f"你的：{fmt(x, 7)}", f"应该：{fmt(w, 7)}"]
    return []


SURROGATE_RATIOS = np.array([0.5, 0.75, 0.79, 0.81, 0.9, 1.0, 1.1, 1.19, 1.21, 1.27, 1.29, 1.5, 2.0])
SURROGATE_CASES = ((0.2, 0.2), (0.2, 0.28), (0.1, 0.3))
"""check_clipped_surrogate 试的重要性比率 ρ（包括裁剪边界两侧）和 (eps_low, eps_high)；优势取 +1.5 和 −0.7。"""


def _surrogate(rho, adv, el, eh, kind="right"):
    lo, hi = 1.0 - el, 1.0 + eh
    if kind == "no_low":
        lo = -np.inf
    elif kind == "no_high":
        hi = np.inf
    elif kind == "swap":
        lo, hi = 1.0 - eh, 1.0 + el
    elif kind == "low_only":
        hi = 1.0 + el
    elif kind == "high_only":
        lo = 1.0 - eh
    clipped = np.clip(rho, lo, hi) * adv
    if kind == "max":
        return -np.maximum(rho * adv, clipped)
    if kind == "clipped_only":
        return -clipped
    if kind == "unclipped":
        return -rho * adv
    return -np.minimum(rho * adv, clipped)


def check_clipped_surrogate(fn, rng=None):
    """
    检查 fn(ratio, adv, eps_low, eps_high) 是否返回每一步的裁剪替代损失
    l = −min(ρ A, clip(ρ, 1 − ε_low, 1 + ε_high) A)（PPO / GRPO；ε_high > ε_low 是 DAPO 的 clip-higher）。

    【参数】fn：你的函数；ratio、adv 是形状相同的数组；返回同形状的损失数组
        （也可以返回 (损失, 下界裁剪, 上界裁剪)，这里只看损失）；rng：numpy Generator，给了时再加两组随机抽的
        ρ、A 和 (ε_low, ε_high)（自动评分用）
    【返回】CheckResult
    【例子】check_clipped_surrogate(clipped_surrogate)
    """
    from ..rl import clipped_surrogate

    cases = _surrogate_cases(None if rng is None else as_generator("rng", rng))
    return run(fn, "clipped_surrogate", lambda name, fn: _check_clipped_surrogate(name, fn, cases), [clipped_surrogate])


def _surrogate_cases(rng=None):
    rho = np.concatenate([SURROGATE_RATIOS, SURROGATE_RATIOS])
    adv = np.concatenate([np.full(len(SURROGATE_RATIOS), 1.5), np.full(len(SURROGATE_RATIOS), -0.7)])
    cases = [(rho, adv, el, eh) for el, eh in SURROGATE_CASES]
    for _ in range(0 if rng is None else 2):
        cases.append((rng.uniform(0.3, 2.5, 16).round(4), rng.normal(0, 1, 16).round(4),
                      round(float(rng.uniform(0.05, 0.4)), 3), round(float(rng.uniform(0.05, 0.4)), 3)))
    return cases


def _check_clipped_surrogate(name, fn, cases):
    from ..rl import clipped_surrogate

    got = []
    for rho, adv, el, eh in cases:
        out = call(fn, rho.copy(), adv.copy(), el, eh)
        if isinstance(out, tuple) and len(out) == 3:
            out = out[0]
        got.append(as_array(out))
    want = [clipped_surrogate(rho, adv, el, eh).loss for rho, adv, el, eh in cases]
    if all_close(got, want):
        return passed(name, f"通过（{len(SURROGATE_RATIOS)} 个重要性比率 × 正负优势 × {len(cases)} 组 (ε_low, ε_high)，"
                            "包括裁剪边界两侧）")
    if any(g is None for g in got):
        return failed(name, "你的函数没有返回数组（是不是忘了 return？）")
    for (rho, *_), g in zip(cases, got):
        if g.shape != rho.shape:
            return failed(name, f"形状不对：每一步一个损失，应该返回形状 {rho.shape}，你返回的是 {g.shape}"
                                "（是不是先求了平均？聚合由训练循环来做）。")
    if all(close(-g, w) for g, w in zip(got, want)):
        return failed(name, "符号反了：你返回的是目标 min(ρA, clip(ρ)A)，损失要取负号 −min(...)（训练是让损失变小）。",
                      _surr_example(cases, got, want))
    wrong = {
        "忘了截断下边：ρ 要夹在 [1 − ε_low, 1 + ε_high] 里，你只截了上边。A < 0、ρ 很小时就能看出来。": "no_low",
        "忘了截断上边：ρ 要夹在 [1 − ε_low, 1 + ε_high] 里，你只截了下边。A > 0、ρ 很大时就能看出来。": "no_high",
        "ε_low 和 ε_high 用反了：下界是 1 − ε_low，上界是 1 + ε_high。": "swap",
        "上下界用了同一个 ε（ε_low）：上界应该是 1 + ε_high（DAPO 的 clip-higher 里两者不同）。": "low_only",
        "上下界用了同一个 ε（ε_high）：下界应该是 1 − ε_low。": "high_only",
        "应该取 min（两项里更「悲观」的那个），你取了 max。": "max",
        "少了 min：只用了裁剪后的那一项。ρ 在区间外、又对目标不利时，要用没裁剪的 ρA。": "clipped_only",
        "没有裁剪：这是 −ρA，还要和 −clip(ρ, 1 − ε_low, 1 + ε_high)·A 取 min。": "unclipped",
    }
    for hint, kind in wrong.items():
        if all(close(g, _surrogate(rho, adv, el, eh, kind)) for g, (rho, adv, el, eh) in zip(got, cases)):
            return failed(name, hint, _surr_example(cases, got, want))
    return failed(name, "对比一下下面这个例子：l = −min(ρA, clip(ρ, 1 − ε_low, 1 + ε_high)·A)。",
                  _surr_example(cases, got, want))


def _surr_example(cases, got, want):
    for (rho, adv, el, eh), g, w in zip(cases, got, want):
        bad = np.flatnonzero(~np.isclose(g, w, rtol=1e-7, atol=1e-9))
        if len(bad):
            i = bad[0]
            return [f"例子：ρ = {rho[i]:g}，A = {adv[i]:g}，ε_low = {el:g}，ε_high = {eh:g}：你的 {g[i]:.6g}，应该 {w[i]:.6g}"]
    return []
