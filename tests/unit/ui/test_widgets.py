"""
控制面板（toyllm.dashboards）：逻辑函数直接测；面板本身（ipywidgets.interactive_output）建好以后改控件的值，
看面板记下的说明、图和结果。没有安装 ipywidgets 时，面板的测试跳过（逻辑函数的测试照常运行）。
速度不在这里测（见 tools/bench_widgets.py）。
"""

import random

import numpy as np
import pytest

from toyllm import TrainableLLM, make_problem_set
from toyllm.exact import answer_pass_at_k, grad_expected_reward
from toyllm import dashboards
from toyllm.dashboards import (FIG_DPI, Dashboard, figure_png, run_gradient_dashboard_logic, run_grpo_dashboard_logic,
                            run_passk_dashboard_logic)


def _titles(fig):
    return [ax.get_title() for ax in fig.axes]


def _suptitle(fig):
    """图的总标题（Figure.get_suptitle 从 matplotlib 3.8 才有，最低支持的 3.7 没有）。"""
    return fig._suptitle.get_text() if fig._suptitle is not None else ""


@pytest.fixture(autouse=True)
def _pyplot_figures_before():
    """逻辑函数不能把图留在 pyplot 里（见 toyllm.dashboards 的说明）：记下测试开始时 pyplot 里已有的图。"""
    import matplotlib.pyplot as plt

    _FIGNUMS[:] = plt.get_fignums()
    yield


_FIGNUMS = []


def _no_pyplot_figures():
    import matplotlib.pyplot as plt

    return plt.get_fignums() == _FIGNUMS


# =============================================================================
# 逻辑函数
# =============================================================================
def test_gradient_logic_is_unbiased_and_deterministic():
    result, fig = run_gradient_dashboard_logic(size=1e9, n_samples=4, repeats=200, n_problems=10, seed=3)
    problems = make_problem_set(random.Random(3), 10, 3, 8)
    assert np.array_equal(result.exact, grad_expected_reward(TrainableLLM(1e9), problems))
    assert result.none.shape == result.rloo.shape == (200, 12, 3)
    # 两种估计都无偏：200 次估计的平均和精确值差不到 5 个标准误（标准误 = 标准差 / √200；再加 3 / 样本数 的下限，
    # 见 hw1.check_estimate_vs_exact；为什么：一次也没采到的少见事件，样本标准误几乎是 0，估计却差着那几次）
    floor = 3.0 / (200 * 10 * 4)
    for est in (result.none, result.rloo):
        se = np.sqrt(est.std(axis=0, ddof=1) ** 2 / 200 + floor ** 2)
        assert np.all(np.abs(est.mean(axis=0) - result.exact) <= 5 * se)
    again, _ = run_gradient_dashboard_logic(size=1e9, n_samples=4, repeats=200, n_problems=10, seed=3)
    assert np.array_equal(again.none, result.none)
    assert "精确梯度" in result.text and len(fig.axes) == 2 and "REINFORCE" in _titles(fig)[0]
    assert result.text.startswith("实现：包里的参考实现")
    assert _no_pyplot_figures()


def test_gradient_logic_chosen_component():
    result, _ = run_gradient_dashboard_logic(size=1e10, n_samples=3, repeats=20, n_problems=5, context=("add", 0.7),
                                             procedure="bug", seed=1)
    i = [("add", 0.7) == k for k in __import__("toyllm").CONTEXTS].index(True)
    assert result.chosen[0] == result.exact[i, 1]
    assert result.chosen[1] == pytest.approx(result.none[:, i, 1].mean())


@pytest.mark.parametrize("kwargs, error", [
    (dict(n_samples=1), ValueError), (dict(size=0), ValueError), (dict(context=("mul", 9.9)), ValueError),
    (dict(procedure="lucky"), ValueError), (dict(repeats=1), ValueError), (dict(seed=-1), ValueError),
    (dict(n_samples=2.5), TypeError),
])
def test_gradient_logic_bad_arguments(kwargs, error):
    with pytest.raises(error):
        run_gradient_dashboard_logic(**kwargs)


def test_passk_logic_unbiased_vs_biased():
    result, fig = run_passk_dashboard_logic(size=1e9, n=4, repeats=60, n_problems=30, seed=0)
    assert result.ks == [1, 2, 4]
    problems = make_problem_set(random.Random(0), 30, 3, 8)
    assert result.exact == answer_pass_at_k(TrainableLLM(1e9), problems, [1, 2, 4])
    for j, k in enumerate(result.ks):
        m, se = result.unbiased[:, j].mean(), result.unbiased[:, j].std(ddof=1) / np.sqrt(60)
        assert abs(m - result.exact[k]) <= 5 * se                 # 无偏估计的期望就是精确的 pass@k
    # 有偏估计在 k = n 时明显偏低（远超过 5 个标准误）
    b, se_b = result.biased[:, -1].mean(), result.biased[:, -1].std(ddof=1) / np.sqrt(60)
    assert result.exact[4] - b > 5 * se_b
    # k = 1 时两种估计是同一个数 c / n
    assert np.allclose(result.unbiased[:, 0], result.biased[:, 0])
    assert "pass@k" in _titles(fig)[0] and _no_pyplot_figures()


def test_passk_logic_uses_the_given_function():
    calls = []

    def mine(n, c, k):
        calls.append((n, c, k))
        return 0.5

    result, fig = run_passk_dashboard_logic(n=2, repeats=2, n_problems=3, estimator="unbiased", pass_at_k_fn=mine)
    assert calls and np.all(result.unbiased == 0.5)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert any("无偏" in s for s in labels) and not any("有偏" in s for s in labels)
    with pytest.raises(TypeError, match="pass_at_k_fn"):
        run_passk_dashboard_logic(pass_at_k_fn=3)
    with pytest.raises(ValueError, match="estimator"):
        run_passk_dashboard_logic(estimator="best")


def test_grpo_logic_trains_and_draws():
    hist, fig = run_grpo_dashboard_logic(iters=15, seed=0)
    assert hist.n_rows == 15
    assert hist.meta["final_pass1_exact"] > hist.meta["start_pass1_exact"] + 0.05
    assert np.array_equal(hist.meta["start_model"].params, np.zeros((12, 3)))
    assert hist.meta["model"].params.any()
    assert _titles(fig) == ["路径 pass@1、采样 pass@1", "熵（nats）、KL（精确）", "每个情境选「正确」的概率"]
    assert "15 次迭代" in hist.meta["text"] and _no_pyplot_figures()
    assert hist.meta["text"].startswith("实现：用包里的参考实现")
    again, _ = run_grpo_dashboard_logic(iters=15, seed=0)
    assert again["pass1_exact"] == hist["pass1_exact"]
    assert figure_png(fig)[:8] == b"\x89PNG\r\n\x1a\n"


def test_grpo_logic_options_reach_the_engine():
    hist, _ = run_grpo_dashboard_logic(iters=3, group_size=4, mu=3, eps_high=0.28, beta=0.1, estimator="k1",
                                       dynamic_sampling=True, advantage="rloo", lr=1.0, temperature=0.8, seed=2)
    cfg = hist.meta["config"]
    assert (cfg["group_size"], cfg["mu"], cfg["eps_high"], cfg["beta"], cfg["kl_estimator"]) == (4, 3, 0.28, 0.1, "k1")
    assert cfg["dynamic_sampling"] and cfg["advantage"] == "rloo" and cfg["temperature"] == 0.8
    with pytest.raises(ValueError, match="group_size"):
        run_grpo_dashboard_logic(iters=1, group_size=1)


def test_grpo_logic_with_student_functions():
    seen = {"adv": 0, "surr": 0}

    def adv(rewards, group_size):
        seen["adv"] += 1
        r = np.asarray(rewards, float).reshape(-1, group_size)
        return (r - r.mean(axis=1, keepdims=True)).reshape(-1)

    def surr(ratio, a, lo, hi):
        seen["surr"] += 1
        return -np.minimum(ratio * a, np.clip(ratio, 1 - lo, 1 + hi) * a)

    hist, fig = run_grpo_dashboard_logic(iters=2, advantage_fn=adv, surrogate_fn=surr)
    assert seen["adv"] == 2 and seen["surr"] >= 2
    assert hist.meta["text"].startswith("实现：用你写的优势函数、替代损失（「优势」选项不起作用）")
    # 图上也写明（换实现时曲线可能一模一样，只看图也要知道是谁的函数画的）
    assert _suptitle(fig) == hist.meta["banner"] == "这张图由你写的优势函数、替代损失训练得到"
    hist, fig = run_grpo_dashboard_logic(iters=2, surrogate_fn=surr)
    assert hist.meta["text"].startswith("实现：用你写的替代损失。")             # 优势仍然用「优势」选项
    assert _suptitle(fig) == "这张图由你写的替代损失训练得到"
    _, fig = run_grpo_dashboard_logic(iters=2)
    assert _suptitle(fig) == "这张图由包里的参考实现（toyllm.rl）训练得到"


@pytest.mark.parametrize("job, first, second", [
    (run_gradient_dashboard_logic, dict(n_samples=4, repeats=20, n_problems=5),
     dict(n_samples=6, repeats=20, n_problems=5, context=("add", 0.0), procedure="bug", size=1e11)),
    (run_passk_dashboard_logic, dict(n=4, repeats=5, n_problems=5), dict(n=16, repeats=5, n_problems=5, estimator="biased")),
    (run_grpo_dashboard_logic, dict(iters=3), dict(iters=6, beta=0.1, size=1e11)),
])
def test_redraw_on_a_reused_figure_is_identical_to_a_fresh_one(job, first, second):
    """面板复用同一张图（只擦掉画上去的东西）：换了设置以后画出的 PNG 和新建一张图画的逐字节相同。"""
    dash = Dashboard(lambda axes, **values: (*job(axes=axes, **values), ""))
    dash.redraw(**first)
    fig = dash.figure
    dash.redraw(**second)
    assert dash.figure is fig and dash.error == ""
    _, fresh = job(**second)
    assert dash.png == figure_png(fresh)


def test_logic_functions_draw_with_the_plot_functions(monkeypatch):
    """一条画图的路：面板的图就是 toyllm.plots 的画图函数画的。"""
    calls = []
    for name in ("plot_gradient_estimates", "plot_pass_at_k_estimates", "plot_training_curves", "plot_context_bars"):
        real = getattr(dashboards, name)
        monkeypatch.setattr(dashboards, name, lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k))
    run_gradient_dashboard_logic(n_samples=2, repeats=2, n_problems=2)
    run_passk_dashboard_logic(n=2, repeats=2, n_problems=2)
    run_grpo_dashboard_logic(iters=1)
    assert calls == ["plot_gradient_estimates", "plot_pass_at_k_estimates", "plot_training_curves", "plot_context_bars"]


# =============================================================================
# 面板（需要 ipywidgets）
# =============================================================================
def _widgets():
    return pytest.importorskip("ipywidgets", reason="没有安装 ipywidgets（notebook 的可选依赖：pip install -e '.[dev]'）")


def test_grpo_dashboard_set_values():
    w = _widgets()
    from toyllm.dashboards import grpo_dashboard

    dash = grpo_dashboard(iters=5)
    assert set(dash.controls) == {"lr", "group_size", "eps_low", "eps_high", "mu", "beta", "estimator",
                                  "dynamic_sampling", "size", "temperature", "iters", "seed", "advantage"}
    sliders = [c for c in dash.controls.values() if isinstance(c, (w.IntSlider, w.FloatSlider, w.FloatLogSlider))]
    assert sliders and all(s.continuous_update is False for s in sliders)
    assert isinstance(dash.controls["estimator"], w.Dropdown) and isinstance(dash.controls["dynamic_sampling"], w.Checkbox)
    assert isinstance(dash.ui, w.VBox) and isinstance(dash.out, w.Output) and dash.out in dash.ui.children
    assert "5 次迭代" in dash.text and "G = 8" in dash.text and dash.png[:4] == b"\x89PNG"
    assert dash.runs == 1 and dash.error == "" and "包里的参考实现" in dash.ui.children[0].value
    assert not dash.controls["advantage"].disabled
    assert dash.controls["lr"].max >= 30.0                   # 作业三试一试 2 要把学习率调到 30（上界才裁得到）

    dash.controls["group_size"].value = 4                     # 改动后自动重算（interactive_output）
    assert dash.runs == 2 and "G = 4" in dash.text
    dash.controls["iters"].value = 10
    assert dash.runs == 3 and "10 次迭代" in dash.text
    assert dash.result.n_rows == 10 and dash.seconds > 0
    assert dash.values()["group_size"] == 4
    bundle = dash._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_dashboard_shows_errors_instead_of_raising(capsys):
    _widgets()
    from toyllm.dashboards import grpo_dashboard

    dash = grpo_dashboard(iters=5)

    def broken(axes, **values):
        raise ValueError("故意的错误")

    dash._compute = broken
    dash.controls["seed"].value = 1
    assert dash.text == dash.error == "✗ 出错了：ValueError: 故意的错误" and dash.png is None
    assert "✗ 出错了：ValueError: 故意的错误" in capsys.readouterr().out      # 打印出来（在 notebook 里进了 Output）


def _adv(rewards, group_size):
    r = np.asarray(rewards, float).reshape(-1, group_size)
    return (r - r.mean(axis=1, keepdims=True)).reshape(-1)


def test_grpo_dashboard_with_student_functions_and_bad_defaults():
    _widgets()
    from toyllm.dashboards import grpo_dashboard

    dash = grpo_dashboard(advantage_fn=_adv, iters=5)
    use_mine, advantage = dash.controls["use_mine"], dash.controls["advantage"]
    assert use_mine.value is True and dash.text.startswith("实现：用你写的优势函数")
    # 你写的 advantage_fn 代替了「优势」选项：它变灰，并且写明不起作用（不是悄悄地忽略）
    assert advantage.disabled and "此项不用" in advantage.description
    assert "「优势」选项不起作用" in dash.text
    mine_png = dash.png
    assert _suptitle(dash.figure) == "这张图由你写的优势函数训练得到"
    use_mine.value = False
    assert not advantage.disabled and advantage.description == "优势"
    assert dash.text.startswith("实现：用包里的参考实现") and "你写的" not in dash.text
    # 换了实现，图本身也变了（总标题写明是谁的函数）：同一张复用的图，标题被换掉，不是叠上去
    assert _suptitle(dash.figure) == "这张图由包里的参考实现（toyllm.rl）训练得到" and dash.png != mine_png
    assert sum(t.get_text().startswith("这张图由") for t in dash.figure.texts) == 1
    advantage.value = "rloo"
    assert dash.result.meta["config"]["advantage"] == "rloo"
    with pytest.raises(TypeError, match="不认识的参数"):
        grpo_dashboard(learning_rate=1.0)


def test_grpo_dashboard_with_only_a_surrogate_keeps_the_advantage_option():
    _widgets()
    from toyllm.dashboards import grpo_dashboard

    dash = grpo_dashboard(surrogate_fn=lambda ratio, a, lo, hi: -np.minimum(ratio * a, np.clip(ratio, 1 - lo, 1 + hi) * a),
                          iters=5)
    assert dash.controls["use_mine"].value is True and not dash.controls["advantage"].disabled
    assert dash.text.startswith("实现：用你写的替代损失。")


def test_gradient_and_passk_dashboards():
    _widgets()
    from toyllm.dashboards import gradient_dashboard, passk_dashboard

    g = gradient_dashboard(n_samples=3, repeats=10, n_problems=5)
    assert "每题 3 份" in g.text and g.text.startswith("实现：包里的参考实现")
    g.controls["procedure"].value = "careless"
    assert "Δ_careless" in g.text and g.runs == 2
    g.controls["context"].value = ("sub", 2.4)
    assert "减法，≥3 次借位" in g.text

    p = passk_dashboard(n=4, repeats=3, n_problems=5)
    assert "n = 4" in p.text and p.text.startswith("实现：包里的参考实现")
    p.controls["n"].value = 8
    assert "n = 8" in p.text and "pass@8" in p.text

    def pass_at_k_mine(n, c, k):
        return 0.5

    mine = passk_dashboard(n=4, repeats=3, n_problems=5, pass_at_k_fn=pass_at_k_mine)
    assert mine.text.startswith("实现：无偏估计用你写的 pass_at_k_mine") and "你写的" in mine.ui.children[0].value


def test_figure_png_size():
    _, fig = run_passk_dashboard_logic(n=2, repeats=2, n_problems=2)
    png = figure_png(fig)
    width = int.from_bytes(png[16:20], "big")
    assert width == int(fig.get_figwidth() * FIG_DPI)


def test_missing_ipywidgets_gives_a_clear_message(monkeypatch):
    """没有 ipywidgets 时，面板报中文的 ImportError；逻辑函数照常可用（上面的测试）。"""
    import sys

    from toyllm.dashboards import grpo_dashboard

    monkeypatch.setitem(sys.modules, "ipywidgets", None)          # 让 import ipywidgets 失败
    with pytest.raises(ImportError, match="控制面板需要 ipywidgets"):
        grpo_dashboard(iters=5)


# =============================================================================
# 作业三的面板：说明写明优势和裁剪比例；图里的字不互相压住；试一试 2 的设置（#40）
# =============================================================================
def _columns(line):
    """一行字占几列（汉字算 2 列，和 tools/wrap_code_lines.py 一样）。"""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def test_grpo_summary_names_the_advantage_and_fits_in_short_lines():
    """
    说明的第一行写明用的是哪种优势（试一试 1 比较的就是它）；每一行不超过 100 列（汉字算 2 列）：
    1280 像素宽、开着文件浏览器的 JupyterLab 里一行放得下，浏览器不会在一个词的中间折行（tests/e2e/test_browser.py 量过）。
    """
    hist, _ = run_grpo_dashboard_logic(iters=2, advantage="rloo")
    lines = hist.meta["text"].split("\n")
    assert lines[0] == "实现：用包里的参考实现（toyllm.rl）。优势：留一法（RLOO）"
    assert lines[-2:] == ["裁剪：ε_low / ε_high = 0.2 / 0.2；被裁剪的步 下界 0（一次也没有），上界 0（一次也没有）",
                          "μ = 1：ρ 恒为 1，裁剪不会发生"]
    hist, _ = run_grpo_dashboard_logic(iters=2, advantage_fn=_adv, surrogate_fn=_surr)
    assert hist.meta["text"].split("\n")[0].endswith("。优势：你写的优势函数（GRPO 的组内标准化）")
    widest = dict(iters=200, group_size=32, lr=12.5, mu=8, eps_low=0.22, eps_high=0.28, beta=0.05,
                  dynamic_sampling=True, size=10 ** 11.75, temperature=1.5, seed=20)
    for kw in ({}, {"advantage_fn": _adv, "surrogate_fn": _surr}):
        hist, _ = run_grpo_dashboard_logic(**dict(widest, iters=2), **kw)
        text = hist.meta["text"].replace("2 次迭代", "200 次迭代").replace("共采样 ", "共采样 0000")
        assert max(_columns(line) for line in text.split("\n")) <= 100, text


def _surr(ratio, a, lo, hi):
    return -np.minimum(ratio * a, np.clip(ratio, 1 - lo, 1 + hi) * a)


def test_grpo_clip_fractions_are_reported_for_a_student_surrogate_too():
    """你写的替代损失只返回损失：面板按裁剪的定义补上被裁剪的步，裁剪比例和包里的实现一样（不是一直写 0）。"""
    h0, _ = run_grpo_dashboard_logic(iters=5, lr=30.0, mu=4)
    h1, _ = run_grpo_dashboard_logic(iters=5, lr=30.0, mu=4, surrogate_fn=_surr)
    assert np.mean(h0["clip_high"]) > 0 and np.mean(h0["clip_low"]) > 0
    assert h1["clip_high"] == pytest.approx(h0["clip_high"]) and h1["clip_low"] == pytest.approx(h0["clip_low"])
    assert h1.meta["text"].split("\n")[-1] == h0.meta["text"].split("\n")[-1]
    assert "上界 0（一次也没有）" not in h0.meta["text"]


def test_grpo_figure_text_does_not_overlap():
    """第三张图纵轴上很长的情境名不压到熵的图上；右上角的裁剪比例不压到左上角的总标题上。"""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    _, fig = run_grpo_dashboard_logic(iters=2, advantage_fn=_adv, surrogate_fn=_surr)
    renderer = FigureCanvasAgg(fig).get_renderer()
    _, entropy, bars = fig.axes
    labels = [t.get_window_extent(renderer) for t in bars.get_yticklabels() if t.get_text()]
    assert labels and min(b.x0 for b in labels) > entropy.get_window_extent(renderer).x1 + 10
    (clip,) = [t for t in fig.texts if t.get_gid() == "clip"]
    assert clip.get_text() == "裁剪比例：下界 0（一次也没有），上界 0（一次也没有）"
    assert fig._suptitle.get_window_extent(renderer).x1 + 20 < clip.get_window_extent(renderer).x0
    assert clip.get_window_extent(renderer).x1 <= fig.bbox.x1


def test_try_it_2_eps_high_changes_training_only_when_the_upper_clip_binds():
    """
    作业三试一试 2 的三步（面板默认的 1B 模型、种子 0）：μ = 1，和 μ = 4、学习率 2 时上界一步也没裁，
    ε_high 从 0.2 换成 0.28，训练和图逐位相同；学习率 30、μ = 4 时上界裁到了，两条熵曲线看得出不同。
    学习率 30 在面板的滑块范围里（以前最大 8；test_grpo_dashboard_set_values 检查）。
    """
    def run(**kw):
        return [run_grpo_dashboard_logic(eps_high=eh, **kw) for eh in (0.2, 0.28)]

    for mu in (1, 4):
        (a, fa), (b, fb) = run(mu=mu)
        assert np.mean(a["clip_high"]) == 0 and a["entropy"] == b["entropy"] and a["pass1_exact"] == b["pass1_exact"]
    assert figure_png(fa) == figure_png(fb)                          # μ = 4：图逐个像素相同，说明写明了为什么
    assert a.meta["text"].endswith("上界一次也没有裁剪：把 ε_high 调大，这次训练一模一样")
    (a, _), (b, _) = run(mu=4, lr=30.0)
    assert np.mean(a["clip_high"]) > 0 and np.mean(b["clip_high"]) > 0
    assert np.max(np.abs(np.subtract(a["entropy"], b["entropy"]))) > 0.05
