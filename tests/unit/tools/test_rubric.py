"""
tools/rubric.py：给老师打印的评分表。每道手工评分的问答一节：题目、分数、评分要点、参考答案；
三份作业的教师版都能生成，缺了评分要点或参考答案时说出是哪一道题。
"""

import json

import pytest

from paths import ROOT
from tools.rubric import rubric_sheet, written_answers

SOURCES = sorted((ROOT / "notebooks" / "homework" / "source").glob("hw*/*.ipynb"))


def _cell(kind, text, **nbgrader):
    meta = {"nbgrader": {"schema_version": 3, **nbgrader}} if nbgrader else {}
    return {"cell_type": kind, "metadata": meta, "source": text, **({"outputs": [], "execution_count": None}
                                                                    if kind == "code" else {})}


def _notebook(tmp_path, answer="**参考答案**：因为 A。\n\n**评分要点**：说出 A（1 分）。", question="**问答 1**（1 分）为什么？"):
    cells = [_cell("markdown", "# 作业九 · 试验\n\n说明"),
             _cell("code", "x = 1"),
             _cell("markdown", question, grade=False, grade_id="hw9-q1-question", locked=True, solution=False),
             _cell("markdown", answer, grade=True, grade_id="hw9-q1", locked=False, points=1, solution=True)]
    path = tmp_path / "hw9.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


def test_a_sheet_lists_question_points_rubric_and_answer(tmp_path):
    sheet = rubric_sheet(_notebook(tmp_path))
    assert sheet.startswith("# 作业九 · 试验：问答的评分表\n")
    assert "## hw9-q1（1 分）" in sheet
    assert "**题目**：**问答 1**（1 分）为什么？" in sheet
    assert "**评分要点**：说出 A（1 分）。" in sheet and "**参考答案**：因为 A。" in sheet
    assert sheet.index("**题目**") < sheet.index("**评分要点**") < sheet.index("**参考答案**")


def test_the_two_parts_may_come_in_either_order(tmp_path):
    [a] = written_answers(_notebook(tmp_path, "**评分要点**：要点。\n\n**参考答案**：答案\n第二行。"))
    assert a["评分要点"] == "要点。" and a["参考答案"] == "答案\n第二行。" and a["points"] == 1


@pytest.mark.parametrize("answer, missing", [("**参考答案**：只有答案。", "评分要点"), ("随便写的。", "参考答案")])
def test_a_missing_part_names_the_question(tmp_path, answer, missing):
    with pytest.raises(ValueError, match=f"hw9-q1.*{missing}"):
        rubric_sheet(_notebook(tmp_path, answer))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.parent.name)
def test_every_written_question_of_the_homework_is_on_its_sheet(path):
    """三份作业的教师版：每道手工评分的问答都在评分表上，分数和 nbgrader 元数据一致。"""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    graded = [c for c in cells if c["cell_type"] == "markdown" and c["metadata"].get("nbgrader", {}).get("grade")]
    sheet = rubric_sheet(path)
    assert len(SOURCES) == 3 and len(graded) >= 2
    for a in written_answers(path):
        points = next(c["metadata"]["nbgrader"]["points"] for c in graded
                      if c["metadata"]["nbgrader"]["grade_id"] == a["grade_id"])
        assert f"## {a['grade_id']}（{points:g} 分）" in sheet
        for part in (a["question"], a["评分要点"], a["参考答案"]):
            assert part and part in sheet
    assert sheet.count("**评分要点**：") == len(graded)
