"""
表格和打印用的小工具：notebook 里的 HTML 表格 Table、按显示宽度对齐的文字、文字进度条、训练时打印的文字进度（TextProgress）、把参数量写成 1B / 100M、平均数。

【思路】课上的表格在终端和 notebook 里都要整齐。中文字符在等宽字体里占两格，所以终端里对齐时不能用 len(s)，
    要用"显示宽度"（display_width、pad）。可是用空格补齐的文字表格到了浏览器里会错位：中文、"≥"、"±" 在网页字体里
    不一定正好占两格或一格；表格太宽时还会折行。Jupyter 显示一个对象时，先找它的 _repr_html_ 方法，
    有就画成网页；print(对象) 或终端里用的是 __str__。Table 两个都有，所以同一个对象在两处都好看。
    不依赖 pandas：这里只需要"表头 + 若干行"。
"""

import html
import math
import numbers
import re
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


def format_cell(x, digits=4):
    """
    一个格子的文字：整数原样，浮点数保留 digits 位小数（很小的数用科学计数法），布尔值写成 是 / 否。

    【参数】x：任意值；digits：浮点数的小数位数（≥ 0）
    【返回】str
    【例子】format_cell(0.94301) → "0.9430"；format_cell(3) → "3"；format_cell(2e-5) → "2.0e-05"；format_cell(True) → "是"
    """
    if type(x).__name__ in ("bool", "bool_"):                 # Python 的 bool；numpy 的 bool（numpy 2 叫 bool，1.x 叫 bool_）
        return "是" if x else "否"
    if isinstance(x, numbers.Integral):
        return str(int(x))
    if isinstance(x, numbers.Real):
        x = float(x)
        if x != 0 and abs(x) < 10 ** (-digits + 1) and x == x and abs(x) != float("inf"):
            return f"{x:.1e}"
        return f"{x:.{digits}f}"
    return str(x)


_NUMBER_TEXT = re.compile(r"^[+\-−]?(\d[\d,]*\.?\d*(e[+\-]?\d+)?|nan|inf)%?$")


def _is_number(x):
    """数，或者写成文字的数（"0.9430"、"−0.0072"、"1.2e-05"、"51200"）：这样的列右对齐。"""
    if isinstance(x, str):
        return bool(_NUMBER_TEXT.match(x.strip()))
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


class Table:
    """
    一张表：在 notebook 里显示成 HTML 表格，print 时是对齐的文字。

    【思路】构造时把每个格子变成文字（数字按 digits 位小数；想要别的位数，就自己格式化成字符串再传进来）；
        整列都是数（或写成文字的数）时右对齐，否则左对齐。
    【参数】headers：表头（字符串的列表）；rows：每行一个列表，长度和 headers 相同；
        title：表格上方的一行说明（可选）；digits：浮点数保留几位小数（默认 4）；
        note：表格下方的一行注释（可选）
    【返回】Table；str(table) 是文字表格，table._repr_html_() 是 HTML
    【边界】某一行的长度和表头不同时报 ValueError（说明是第几行）；headers 为空时报 ValueError。
    【例子】Table(["预设", "pass@1"], [["grpo", 0.943], ["dapo", 0.9998]])
        在 notebook 里显示成两列的表格；print 出来是
            预设  pass@1
            grpo  0.9430
            dapo  0.9998
    【Python 小知识】Jupyter 显示单元格最后一个表达式的值时，会调用它的 _repr_html_()（有的话）；
        print() 调用的是 __str__。两个方法各管一处。
    """

    def __init__(self, headers, rows, title=None, digits=4, note=None):
        headers = [str(h) for h in headers]
        if not headers:
            raise ValueError("headers（表头）不能为空")
        rows = [list(r) for r in rows]
        for i, r in enumerate(rows):
            if len(r) != len(headers):
                raise ValueError(f"rows 的第 {i} 行有 {len(r)} 个格子，表头有 {len(headers)} 列")
        self.headers, self.title, self.note = headers, title, note
        self.cells = [[format_cell(x, digits) for x in r] for r in rows]
        self.numeric = [bool(rows) and all(_is_number(r[j]) for r in rows) for j in range(len(headers))]

    def __str__(self):
        widths = [max([display_width(h)] + [display_width(r[j]) for r in self.cells])
                  for j, h in enumerate(self.headers)]
        align = ["right" if n else "left" for n in self.numeric]
        lines = [self.title] if self.title else []
        lines.append("  ".join(pad(h, w, a) for h, w, a in zip(self.headers, widths, align)).rstrip())
        lines += ["  ".join(pad(x, w, a) for x, w, a in zip(r, widths, align)).rstrip() for r in self.cells]
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self):
        def cell(tag, text, numeric):
            style = "text-align:right;font-variant-numeric:tabular-nums" if numeric else "text-align:left"
            return f'<{tag} style="{style};white-space:nowrap;padding:2px 10px">{html.escape(text)}</{tag}>'

        parts = []
        if self.title:
            parts.append(f'<div style="margin:4px 0">{html.escape(self.title)}</div>')
        parts.append('<table style="border-collapse:collapse;font-size:13px">')
        parts.append("<thead><tr>" + "".join(cell("th", h, n) for h, n in zip(self.headers, self.numeric))
                     + "</tr></thead><tbody>")
        for r in self.cells:
            parts.append("<tr>" + "".join(cell("td", x, n) for x, n in zip(r, self.numeric)) + "</tr>")
        parts.append("</tbody></table>")
        if self.note:
            parts.append(f'<div style="margin:4px 0;color:#555">{html.escape(self.note)}</div>')
        return "".join(parts)


class TextProgress:
    """
    文字的进度：一行字，每走完约十分之一写一次走到了第几步，例如 "SFT（450 步）： 45 90 135 … 450"。

    【思路】不用 tqdm：它在 notebook 里是一个小部件，小部件的状态不随 notebook 保存，重新打开只剩
        "Error displaying widget: model not found"，没运行过的 notebook 里是一个停在 0% 的进度条。
        文字保存以后照样能读；只写步数、不写用时，同样的训练每次写出同样的字（nbval 逐字比较）。
    【参数】total：一共几步；desc：写在前面的名字；show：False 时什么也不写；unit：步的单位（"步"、"次迭代"）
    【边界】提前停下（callback 返回 True）时，行尾写"停在第 n 步"。
    【例子】with TextProgress(30, "SFT", True) as p: 每步 p.update() → 打印 "SFT（30 步）： 3 6 … 30"
    """

    def __init__(self, total, desc, show, unit="步"):
        self.total, self.n, self.show, self.unit = total, 0, bool(show), unit
        self.every = max(1, -(-total // 10))
        if self.show:
            print(f"{desc}（{total} {unit}）：", end="", flush=True)

    def update(self, n=1):
        """走了 n 步。"""
        self.n += n
        if self.show and (self.n % self.every == 0 or self.n == self.total):
            print(f" {self.n}", end="", flush=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.show:
            print("" if self.n >= self.total else f"（停在第 {self.n} {self.unit}）", flush=True)
        return False


__all__ = ["Table", "TextProgress", "bar", "display_width", "fmt_size", "format_cell", "mean", "pad"]
