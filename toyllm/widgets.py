"""
作业里的交互式控制面板（ipywidgets）：拖动滑块、选选项、点按钮，图马上重画。

【思路】每个面板分成两层：
    · 逻辑函数 run_xxx_dashboard_logic(...)：普通的 Python 函数，吃参数、做计算、返回 (结果, 图)。
      测试直接调用它，notebook 里也可以直接调用（不需要小部件）。
    · 面板 xxx_dashboard()：一排滑块（continuous_update=False：松开鼠标才重算）、下拉框、复选框、
      一个"运行"按钮，和一个 Output 小部件。每次改动或点按钮，就用当前的值调用逻辑函数，
      先 clear_output(wait=True)（等新内容到了再清空，画面不闪），再把一行文字说明和图放进 Output。
    面板返回一个 Dashboard 对象：.controls（{名字: 小部件}）、.button、.out、.result（最近一次的结果）、
    .run()（用当前的值重算一次）。测试可以改 .controls["lr"].value、调用 .button.click()，再看 .out.outputs。

【为什么不用 pyplot】图用 matplotlib.figure.Figure 直接创建、自己转成 PNG 放进 Output：
    pyplot 创建的图会被 inline 后端在下一次运行单元格时"顺手"再显示一遍，按按钮时（不是在运行单元格）
    创建的图还会一直留在内存里。
【依赖】ipywidgets 只在这个模块的函数里面导入（它是 notebook 的可选依赖，不是运行时依赖）：
    只用逻辑函数时不需要安装 ipywidgets。

【Python 小知识】widget.observe(函数, names="value")：小部件的值一变，就调用这个函数。
"""

import base64
import io
import math
import random
import time
import types

import numpy as np

from ._checks import as_choice, as_int, as_real
from .arithmetic import CONTEXT_INDEX, CONTEXT_NAMES, CONTEXTS, PROCEDURE_NAMES, PROCEDURES, make_problem_set
from .estimators import pass_at_k
from .exact import exact_pass_at_k, grad_expected_reward
from .policy import prob_table
from .sampler import sample_rollouts
from .trainable import TrainableLLM

FIG_DPI = 72
"""面板里的图转成 PNG 时的分辨率（每英寸点数）：低一点，重画更快。"""


# =============================================================================
# 画图和 Output 的小工具
# =============================================================================
def _figure(figsize):
    """一张不归 pyplot 管的图（见模块说明），已经用上了包里的中文字体。边距是固定的（不用 tight_layout：它要多画一遍，慢）。"""
    from matplotlib.figure import Figure

    from .plotstyle import use_chinese_font

    use_chinese_font()
    return Figure(figsize=figsize)


def figure_png(fig, dpi=FIG_DPI):
    """把 Figure 画成 PNG 字节。【例子】figure_png(fig)[:8] == b"\\x89PNG\\r\\n\\x1a\\n\""""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _outputs(text, fig):
    """Output 小部件的内容：一段文字 + 一张图（nbformat 的输出格式）。"""
    items = [{"output_type": "stream", "name": "stdout", "text": text.rstrip("\n") + "\n"}]
    if fig is not None:
        png = base64.b64encode(figure_png(fig)).decode("ascii")
        items.append({"output_type": "display_data", "metadata": {},
                      "data": {"image/png": png, "text/plain": "<控制面板的图>"}})
    return tuple(items)


def _size_label(size):
    from .text import fmt_size

    return fmt_size(size)


class Dashboard:
    """
    一个控制面板：小部件和"用当前的值重算一次"的函数。在 notebook 里作为单元格最后一行就会显示出来。

    【属性】ui：整个面板（VBox）；controls：{参数名: 小部件}；button：运行按钮；out：Output 小部件；
        auto："改动后自动运行"的复选框；runs：一共运行了几次；
        result：最近一次运行的结果（逻辑函数返回的第一项）；figure：最近一次的图；error：最近一次的错误说明（没有是 ""）；
        seconds：最近一次从计算到画好图用了几秒
    【Python 小知识】定义 _repr_mimebundle_，Jupyter 显示这个对象时就改为显示它返回的内容（这里是 VBox 的）。
    """

    def __init__(self, ui, controls, button, out, compute):
        self.ui, self.controls, self.button, self.out = ui, controls, button, out
        self._compute = compute
        self.result = self.figure = None
        self.error = ""
        self.seconds = float("nan")
        self.runs = 0
        self.auto = None

    def values(self):
        """当前每个控件的值 {参数名: 值}。"""
        return {name: w.value for name, w in self.controls.items()}

    def run(self, *_):
        """用当前的值重算并重画（按钮和控件的回调都调用它）。出错时把中文说明放进 Output，不抛出异常。"""
        start = time.perf_counter()
        try:
            result, fig, text = self._compute(**self.values())
            self.result, self.figure, self.error = result, fig, ""
        except Exception as e:                                    # noqa: BLE001  面板里出错不能让回调静默失败
            fig, text = None, f"✗ 出错了：{type(e).__name__}: {e}"
            self.error = text
        outputs = _outputs(text, fig)
        self.seconds = time.perf_counter() - start
        self.runs += 1
        self.out.clear_output(wait=True)
        self.out.outputs = outputs
        return self.result

    def _repr_mimebundle_(self, **kwargs):
        return self.ui._repr_mimebundle_(**kwargs)


def _ipywidgets():
    """导入 ipywidgets；没有安装时给出中文说明（它是 notebook 的可选依赖）。"""
    try:
        import ipywidgets
    except ImportError:
        raise ImportError("控制面板需要 ipywidgets（notebook 的可选依赖）：在仓库根目录运行 "
                          "pip install -e '.[dev]'，或者 pip install 'ipywidgets>=8.1,<9'；"
                          "逻辑函数 run_xxx_dashboard_logic 不需要它") from None
    return ipywidgets


def _build(title, controls, compute, note=""):
    """把控件排成面板：标题、控件（每行两三个）、"改动后自动运行"、运行按钮、Output。"""
    w = _ipywidgets()

    button = w.Button(description="运行", button_style="primary", icon="play",
                      tooltip="用上面的设置重新计算、重画")
    auto = w.Checkbox(value=True, description="改动后自动运行", indent=False)
    out = w.Output(layout=w.Layout(min_height="320px"))
    dash = Dashboard(None, controls, button, out, compute)
    button.on_click(dash.run)
    for ctl in controls.values():
        ctl.observe(lambda change: dash.run() if auto.value else None, names="value")
    items = list(controls.values())
    rows = [w.HBox(items[i:i + 3]) for i in range(0, len(items), 3)]
    head = w.HTML(f"<b>{title}</b>" + (f"<br><span style='color:#555'>{note}</span>" if note else ""))
    dash.ui = w.VBox([head, *rows, w.HBox([button, auto]), out])
    dash.auto = auto
    dash.run()
    return dash


def _slider(kind, value, lo, hi, step, description, fmt=None):
    w = _ipywidgets()

    cls = {"int": w.IntSlider, "float": w.FloatSlider, "log": w.FloatLogSlider}[kind]
    kw = dict(value=value, step=step, description=description, continuous_update=False,
              style={"description_width": "initial"}, layout=w.Layout(width="310px"))
    if kind == "log":
        kw.update(base=10, min=lo, max=hi)
    else:
        kw.update(min=lo, max=hi)
    if fmt:
        kw["readout_format"] = fmt
    return cls(**kw)


def _dropdown(options, value, description):
    w = _ipywidgets()

    return w.Dropdown(options=options, value=value, description=description,
                      style={"description_width": "initial"}, layout=w.Layout(width="310px"))


def _checkbox(value, description):
    w = _ipywidgets()

    return w.Checkbox(value=value, description=description, indent=False, layout=w.Layout(width="200px"))


# =============================================================================
# 作业一 · 梯度：REINFORCE 估计 vs 精确梯度，基线让方差变小
# =============================================================================
def _rollout_grads(model, roll):
    """每份解答的 ∂ log P(解答) / ∂Δ，形状 (B, 12, 3)：各步 onehot(a) − π(· | c) 按情境加起来。"""
    B = len(roll)
    rows = np.broadcast_to(np.arange(B)[:, None], roll.mask.shape)[roll.mask]
    ctx = roll.ctx[roll.mask]
    hits = np.bincount(rows * 36 + ctx * 3 + roll.actions[roll.mask], minlength=B * 36).reshape(B, 12, 3)
    visits = np.bincount(rows * 12 + ctx, minlength=B * 12).reshape(B, 12)
    return hits - visits[:, :, None] * prob_table(model)[None]


def run_gradient_dashboard_logic(size=1e9, n_samples=8, context=("mul", 1.5), procedure="correct",
                                 repeats=200, n_problems=20, seed=0):
    """
    作业一的面板：REINFORCE 的梯度估计 vs 精确梯度，没有基线和留一法（RLOO）基线各重复估计 repeats 次。

    【思路】期望奖励 J = (1/P) Σ_i P(第 i 题做对)。它的梯度可以精确算出（exact.grad_expected_reward），
        也可以采样估计：每道题采 n 份解答，REINFORCE 估计 = 平均 (R − b) · ∇ log P(解答)。
            · 没有基线：b = 0；
            · 留一法基线：b = 同一道题其他 n − 1 份解答的平均奖励（不含自己，所以仍然无偏）。
        两种估计的平均都等于精确梯度，方差却不同。常听说"基线让方差变小"，在这个玩具里并不总是这样：
        ∇ log P(解答) 在做错的解答上大得多，基线 b ≈ 平均奖励会把这些大的项放大（最好的常数基线是
        E[R‖g‖²] / E[‖g‖²]，比平均奖励小），所以成功率高的大模型上，留一法基线反而让方差变大。面板画出：
            左：每个情境（所选做法那一列）的精确梯度，和两种估计的平均 ± 标准差；
            右：所选情境、所选做法那个数的 repeats 次估计的直方图，竖线是精确值。
    【参数】size：模型参数量（> 0）；n_samples：每道题采几份（≥ 2，留一法至少要 2 份）；
        context：要看直方图的情境（CONTEXTS 之一）；procedure：哪一个做法的 Δ（"correct" / "bug" / "careless"）；
        repeats：重复估计几次（≥ 2）；n_problems：题数（≥ 1）；seed：出题和采样的种子
    【返回】(result, figure)：result 是 SimpleNamespace，属性 exact (12, 3)、none 和 rloo（各 (repeats, 12, 3)）、
        chosen（所选的数的 (精确, 无基线的平均, 无基线的标准差, 留一法的平均, 留一法的标准差)）、text（一行说明）
    【例子】result, fig = run_gradient_dashboard_logic(size=1e9, n_samples=8)
    """
    size = as_real("size", size, 0.0, low_open=True)
    n = as_int("n_samples", n_samples, low=2)
    repeats = as_int("repeats", repeats, low=2)
    n_problems = as_int("n_problems", n_problems, low=1)
    seed = as_int("seed", seed, low=0)
    context = tuple(context) if isinstance(context, list) else context
    if context not in CONTEXT_INDEX:
        raise ValueError(f"context 必须是 toyllm.CONTEXTS 里的一个情境，例如 ('mul', 1.5)，收到 {context!r}")
    procedure = as_choice("procedure", procedure, PROCEDURES)
    c, j = CONTEXT_INDEX[context], PROCEDURES.index(procedure)

    model = TrainableLLM(size)
    problems = make_problem_set(random.Random(seed), n_problems, 3, 8)
    exact = grad_expected_reward(model, problems)
    roll = sample_rollouts(model, problems, n * repeats, np.random.default_rng(seed))
    grads = _rollout_grads(model, roll).reshape(n_problems, repeats, n, 36)
    r = roll.correct.astype(float).reshape(n_problems, repeats, n)
    loo = r - (r.sum(axis=2, keepdims=True) - r) / (n - 1)
    none = np.einsum("prn,prnk->rk", r, grads).reshape(repeats, 12, 3) / (n_problems * n)
    rloo = np.einsum("prn,prnk->rk", loo, grads).reshape(repeats, 12, 3) / (n_problems * n)
    chosen = (float(exact[c, j]), float(none[:, c, j].mean()), float(none[:, c, j].std(ddof=1)),
              float(rloo[:, c, j].mean()), float(rloo[:, c, j].std(ddof=1)))
    ratio = chosen[4] / chosen[2] if chosen[2] > 0 else math.inf
    text = (f"{_size_label(size)} 模型，{n_problems} 道题 × 每题 {n} 份，重复 {repeats} 次。"
            f"「{CONTEXT_NAMES[context]}」的 Δ_{procedure}：精确梯度 {chosen[0]:+.4f}；"
            f"无基线 {chosen[1]:+.4f} ± {chosen[2]:.4f}，留一法基线 {chosen[3]:+.4f} ± {chosen[4]:.4f}"
            f"（标准差之比 留一法 / 无基线 = {ratio:.2f}）")
    result = types.SimpleNamespace(exact=exact, none=none, rloo=rloo, chosen=chosen, text=text)

    fig = _figure((12.0, 4.6))
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.25, 1]})
    y = np.arange(len(CONTEXTS))[::-1]
    ax1.barh(y, exact[:, j], height=0.6, color="0.75", label="精确梯度")
    ax1.errorbar(none[:, :, j].mean(axis=0), y + 0.15, xerr=none[:, :, j].std(axis=0, ddof=1), fmt="o", ms=4,
                 color="C3", capsize=2, label="无基线：平均 ± 标准差")
    ax1.errorbar(rloo[:, :, j].mean(axis=0), y - 0.15, xerr=rloo[:, :, j].std(axis=0, ddof=1), fmt="s", ms=4,
                 color="C0", capsize=2, label="留一法基线：平均 ± 标准差")
    ax1.legend(fontsize=8, loc="upper right")
    ax1.set_yticks(y)
    ax1.set_yticklabels([CONTEXT_NAMES[k] for k in CONTEXTS], fontsize=8)
    ax1.axvline(0, color="k", lw=0.8)
    ax1.set_xlabel(f"∂J / ∂Δ（做法：{PROCEDURE_NAMES[procedure]}）")
    ax1.set_title("每个情境的梯度：精确值与 REINFORCE 估计")
    bins = np.linspace(min(none[:, c, j].min(), rloo[:, c, j].min()), max(none[:, c, j].max(), rloo[:, c, j].max()), 31)
    ax2.hist(none[:, c, j], bins=bins, alpha=0.55, color="C3", histtype="stepfilled", label="无基线")
    ax2.hist(rloo[:, c, j], bins=bins, alpha=0.55, color="C0", histtype="stepfilled", label="留一法基线")
    ax2.axvline(chosen[0], color="k", lw=1.5, label="精确值")
    ax2.set_title(f"「{CONTEXT_NAMES[context]}」的 {repeats} 次估计")
    ax2.set_xlabel("梯度估计")
    ax2.set_ylabel("次数")
    ax2.legend(fontsize=8)
    fig.subplots_adjust(left=0.15, right=0.98, bottom=0.12, top=0.92, wspace=0.25)
    return result, fig


def gradient_dashboard(size=1e9, n_samples=8, context=("mul", 1.5), procedure="correct", seed=0, repeats=200,
                       n_problems=20):
    """
    作业一的控制面板（逻辑见 run_gradient_dashboard_logic）：模型大小、每题样本数、情境、做法、随机种子。

    【参数】前五个是控件的初始值；repeats、n_problems 固定不变（传给逻辑函数）
    【返回】Dashboard（在 notebook 里作为最后一行会显示出来）
    【例子】gradient_dashboard()
    """
    controls = {
        "size": _slider("log", size, 7, 12, 0.25, "模型参数量", ".2g"),
        "n_samples": _slider("int", n_samples, 2, 32, 1, "每题样本数 n"),
        "seed": _slider("int", seed, 0, 20, 1, "随机种子"),
        "context": _dropdown([(CONTEXT_NAMES[k], k) for k in CONTEXTS], context, "情境"),
        "procedure": _dropdown([(PROCEDURE_NAMES[p], p) for p in PROCEDURES], procedure, "做法"),
    }

    def compute(**values):
        result, fig = run_gradient_dashboard_logic(repeats=repeats, n_problems=n_problems, **values)
        return result, fig, result.text

    return _build("REINFORCE 梯度估计 vs 精确梯度", controls, compute,
                  f"每次改动都会重新采样、重新估计 {repeats} 次。看直方图的宽度：基线让它变窄了还是变宽了？换个模型大小试试。")


# =============================================================================
# 作业二 · 评估：pass@k 的无偏估计和有偏估计
# =============================================================================
ESTIMATORS = ("unbiased", "biased", "both")
_ESTIMATOR_NAMES = {"unbiased": "无偏估计 1 − C(n−c, k)/C(n, k)", "biased": "有偏估计 1 − (1 − c/n)^k",
                    "both": "两种都画"}


def run_passk_dashboard_logic(size=1e9, n=16, temperature=1.0, estimator="both", repeats=50, n_problems=40,
                              seed=0, pass_at_k_fn=None):
    """
    作业二的面板：从 n 份样本估计 pass@k（k = 1, 2, 4, … ≤ n），和精确值 1 − (1 − p)^k 比较。

    【思路】每道题采 n 份，数出做对的 c 份，用两种方法估计 pass@k：
            无偏：1 − C(n − c, k) / C(n, k)（Chen et al. 2021；"不放回地挑 k 份"）
            有偏：1 − (1 − c/n)^k（把 c/n 当成真的 p 代进公式；k 越大越偏低）
        整个过程重复 repeats 次，画出每种估计的平均值和 ±1 个标准差的带子；黑线是精确值。
        无偏估计的平均贴着精确值，有偏估计的平均在它下面。
    【参数】size：参数量；n：每道题的样本数（≥ 1）；temperature：> 0；estimator："unbiased" / "biased" / "both"；
        repeats：重复几次（≥ 2）；n_problems：题数；seed：种子；
        pass_at_k_fn：用来算无偏估计的函数 f(n, c, k)，默认包里的 estimators.pass_at_k（可以换成你写的）
    【返回】(result, figure)：result 有 ks、exact {k: 值}、unbiased 和 biased（各 (repeats, len(ks)) 数组）、text
    【例子】result, fig = run_passk_dashboard_logic(size=1e9, n=16)
    """
    size = as_real("size", size, 0.0, low_open=True)
    n = as_int("n", n, low=1)
    temperature = as_real("temperature", temperature, 0.0, low_open=True)
    estimator = as_choice("estimator", estimator, ESTIMATORS)
    repeats = as_int("repeats", repeats, low=2)
    n_problems = as_int("n_problems", n_problems, low=1)
    seed = as_int("seed", seed, low=0)
    fn = pass_at_k if pass_at_k_fn is None else pass_at_k_fn
    if not callable(fn):
        raise TypeError(f"pass_at_k_fn 必须是函数 f(n, c, k)，收到 {fn!r}")
    ks = sorted({k for k in (1, 2, 4, 8, 16, 32, 64) if k <= n} | {n})
    model = TrainableLLM(size)
    problems = make_problem_set(random.Random(seed), n_problems, 3, 8)
    exact = exact_pass_at_k(model, problems, ks, temperature)
    roll = sample_rollouts(model, problems, n * repeats, np.random.default_rng(seed), temperature)
    counts = roll.correct.reshape(n_problems, repeats, n).sum(axis=2)            # (P, R)
    table = {(c, k): float(fn(n, int(c), k)) for c in np.unique(counts) for k in ks}
    unbiased = np.array([[np.mean([table[(c, k)] for c in counts[:, r]]) for k in ks] for r in range(repeats)])
    biased = np.array([[np.mean(1.0 - (1.0 - counts[:, r] / n) ** k) for k in ks] for r in range(repeats)])
    k_big = ks[-1]
    text = (f"{_size_label(size)} 模型，温度 {temperature:g}，{n_problems} 道题 × 每题 n = {n} 份，重复 {repeats} 次。"
            f"pass@{k_big}：精确 {exact[k_big]:.3f}，无偏估计的平均 {unbiased[:, -1].mean():.3f}，"
            f"有偏估计的平均 {biased[:, -1].mean():.3f}")
    result = types.SimpleNamespace(ks=ks, exact=exact, unbiased=unbiased, biased=biased, text=text)

    fig = _figure((8.0, 4.6))
    ax = fig.subplots()
    ax.plot(ks, [exact[k] for k in ks], color="k", lw=2, marker="o", label="精确值 1 − (1 − p)^k")
    for key, arr, color in (("unbiased", unbiased, "C0"), ("biased", biased, "C3")):
        if estimator in (key, "both"):
            m, s = arr.mean(axis=0), arr.std(axis=0, ddof=1)
            ax.plot(ks, m, color=color, marker="s", ms=4, label=_ESTIMATOR_NAMES[key] + "（平均）")
            ax.fill_between(ks, m - s, m + s, color=color, alpha=0.2)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks)
    ax.set_xticklabels([str(k) for k in ks])
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("k")
    ax.set_ylabel("pass@k")
    ax.set_title(f"从 n = {n} 份样本估计 pass@k（带子：±1 个标准差）")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.12, top=0.92)
    return result, fig


def passk_dashboard(size=1e9, n=16, temperature=1.0, estimator="both", seed=0, pass_at_k_fn=None, repeats=50,
                    n_problems=40):
    """
    作业二的控制面板（逻辑见 run_passk_dashboard_logic）：模型大小、样本数 n、温度、估计方法、随机种子。

    【参数】前五个是控件的初始值；pass_at_k_fn：可以换成你自己写的 pass@k 函数；repeats、n_problems 固定不变
    【返回】Dashboard
    """
    controls = {
        "size": _slider("log", size, 8, 12, 0.25, "模型参数量", ".2g"),
        "n": _slider("int", n, 1, 64, 1, "每题样本数 n"),
        "temperature": _slider("float", temperature, 0.2, 2.0, 0.1, "温度", ".1f"),
        "estimator": _dropdown([(v, k) for k, v in _ESTIMATOR_NAMES.items()], estimator, "估计方法"),
        "seed": _slider("int", seed, 0, 20, 1, "随机种子"),
    }

    def compute(**values):
        result, fig = run_passk_dashboard_logic(pass_at_k_fn=pass_at_k_fn, repeats=repeats, n_problems=n_problems,
                                                **values)
        return result, fig, result.text

    return _build("pass@k：无偏估计 vs 有偏估计 vs 精确值", controls, compute,
                  "把 n 调小、k 接近 n 时，两种估计差得最多。")


# =============================================================================
# 作业三 · GRPO：用包里的训练循环训练，曲线和每个情境的变化
# =============================================================================
GRPO_DEFAULTS = dict(lr=2.0, group_size=8, eps_low=0.2, eps_high=0.2, mu=1, beta=0.0, estimator="k3",
                     dynamic_sampling=False, size=1e9, temperature=1.0, iters=30, seed=0, advantage="grpo",
                     batch_problems=16)
"""GRPO 面板的默认设置：和 rl.PRESETS["grpo"] 相同，只是迭代次数少一些、每次 16 道题，好让重画在一秒以内。"""

_PROBLEM_CACHE = {}


def _grpo_problems(seed):
    """训练题和留出题（rl.default_problems，按种子缓存，重画时不用重新出题）。"""
    from .rl import default_problems

    if seed not in _PROBLEM_CACHE:
        _PROBLEM_CACHE.clear()
        _PROBLEM_CACHE[seed] = default_problems(seed)
    return _PROBLEM_CACHE[seed]


def run_grpo_dashboard_logic(lr=2.0, group_size=8, eps_low=0.2, eps_high=0.2, mu=1, beta=0.0, estimator="k3",
                             dynamic_sampling=False, size=1e9, temperature=1.0, iters=30, seed=0, advantage="grpo",
                             batch_problems=16, advantage_fn=None, surrogate_fn=None):
    """
    作业三的面板：用包里的训练循环（toyllm.rl.train）从头训练一个模型，画训练曲线和每个情境的变化。

    【思路】所有选项直接变成 rl.RLConfig 的选项（estimator 是 KL 估计 kl_estimator，iters 是迭代次数 iterations），
        其余和 GRPO 预设相同。训练题、留出题来自 rl.default_problems(seed)。
        图有三块：留出题上的精确 pass@1 和训练时采样的 pass@1；熵和到参考策略的精确 KL；
        训练前后每个情境选「正确」的概率。
    【参数】见 rl.RLConfig 的同名选项；size：模型参数量；advantage_fn、surrogate_fn：可以换成你写的函数
        （签名见 rl.train）
    【返回】(history, figure)：history 是 rl.History，history.meta 里另有 "model"（训练后的模型）、
        "start_model"（训练前）、"text"（一行说明）
    【边界】选项不合法时（例如 group_size < 2）抛出 rl.RLConfig 的中文错误。
    【例子】hist, fig = run_grpo_dashboard_logic()；hist["pass1_exact"][-1]
    """
    from .rl import RLConfig, train

    size = as_real("size", size, 0.0, low_open=True)
    cfg = RLConfig(iterations=iters, batch_problems=batch_problems, group_size=group_size, lr=lr, advantage=advantage,
                   mu=mu, eps_low=eps_low, eps_high=eps_high, beta=beta, kl_estimator=estimator,
                   dynamic_sampling=dynamic_sampling, temperature=temperature, seed=seed)
    train_set, heldout = _grpo_problems(seed)
    start = TrainableLLM(size, name=f"{_size_label(size)}（训练前）")
    model = start.copy(name=f"{_size_label(size)}（训练后）")
    hist = train(model, cfg, train_set, heldout, advantage_fn=advantage_fn, surrogate_fn=surrogate_fn)
    p0, p1 = hist.meta["start_pass1_exact"], hist.meta["final_pass1_exact"]
    clip = (float(np.mean(hist["clip_low"])), float(np.mean(hist["clip_high"]))) if hist.n_rows else (0.0, 0.0)
    who = "，用你写的" + "、".join(n for n, f in (("优势函数", advantage_fn), ("替代损失", surrogate_fn)) if f) \
        if (advantage_fn or surrogate_fn) else ""
    text = (f"{_size_label(size)} 模型，{iters} 次迭代 × {batch_problems} 题 × G = {group_size}，学习率 {lr:g}，"
            f"μ = {mu}，ε = {eps_low:g} / {eps_high:g}，β = {beta:g}（{estimator}）"
            f"{'，动态采样' if dynamic_sampling else ''}{who}：精确 pass@1 {p0:.3f} → {p1:.3f}；"
            f"裁剪比例 低 {clip[0]:.3f} / 高 {clip[1]:.3f}；共采样 {hist['samples'][-1] if hist.n_rows else 0} 份")
    hist.meta.update(model=model, start_model=start, text=text)

    fig = _figure((13.0, 4.2))
    ax1, ax2, ax3 = (fig.add_axes(rect) for rect in ([0.045, 0.13, 0.25, 0.79], [0.35, 0.13, 0.25, 0.79],
                                                       [0.735, 0.13, 0.255, 0.79]))
    it = hist["iteration"]
    ax1.plot(it, hist["pass1_exact"], color="C0", label="留出题·精确")
    ax1.plot(it, hist["pass1_sampled"], color="C0", alpha=0.35, label="训练时·采样")
    ax1.axhline(p0, color="0.5", ls="--", lw=1, label="训练前")
    ax1.set_ylim(0, 1)
    ax1.set_title("pass@1")
    ax1.set_xlabel("迭代次数")
    ax1.legend(fontsize=8, loc="lower right")
    ax1.grid(alpha=0.3)
    ax2.plot(it, hist["entropy"], color="C2", label="熵")
    ax2.plot(it, hist["kl_exact"], color="C4", label="KL（精确）")
    ax2.set_title("熵与到参考策略的 KL（nats）")
    ax2.set_xlabel("迭代次数")
    ax2.set_ylim(bottom=0)
    ax2.legend(fontsize=8)
    ax2.grid(alpha=0.3)
    y = np.arange(len(CONTEXTS))[::-1]
    q0, q1 = prob_table(start)[:, 0], prob_table(model)[:, 0]
    ax3.barh(y + 0.2, q0, height=0.4, color="0.7", label="训练前")
    ax3.barh(y - 0.2, q1, height=0.4, color="C0", label="训练后")
    ax3.set_yticks(y)
    ax3.set_yticklabels([CONTEXT_NAMES[k] for k in CONTEXTS], fontsize=8)
    ax3.set_xlim(0, 1)
    ax3.set_title("每个情境选「正确」的概率")
    ax3.set_xlabel("灰：训练前    蓝：训练后")
    return hist, fig


def grpo_dashboard(advantage_fn=None, surrogate_fn=None, **defaults):
    """
    作业三的控制面板（逻辑见 run_grpo_dashboard_logic）：学习率、组大小、ε_low / ε_high、μ、β 和 KL 估计、
    优势的算法、动态采样、模型大小、温度、迭代次数、随机种子。

    【参数】advantage_fn、surrogate_fn：你写的函数；给了的话面板上多一个"用谁的函数"的下拉框；
        defaults：改某些控件的初始值，例如 grpo_dashboard(mu=4)
    【返回】Dashboard
    【例子】grpo_dashboard()；grpo_dashboard(advantage_fn=group_advantages, surrogate_fn=clipped_surrogate)
    """
    from .rl import ADVANTAGES, KL_ESTIMATORS

    unknown = set(defaults) - set(GRPO_DEFAULTS)
    if unknown:
        raise TypeError(f"grpo_dashboard 不认识的参数 {sorted(unknown)}；可以改的初始值：{'、'.join(GRPO_DEFAULTS)}")
    v = dict(GRPO_DEFAULTS, **defaults)
    adv_names = {"none": "无基线（REINFORCE）", "mean": "减组平均", "rloo": "留一法（RLOO）", "grpo": "GRPO（再除以标准差）"}
    controls = {
        "lr": _slider("float", v["lr"], 0.1, 8.0, 0.1, "学习率", ".1f"),
        "group_size": _slider("int", v["group_size"], 2, 32, 1, "组大小 G"),
        "iters": _slider("int", v["iters"], 5, 200, 5, "迭代次数"),
        "eps_low": _slider("float", v["eps_low"], 0.0, 0.5, 0.02, "ε_low", ".2f"),
        "eps_high": _slider("float", v["eps_high"], 0.0, 0.5, 0.02, "ε_high", ".2f"),
        "mu": _slider("int", v["mu"], 1, 8, 1, "每批更新次数 μ"),
        "beta": _slider("float", v["beta"], 0.0, 0.5, 0.01, "KL 系数 β", ".2f"),
        "estimator": _dropdown(list(KL_ESTIMATORS), v["estimator"], "KL 估计"),
        "advantage": _dropdown([(adv_names[a], a) for a in ADVANTAGES], v["advantage"], "优势"),
        "size": _slider("log", v["size"], 8, 12, 0.25, "模型参数量", ".2g"),
        "temperature": _slider("float", v["temperature"], 0.3, 2.0, 0.1, "温度", ".1f"),
        "seed": _slider("int", v["seed"], 0, 20, 1, "随机种子"),
        "dynamic_sampling": _checkbox(v["dynamic_sampling"], "动态采样（DAPO）"),
    }
    mine = {"advantage_fn": advantage_fn, "surrogate_fn": surrogate_fn}
    if advantage_fn is not None or surrogate_fn is not None:
        controls["use_mine"] = _dropdown([("包里的", False), ("你写的", True)], True, "优势和替代损失用")

    def compute(use_mine=False, **values):
        extra = mine if use_mine else {}
        hist, fig = run_grpo_dashboard_logic(batch_problems=v["batch_problems"], **extra, **values)
        return hist, fig, hist.meta["text"]

    return _build("GRPO 训练面板", controls, compute,
                  "松开滑块就会从头重新训练；右边的条形图是每个情境训练前后选「正确」的概率。")


def benchmark(repeats=3):
    """
    量一量默认设置下各面板"重算 + 画图 + 转 PNG"要多久（秒）。打印并返回 {面板名: 最快的一次}。

    【思路】速度目标（GRPO 默认重训在一秒以内）由这个函数打印出来看，不写成计时的单元测试（机器忙时会误报）。
    【例子】python -c "from toyllm.widgets import benchmark; benchmark()"
    """
    repeats = as_int("repeats", repeats, low=1)
    jobs = {"作业一 · 梯度面板": run_gradient_dashboard_logic, "作业二 · pass@k 面板": run_passk_dashboard_logic,
            "作业三 · GRPO 面板": run_grpo_dashboard_logic}
    out = {}
    for name, job in jobs.items():
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            _, fig = job()
            figure_png(fig)
            times.append(time.perf_counter() - start)
        out[name] = min(times)
        print(f"{name}：默认设置重算并重画 {out[name]:.3f} 秒（{repeats} 次里最快的一次）")
    return out
