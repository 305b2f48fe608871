"""
表格的两种样子：notebook 里是真正的 HTML 表格，终端里是按显示宽度对齐的文字。

【思路】用空格补齐的文字表格在终端里整齐，到了浏览器里却会错位：中文、"≥"、"±" 在网页字体里
    不一定正好占两格或一格；表格太宽时还会折行。Jupyter 显示一个对象时，先找它的 _repr_html_ 方法，
    有就画成网页；print(对象) 或终端里用的是 __str__。Table 两个都有，所以同一个对象在两处都好看。
    不依赖 pandas：这里只需要"表头 + 若干行"。
"""

import html
import numbers
import re

from .text import display_width, pad


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


__all__ = ["Table", "format_cell"]
