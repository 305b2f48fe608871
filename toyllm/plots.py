"""
第 6 讲的标准图：pass@k 曲线、测试时计算曲线、规模曲线、训练前后每个情境的对比、训练曲线、精确值 vs 采样估计。

【思路】每个函数吃的是 toyllm 别的函数直接给出的数据（experiments.inference_curves、scaling.scaling_curve、
    experiments.compare_exact_sampled、RL 的 History、作业面板的逻辑函数……），画一张中文标注的图。
    · 统一的约定（和 pandas、seaborn 一样）：单张图的函数有参数 ax=，多张小图的函数有参数 axes=。
      不给时新建一张固定大小的图（pyplot）；给了就画进你给的坐标轴（不新建图、不改图的大小和排版，
      也不加总标题 —— 那些归图的主人管）。返回值总是画了东西的坐标轴：单张图返回 Axes，
      多张小图返回 Axes 的 numpy 数组；要整张图就用 ax.figure。作业的控制面板（toyllm.dashboards）
      正是把自己的坐标轴传进这些函数，所以面板和 notebook 走的是同一条画图的路。
    · 作业面板的两张图（plot_gradient_estimates、plot_pass_at_k_estimates）在 dashboard_plots.py，这里转出。
    · 画之前调用 plotstyle.use_chinese_font()：用包里自带的中文字体，没有系统中文字体也能显示；负号用 "-"。
    · 误差棒是 95% 置信区间（估计值 ± 1.96 × 标准误）。
    · 函数不调用 plt.show()：notebook 里（%matplotlib inline）单元格结束时自动显示；脚本里可以 ax.figure.savefig(...)。
【用法】
    from toyllm.plots import plot_scaling
    axes = plot_scaling(scaling_curve(problems, np.random.default_rng(0)))
    axes[0].figure.savefig("scaling.png")
【Python 小知识】matplotlib.pyplot 在函数里面才导入（延迟导入）：import toyllm 时不会加载 matplotlib。
"""

import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist

import numpy as np

from .arithmetic import CONTEXT_NAMES, CONTEXTS, OP_NAMES
from .dashboard_plots import ESTIMATOR_NAMES, plot_gradient_estimates, plot_pass_at_k_estimates  # 转出
from .plotstyle import given_axes, log2_axis, new_or_given, pyplot
from .policy import prob_table

SINGLE = (7.0, 4.5)
"""单张图的大小（英寸）。"""
WIDE = (11.0, 4.5)
"""一行几张图的大小（英寸）：不超过 plotstyle.MAX_FIGURE_WIDTH_IN，缩小到 JupyterLab 的输出区以后字还够大。"""

Z95 = NormalDist().inv_cdf(0.975)

COLUMN_LABELS = {
    "iteration": "迭代次数", "round": "轮次", "samples": "累计样本数",
    "reward": "平均奖励", "pass1_exact": "路径 pass@1", "pass1_sampled": "采样 pass@1",
    "entropy": "熵（nats）", "kl_est": "KL（估计）", "kl_exact": "KL（精确）",
    "clip_low": "裁剪比例（下界）", "clip_high": "裁剪比例（上界）",
    "zero_std": "奖励全相同的组的比例", "groups": "参与训练的组数",
    "grad_norm": "梯度范数", "loss": "损失", "kept": "保留的样本数", "rationalized": "提示后做对的题数",
}
"""训练曲线的列名（toyllm.rl.History 的列）→ 中文标签；没有列出的列直接用列名。"""

_OP_CMAPS = {"add": "Blues", "sub": "Greens", "mul": "Reds"}


def _context_colors():
    """12 个情境的颜色：加法蓝、减法绿、乘法红，越难颜色越深。"""
    import matplotlib

    colors = []
    for op, h in CONTEXTS:
        levels = [hh for oo, hh in CONTEXTS if oo == op]
        shade = 0.45 + 0.5 * levels.index(h) / (len(levels) - 1)
        colors.append(matplotlib.colormaps[_OP_CMAPS[op]](shade))
    return colors


def _context_family_legend(ax, colors):
    """12 个情境的图例只列 3 行（加法 / 减法 / 乘法，各用最深的颜色），再说明"颜色越深越难"：12 行的图例读不过来。"""
    from matplotlib.lines import Line2D

    handles = []
    for op in _OP_CMAPS:
        last = max(i for i, (o, _) in enumerate(CONTEXTS) if o == op)
        handles.append(Line2D([], [], color=colors[last], lw=2, label=OP_NAMES[op]))
    ax.legend(handles=handles, loc="lower right", title="颜色越深，情境越难")


def _as_value_err(v):
    """float 或 Estimate → (值, 误差棒的下半、上半)。"""
    if hasattr(v, "ci_low") and hasattr(v, "value"):
        return float(v.value), float(v.value - v.ci_low), float(v.ci_high - v.value)
    try:
        return float(v), 0.0, 0.0
    except (TypeError, ValueError):
        raise TypeError(f"曲线上的值必须是数或 Estimate，收到 {v!r}") from None


def _check_mapping(name, value, example):
    if not isinstance(value, Mapping) or not value:
        raise TypeError(f"{name} 必须是非空的字典，例如 {example}，收到 {type(value).__name__}")
    return value


def _check_keys(name, data, keys, source):
    if not isinstance(data, Mapping):
        raise TypeError(f"{name} 必须是 {source} 返回的字典，收到 {type(data).__name__}")
    missing = [k for k in keys if k not in data]
    if missing:
        raise ValueError(f"{name} 缺少键 {missing}；请直接传入 {source} 的返回值")
    return data


def _tight_with_suptitle(fig):
    """tight_layout，并在顶上给总标题留出 0.4 英寸（tight_layout 本身不管 suptitle）。"""
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_size_inches()[1]))


def _panel_grid(axes, n, height, example, **subplots_kw):
    """
    n 张小图的坐标轴，返回 (Figure 或 None, n 个 Axes 的一维数组)。

    不给 axes 时新建一张图：每行最多 3 张、每行高 height 英寸，多出来的格子藏起来；给了就检查并用前 n 个。
    """
    if axes is not None:
        return None, given_axes(axes, n, example)
    ncols = min(3, n)
    nrows = math.ceil(n / ncols)
    fig, grid = pyplot().subplots(nrows, ncols, figsize=(WIDE[0], height * nrows), squeeze=False, **subplots_kw)
    for ax in grid.ravel()[n:]:
        ax.set_visible(False)
    return fig, grid.ravel()[:n]


def _log10_axis(ax, sizes):
    """参数量的对数坐标：只在 10 的整数次幂上标刻度（不画次刻度，图更干净、画得也更快）。"""
    from matplotlib.ticker import LogFormatterSciNotation, NullLocator

    ax.set_xscale("log")
    lo, hi = math.floor(math.log10(min(sizes)) + 1e-9), math.ceil(math.log10(max(sizes)) - 1e-9)
    ax.set_xticks([10.0 ** e for e in range(lo, hi + 1)])
    ax.xaxis.set_major_formatter(LogFormatterSciNotation())
    ax.xaxis.set_minor_locator(NullLocator())


# =============================================================================
# pass@k
# =============================================================================
def plot_pass_at_k(curves, title="pass@k 随 k 的变化", ax=None):
    """
    pass@k 曲线：横轴 k（对数刻度），纵轴 pass@k，每条曲线一个模型（或一种算法）。

    【参数】curves：{图例名: {k: 值}}，值可以是 float（例如 exact.exact_pass_at_k 的结果）或 Estimate
        （例如 evaluation.pass_at_k_sampled 的结果，会画 95% 误差棒）；title：标题；
        ax：画到已有的坐标轴上（默认新建一张 SINGLE 大小的图）
    【返回】画了图的 Axes
    【例子】plot_pass_at_k({"1B（精确）": exact_pass_at_k(ToyLLM(1e9), problems, (1, 2, 4, 8))})
    """
    curves = _check_mapping("curves", curves, '{"1B": {1: 0.48, 2: 0.69}}')
    _, ax = new_or_given(ax, SINGLE)
    all_ks = set()
    for label, curve in curves.items():
        curve = _check_mapping(f"curves[{label!r}]", curve, "{1: 0.48, 2: 0.69}")
        ks = sorted(curve)
        all_ks.update(ks)
        vals = [_as_value_err(curve[k]) for k in ks]
        y = [v[0] for v in vals]
        err = np.array([[v[1] for v in vals], [v[2] for v in vals]])
        if np.any(err > 0):
            ax.errorbar(ks, y, yerr=err, marker="o", capsize=3, label=str(label))
        else:
            ax.plot(ks, y, marker="o", label=str(label))
    log2_axis(ax, sorted(all_ks))
    ax.set(ylim=(0, 1.05), xlabel="k（每道题的样本数）", ylabel="pass@k", title=title)
    ax.grid(alpha=0.3)
    ax.legend()
    return ax


def plot_test_time_compute(data, by="metric", title=None, axes=None):
    """
    测试时计算曲线（experiments.inference_curves 的结果）。

    【思路】by="metric"：三张小图 pass@k / maj@k / best-of-k（有噪声的验证器），每张里每个模型一条线 ——
        看"小模型多采样"能不能追上大模型；by="model"：每个模型一张小图，里面是三种用法 —— 看同样多的样本，
        有完美验证器、只能投票、验证器会出错，差多少。精确验证器的 best-of-k 和 pass@k 完全相同，所以不再单独画。
        虚线是精确的 pass@k = 1 − (1 − q)^k（q 是答对的概率），误差棒是 95% 置信区间。
    【参数】data：inference_curves 的返回值；by："metric" 或 "model"；title：总标题（默认自动生成；给了 axes 时不画）；
        axes：画到已有的坐标轴上（至少和小图一样多：by="metric" 时 3 个，by="model" 时每个模型 1 个）
    【返回】画了图的 Axes 的 numpy 数组（每张小图一个）
    """
    data = _check_keys("data", data, ("ks", "models", "verifier_error"), "experiments.inference_curves")
    if by not in ("metric", "model"):
        raise ValueError(f"by 必须是 'metric' 或 'model'，收到 {by!r}")
    ks, models = list(data["ks"]), list(data["models"])
    noisy = f"best-of-k（验证器错 {data['verifier_error']:.0%}）"
    metrics = [("pass_at_k", "pass@k（有一个对就算对）"), ("maj_at_k", "maj@k（多数投票）"), ("best_of_k_noisy", noisy)]
    panels = metrics if by == "metric" else models
    fig, axes = _panel_grid(axes, len(panels), 4.2, "fig.subplots(1, 3)", sharey=True)
    for ax, panel in zip(axes, panels):
        if by == "metric":
            key, name = panel
            for i, m in enumerate(models):
                color = f"C{i}"
                _errorbar(ax, ks, m[key], m[key + "_se"], color=color, label=_model_label(m))
                if key == "pass_at_k":
                    ax.plot(ks, m["exact_pass_at_k"], ls="--", color=color, alpha=0.7)
            ax.set_title(name)
        else:
            m = panel
            for i, (key, name) in enumerate(metrics):
                _errorbar(ax, ks, m[key], m[key + "_se"], color=f"C{i}", label=name)
            ax.plot(ks, m["exact_pass_at_k"], ls="--", color="k", alpha=0.6, label="精确 pass@k")
            ax.set_title(_model_label(m))
        log2_axis(ax, ks)
        ax.set(ylim=(0, 1.05), xlabel="k（每道题的样本数）")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    axes[0].set_ylabel("准确率")
    if fig is not None:
        fig.suptitle(title or f"测试时计算：每道题花 k 个样本（{data.get('problems', '?')} 道题，虚线为精确 pass@k）")
        _tight_with_suptitle(fig)
    return axes


def _model_label(m):
    return f"{m['name']}" + ("" if m.get("cot", True) or "无思维链" in m["name"] else "（无思维链）")


def _errorbar(ax, x, y, se, **kw):
    err = Z95 * np.nan_to_num(np.asarray(se, dtype=float))
    ax.errorbar(x, y, yerr=err, marker="o", ms=4, capsize=3, **kw)


# =============================================================================
# 规模
# =============================================================================
def plot_scaling(data, title=None, axes=None):
    """
    规模曲线（scaling.scaling_curve 的结果）：左边是 pass@1 随参数量，右边是每个情境选 correct 的概率。

    【思路】横轴是参数量（对数刻度）。线是精确值，带误差棒的点是采样估计（95% 置信区间）。
        右图 12 个情境：蓝色加法、绿色减法、红色乘法，颜色越深越难。
    【参数】data：scaling_curve 的返回值；title：总标题（默认自动生成；给了 axes 时不画）；
        axes：画到已有的两个坐标轴上（默认新建一张 13 × 5 英寸的图）
    【返回】两个 Axes 的 numpy 数组 [左图, 右图]
    """
    data = _check_keys("data", data, ("sizes", "exact", "sampled", "sampled_se", "context_exact", "context_sampled",
                                      "context_se", "contexts"), "scaling.scaling_curve")
    sizes = np.asarray(data["sizes"], dtype=float)
    fig = None
    if axes is None:
        fig, axes = pyplot().subplots(1, 2, figsize=(11.0, 5.0), gridspec_kw={"width_ratios": [1, 1.35]})
    ax1, ax2 = axes = given_axes(axes, 2, "fig.subplots(1, 2)")
    ax1.plot(sizes, data["exact"], color="C0", label="精确值")
    _errorbar(ax1, sizes, data["sampled"], data["sampled_se"], color="C1", ls="none",
              label=f"采样估计（每道题 {data.get('n', '?')} 次）")
    _log10_axis(ax1, sizes)
    ax1.set(ylim=(0, 1.02), xlabel="参数量", ylabel="pass@1",
            title="pass@1 随参数量的变化" + ("" if data.get("cot", True) else "（无思维链）"))
    ax1.grid(alpha=0.3)
    ax1.legend(loc="lower right")

    colors = _context_colors()
    ce, cs, cse = (np.asarray(data[k], dtype=float) for k in ("context_exact", "context_sampled", "context_se"))
    for i, name in enumerate(data["contexts"]):
        ax2.plot(sizes, ce[:, i], color=colors[i], label=name)
        ok = np.isfinite(cs[:, i])
        ax2.errorbar(sizes[ok], cs[ok, i], yerr=Z95 * cse[ok, i], color=colors[i], ls="none", marker="o", ms=3,
                     capsize=2)
    _log10_axis(ax2, sizes)
    ax2.set(ylim=(0, 1.02), xlabel="参数量", ylabel="选「正确」的概率", title="每个情境选「正确」的概率（线：精确，点：采样）")
    ax2.grid(alpha=0.3)
    _context_family_legend(ax2, colors)
    if fig is not None:
        fig.suptitle(title or f"规模：{data.get('problems', '?')} 道题上的精确值与采样估计")
        _tight_with_suptitle(fig)
    return axes


# =============================================================================
# 训练前后、训练曲线
# =============================================================================
def plot_context_bars(before, after, labels=("训练前", "训练后"), title="每个情境选「正确」的概率：训练前后",
                      ax=None, values=True):
    """
    训练前后每个情境选 correct 的概率，并排的横条。

    【参数】before、after：两个模型（ToyLLM / TrainableLLM）；labels：两个图例名；title；
        ax：画到已有的坐标轴上（默认新建一张 8 × 7 英寸的图）；values：是否在横条旁边写出概率
    【返回】画了图的 Axes
    【例子】plot_context_bars(TrainableLLM(1e9), trained_model)
    """
    for name, m in (("before", before), ("after", after)):
        if not (hasattr(m, "size") and hasattr(m, "cot")):
            raise TypeError(f"{name} 必须是 ToyLLM 或 TrainableLLM，收到 {m!r}")
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__") or len(labels) != 2:
        raise (ValueError if isinstance(labels, str) or hasattr(labels, "__len__") else TypeError)(
            f"labels 必须是两个图例名，例如 ('训练前', '训练后')，收到 {labels!r}")
    p0 = prob_table(before)[:, 0]
    p1 = prob_table(after)[:, 0]
    y = np.arange(len(CONTEXTS))[::-1]
    fig, ax = new_or_given(ax, (8.0, 7.0))
    ax.barh(y + 0.2, p0, height=0.4, color="C7", label=labels[0])
    ax.barh(y - 0.2, p1, height=0.4, color="C0", label=labels[1])
    for yy, a, b in zip(y, p0, p1) if values else ():
        ax.text(b + 0.01, yy - 0.2, f"{b:.2f}", va="center")
        ax.text(a + 0.01, yy + 0.2, f"{a:.2f}", va="center", color="0.4")
    ax.set(yticks=y, yticklabels=[CONTEXT_NAMES[key] for key in CONTEXTS], xlim=(0, 1.12 if values else 1.0),
           xlabel="π(选「正确」)", title=title)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)     # 放到图下面，不挡住横条上的数字
    if fig is not None:
        fig.tight_layout()
    return ax


def plot_training_curves(history, x="iteration", columns=None, labels=None, title="训练曲线", axes=None):
    """
    训练曲线：历史记录里的每一列画一张小图（也可以几列画在同一张小图里）。

    【参数】history：{列名: 一串数}，任何 Mapping 都可以（例如 RL 训练返回的 History）；
        x：横轴的列名（默认 "iteration"；没有这一列时用 0, 1, 2, …）；
        columns：要画的列（默认除 x 以外的全部数值列）；其中一项也可以是几个列名的元组，
            例如 [("pass1_exact", "pass1_sampled"), "entropy"]：元组里的列画在同一张小图里，带图例；
        labels：{列名: 中文标签}，补充或覆盖 COLUMN_LABELS；title：总标题（给了 axes 时不画）；
        axes：画到已有的坐标轴上（至少和小图一样多；默认新建一张图，每行 3 张小图）
    【返回】画了图的 Axes 的 numpy 数组（每张小图一个）
    【边界】每一列的长度必须和横轴相同；非数值的列（默认时）跳过；指定了不存在的列会报错。
        列里的 NaN（例如 tinylm.sft 的 greedy：每 eval_every 步才评估一次）不画，线连接有数的点。
    【例子】plot_training_curves({"iteration": [0, 1, 2], "pass1_exact": [0.48, 0.52, 0.55]})
    """
    if not isinstance(history, Mapping) or not history:
        raise TypeError(f"history 必须是 {{列名: 一串数}} 的字典（或 History），收到 {type(history).__name__}")
    names = dict(COLUMN_LABELS, **(labels or {}))
    if x in history:
        xs = _numeric(x, history[x])
    else:
        xs = None
    if columns is None:
        columns = [c for c in history if c != x and _is_numeric(history[c])]
    else:
        if isinstance(columns, str) or not isinstance(columns, Sequence):
            raise TypeError(f"columns 必须是列名的列表，收到 {columns!r}")
        if not columns:
            raise ValueError("columns 不能是空的：至少要画一列")
        for c in (c for group in columns for c in (group if isinstance(group, tuple) else (group,))):
            if not isinstance(c, str) or c not in history:
                raise ValueError(f"columns 里的列 {c!r} 不在 history 里；有的列：{list(history)}")
    if not columns:
        raise ValueError("history 里没有可以画的数值列")
    panels = [group if isinstance(group, tuple) else (group,) for group in columns]
    series = {c: _numeric(c, history[c]) for group in panels for c in group}
    if xs is None:
        xs = np.arange(len(next(iter(series.values()))))
    for c, ys in series.items():
        if len(ys) != len(xs):
            raise ValueError(f"列 {c!r} 有 {len(ys)} 个数，横轴 {x!r} 有 {len(xs)} 个，长度必须相同")
    fig, axes = _panel_grid(axes, len(panels), 3.3, "fig.subplots(1, 2)")
    for ax, group in zip(axes, panels):
        for i, c in enumerate(group):
            ok = ~np.isnan(series[c])               # 没有评估的行是 NaN：只连有数的点
            ax.plot(xs[ok], series[c][ok], color=f"C{i}", label=names.get(c, c))
        ax.set(title="、".join(names.get(c, c) for c in group), xlabel=names.get(x, x))
        ax.grid(alpha=0.3)
        if len(group) > 1:
            ax.legend()
    if fig is not None:
        fig.suptitle(title)
        _tight_with_suptitle(fig)
    return axes


def _is_numeric(values):
    """values 是不是一串（至少一个）数：默认画哪些列。"""
    try:
        return _numeric("", values).size > 0
    except (TypeError, ValueError):
        return False


def _numeric(name, values):
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"history 的列 {name!r} 必须是一串数") from None
    if arr.ndim != 1:
        raise ValueError(f"history 的列 {name!r} 必须是一维的一串数，收到形状 {arr.shape}")
    return arr


# =============================================================================
# 精确值 vs 采样估计
# =============================================================================
def plot_exact_vs_sampled(results, title="pass@1 的精确值与采样估计（95% 置信区间）", ax=None):
    """
    几个模型的 pass@1 精确值（答对的概率，横线）和采样估计（带误差棒的点）。

    【参数】results：experiments.compare_exact_sampled 结果的列表（每个模型一个）；title；
        ax：画到已有的坐标轴上（默认新建一张 SINGLE 大小的图）
    【返回】画了图的 Axes
    【例子】plot_exact_vs_sampled([compare_exact_sampled(ToyLLM(s), problems, 16, rng) for s in (1e8, 1e9, 1e10)])
    """
    if isinstance(results, (str, bytes)) or not isinstance(results, Sequence) or not results:
        raise TypeError(f"results 必须是 compare_exact_sampled 结果的非空列表，收到 {results!r}")
    for r in results:
        if not all(hasattr(r, a) for a in ("name", "exact", "sampled")):
            raise TypeError(f"results 里的每一项都必须是 compare_exact_sampled 的结果，收到 {r!r}")
    fig, ax = new_or_given(ax, SINGLE)
    x = np.arange(len(results))
    for i, r in enumerate(results):
        ax.hlines(r.exact, i - 0.3, i + 0.3, color="k", lw=2, label="精确值" if i == 0 else None)
    y, low, high = zip(*(_as_value_err(r.sampled) for r in results))
    ax.errorbar(x, y, yerr=[low, high], color="C1", marker="o", ls="none", capsize=4,
                label=f"采样估计（每道题 {getattr(results[0], 'n', '?')} 次）")
    ax.set(xticks=x, xticklabels=[r.name for r in results], ylim=(0, 1.02), ylabel="pass@1", title=title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="lower right")
    if fig is not None:
        fig.tight_layout()
    return ax


__all__ = ["COLUMN_LABELS", "ESTIMATOR_NAMES", "SINGLE", "WIDE", "plot_context_bars", "plot_exact_vs_sampled",
           "plot_gradient_estimates", "plot_pass_at_k", "plot_pass_at_k_estimates", "plot_scaling",
           "plot_test_time_compute", "plot_training_curves"]
