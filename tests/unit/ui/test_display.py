"""toyllm.tables.Table：notebook 里是 HTML 表格，终端里是按显示宽度对齐的文字；History.table 用它。"""

import re

import pytest

from toyllm.tables import Table, format_cell
from toyllm.history import History
from toyllm.tables import display_width


def test_text_form_aligns_by_display_width_with_chinese_and_symbols():
    t = Table(["情境", "P(bug)", "说明"], [["乘两位数、被乘数 ≥ 100", 0.1, "≥ 与中文"], ["加法", 0.02345, "x"]])
    lines = str(t).splitlines()
    assert len(lines) == 3
    # 数字列右对齐：第二列的右端在每一行都在同一个显示位置
    ends = [display_width(line[:line.index(tok) + len(tok)]) for line, tok in zip(lines, ["P(bug)", "0.1000", "0.0234"])]
    assert len(set(ends)) == 1


def test_html_form_is_a_real_table_with_escaped_cells():
    t = Table(["a<b", "值"], [["x&y", 1.5], ["z", 2]], title="标题", note="注")
    h = t._repr_html_()
    assert h.count("<tr>") == 3 and "<table" in h and "</table>" in h
    assert "a&lt;b" in h and "x&amp;y" in h
    assert "white-space:nowrap" in h            # 格子里不折行
    assert re.search(r"text-align:right[^>]*>1\.5000<", h)


def test_bad_rows_are_rejected_in_chinese():
    with pytest.raises(ValueError, match="第 1 行有 1 个格子，表头有 2 列"):
        Table(["a", "b"], [[1, 2], [3]])
    with pytest.raises(ValueError, match="headers"):
        Table([], [])


def test_format_cell():
    assert format_cell(0.94301) == "0.9430"
    assert format_cell(3) == "3"
    assert format_cell(2e-5) == "2.0e-05"
    assert format_cell(True) == "是"
    assert format_cell("文字") == "文字"


def test_history_table_shows_the_same_rows_as_to_table():
    h = History(["iteration", "pass1_exact"])
    for i in range(4):
        h.append({"iteration": i + 1, "pass1_exact": 0.1 * (i + 1)})
    text = h.to_table(every=2)
    t = h.table(every=2)
    assert [line.split() for line in str(t).splitlines()] == [line.split() for line in text.splitlines()]
    assert t._repr_html_().count("<tr>") == 1 + 3     # 表头 + 第 1、3、4 行


def test_preformatted_numbers_stay_right_aligned():
    t = Table(["k", "差"], [["1", "-0.0072"], ["1024", "0.0000"]])
    assert t.numeric == [True, True]
    assert str(t).splitlines()[1] == "   1  -0.0072"
    assert Table(["情境"], [["加法"]]).numeric == [False]
