"""
打印用的小工具：平均数、按显示宽度补空格、文字进度条、把参数量写成 1B / 100M。

【思路】课上的表格都是在终端和 notebook 里直接 print 的。中文字符在等宽字体里占两格，
    所以对齐时不能用 len(s)，要用"显示宽度"。
"""

import math
import numbers
import unicodedata

from ._checks import as_int, as_list, as_real


def mean(xs):
    """
    平均数。

    【参数】xs：任意可迭代的数（list、生成器都可以；True / False 算 1 / 0）
    【返回】float
    【边界】xs 为空、有 NaN / 无穷时报 ValueError（空集合没有平均数；NaN 的平均没有意义），有不是数的项时报 TypeError。
    【例子】mean([1, 2, 3]) → 2.0；mean(x * x for x in range(3)) → 1.666…
    【Python 小知识】math.fsum 比 sum 更精确：它在求和过程中不丢失低位的舍入误差。
    """
    xs = as_list("xs", xs, "数")
    for i, x in enumerate(xs):
        if not isinstance(x, numbers.Real):
            raise TypeError(f"xs 里的每一项都必须是数，第 {i} 项是 {x!r}（类型 {type(x).__name__}）")
        if not math.isfinite(x):
            raise ValueError(f"xs 里不能有 NaN 或无穷，第 {i} 项是 {x!r}")
    return math.fsum(xs) / len(xs)


def display_width(s):
    """字符串在等宽字体中的显示宽度：中文等全角字符算 2 格，其他算 1 格。"""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in str(s))


def pad(s, width, align="left"):
    """
    把字符串补空格到指定的显示宽度（中文字符算两格），用来对齐表格。

    【参数】s：要显示的内容（会先转成 str）；width：目标显示宽度；align："left" / "right"
    【返回】str；已经比 width 宽时原样返回（不截断）
    【例子】pad("乘一位数", 10) → "乘一位数  "（"乘一位数" 占 8 格，补 2 个空格）
    """
    width = as_int("width", width, low=0)
    if align not in ("left", "right"):
        raise ValueError(f"align 必须是 'left' 或 'right'，收到 {align!r}")
    s = str(s)
    fill = " " * max(0, width - display_width(s))
    return s + fill if align == "left" else fill + s


def bar(frac, width=20):
    """
    文字进度条：把 [0, 1] 里的比例画成 width 格，实心格 █ 表示比例，点 · 表示剩下的。

    【例子】bar(0.5, 10) → "█████·····"
    【边界】frac 必须在 [0, 1] 里（概率、准确率都在这里）。
    """
    frac = as_real("frac", frac, 0.0, 1.0)
    width = as_int("width", width, low=1)
    full = int(round(frac * width))
    return "█" * full + "·" * (width - full)


def fmt_size(size):
    """
    把参数量写成人读的形式：1e9 → "1B"，1.5e9 → "1.5B"，1e8 → "100M"，1e12 → "1T"。

    【参数】size：正数
    【返回】str；单位 K（千）、M（百万）、B（十亿）、T（万亿），最多保留两位小数
    """
    size = as_real("size", size, 0.0, low_open=True)
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if size >= scale * (1 - 1e-12):
            return _trim(size / scale) + unit
    return _trim(size)


def _trim(x):
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return text
