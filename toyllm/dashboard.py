"""
控制面板的共用部分（widgets.py 里三个作业面板都用它）：Dashboard（复用一张图、重画、转 PNG）、
把控件排成面板的 build、滑块 / 下拉框 / 勾选框，和画图的小工具。设计见 widgets.py 的模块说明。
"""

import io
import math
import time

import numpy as np

from ._checks import as_real

FIG_DPI = 72
"""面板里的图转成 PNG 时的分辨率（每英寸点数）：低一点，重画更快。"""

DASHBOARD_STYLE = {"font.size": 13, "axes.titlesize": 14, "axes.labelsize": 13, "legend.fontsize": 11,
                   "xtick.labelsize": 11, "ytick.labelsize": 11}
"""面板里的图用的字号（matplotlib rcParams）：面板的图按原始像素显示，默认的 10 号字在浏览器里太小。"""


def dashboard_style(logic):
    """装饰器：面板的逻辑函数在 DASHBOARD_STYLE 的字号下画图（新建的图和复用的图一样大的字）。"""
    import functools

    @functools.wraps(logic)
    def wrapper(*args, **kwargs):
        import matplotlib

        with matplotlib.rc_context(DASHBOARD_STYLE):
            return logic(*args, **kwargs)

    return wrapper


PACKAGE = "包里的参考实现"
"""面板说明里"用的是谁的实现"的写法（另一种是"你写的 ……"）。"""


# =============================================================================
# 画图和面板的小工具
# =============================================================================
def figure_png(fig, dpi=FIG_DPI):
    """把 Figure 画成 PNG 字节。【例子】figure_png(fig)[:8] == b"\x89PNG\r\n\x1a\n\""""
    if not hasattr(fig, "savefig"):
        raise TypeError(f"fig 必须是 matplotlib 的 Figure，收到 {fig!r}"[:200])
    dpi = as_real("dpi", dpi, 0.0, low_open=True)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def owned(axes_or_ax, created):
    """画图函数新建的图（created 为 True）从 pyplot 里拿掉（见模块说明），返回它的 Figure。"""
    fig = np.ravel(np.asarray(axes_or_ax, dtype=object))[0].figure
    if created:
        import matplotlib.pyplot as plt

        plt.close(fig)
    return fig


def wipe(ax):
    """
    擦掉坐标轴上画的东西（线、条、文字、图例），留下坐标轴本身和它的刻度，好让同一个画图函数再画一遍。

    【为什么不用 ax.clear()】clear 会扔掉全部刻度对象，下一次画时要一个个重建、重新排版刻度文字，
        这是重画里很贵的一步。同一个画图函数每次都会重新设置标题、刻度、范围，
        所以只要擦掉画上去的东西、让坐标范围重新自动计算就够了。
    """
    for artist in [*ax.lines, *ax.patches, *ax.collections, *ax.texts, *ax.images]:
        artist.remove()
    ax.containers.clear()          # 容器（bar、errorbar）里的东西上面已经擦掉了；不用 Container.remove()：
                                   # matplotlib 3.9 以前它会重复删除已经删掉的线，报 ValueError
    if ax.legend_ is not None:
        ax.legend_.remove()
    ax.relim()
    ax.set_autoscale_on(True)
    ax.set_prop_cycle(None)                     # 颜色从 C0 重新开始


class Dashboard:
    """
    一个控制面板：一张复用的图、"用这些值重画一次"的函数，和（建好面板以后）它的小部件。

    【属性】ui：整个面板（VBox）；controls：{参数名: 小部件}；out：Output 小部件（interactive_output 给的）；
        result：最近一次的结果（逻辑函数返回的第一项）；text：最近一次的一行说明；png：最近一次的图（PNG 字节）；
        error：最近一次的错误说明（没有是 ""）；runs：一共重画了几次；seconds：最近一次重画（计算 + 画图 + PNG）用了几秒
    【Python 小知识】定义 _repr_mimebundle_，Jupyter 显示这个对象时就改为显示它返回的内容（这里是 VBox 的）。
    """

    def __init__(self, compute):
        from .plotstyle import use_chinese_font

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
            axes = None
            if self.figure is not None:
                axes = self.figure.axes
                for ax in axes:
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
