"""
作业里的交互式控制面板（ipywidgets）：拖动滑块、选选项，图马上重画。

【思路】每个面板分成三层，画图只有一条路：
    · 逻辑函数 run_xxx_dashboard_logic(...)：普通的 Python 函数，吃参数、做计算，再调用 toyllm.plots 里的
      画图函数（plot_gradient_estimates、plot_pass_at_k_estimates、plot_training_curves、plot_context_bars）
      把结果画进坐标轴，返回 (结果, 图)。测试和 notebook 都可以直接调用它（不需要小部件）。
    · Dashboard：记住一张图，每次重画时擦掉它的坐标轴（plotstyle.wipe）、交给逻辑函数再画一遍，转成 PNG。
    · 面板 xxx_dashboard()：一排控件（滑块 continuous_update=False：松开鼠标才重算）交给
      ipywidgets.interactive_output：它把 Dashboard.show 接到每个控件上，输出放进一个 Output 小部件，
      每次先 clear_output(wait=True)（新内容到了再清空，画面不闪）。
    面板返回 Dashboard；测试改 .controls["lr"].value，再看 .text / .png / .result。
    每个面板输出的第一行写明正在运行的是谁的实现（包里的参考实现，还是你写的函数）。

【为什么图不交给 pyplot 显示】见 plotstyle.owned。
【依赖】matplotlib 和 ipywidgets 只在函数里面导入：import toyllm 不加载它们；只用逻辑函数时不需要 ipywidgets。
【Python 小知识】interactive_output(f, {"lr": 滑块, ...})：任何一个控件的值变了，就用全部控件的当前值调用 f(lr=..., ...)。
"""

import inspect
import math
import random
import time
import types

import numpy as np

from ._checks import as_choice, as_int, as_real
from .arithmetic import CONTEXT_INDEX, CONTEXT_NAMES, CONTEXTS, PROCEDURE_NAMES, PROCEDURES, make_problem_set
from .estimators import pass_at_k
from .exact import answer_pass_at_k, grad_expected_reward
from .sampler import sample_rollouts
from .plotstyle import (DASHBOARD_STYLE, FIG_DPI, dashboard_style, figure_png, given_axes, owned,  # noqa: F401
                        use_chinese_font, wipe)
from .rl import ADVANTAGES, KL_ESTIMATORS, RLConfig, default_problems, group_advantages, train
from .plots import (ESTIMATOR_NAMES, plot_context_bars, plot_gradient_estimates, plot_pass_at_k_estimates,
                    plot_training_curves)
from .tables import fmt_size
from .trainable import TrainableLLM, score_vectors


PACKAGE = "包里的参考实现"
"""面板说明里"用的是谁的实现"的写法（另一种是"你写的 ……"）。"""


# ==== 面板的零件：Dashboard、build、滑块 / 下拉框 / 勾选框（字号、分辨率、转 PNG、擦掉重画在 plotstyle.py） ====
class Dashboard:
    """
    一个控制面板：一张复用的图、"用这些值重画一次"的函数，和（建好面板以后）它的小部件。build 建好它。

    【属性】ui：整个面板（VBox）；controls：{参数名: 小部件}；out：Output 小部件（interactive_output 给的）；
        result：最近一次的结果（逻辑函数返回的第一项）；text：最近一次的一行说明；png：最近一次的图（PNG 字节）；
        error：最近一次的错误说明（没有是 ""）；runs：一共重画了几次；seconds：最近一次重画（计算 + 画图 + PNG）用了几秒
    【Python 小知识】定义 _repr_mimebundle_，Jupyter 显示这个对象时就改为显示它返回的内容（这里是 VBox 的）。
    """

    def __init__(self, compute):
        use_chinese_font()                      # 面板的图里有中文：不依赖 notebook 先调用过它
        self._compute = compute                 # compute(axes=..., **值) -> (结果, 图, 一行说明)
        self.figure = self.result = self.png = self.ui = self.out = None
        self.controls = {}
        self.text = self.error = ""
        self.runs, self.seconds = 0, float("nan")

    def redraw(self, **values):
        """用这些值重算、重画（复用上一次的图）、转成 PNG。出错时记下中文说明，不抛出异常。返回 result。"""
        start = time.perf_counter()
        try:
            axes = None if self.figure is None else self.figure.axes
            for ax in axes or ():
                wipe(ax)
            self.result, self.figure, self.text = self._compute(axes=axes, **values)
            self.png, self.error = figure_png(self.figure), ""
        except Exception as e:                                    # noqa: BLE001  面板里出错不能让回调静默失败
            self.figure = self.png = None                         # 下一次从一张新图开始
            self.text = self.error = f"✗ 出错了：{type(e).__name__}: {e}"
        self.seconds = time.perf_counter() - start
        self.runs += 1
        return self.result

    def show(self, **values):
        """重画，并把一行说明和图显示出来（interactive_output 在 Output 里调用它）。"""
        from IPython.display import Image, display

        self.redraw(**values)
        print(self.text)
        if self.png is not None:
            display(Image(data=self.png, format="png"))

    def values(self):
        """当前每个控件的值 {参数名: 值}。"""
        return {name: w.value for name, w in self.controls.items()}

    def _repr_mimebundle_(self, **kwargs):
        return self.ui._repr_mimebundle_(**kwargs)


def ipywidgets_module():
    """导入 ipywidgets；没有安装时给出中文说明（它是 notebook 的可选依赖）。"""
    try:
        import ipywidgets
    except ImportError:
        raise ImportError("控制面板需要 ipywidgets（notebook 的可选依赖）：在仓库根目录运行 "
                          "pip install -e '.[dev]'，或者 pip install 'ipywidgets>=8.1,<9'；"
                          "逻辑函数 run_xxx_dashboard_logic 不需要它") from None
    return ipywidgets


def build(title, controls, compute, note=""):
    """把控件排成面板（标题、每行三个控件、Output），用 interactive_output 接到 Dashboard.show 上。"""
    w = ipywidgets_module()
    dash = Dashboard(compute)
    dash.controls = controls
    dash.out = w.interactive_output(dash.show, controls)          # 立刻按初始值画第一次
    dash.out.layout = w.Layout(min_height="320px")
    items = list(controls.values())
    rows = [w.HBox(items[i:i + 3]) for i in range(0, len(items), 3)]
    head = w.HTML(f"<b>{title}</b>" + (f"<br><span style='color:#555'>{note}</span>" if note else ""))
    dash.ui = w.VBox([head, *rows, dash.out])
    return dash


def slider(kind, value, lo, hi, step, description, fmt=None):
    """一个滑块（kind："int" / "float" / "log"），松开鼠标才重算；初始值在范围外时放宽范围。"""
    w = ipywidgets_module()
    cls = {"int": w.IntSlider, "float": w.FloatSlider, "log": w.FloatLogSlider}[kind]
    at = math.log10(value) if kind == "log" else value          # 初始值在范围外时放宽范围（不悄悄地截到边上）
    lo, hi = min(lo, math.floor(at) if kind == "log" else at), max(hi, math.ceil(at) if kind == "log" else at)
    kw = dict(value=value, step=step, description=description, continuous_update=False,
              style={"description_width": "initial"}, layout=w.Layout(width="310px"))
    kw.update(min=lo, max=hi, **({"base": 10} if kind == "log" else {}))
    if fmt:
        kw["readout_format"] = fmt
    return cls(**kw)


def dropdown(options, value, description):
    """一个下拉框。"""
    w = ipywidgets_module()
    return w.Dropdown(options=options, value=value, description=description,
                      style={"description_width": "initial"}, layout=w.Layout(width="310px"))


def checkbox(value, description):
    """一个勾选框。"""
    w = ipywidgets_module()
    return w.Checkbox(value=value, description=description, indent=False, layout=w.Layout(width="200px"))


# ==== 作业一 · 梯度：REINFORCE 估计 vs 精确梯度，基线怎样改变方差 ====
def _gradient_args(size, n_samples, context, procedure, repeats, n_problems, seed):
    """检查作业一面板的参数（逻辑函数和面板共用），返回规范化以后的 {参数名: 值}。"""
    context = tuple(context) if isinstance(context, list) else context
    if not isinstance(context, tuple) or context not in CONTEXT_INDEX:
        raise ValueError(f"context 必须是 toyllm.CONTEXTS 里的一个情境，例如 ('mul', 1.5)，收到 {context!r}")
    return dict(size=as_real("size", size, 0.0, low_open=True), n_samples=as_int("n_samples", n_samples, low=2),
                context=context, procedure=as_choice("procedure", procedure, PROCEDURES),
                repeats=as_int("repeats", repeats, low=2), n_problems=as_int("n_problems", n_problems, low=1),
                seed=as_int("seed", seed, low=0))


@dashboard_style
def run_gradient_dashboard_logic(size=1e9, n_samples=8, context=("mul", 1.5), procedure="correct",
                                 repeats=200, n_problems=20, seed=0, axes=None):
    """
    作业一的面板：REINFORCE 的梯度估计 vs 精确梯度，没有基线和留一法（RLOO）基线各重复估计 repeats 次。

    【思路】期望奖励 J = (1/P) Σ_i P(第 i 题做对)。它的梯度可以精确算出（exact.grad_expected_reward），
        也可以采样估计：每道题采 n 份解答，REINFORCE 估计 = 平均 (R − b) · ∇ log P(解答)。
            · 没有基线：b = 0；
            · 留一法基线：b = 同一道题其他 n − 1 份解答的平均奖励（不含自己，所以仍然无偏）。
        两种估计的平均都等于精确梯度，方差却不同。常听说"基线让方差变小"，在这个玩具里并不总是这样：
        ∇ log P(解答) 在做错的解答上大得多，基线 b ≈ 平均奖励会把这些大的项放大（最好的常数基线是
        E[R‖g‖²] / E[‖g‖²]，比平均奖励小），所以成功率高的大模型上，留一法基线反而让方差变大。
        图由 plots.plot_gradient_estimates 画：左边每个情境的精确梯度和两种估计，右边所选那个数的直方图。
    【参数】size：模型参数量（> 0）；n_samples：每道题采几份（≥ 2，留一法至少要 2 份）；
        context：要看直方图的情境（CONTEXTS 之一）；procedure：哪一个做法的 Δ（"correct" / "bug" / "careless"）；
        repeats：重复估计几次（≥ 2）；n_problems：题数（≥ 1）；seed：出题和采样的种子；
        axes：画进这两个坐标轴（默认新建一张图）
    【返回】(result, figure)：result 是 SimpleNamespace，属性 exact (12, 3)、none 和 rloo（各 (repeats, 12, 3)）、
        chosen（所选的数的 (精确, 无基线的平均 ± 标准差, 留一法的平均 ± 标准差)）、context、procedure、text（一行说明）
    【例子】result, fig = run_gradient_dashboard_logic(size=1e9, n_samples=8)
    """
    size, n, context, procedure, repeats, n_problems, seed = _gradient_args(
        size, n_samples, context, procedure, repeats, n_problems, seed).values()
    c, j = CONTEXT_INDEX[context], PROCEDURES.index(procedure)

    model = TrainableLLM(size)
    problems = make_problem_set(random.Random(seed), n_problems, 3, 8)
    exact = grad_expected_reward(model, problems)
    roll = sample_rollouts(model, problems, n * repeats, np.random.default_rng(seed))
    grads = score_vectors(roll).reshape(n_problems, repeats, n, 36)
    r = roll.correct.astype(float).reshape(n_problems, repeats, n)
    loo = group_advantages(roll.correct, n, "rloo").reshape(n_problems, repeats, n)
    none = np.einsum("prn,prnk->rk", r, grads).reshape(repeats, 12, 3) / (n_problems * n)
    rloo = np.einsum("prn,prnk->rk", loo, grads).reshape(repeats, 12, 3) / (n_problems * n)
    chosen = (float(exact[c, j]), float(none[:, c, j].mean()), float(none[:, c, j].std(ddof=1)),
              float(rloo[:, c, j].mean()), float(rloo[:, c, j].std(ddof=1)))
    ratio = chosen[4] / chosen[2] if chosen[2] > 0 else math.inf
    text = (f"实现：{PACKAGE}（toyllm.exact 的精确梯度、toyllm.sampler 的采样）。"
            f"{fmt_size(size)} 模型，{n_problems} 道题 × 每题 {n} 份，重复 {repeats} 次。"
            f"「{CONTEXT_NAMES[context]}」的 Δ_{procedure}：精确梯度 {chosen[0]:+.4f}；"
            f"无基线 {chosen[1]:+.4f} ± {chosen[2]:.4f}，留一法基线 {chosen[3]:+.4f} ± {chosen[4]:.4f}"
            f"（标准差之比 留一法 / 无基线 = {ratio:.2f}）")
    result = types.SimpleNamespace(exact=exact, none=none, rloo=rloo, chosen=chosen, context=context,
                                   procedure=procedure, text=text)
    return result, owned(plot_gradient_estimates(result, axes=axes), axes is None)


def gradient_dashboard(size=1e9, n_samples=8, context=("mul", 1.5), procedure="correct", seed=0, repeats=200,
                       n_problems=20):
    """
    作业一的控制面板（逻辑见 run_gradient_dashboard_logic）：模型大小、每题样本数、情境、做法、随机种子。

    【参数】前五个是控件的初始值；repeats、n_problems 固定不变（传给逻辑函数）
    【返回】Dashboard（在 notebook 里作为最后一行会显示出来；见模块说明）
    【例子】gradient_dashboard()
    """
    size, n_samples, context, procedure, repeats, n_problems, seed = _gradient_args(
        size, n_samples, context, procedure, repeats, n_problems, seed).values()
    controls = {
        "size": slider("log", size, 7, 12, 0.25, "模型参数量", ".2g"),
        "n_samples": slider("int", n_samples, 2, 32, 1, "每题样本数 n"),
        "seed": slider("int", seed, 0, 20, 1, "随机种子"),
        "context": dropdown([(CONTEXT_NAMES[k], k) for k in CONTEXTS], context, "情境"),
        "procedure": dropdown([(PROCEDURE_NAMES[p], p) for p in PROCEDURES], procedure, "做法"),
    }

    def compute(axes, **values):
        result, fig = run_gradient_dashboard_logic(repeats=repeats, n_problems=n_problems, axes=axes, **values)
        return result, fig, result.text

    return build(f"REINFORCE 梯度估计 vs 精确梯度（{PACKAGE}）", controls, compute,
                  f"每次改动都会重新采样、重新估计 {repeats} 次。看直方图的宽度：基线让它变窄了还是变宽了？换个模型大小试试。")


# ==== 作业二 · 评估：pass@k 的无偏估计和有偏估计 ====
def _passk_args(size, n, temperature, estimator, repeats, n_problems, seed, pass_at_k_fn):
    """检查作业二面板的参数（逻辑函数和面板共用），返回规范化以后的 {参数名: 值}（不含 pass_at_k_fn）。"""
    if pass_at_k_fn is not None and not callable(pass_at_k_fn):
        raise TypeError(f"pass_at_k_fn 必须是函数 f(n, c, k)，收到 {pass_at_k_fn!r}")
    return dict(size=as_real("size", size, 0.0, low_open=True), n=as_int("n", n, low=1),
                temperature=as_real("temperature", temperature, 0.0, low_open=True),
                estimator=as_choice("estimator", estimator, tuple(ESTIMATOR_NAMES)),
                repeats=as_int("repeats", repeats, low=2), n_problems=as_int("n_problems", n_problems, low=1),
                seed=as_int("seed", seed, low=0))


@dashboard_style
def run_passk_dashboard_logic(size=1e9, n=16, temperature=1.0, estimator="both", repeats=50, n_problems=40,
                              seed=0, pass_at_k_fn=None, axes=None):
    """
    作业二的面板：从 n 份样本估计 pass@k（k = 1, 2, 4, … ≤ n），和精确值 1 − (1 − q)^k（q = 答对的概率）比较。

    【思路】每道题采 n 份，数出做对的 c 份，用两种方法估计 pass@k：
            无偏：1 − C(n − c, k) / C(n, k)（"不放回地挑 k 份"；Chen et al. 2021 的 HumanEval 评测代码就这样算）
            有偏：1 − (1 − c/n)^k（把 c/n 当成真的 p 代进公式；k 越大越偏低）
        整个过程重复 repeats 次，画出每种估计的平均值和 ±1 个标准差的带子；黑线是精确值。
        无偏估计的平均贴着精确值，有偏估计的平均在它下面。
    【参数】size：参数量；n：每道题的样本数（≥ 1）；temperature：> 0；estimator："unbiased" / "biased" / "both"；
        repeats：重复几次（≥ 2）；n_problems：题数；seed：种子；
        pass_at_k_fn：用来算无偏估计的函数 f(n, c, k)，默认包里的 estimators.pass_at_k（可以换成你写的）；
        axes：画进这个坐标轴（默认新建一张图；图由 plots.plot_pass_at_k_estimates 画）
    【返回】(result, figure)：result 有 ks、exact {k: 值}、unbiased 和 biased（各 (repeats, len(ks)) 数组）、n、text
    【例子】result, fig = run_passk_dashboard_logic(size=1e9, n=16)
    """
    size, n, temperature, estimator, repeats, n_problems, seed = _passk_args(
        size, n, temperature, estimator, repeats, n_problems, seed, pass_at_k_fn).values()
    fn = pass_at_k if pass_at_k_fn is None else pass_at_k_fn
    ks = sorted({k for k in (1, 2, 4, 8, 16, 32, 64) if k <= n} | {n})
    model = TrainableLLM(size)
    problems = make_problem_set(random.Random(seed), n_problems, 3, 8)
    exact = answer_pass_at_k(model, problems, ks, temperature)
    roll = sample_rollouts(model, problems, n * repeats, np.random.default_rng(seed), temperature)
    counts = roll.correct.reshape(n_problems, repeats, n).sum(axis=2)            # (P, R)
    table = {(c, k): float(fn(n, int(c), k)) for c in np.unique(counts) for k in ks}
    unbiased = np.array([[np.mean([table[(c, k)] for c in counts[:, r]]) for k in ks] for r in range(repeats)])
    biased = np.array([[np.mean(1.0 - (1.0 - counts[:, r] / n) ** k) for k in ks] for r in range(repeats)])
    k_big = ks[-1]
    who = PACKAGE + "（toyllm.estimators.pass_at_k）" if pass_at_k_fn is None else \
        f"无偏估计用你写的 {getattr(fn, '__name__', 'pass_at_k_fn')}"
    text = (f"实现：{who}。{fmt_size(size)} 模型，温度 {temperature:g}，{n_problems} 道题 × 每题 n = {n} 份，"
            f"重复 {repeats} 次。pass@{k_big}：精确 {exact[k_big]:.3f}，无偏估计的平均 {unbiased[:, -1].mean():.3f}，"
            f"有偏估计的平均 {biased[:, -1].mean():.3f}")
    result = types.SimpleNamespace(ks=ks, exact=exact, unbiased=unbiased, biased=biased, n=n, text=text)
    ax = None if axes is None else given_axes(axes, 1, "fig.subplots()")[0]
    return result, owned(plot_pass_at_k_estimates(result, estimator, ax=ax), axes is None)


def passk_dashboard(size=1e9, n=16, temperature=1.0, estimator="both", seed=0, pass_at_k_fn=None, repeats=50,
                    n_problems=40):
    """
    作业二的控制面板（逻辑见 run_passk_dashboard_logic）：模型大小、样本数 n、温度、估计方法、随机种子。

    【参数】前五个是控件的初始值；pass_at_k_fn：可以换成你自己写的 pass@k 函数；repeats、n_problems 固定不变
    【返回】Dashboard
    """
    size, n, temperature, estimator, repeats, n_problems, seed = _passk_args(
        size, n, temperature, estimator, repeats, n_problems, seed, pass_at_k_fn).values()
    controls = {
        "size": slider("log", size, 8, 12, 0.25, "模型参数量", ".2g"),
        "n": slider("int", n, 1, 64, 1, "每题样本数 n"),
        "temperature": slider("float", temperature, 0.2, 2.0, 0.1, "温度", ".1f"),
        "estimator": dropdown([(v, k) for k, v in ESTIMATOR_NAMES.items()], estimator, "估计方法"),
        "seed": slider("int", seed, 0, 20, 1, "随机种子"),
    }

    def compute(axes, **values):
        result, fig = run_passk_dashboard_logic(pass_at_k_fn=pass_at_k_fn, repeats=repeats, n_problems=n_problems,
                                                axes=axes, **values)
        return result, fig, result.text

    who = PACKAGE if pass_at_k_fn is None else "无偏估计用你写的函数"
    return build(f"pass@k：无偏估计 vs 有偏估计 vs 精确值（{who}）", controls, compute,
                  "把 n 调小、k 接近 n 时，两种估计差得最多。")


# ==== 作业三 · GRPO：用包里的训练循环训练，曲线和每个情境的变化 ====
ADVANTAGE_NAMES = {"none": "无基线（REINFORCE）", "mean": "减组平均", "rloo": "留一法（RLOO）",
                   "grpo": "GRPO（再除以标准差）"}
"""「优势」下拉框和面板说明里每种优势的中文名（rl.ADVANTAGES 的前四种）。"""


def _share(x):
    """裁剪比例写成百分数；恰好是 0 时写明"一次也没有"（0.000% 分不出是 0 还是很小）。"""
    return "0（一次也没有）" if x == 0 else f"{x:.3%}"


def _with_clip_masks(fn):
    """
    你写的替代损失只返回损失：再按裁剪的定义标出哪些步被裁剪（ρ < 1 − ε_low 且 A < 0；ρ > 1 + ε_high 且 A > 0），
    面板才能报告裁剪比例（和包里的 rl.clipped_surrogate 同一个定义）。损失和梯度都还是你的函数算的。
    """
    import functools

    @functools.wraps(fn)
    def wrapped(ratio, adv, eps_low, eps_high):
        out = fn(ratio, adv, eps_low, eps_high)
        if isinstance(out, tuple):
            return out
        r, a = np.asarray(ratio, dtype=float), np.broadcast_to(np.asarray(adv, dtype=float), np.shape(ratio))
        return out, (r < 1 - eps_low) & (a < 0), (r > 1 + eps_high) & (a > 0)

    return wrapped


def _grpo_config(iters, estimator, advantage_fn=None, surrogate_fn=None, **options):
    """作业三面板的选项变成 rl.RLConfig（它检查每一个选项；其余选项和 RLConfig 同名）；逻辑函数和面板共用。"""
    for name, f in (("advantage_fn", advantage_fn), ("surrogate_fn", surrogate_fn)):
        if f is not None and not callable(f):
            raise TypeError(f"{name} 必须是函数（或 None：用包里的参考实现），收到 {f!r}")
    return RLConfig(iterations=as_int("iters", iters, low=1), kl_estimator=estimator, **options)


@dashboard_style
def run_grpo_dashboard_logic(lr=2.0, group_size=8, eps_low=0.2, eps_high=0.2, mu=1, beta=0.0, estimator="k3",
                             dynamic_sampling=False, size=1e9, temperature=1.0, iters=30, seed=0, advantage="grpo",
                             batch_problems=16, advantage_fn=None, surrogate_fn=None, axes=None):
    """
    作业三的面板：用包里的训练循环（toyllm.rl.train）从头训练一个模型，画训练曲线和每个情境的变化。

    【思路】所有选项直接变成 rl.RLConfig 的选项（estimator 是 KL 估计 kl_estimator，iters 是迭代次数 iterations），
        其余和 GRPO 预设相同。训练题、留出题来自 rl.default_problems(seed)。图有三块：留出题上的路径 pass@1 和
        采样的 pass@1、熵和精确 KL（plots.plot_training_curves），训练前后每个情境选「正确」的概率（plot_context_bars）。
    【参数】见 rl.RLConfig 的同名选项；size：模型参数量；advantage_fn、surrogate_fn：可以换成你写的函数
        （签名见 rl.train；给了 advantage_fn 时 advantage 选项不起作用，说明里会写出来）；
        axes：画进这三个坐标轴（默认新建一张 11 × 4.6 英寸的图；图的总标题写明是谁的函数训练出来的）
    【返回】(history, figure)：history 是 rl.History，history.meta 里另有 "model"（训练后的模型）、
        "start_model"（训练前）、"text"（几行说明：实现和用的哪种优势、设置、结果、裁剪比例；上界一步也没裁时写明
        调大 ε_high 不会改变这次训练）、"clip"（(下界, 上界) 的平均裁剪比例；你写的替代损失也按同一个定义算）、
        "banner"（图的总标题：谁的函数；图的右上角是裁剪比例）
    【边界】选项不合法时（例如 group_size < 2）抛出 rl.RLConfig 的中文错误。
    【例子】hist, fig = run_grpo_dashboard_logic()；hist["pass1_exact"][-1]
    """
    size = as_real("size", size, 0.0, low_open=True)
    axes = None if axes is None else given_axes(axes, 3, "fig.subplots(1, 3)")
    cfg = _grpo_config(iters, estimator, advantage_fn, surrogate_fn, lr=lr, group_size=group_size, eps_low=eps_low,
                       eps_high=eps_high, mu=mu, beta=beta, dynamic_sampling=dynamic_sampling, temperature=temperature,
                       seed=seed, advantage=advantage, batch_problems=batch_problems)
    train_set, heldout = default_problems(seed)
    start = TrainableLLM(size, name=f"{fmt_size(size)}（训练前）")
    model = start.copy(name=f"{fmt_size(size)}（训练后）")
    surrogate = None if surrogate_fn is None else _with_clip_masks(surrogate_fn)
    hist = train(model, cfg, train_set, heldout, advantage_fn=advantage_fn, surrogate_fn=surrogate)
    p0, p1 = hist.meta["start_pass1_exact"], hist.meta["final_pass1_exact"]
    clip = (float(np.mean(hist["clip_low"])), float(np.mean(hist["clip_high"]))) if hist.n_rows else (0.0, 0.0)
    mine = [name for name, f in (("优势函数", advantage_fn), ("替代损失", surrogate_fn)) if f is not None]
    impl = f"你写的{'、'.join(mine)}" if mine else f"{PACKAGE}（toyllm.rl）"
    banner = f"这张图由{impl}训练得到"
    adv = "你写的优势函数（GRPO 的组内标准化）" if advantage_fn is not None else ADVANTAGE_NAMES.get(
        cfg.advantage, cfg.advantage)
    # 说明分成短短的几行：浏览器不会在一个词的中间折行（1280 像素宽、开着文件浏览器的 JupyterLab 里一行放得下）
    why = ("μ = 1：ρ 恒为 1，裁剪不会发生" if mu == 1 else
           "上界一次也没有裁剪：把 ε_high 调大，这次训练一模一样" if clip[1] == 0 else "")
    text = "\n".join([
        f"实现：用{impl}{'（「优势」选项不起作用）' if advantage_fn is not None else ''}。优势：{adv}",
        f"设置：{fmt_size(size)} 模型，{iters} 次迭代 × {batch_problems} 题 × G = {group_size}，学习率 {lr:g}，μ = {mu}，"
        f"β = {beta:g}（{estimator}）{'，动态采样' if dynamic_sampling else ''}",
        f"结果：路径 pass@1 {p0:.3f} → {p1:.3f}，共采样 {hist['samples'][-1] if hist.n_rows else 0} 份",
        f"裁剪：ε_low / ε_high = {eps_low:g} / {eps_high:g}；被裁剪的步 下界 {_share(clip[0])}，上界 {_share(clip[1])}",
        *([why] if why else [])])
    hist.meta.update(model=model, start_model=start, text=text, clip=clip)

    fig = None
    if axes is None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(11.0, 4.6))
        # 第三张图的纵轴是很长的情境名（「乘两位数、被乘数 ≥ 100」）：前两张图窄一点，给它们留出位置，不压到熵的图上
        axes = [fig.add_axes(rect) for rect in GRPO_AXES]
    curves = plot_training_curves(hist, columns=[("pass1_exact", "pass1_sampled"), ("entropy", "kl_exact")],
                                  axes=axes[:2])
    curves[0].axhline(p0, color="0.5", ls="--", lw=1, label="训练前")
    curves[0].set_ylim(0, 1)
    curves[0].legend(loc="lower right")
    curves[1].set_ylim(bottom=0)
    plot_context_bars(start, model, title="每个情境选「正确」的概率", ax=axes[2], values=False)
    axes[2].set_xlabel("")                     # 图例在横轴下面（plot_context_bars 的排法），这张矮图里放不下横轴标签
    # 图的最上面写明是谁的函数训练出来的（换实现时曲线可能一模一样：没有这行字就看不出面板换过了）
    curves[0].figure.suptitle(banner, x=0.01, y=0.985, ha="left", va="top", fontsize="large",
                              color="C3" if mine else "C0")
    # 右上角写裁剪比例：ε_high 只通过上界被裁剪的那些步起作用，这个数是 0 时调 ε_high 不会改变训练
    fig_ = curves[0].figure
    note = next((t for t in fig_.texts if t.get_gid() == "clip"), None) or fig_.text(
        0.99, 0.985, "", ha="right", va="top", gid="clip")
    note.set_text(f"裁剪比例：下界 {_share(clip[0])}，上界 {_share(clip[1])}")
    hist.meta["banner"] = banner
    return hist, curves[0].figure


GRPO_AXES = ([0.05, 0.12, 0.23, 0.70], [0.335, 0.12, 0.23, 0.70], [0.765, 0.19, 0.225, 0.63])
"""GRPO 面板三张图的位置（图的比例坐标 [左, 下, 宽, 高]）：pass@1、熵和 KL、每个情境的条形图（纵轴标签在它左边）。"""


GRPO_DEFAULTS = {name: p.default for name, p in inspect.signature(run_grpo_dashboard_logic).parameters.items()
                 if name not in ("advantage_fn", "surrogate_fn", "axes")}
"""GRPO 面板的默认设置（run_grpo_dashboard_logic 的默认值）：和 rl.PRESETS["grpo"] 相同，只是迭代次数少一些、
每次 16 道题，好让重画在一秒以内。"""


def grpo_dashboard(advantage_fn=None, surrogate_fn=None, **defaults):
    """
    作业三的控制面板（逻辑见 run_grpo_dashboard_logic）：学习率、组大小、ε_low / ε_high、μ、β 和 KL 估计、
    优势的算法、动态采样、模型大小、温度、迭代次数、随机种子。

    【参数】advantage_fn、surrogate_fn：你写的函数；给了的话面板上多一个"用谁的函数"的下拉框；
        defaults：改某些控件的初始值，例如 grpo_dashboard(mu=4)
    【返回】Dashboard
    【例子】grpo_dashboard()；grpo_dashboard(advantage_fn=group_advantages, surrogate_fn=clipped_surrogate)
    """
    unknown = set(defaults) - set(GRPO_DEFAULTS)
    if unknown:
        raise TypeError(f"grpo_dashboard 不认识的参数 {sorted(unknown)}；可以改的初始值：{'、'.join(GRPO_DEFAULTS)}")
    v = dict(GRPO_DEFAULTS, **defaults)
    v["size"] = as_real("size", v["size"], 0.0, low_open=True)
    _grpo_config(**{k: x for k, x in v.items() if k != "size"}, advantage_fn=advantage_fn, surrogate_fn=surrogate_fn)
    controls = {
        "lr": slider("float", v["lr"], 0.1, 30.0, 0.1, "学习率", ".1f"),
        "group_size": slider("int", v["group_size"], 2, 32, 1, "组大小 G"),
        "iters": slider("int", v["iters"], 5, 200, 5, "迭代次数"),
        "eps_low": slider("float", v["eps_low"], 0.0, 0.5, 0.02, "ε_low", ".2f"),
        "eps_high": slider("float", v["eps_high"], 0.0, 0.5, 0.02, "ε_high", ".2f"),
        "mu": slider("int", v["mu"], 1, 8, 1, "每批更新次数 μ"),
        "beta": slider("float", v["beta"], 0.0, 0.5, 0.01, "KL 系数 β", ".2f"),
        "estimator": dropdown(list(KL_ESTIMATORS), v["estimator"], "KL 估计"),
        "advantage": dropdown([(ADVANTAGE_NAMES[a], a) for a in ADVANTAGES], v["advantage"], "优势"),
        "size": slider("log", v["size"], 8, 12, 0.25, "模型参数量", ".2g"),
        "temperature": slider("float", v["temperature"], 0.3, 2.0, 0.1, "温度", ".1f"),
        "seed": slider("int", v["seed"], 0, 20, 1, "随机种子"),
        "dynamic_sampling": checkbox(v["dynamic_sampling"], "动态采样（DAPO）"),
    }
    # 「KL 估计」只有 k1 / k2 / k3，窄一点；「优势」的选项和变灰时的说明都长，宽一点：1280 像素宽、开着文件浏览器的
    # JupyterLab 里，一行三个控件，「GRPO（再除以标准差）」也能整个看见（tests/e2e/test_browser.py 在浏览器里量）
    controls["estimator"].layout.width, controls["advantage"].layout.width = "200px", "400px"
    mine = {"advantage_fn": advantage_fn, "surrogate_fn": surrogate_fn}
    if advantage_fn is not None or surrogate_fn is not None:
        use_mine = controls["use_mine"] = dropdown([(PACKAGE, False), ("你写的函数", True)], True, "优势和替代损失用")
        advantage = controls["advantage"]

        def sync(_=None):                      # 你写的 advantage_fn 代替「优势」选项：把它变灰，并写明不起作用
            unused = use_mine.value and advantage_fn is not None
            advantage.disabled = unused
            advantage.description = "优势（此项不用）" if unused else "优势"

        use_mine.observe(sync, names="value")
        sync()

    def compute(axes, use_mine=False, **values):
        extra = mine if use_mine else {}
        hist, fig = run_grpo_dashboard_logic(batch_problems=v["batch_problems"], axes=axes, **extra, **values)
        return hist, fig, hist.meta["text"]

    who = "可以在包里的参考实现和你写的函数之间切换" if "use_mine" in controls else PACKAGE
    return build(f"GRPO 训练面板（{who}）", controls, compute,
                  "松开滑块就会从头重新训练；右边的条形图是每个情境训练前后选「正确」的概率。"
                  "说明的第一句写明正在运行谁的实现。")
