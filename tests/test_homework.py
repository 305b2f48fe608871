"""
作业 notebook：学生版由教师版生成且和提交的文件一致（不一致时失败）、答案被换成桩、输出被清空；
教师版的结构（开头、小结、试一试、检查全部通过、小部件单元格不比较输出）。
"""

import ast
import json
import re
from pathlib import Path

import pytest

from toyllm.homework import release as R
from toyllm.homework.__main__ import main as homework_main
from toyllm.homework.build import check_sources, parse_source
from toyllm.homework.release import (ReleaseError, check_release, count_solutions, notebook_bytes, release_all,
                                     release_bytes, release_notebook, strip_solutions)

ROOT = Path(__file__).resolve().parent.parent
HOMEWORK = ROOT / "notebooks" / "homework"
NAMES = ["hw1_gradient", "hw2_sft_eval", "hw3_grpo"]
TITLES = {"hw1_gradient": "# 作业一 · 梯度", "hw2_sft_eval": "# 作业二 · SFT 与评估", "hw3_grpo": "# 作业三 · GRPO"}
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"


def _nb(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _src(cell):
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


# =============================================================================
# 去掉答案（一个单元格）
# =============================================================================
def test_strip_keeps_indentation_and_surroundings():
    src = "def f(x):\n    y = 1\n    ### BEGIN SOLUTION\n    return x + y\n    ### END SOLUTION\n\nprint(f)"
    out, replaced = strip_solutions(src)
    assert replaced
    assert out == "def f(x):\n    y = 1\n    # YOUR CODE HERE\n    raise NotImplementedError()\n\nprint(f)"


def test_strip_several_regions_and_top_level():
    src = "### BEGIN SOLUTION\na = 1\n### END SOLUTION\nb = 2\nif b:\n\t### BEGIN SOLUTION\n\tc = 3\n\t### END SOLUTION"
    out, _ = strip_solutions(src)
    assert out == f"{STUB}\nb = 2\nif b:\n\t# YOUR CODE HERE\n\traise NotImplementedError()"


def test_strip_markdown_and_untouched_cells():
    assert strip_solutions("答：\n=== BEGIN SOLUTION\n因为……\n=== END SOLUTION", "markdown")[0] == "答：\nYOUR ANSWER HERE"
    assert strip_solutions("x = 1\n# 普通注释", "code") == ("x = 1\n# 普通注释", False)


@pytest.mark.parametrize("src, message", [
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "又出现了 BEGIN SOLUTION"),
    ("x = 1\n### END SOLUTION", "前面没有 BEGIN SOLUTION"),
    ("x = 1\n  ### BEGIN SOLUTION\nx = 2", "没有对应的 END SOLUTION"),
])
def test_unbalanced_markers_are_errors(src, message):
    with pytest.raises(ReleaseError, match=message):
        strip_solutions(src, where="测试单元格")


def test_strip_rejects_bad_arguments():
    with pytest.raises(TypeError, match="source"):
        strip_solutions(["x"])
    with pytest.raises(ValueError, match="cell_type"):
        strip_solutions("x", "python")


# =============================================================================
# 一个 notebook
# =============================================================================
def _toy_notebook():
    return {
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3"}, "widgets": {"state": {}}},
        "cells": [
            {"cell_type": "markdown", "id": "a", "metadata": {}, "source": "# 标题"},
            {"cell_type": "code", "id": "b", "metadata": {"execution": {"t": 1}, "tags": ["keep"]},
             "execution_count": 3, "source": ["def f():\n", "    ### BEGIN SOLUTION\n", "    return 1\n",
                                              "    ### END SOLUTION\n"],
             "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"}]},
        ],
    }


def test_release_notebook_clears_outputs_and_metadata():
    nb = _toy_notebook()
    before = json.dumps(nb, sort_keys=True)
    out = release_notebook(nb, "toy")
    assert json.dumps(nb, sort_keys=True) == before                       # 不修改传进来的 notebook
    code = out["cells"][1]
    assert code["outputs"] == [] and code["execution_count"] is None
    assert code["metadata"] == {"tags": ["keep"]}
    assert "widgets" not in out["metadata"] and out["metadata"]["kernelspec"] == {"name": "python3"}
    assert "".join(code["source"]) == "def f():\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    assert notebook_bytes(out) == notebook_bytes(release_notebook(nb, "toy"))
    assert notebook_bytes(out).endswith(b"}\n")


def test_release_rejects_non_notebooks(tmp_path):
    with pytest.raises(ReleaseError, match="nbformat 4"):
        release_notebook({"cells": []}, "x")
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ReleaseError, match="不是合法的 JSON"):
        release_bytes(bad)


def test_release_all_and_check_in_a_temporary_folder(tmp_path):
    src, rel = tmp_path / "source", tmp_path / "release"
    src.mkdir()
    (src / "a.ipynb").write_text(json.dumps(_toy_notebook()), encoding="utf-8")
    assert check_release(src, rel) == ["缺少学生版 a.ipynb；请运行 python -m toyllm.homework release"]
    assert [changed for _, changed in release_all(src, rel)] == [True]
    assert [changed for _, changed in release_all(src, rel)] == [False]          # 第二次没有改动
    assert check_release(src, rel) == []
    (rel / "a.ipynb").write_text((rel / "a.ipynb").read_text(encoding="utf-8").replace("YOUR CODE", "MY CODE"),
                                 encoding="utf-8")
    assert "不一致" in check_release(src, rel)[0]
    (rel / "stray.ipynb").write_text("{}", encoding="utf-8")
    assert any("stray.ipynb 没有对应的教师版" in p for p in check_release(src, rel))
    with pytest.raises(FileNotFoundError, match="找不到"):
        release_all(tmp_path / "nowhere", rel)


def test_broken_source_writes_nothing(tmp_path):
    src, rel = tmp_path / "source", tmp_path / "release"
    src.mkdir()
    nb = _toy_notebook()
    (src / "a.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    nb["cells"][1]["source"] = ["### BEGIN SOLUTION\n", "x = 1\n"]
    (src / "b.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    with pytest.raises(ReleaseError, match="b.ipynb"):
        release_all(src, rel)
    assert not rel.exists() or not list(rel.iterdir())


# =============================================================================
# 仓库里的作业
# =============================================================================
def test_committed_student_versions_are_in_step():
    """提交的学生版必须等于由教师版重新生成的结果；否则请运行 python -m toyllm.homework release。"""
    assert sorted(p.stem for p in R.SOURCE_DIR.glob("*.ipynb")) == NAMES
    assert check_release() == []


def test_instructor_notebooks_match_their_sources():
    """教师版的单元格和 notebooks/homework/src/*.py 一致；否则请运行 python -m toyllm.homework build。"""
    assert sorted(p.stem for p in (HOMEWORK / "src").glob("*.py")) == NAMES
    assert check_sources() == []


def test_check_command_exit_code(capsys):
    assert homework_main(["check"]) == 0
    assert "✓" in capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
def test_student_version_has_stubs_and_no_solutions(name):
    source, student = _nb(R.SOURCE_DIR / f"{name}.ipynb"), _nb(R.RELEASE_DIR / f"{name}.ipynb")
    n = count_solutions(source)
    assert n >= 2
    text = "\n".join(_src(c) for c in student["cells"])
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    code = "\n".join(_src(c) for c in student["cells"] if c["cell_type"] == "code")
    assert code.count("raise NotImplementedError()") == n
    assert code.count("# YOUR CODE HERE") == n
    for cell in student["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
            ast.parse(_src(cell))                                                 # 换成桩以后仍是合法的 Python
    assert len(student["cells"]) == len(source["cells"])
    assert "widgets" not in student["metadata"]


@pytest.mark.parametrize("name", NAMES)
def test_instructor_notebook_structure(name):
    cells = _nb(R.SOURCE_DIR / f"{name}.ipynb")["cells"]
    head = _src(cells[0])
    assert cells[0]["cell_type"] == "markdown" and head.startswith(TITLES[name] + "\n")
    assert "你将练习" in head and "../../../lectures/lecture06_scaling_rl.md" in head
    assert (R.SOURCE_DIR / "../../../lectures/lecture06_scaling_rl.md").resolve().is_file()
    last = _src([c for c in cells if c["cell_type"] == "markdown"][-1])
    assert "## 小结" in last and "## 试一试" in last
    run = 0
    for i, cell in enumerate(cells):
        run = run + 1 if cell["cell_type"] == "code" else 0
        assert run <= 1, f"第 {i} 个单元格：代码单元格前面要有一段说明（markdown）"
    code = [c for c in cells if c["cell_type"] == "code"]
    assert all(c["execution_count"] is not None for c in code), "教师版要保存运行后的输出"
    printed = ""
    for c in code:
        for out in c["outputs"]:
            assert out["output_type"] != "error" and out.get("name") != "stderr"
            assert "application/vnd.jupyter.widget-view+json" not in out.get("data", {})
            text = out.get("text", "")
            printed += "".join(text) if isinstance(text, list) else text
    assert "✗" not in printed and "还没有实现" not in printed and "Warning" not in printed
    checks = sum(1 for c in code if re.search(r"= check_\w+\(", _src(c)))
    assert printed.count("✓") >= checks >= 2
    for c in code:
        src = _src(c)
        if "dashboard(" in src and "import" in src.split("dashboard(")[0]:
            assert src.startswith("# NBVAL_IGNORE_OUTPUT"), "小部件单元格的输出不能稳定比较"
    assert any(_src(c).startswith("# NBVAL_IGNORE_OUTPUT") and "dashboard(" in _src(c) for c in code)


def test_parse_source_rejects_bad_markers():
    assert parse_source("说明\n# %% [markdown]\n# # 标题\n#\n# 文字\n# %%\nx = 1\n\n") == \
        [("markdown", "# 标题\n\n文字"), ("code", "x = 1")]
    with pytest.raises(ValueError, match="不认识的单元格标记"):
        parse_source("# %% [raw]\nx")
    with pytest.raises(ValueError, match="要以 '# ' 开头"):
        parse_source("# %% [markdown]\n没有井号")
    with pytest.raises(ValueError, match="没有任何单元格"):
        parse_source("x = 1")
