"""
README 的「读代码的顺序」：学生在讲义旁边按顺序读的模块。每一行的代码行数是 tools/codelines.py 现算的（不是手写的），
合起来不超过 2,000 行（issue 37）。
"""

import re

from paths import ROOT
from tools.codelines import code_lines

BUDGET = 2000
ROW = re.compile(r"^\| (\d+) \| `toyllm/([\w/]+\.py)` \| (.+?) \| (\d+) \|$", re.M)
TOTAL = re.compile(r"^\| \| 合计 \| \| (\d[\d,]*) \|$", re.M)


def _section():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("### 读代码的顺序")
    return text[start:text.index("\n#", start + 1)]


def test_the_reading_path_lists_real_modules_in_order_with_their_code_lines():
    rows = ROW.findall(_section())
    assert len(rows) >= 8, "读代码的顺序至少要列出八个模块"
    assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1))
    for _, rel, what, lines in rows:
        path = ROOT / "toyllm" / rel
        assert path.is_file(), f"README 的读代码顺序里写着 toyllm/{rel}，这个文件不存在"
        assert what.strip(), f"toyllm/{rel} 那一行没写对应讲义的哪一部分"
        assert int(lines) == code_lines(path.read_text(encoding="utf-8")), \
            f"toyllm/{rel} 现在有 {code_lines(path.read_text(encoding='utf-8'))} 行代码，README 写着 {lines}"
    total = sum(int(r[3]) for r in rows)
    assert int(TOTAL.search(_section()).group(1).replace(",", "")) == total
    assert total <= BUDGET, f"读代码的顺序一共 {total} 行代码，超过了 {BUDGET}"
    assert not any("peers" in r[1] for r in rows), "学生读的模块不包括 verl / TRL 的那一层"
