"""
作业面板的图：REINFORCE 梯度估计（作业一）、pass@k 的两种估计（作业二）。

【思路】数据来自 dashboards 的面板逻辑函数；和 plots 里的图一样：ax= / axes= 给了就画进去，不给就新建一张图。
    plots 转出这里的名字（from toyllm.plots import plot_gradient_estimates 照样能用）。
"""

import numpy as np

from ._checks import as_choice
from .arithmetic import CONTEXT_NAMES, CONTEXTS, PROCEDURE_NAMES, PROCEDURES
from .plotstyle import given_axes, log2_axis, new_or_given, pyplot


def plot_gradient_estimates(result, axes=None):
    """
    REINFORCE 梯度估计 vs 精确梯度（作业一的面板，数据来自 dashboards.run_gradient_dashboard_logic）。

    【思路】左：每个情境（所选做法那一列）的精确梯度（灰条），无基线和留一法基线两种估计的平均 ± 标准差；
        右：所选情境、所选做法那个数的 repeats 次估计的直方图，竖线是精确值。
    【参数】result：run_gradient_dashboard_logic 的结果（属性 exact、none、rloo、context、procedure）；
        axes：画到已有的两个坐标轴上（默认新建一张 12 × 4.6 英寸的图）
    【返回】两个 Axes 的 numpy 数组 [左图, 右图]
    """
    if not all(hasattr(result, a) for a in ("exact", "none", "rloo", "context", "procedure")):
        raise TypeError(f"result 必须是 run_gradient_dashboard_logic 的结果，收到 {result!r}")
    if axes is None:
        fig, axes = pyplot().subplots(1, 2, figsize=(12.0, 4.6), gridspec_kw={"width_ratios": [1.25, 1]})
        fig.subplots_adjust(left=0.15, right=0.98, bottom=0.12, top=0.92, wspace=0.25)
    ax1, ax2 = axes = given_axes(axes, 2, "fig.subplots(1, 2)")
    exact, none, rloo = result.exact, result.none, result.rloo
    c, j = CONTEXTS.index(result.context), PROCEDURES.index(result.procedure)
    y = np.arange(len(CONTEXTS))[::-1]
    ax1.barh(y, exact[:, j], height=0.6, color="0.75", label="精确梯度")
    ax1.errorbar(none[:, :, j].mean(axis=0), y + 0.15, xerr=none[:, :, j].std(axis=0, ddof=1), fmt="o", ms=4,
                 color="C3", capsize=2, label="无基线：平均 ± 标准差")
    ax1.errorbar(rloo[:, :, j].mean(axis=0), y - 0.15, xerr=rloo[:, :, j].std(axis=0, ddof=1), fmt="s", ms=4,
                 color="C0", capsize=2, label="留一法基线：平均 ± 标准差")
    ax1.legend(loc="upper right")
    ax1.set(yticks=y, yticklabels=[CONTEXT_NAMES[k] for k in CONTEXTS])
    ax1.axvline(0, color="k", lw=0.8)
    ax1.set(xlabel=f"∂J / ∂Δ（做法：{PROCEDURE_NAMES[result.procedure]}）", title="每个情境的梯度：精确值与 REINFORCE 估计")
    a, b = none[:, c, j], rloo[:, c, j]
    bins = np.linspace(min(a.min(), b.min()), max(a.max(), b.max()), 31)
    ax2.hist(a, bins=bins, alpha=0.55, color="C3", histtype="stepfilled", label="无基线")
    ax2.hist(b, bins=bins, alpha=0.55, color="C0", histtype="stepfilled", label="留一法基线")
    ax2.axvline(exact[c, j], color="k", lw=1.5, label="精确值")
    ax2.set(title=f"「{CONTEXT_NAMES[result.context]}」的 {len(a)} 次估计", xlabel="梯度估计", ylabel="次数")
    ax2.legend()
    return axes


ESTIMATOR_NAMES = {"unbiased": "无偏估计 1 − C(n−c, k)/C(n, k)", "biased": "有偏估计 1 − (1 − c/n)^k", "both": "两种都画"}
"""pass@k 估计方法的中文名（作业二面板的下拉框）。"""
_ESTIMATOR_LABELS = {"unbiased": r"无偏估计 $1 - \binom{n-c}{k} / \binom{n}{k}$", "biased": r"有偏估计 $1 - (1 - c/n)^k$"}
"""图例里的写法（mathtext，公式显示成公式；下拉框不能显示公式，所以用上面的纯文字）。"""


def plot_pass_at_k_estimates(result, estimator="both", ax=None):
    """
    从 n 份样本估计 pass@k：精确值（黑线）和无偏 / 有偏估计的平均 ± 1 个标准差（作业二的面板）。

    【参数】result：dashboards.run_passk_dashboard_logic 的结果（属性 ks、exact、unbiased、biased、n）；
        estimator："unbiased" / "biased" / "both"；ax：画到已有的坐标轴上（默认新建一张 8 × 4.6 英寸的图）
    【返回】画了图的 Axes
    """
    if not all(hasattr(result, a) for a in ("ks", "exact", "unbiased", "biased", "n")):
        raise TypeError(f"result 必须是 run_passk_dashboard_logic 的结果，收到 {result!r}")
    estimator = as_choice("estimator", estimator, tuple(ESTIMATOR_NAMES))
    fig, ax = new_or_given(ax, (8.0, 4.6))
    ks = result.ks
    ax.plot(ks, [result.exact[k] for k in ks], color="k", lw=2, marker="o", label=r"精确值 $1 - (1 - p)^k$")
    for key, arr, color in (("unbiased", result.unbiased, "C0"), ("biased", result.biased, "C3")):
        if estimator in (key, "both"):
            m, s = arr.mean(axis=0), arr.std(axis=0, ddof=1)
            ax.plot(ks, m, color=color, marker="s", ms=4, label=_ESTIMATOR_LABELS[key] + "（平均）")
            ax.fill_between(ks, m - s, m + s, color=color, alpha=0.2)
    log2_axis(ax, ks)
    ax.set(ylim=(0, 1.02), xlabel="k", ylabel="pass@k", title=f"从 n = {result.n} 份样本估计 pass@k（带子：±1 个标准差）")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    if fig is not None:
        fig.subplots_adjust(left=0.09, right=0.98, bottom=0.12, top=0.92)
    return ax


__all__ = ["ESTIMATOR_NAMES", "plot_gradient_estimates", "plot_pass_at_k_estimates"]
