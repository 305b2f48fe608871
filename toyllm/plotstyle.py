"""
图的样子：让 matplotlib 能画中文（注册 toyllm 自带的中文字体）、图的大小、坐标轴的小工具，和作业面板的图
（字号、分辨率、转成 PNG、擦掉重画）。

【思路】matplotlib 默认的字体 DejaVu Sans 里没有汉字，中文标题会变成一个个方框（□□□），
    还会报 "Glyph ... missing from font" 的警告；学生的电脑上也不一定装了中文字体。
    所以 toyllm 自带一个小字体 fonts/ToyLLMSansSC-Regular.otf（思源黑体 / Noto Sans CJK SC 的子集，
    含 3755 个常用汉字、中文标点、希腊字母和常用数学符号；来源和做法见 fonts/README.md）。
    use_chinese_font() 把它登记给 matplotlib，并放在无衬线字体列表的第一位。

【用法】
    from toyllm.plotstyle import use_chinese_font
    use_chinese_font()
    # 之后 plt.title("规模与准确率") 就能正常显示中文

【Python 小知识】这个模块在函数**里面**才 import matplotlib（"延迟导入"）：只用 toyllm 做计算、
    不画图的时候，`import toyllm` 不会顺带加载 matplotlib，启动更快。
"""

import io
from pathlib import Path

import numpy as np

from ._checks import as_real

FONT_FILE = "ToyLLMSansSC-Regular.otf"
FAMILY = "ToyLLM Sans SC"
FALLBACK = "DejaVu Sans"   # matplotlib 自带的字体，补中文字体里没有的符号

MIN_FONT_PT = 10
"""图里最小的字号（磅）：matplotlib 的默认值，也是下限 —— 不要写 fontsize=8、"small" 这类更小的字号（tests/unit/ui/test_plotstyle.py 检查）。"""
MIN_TEXT_PX = 10
"""图在学生的屏幕上缩放以后，字至少这么多像素（JupyterLab 自己最小的界面文字约 10.8 像素；tests/e2e/test_browser_fit.py 检查）。"""
OUTPUT_WIDTH_PX = 848
"""1280 像素宽的 JupyterLab 窗口（左边文件浏览器开着）里 notebook 输出区的宽度（像素）：更宽的图按比例缩小。"""
MAX_FIGURE_WIDTH_IN = 11.5
"""
一张图（bbox_inches="tight" 裁剪以后）最宽多少英寸，MIN_FONT_PT 的字缩小以后才不小于 MIN_TEXT_PX：
MIN_FONT_PT / 72 × OUTPUT_WIDTH_PX / 宽度 ≥ MIN_TEXT_PX，即宽度 ≤ 11.8 英寸，留一点余量取 11.5（和 dpi 无关）。
单图最好不超过 8.5 英寸（OUTPUT_WIDTH_PX / 100 dpi）：那样按原样大小显示，不缩小。
"""


def font_path():
    """
    toyllm 自带的中文字体文件的路径。

    【返回】pathlib.Path，指向包里的 fonts/ToyLLMSansSC-Regular.otf
    【边界】只算路径，不检查文件在不在；use_chinese_font() 会检查。
    【例子】font_path().name == "ToyLLMSansSC-Regular.otf"
    【Python 小知识】Path(__file__) 是这个 .py 文件自己的路径，.parent 是它所在的文件夹（toyllm/），
        用 / 拼接子路径：Path("toyllm") / "fonts" / "a.otf"。这样不管包装在哪里都能找到数据文件。
    """
    return Path(__file__).resolve().parent / "fonts" / FONT_FILE


def use_chinese_font():
    """
    让 matplotlib 用 toyllm 自带的中文字体画图。

    【思路】三步：
        1. matplotlib.font_manager.fontManager.addfont(路径)：把字体文件登记到 matplotlib 的字体列表；
        2. 把它的字体族名放到 rcParams["font.sans-serif"] 的第一位，并设
           font.family = ["sans-serif", "DejaVu Sans"]："sans-serif" 会选中列表第一位的中文字体；
           中文字体里没有的少数符号（例如 ∼、下标 ₁₀），matplotlib 会到后面的 DejaVu Sans 里找
           （matplotlib >= 3.6 的"字体回退"，只在 font.family 列出的几个字体之间进行）；
        3. axes.unicode_minus = False：坐标轴上的负号用普通的 "-"。
    【参数】无
    【返回】字体族名（str），即 "ToyLLM Sans SC"；可以用在 fontfamily=... 参数里
    【边界】
        · 可以重复调用（幂等）：字体只登记一次，列表里也不会出现两次。
        · 要在画图**之前**调用；已经画好的图不会变。
        · plt.style.use(...) 或 matplotlib.rcdefaults() 会把字体设置改回去，之后再调用一次即可。
        · 字体文件丢失（包没装好）时抛出 FileNotFoundError，提示重新安装。
    【例子】
        >>> use_chinese_font()
        'ToyLLM Sans SC'
        >>> import matplotlib
        >>> matplotlib.rcParams["font.sans-serif"][0]
        'ToyLLM Sans SC'
    【Python 小知识】matplotlib.rcParams 是一个全局的"设置字典"，改了它，之后新画的所有图都按新设置来。
    """
    import matplotlib
    from matplotlib import font_manager

    path = font_path()
    if not path.is_file():
        raise FileNotFoundError(
            f"找不到 toyllm 自带的中文字体 {path}：请在仓库根目录重新安装（make test 会自动安装，"
            f"或运行 pip install -e .）")
    manager = font_manager.fontManager
    entries = [f for f in manager.ttflist if Path(f.fname) == path]
    if not entries:
        manager.addfont(str(path))
        entries = [f for f in manager.ttflist if Path(f.fname) == path]
    family = entries[0].name

    sans = [name for name in matplotlib.rcParams["font.sans-serif"] if name != family]
    matplotlib.rcParams["font.sans-serif"] = [family] + sans
    matplotlib.rcParams["font.family"] = ["sans-serif", FALLBACK]
    matplotlib.rcParams["axes.unicode_minus"] = False
    return family


def pyplot():
    """导入 matplotlib.pyplot，先换上中文字体（use_chinese_font）；返回 pyplot 模块。"""
    import matplotlib.pyplot as plt

    use_chinese_font()
    return plt


def new_or_given(ax, figsize):
    """ax 为 None 时用 pyplot 新建一张 figsize 大小的图；否则用给的坐标轴。返回 (Figure 或 None, Axes)。"""
    if ax is None:
        fig, ax = pyplot().subplots(figsize=figsize)
        return fig, ax
    if not hasattr(ax, "plot") or not hasattr(ax, "figure"):
        raise TypeError(f"ax 必须是 matplotlib 的坐标轴（Axes），收到 {ax!r}")
    use_chinese_font()
    return None, ax


def given_axes(axes, n, example):
    """检查 axes：至少 n 个 matplotlib 坐标轴（列表或 numpy 数组）。返回一维的 numpy 数组（前 n 个）。"""
    flat = np.ravel(np.asarray(axes, dtype=object)) if not hasattr(axes, "plot") else np.array([axes], dtype=object)
    if len(flat) < n or not all(hasattr(a, "plot") and hasattr(a, "figure") for a in flat):
        raise TypeError(f"axes 必须是至少 {n} 个 matplotlib 坐标轴（例如 {example}），收到 {axes!r}")
    use_chinese_font()
    return flat[:n]


def log2_axis(ax, ks):
    """以 2 为底的对数横轴，刻度就是 ks 本身（1、2、4、8……）。"""
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(ks))
    ax.set_xticklabels([str(k) for k in ks])
    ax.minorticks_off()


# =============================================================================
# 作业面板（toyllm.dashboards）的图：字号、分辨率、转成 PNG、擦掉重画
# =============================================================================
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


def figure_png(fig, dpi=FIG_DPI):
    """把 Figure 画成 PNG 字节。【例子】figure_png(fig)[:8] == b"\x89PNG\r\n\x1a\n\""""
    if not hasattr(fig, "savefig"):
        raise TypeError(f"fig 必须是 matplotlib 的 Figure，收到 {fig!r}"[:200])
    dpi = as_real("dpi", dpi, 0.0, low_open=True)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def owned(axes_or_ax, created):
    """
    画图函数新建的图（created 为 True）从 pyplot 里拿掉，返回它的 Figure。

    【为什么】面板的图在重画之间要留着复用，如果留在 pyplot 里，inline 后端会在单元格结束时"顺手"再显示一遍；
        所以图建好后立刻从 pyplot 里拿掉（plt.close），面板自己转成 PNG 显示。
    """
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


__all__ = ["FALLBACK", "FAMILY", "FONT_FILE", "MAX_FIGURE_WIDTH_IN", "MIN_FONT_PT", "MIN_TEXT_PX", "OUTPUT_WIDTH_PX",
           "font_path", "use_chinese_font"]
"""学生用的名字；pyplot、new_or_given、given_axes、log2_axis 是 plots 用的小工具。"""
