"""
toyllm.plots：每个画图函数在无界面的 Agg 后端上能画，标题是中文，画的时候没有缺字警告；
单张图的函数返回 Axes、多张小图的返回 Axes 数组；给了 ax= / axes= 就画进给的坐标轴，不新建图。
"""

import logging
import random
import re
import warnings
from collections.abc import Mapping

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from toyllm import ToyLLM, TrainableLLM, make_problem_set  # noqa: E402
from toyllm.evaluation import draw_samples, pass_at_k_sampled  # noqa: E402
from toyllm.experiments import compare_exact_sampled, inference_curves  # noqa: E402
from toyllm.scaling import scaling_curve  # noqa: E402
from toyllm.exact import exact_pass_at_k  # noqa: E402
from toyllm.plots import (plot_context_bars, plot_exact_vs_sampled, plot_gradient_estimates,  # noqa: E402
                          plot_pass_at_k, plot_pass_at_k_estimates, plot_scaling, plot_test_time_compute,
                          plot_training_curves)

CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def problems():
    return make_problem_set(random.Random(0), 30, 3, 6)


@pytest.fixture(autouse=True)
def isolated_rc():
    with matplotlib.rc_context():
        yield
    plt.close("all")


def figure_of(axes):
    """画图函数的返回值（Axes 或 Axes 数组）所在的 Figure；顺便检查返回值的类型。"""
    from matplotlib.axes import Axes

    flat = np.ravel(np.asarray(axes, dtype=object))
    assert flat.size >= 1 and all(isinstance(a, Axes) for a in flat)
    assert len({id(a.figure) for a in flat}) == 1
    return flat[0].figure


def render(make, caplog):
    """画图并真正渲染（缺字警告在渲染时才出现）；返回 (Figure, 缺字相关的警告)。"""
    with caplog.at_level(logging.WARNING, logger="matplotlib"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = figure_of(make())
        fig.canvas.draw()
    messages = [str(w.message) for w in caught] + [r.getMessage() for r in caplog.records]
    return fig, [m for m in messages if "Glyph" in m or "missing from font" in m or "findfont" in m]


def titles(fig):
    out = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    if fig._suptitle is not None:
        out.append(fig._suptitle.get_text())
    return out


def test_plot_pass_at_k(problems, caplog):
    model = ToyLLM(1e9)
    sampled = pass_at_k_sampled(draw_samples(model, problems, 8, np.random.default_rng(0)), (1, 2, 4, 8))
    fig, bad = render(lambda: plot_pass_at_k({"1B 精确": exact_pass_at_k(model, problems, (1, 2, 4, 8)),
                                              "1B 采样": sampled}), caplog)
    assert isinstance(fig, Figure) and not bad
    ax = fig.axes[0]
    assert ax.get_title() == "pass@k 随 k 的变化"
    assert ax.get_xlabel() == "k（每道题的样本数）"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["1B 精确", "1B 采样"]
    assert plt.rcParams["axes.unicode_minus"] is False
    assert tuple(fig.get_size_inches()) == (7.0, 4.5)


@pytest.mark.parametrize("by,expected", [("metric", ["pass@k（有一个对就算对）", "maj@k（多数投票）"]),
                                         ("model", ["1B", "1B（无思维链）"])])
def test_plot_test_time_compute(problems, caplog, by, expected):
    data = inference_curves([ToyLLM(1e9), ToyLLM(1e9, cot=False)], problems, 4, np.random.default_rng(0), subsets=20)
    fig, bad = render(lambda: plot_test_time_compute(data, by=by), caplog)
    assert not bad
    got = titles(fig)
    assert all(t in got for t in expected)
    assert any(t.startswith("测试时计算") for t in got)


def test_plot_scaling(problems, caplog):
    data = scaling_curve(problems, np.random.default_rng(0), sizes=(1e8, 1e10, 1e12), n=4)
    fig, bad = render(lambda: plot_scaling(data), caplog)
    assert not bad
    got = titles(fig)
    assert "pass@1 随参数量的变化" in got and any("每个情境" in t for t in got)
    leg = fig.axes[1].get_legend()
    legend = [t.get_text() for t in leg.get_texts()]
    assert legend == ["加法", "减法", "乘法"] and "越难" in leg.get_title().get_text()   # 12 个情境的图例读不过来
    assert len(fig.axes[1].get_lines()) >= 12                                          # 线还是每个情境一条
    assert tuple(fig.get_size_inches()) == (11.0, 5.0)


def test_plot_context_bars(caplog):
    after = TrainableLLM(1e9)
    after.params[:, 0] += 1.0
    fig, bad = render(lambda: plot_context_bars(TrainableLLM(1e9), after), caplog)
    assert not bad
    ax = fig.axes[0]
    assert ax.get_title() == "每个情境选「正确」的概率：训练前后"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["训练前", "训练后"]
    assert len(ax.patches) == 24
    widths = [p.get_width() for p in ax.patches]
    assert all(b > a for a, b in zip(widths[:12], widths[12:]))       # 训练后 P(正确) 更大


class History(Mapping):
    """一个不是 dict 的 Mapping（像 RL 的 History 那样）。"""

    def __init__(self, data):
        self._data = data

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


def test_plot_training_curves_accepts_any_mapping(caplog):
    hist = History({"iteration": [0, 1, 2, 3], "pass1_exact": [0.48, 0.55, 0.6, 0.66], "entropy": [0.5, 0.45, 0.4, 0.3],
                    "my_metric": (1, 2, 3, 4), "note": ["a", "b", "c", "d"]})
    fig, bad = render(lambda: plot_training_curves(hist), caplog)
    assert not bad
    got = titles(fig)
    assert got[:3] == ["路径 pass@1", "熵（nats）", "my_metric"] and got[-1] == "训练曲线"
    assert fig.axes[0].get_xlabel() == "迭代次数"
    axes2 = plot_training_curves({"reward": [0.1, 0.2]}, columns=["reward"], labels={"reward": "奖励"})
    assert len(axes2) == 1 and axes2[0].get_title() == "奖励"


def test_plot_training_curves_groups_columns_in_one_panel(caplog):
    hist = {"iteration": [1, 2, 3], "pass1_exact": [0.5, 0.6, 0.7], "pass1_sampled": [0.4, 0.7, 0.6], "entropy": [1, 0.9, 0.8]}
    fig, bad = render(lambda: plot_training_curves(hist, columns=[("pass1_exact", "pass1_sampled"), "entropy"]), caplog)
    assert not bad
    ax = fig.axes[0]
    assert ax.get_title() == "路径 pass@1、采样 pass@1" and len(ax.get_lines()) == 2
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["路径 pass@1", "采样 pass@1"]
    assert fig.axes[1].get_title() == "熵（nats）" and fig.axes[1].get_legend() is None
    with pytest.raises(ValueError, match="kl"):
        plot_training_curves(hist, columns=[("pass1_exact", "kl")])


def test_plot_training_curves_connects_the_rows_that_were_evaluated(caplog):
    """tinylm.sft 的 greedy 只在评估的行有数（其余是 NaN）：画出来是一条连着那几个点的线，不是一片空白。"""
    nan = float("nan")
    hist = {"iteration": [1, 2, 3, 4, 5], "loss": [2.0, 1.5, 1.2, 1.0, 0.9], "greedy": [nan, 0.1, nan, 0.4, 0.5]}
    fig, bad = render(lambda: plot_training_curves(hist, columns=["loss", "greedy"]), caplog)
    assert not bad
    line = fig.axes[1].get_lines()[0]
    assert list(line.get_xdata()) == [2, 4, 5] and list(line.get_ydata()) == [0.1, 0.4, 0.5]
    assert list(fig.axes[0].get_lines()[0].get_xdata()) == [1, 2, 3, 4, 5]


def test_plot_exact_vs_sampled(problems, caplog):
    results = [compare_exact_sampled(ToyLLM(s), problems, 8, np.random.default_rng(0)) for s in (1e8, 1e10)]
    fig, bad = render(lambda: plot_exact_vs_sampled(results), caplog)
    assert not bad
    ax = fig.axes[0]
    assert ax.get_title() == "pass@1 的精确值与采样估计（95% 置信区间）"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["100M", "10B"]


@pytest.mark.parametrize("call,exc", [
    (lambda: plot_pass_at_k([]), TypeError),
    (lambda: plot_pass_at_k({"a": {1: "x"}}), TypeError),
    (lambda: plot_test_time_compute({"ks": [1]}), ValueError),
    (lambda: plot_test_time_compute([1, 2]), TypeError),
    (lambda: plot_scaling({}), ValueError),
    (lambda: plot_context_bars(ToyLLM(1e9), "after"), TypeError),
    (lambda: plot_context_bars(ToyLLM(1e9), ToyLLM(1e10), labels="前后"), ValueError),
    (lambda: plot_training_curves([1, 2, 3]), TypeError),
    (lambda: plot_training_curves({"iteration": [0, 1], "reward": [0.1]}), ValueError),
    (lambda: plot_training_curves({"reward": [0.1]}, columns=["kl"]), ValueError),
    (lambda: plot_training_curves({"note": ["a"]}), ValueError),
    (lambda: plot_exact_vs_sampled([]), TypeError),
    (lambda: plot_exact_vs_sampled([0.5]), TypeError),
])
def test_bad_inputs_raise_chinese_errors(call, exc):
    with pytest.raises(exc) as info:
        call()
    assert CHINESE.search(str(info.value))


# =============================================================================
# ax= / axes=：画进给的坐标轴
# =============================================================================
def _given(n):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4))
    return fig, fig.subplots(1, n, squeeze=False).ravel()


def _dashboard_results():
    from toyllm.dashboards import run_gradient_dashboard_logic, run_passk_dashboard_logic

    grad, _ = run_gradient_dashboard_logic(n_samples=3, repeats=10, n_problems=4)
    passk, _ = run_passk_dashboard_logic(n=4, repeats=3, n_problems=4)
    return grad, passk


def test_every_plot_draws_into_given_axes(problems):
    model = ToyLLM(1e9)
    curves = inference_curves([ToyLLM(1e9), ToyLLM(1e9, cot=False)], problems, 4, np.random.default_rng(0), subsets=20)
    scaling = scaling_curve(problems, np.random.default_rng(0), sizes=(1e8, 1e10), n=2)
    results = [compare_exact_sampled(ToyLLM(s), problems, 4, np.random.default_rng(0)) for s in (1e8, 1e10)]
    grad, passk = _dashboard_results()
    single = [
        lambda ax: plot_pass_at_k({"1B": exact_pass_at_k(model, problems, (1, 2))}, ax=ax),
        lambda ax: plot_context_bars(ToyLLM(1e9), ToyLLM(1e10), ax=ax),
        lambda ax: plot_exact_vs_sampled(results, ax=ax),
        lambda ax: plot_pass_at_k_estimates(passk, ax=ax),
    ]
    multi = [
        (3, lambda axes: plot_test_time_compute(curves, by="metric", axes=axes)),
        (2, lambda axes: plot_test_time_compute(curves, by="model", axes=axes)),
        (2, lambda axes: plot_scaling(scaling, axes=axes)),
        (2, lambda axes: plot_training_curves({"reward": [0.1, 0.2], "kl": [0.0, 0.1]}, axes=axes)),
        (2, lambda axes: plot_gradient_estimates(grad, axes=axes)),
    ]
    for draw in single:
        fig, (ax,) = _given(1)
        assert draw(ax) is ax and ax.has_data() and fig._suptitle is None
    for n, draw in multi:
        fig, axes = _given(n)
        got = draw(axes)
        assert list(got) == list(axes) and all(a.has_data() for a in axes) and fig._suptitle is None
    assert plt.get_fignums() == []                                 # 给了坐标轴就不新建 pyplot 的图


def test_dashboard_plots_on_their_own(caplog):
    grad, passk = _dashboard_results()
    fig, bad = render(lambda: plot_gradient_estimates(grad), caplog)
    assert not bad and "REINFORCE" in fig.axes[0].get_title() and tuple(fig.get_size_inches()) == (12.0, 4.6)
    fig, bad = render(lambda: plot_pass_at_k_estimates(passk, estimator="unbiased"), caplog)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert not bad and any("无偏" in s for s in labels) and not any("有偏" in s for s in labels)


@pytest.mark.parametrize("call", [
    lambda: plot_pass_at_k({"a": {1: 0.5}}, ax="ax"),
    lambda: plot_scaling({"sizes": [1], "exact": [1], "sampled": [1], "sampled_se": [1], "context_exact": [[1]],
                          "context_sampled": [[1]], "context_se": [[1]], "contexts": ["a"]}, axes=[1, 2]),
    lambda: plot_training_curves({"reward": [0.1], "kl": [0.2]}, axes=_given(1)[1]),
    lambda: plot_gradient_estimates("result"),
    lambda: plot_pass_at_k_estimates(None),
])
def test_bad_axes_or_results(call):
    with pytest.raises(TypeError) as info:
        call()
    assert CHINESE.search(str(info.value))
