"""
给老师打印的评分表：一份作业的每道手工评分的问答，题目、分数、评分要点和参考答案（Markdown）。

【思路】学生版里没有评分要点和参考答案：它们写在教师版的答案单元格里（nbgrader 的手工评分答案单元格，
    grade 和 solution 都是 true），generate_assignment 把整个单元格换成 "YOUR ANSWER HERE"。
    题目是答案单元格前面那个只读的 markdown 单元格。答案单元格的写法是两段，各以粗体的标签开头：

        **参考答案**：……
        **评分要点**：……

【用法】（在仓库根目录）
        python tools/rubric.py                                        # 三份作业
        python tools/rubric.py notebooks/homework/source/hw3/hw3_grpo.ipynb
    在程序里：from tools.rubric import rubric_sheet; print(rubric_sheet(路径))
"""

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "notebooks" / "homework" / "source"
LABELS = ("参考答案", "评分要点")
"""答案单元格里的两段，各以 **标签**： 开头。"""
_PART = re.compile(r"^\*\*(" + "|".join(LABELS) + r")\*\*[：:]\s*", re.M)


def _text(cell):
    src = cell.get("source", "")
    return ("".join(src) if isinstance(src, list) else src).strip()


def _nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def written_answers(source_notebook_path):
    """
    教师版里每道手工评分的问答：[{grade_id, points, question, 参考答案, 评分要点}, ...]，按在 notebook 里的顺序。

    【参数】source_notebook_path：教师版 notebook（notebooks/homework/source/hwN/*.ipynb）
    【边界】答案单元格缺「参考答案」或「评分要点」，或者前面不是题目（markdown）时，抛出 ValueError，说出是哪一道题。
    """
    path = Path(source_notebook_path)
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    out = []
    for i, cell in enumerate(cells):
        meta = _nbgrader(cell)
        if cell["cell_type"] != "markdown" or not (meta.get("grade") and meta.get("solution")):
            continue
        gid = meta.get("grade_id", f"第 {i} 个单元格")
        if i == 0 or cells[i - 1]["cell_type"] != "markdown":
            raise ValueError(f"{path.name} 的问答 {gid}：前面应该是题目（markdown 单元格）")
        pieces = _PART.split(_text(cell))
        parts = dict(zip(pieces[1::2], (p.strip() for p in pieces[2::2])))
        missing = [label for label in LABELS if not parts.get(label)]
        if missing:
            raise ValueError(f"{path.name} 的问答 {gid}：答案单元格里没有「{'」「'.join(missing)}」"
                             f"（写成 **{missing[0]}**：…… 的一段）")
        out.append({"grade_id": gid, "points": meta.get("points", 0), "question": _text(cells[i - 1]), **parts})
    return out


def rubric_sheet(source_notebook_path):
    """
    一份作业的评分表（Markdown）：作业的标题，然后每道手工评分的问答一节：题目、分数、评分要点、参考答案。

    【参数】source_notebook_path：教师版 notebook（notebooks/homework/source/hwN/*.ipynb）
    【返回】Markdown 文字；没有手工评分的问答时只有标题和一句说明
    【例子】print(rubric_sheet("notebooks/homework/source/hw3/hw3_grpo.ipynb"))
        # 作业三 · GRPO：问答的评分表
        ## hw3-q1（2 分）
        **题目**：**问答 1**（2 分，老师手工评分）$\\mu = 1$ 时为什么从不裁剪？……
    """
    path = Path(source_notebook_path)
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    title = next((line[2:].strip() for c in cells if c["cell_type"] == "markdown"
                  for line in _text(c).splitlines() if line.startswith("# ")), path.stem)
    answers = written_answers(path)
    lines = [f"# {title}：问答的评分表", "",
             f"（{path.name}；给老师用，学生版里没有评分要点和参考答案。）", ""]
    if not answers:
        lines += ["这份作业没有手工评分的问答。", ""]
    for a in answers:
        lines += [f"## {a['grade_id']}（{a['points']:g} 分）", "",
                  "**题目**：" + a["question"], "",
                  "**评分要点**：" + a["评分要点"], "",
                  "**参考答案**：" + a["参考答案"], ""]
    return "\n".join(lines)


def main(argv=None):
    """打印评分表：参数是教师版 notebook 的路径，不给时打印 notebooks/homework/source/ 里的每一份作业。"""
    paths = [Path(p) for p in (sys.argv[1:] if argv is None else argv)] or sorted(SOURCE.glob("hw*/*.ipynb"))
    print("\n".join(rubric_sheet(p) for p in paths))


if __name__ == "__main__":
    main()
