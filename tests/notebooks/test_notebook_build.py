"""
讲课 notebook 的生成器（tools/build_notebooks.py，jupytext + nbclient）：解析、检查和整理；
源文件是 jupytext 的标准 percent 写法（作业另有 tools/homework.py，走 nbgrader）。
这里不启动内核。
"""

import json
import socket
import sys
from pathlib import Path

import jupytext
import pytest

from tools import build_notebooks as NB

from paths import ROOT

SAMPLE = """\
# 第一个标记之前的说明不进入 notebook
# %% [markdown]
# # 标题
#
# 一段文字

# %%
x = 1
print(x)

# %% [markdown]
#

# %%
y = x + 1
"""
SAMPLE_CELLS = [("markdown", "# 标题\n\n一段文字"), ("code", "x = 1\nprint(x)"), ("code", "y = x + 1")]


def _write_ipynb(path, cells, split_lines):
    """按讲课（每行一个字符串）或作业（一整个字符串）的格式写一个只有单元格的 .ipynb。"""
    def source(text):
        return text.splitlines(keepends=True) if split_lines else text
    nb = {"cells": [{"cell_type": k, "metadata": {}, "source": source(s)} for k, s in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")


def test_parse_sample():
    assert NB.parse_source(SAMPLE) == SAMPLE_CELLS


def test_parse_source_is_jupytext_plus_two_checks():
    """jupytext 读单元格（魔法命令在 .py 里是注释）；说明段丢掉；忘了 '# %%' 和不认识的单元格报错。"""
    assert NB.parse_source("# %%\n# %matplotlib inline\nx = 1\n") == [("code", "%matplotlib inline\nx = 1")]
    assert NB.parse_source("# 说明\n\n# %%\nx = 1\n") == [("code", "x = 1")]
    with pytest.raises(ValueError, match="第 3 行.*忘了写"):
        NB.parse_source("# %% [markdown]\n# 标题\nx = 1\n")
    with pytest.raises(ValueError, match="不认识的单元格标记"):
        NB.parse_source("# %% [raw]\nx\n")
    with pytest.raises(ValueError, match="没有任何单元格"):
        NB.parse_source("# %%\n\n")


@pytest.mark.parametrize("src", sorted((ROOT / "notebooks" / "src").glob("*.py")), ids=lambda p: p.stem)
def test_lecture_sources_are_canonical_jupytext(src):
    """讲课源文件是 jupytext 的标准写法：读进来再写出去一字不变（所以 jupytext 打开、保存不会改动它）。"""
    text = src.read_text(encoding="utf-8")
    assert jupytext.writes(jupytext.reads(text, fmt=NB.FORMAT), fmt=NB.FORMAT) == text, (
        f"{src.name} 不是 jupytext 的标准写法；可以用 jupytext --to py:percent 规整它，再检查改动")


@pytest.mark.parametrize("split_lines", [True, False], ids=["讲课的格式", "作业的格式"])
def test_lecture_and_homework_checks_agree_on_a_sample(tmp_path, monkeypatch, split_lines):
    """同一份源文件和同一个 .ipynb：讲课的 check 和作业的 check_sources 给出同样的结论。"""
    lecture = NB
    src_dir, out_dir = tmp_path / "src", tmp_path
    src_dir.mkdir()
    src = src_dir / "sample.py"
    src.write_text(SAMPLE, encoding="utf-8")
    monkeypatch.setattr(lecture, "ROOT", tmp_path)
    monkeypatch.setattr(lecture, "NOTEBOOKS", out_dir)

    assert lecture.check(src)                                                 # 还没有 .ipynb：报告缺少
    _write_ipynb(out_dir / "sample.ipynb", SAMPLE_CELLS, split_lines)
    assert NB.notebook_cells(out_dir / "sample.ipynb") == SAMPLE_CELLS
    assert lecture.check(src) == []
    src.write_text(SAMPLE + "z = 3\n", encoding="utf-8")                       # 源文件改了：都报告不一致
    assert NB.source_status(src, out_dir / "sample.ipynb") == "stale"
    assert "不一致" in lecture.check(src)[0]


@pytest.mark.parametrize("src", sorted((ROOT / "notebooks" / "src").glob("*.py")), ids=lambda p: p.stem)
def test_lecture_notebooks_match_their_sources(src):
    """讲课 notebook 的单元格和 notebooks/src/*.py 一致；否则请运行 make notebooks（tools/build_notebooks.py）。"""
    assert NB.source_status(src, ROOT / "notebooks" / (src.stem + ".ipynb")) == "ok"


# =============================================================================
# 整理输出、检查输出（两种生成器的选项）
# =============================================================================
def _run_nb(outputs):
    return {"metadata": {"language_info": {"name": "python", "version": "3.11.9"}, "widgets": {"state": {}}},
            "cells": [{"cell_type": "code", "metadata": {"execution": {"t": 1}}, "outputs": outputs}]}


def _stream(text, name="stdout"):
    return {"output_type": "stream", "name": name, "text": text}


def test_normalise_merges_consecutive_streams_and_drops_run_metadata():
    widget = {"output_type": "display_data", "data": {NB.WIDGET_VIEW: {"model_id": "3f2a", "version_major": 2}},
              "metadata": {}}
    image = {"output_type": "display_data", "data": {"image/png": "…"}, "metadata": {"needs_background": "light"}}
    outputs = [_stream("a"), _stream(["b", "c"]), image, _stream("d"), widget]
    nb = NB.normalise(_run_nb(json.loads(json.dumps(outputs))))
    assert nb["metadata"] == {"language_info": {"name": "python"}, "kernelspec": NB.KERNELSPEC}
    cell = nb["cells"][0]
    assert cell["metadata"] == {}
    # 小部件（例如 tqdm 的进度条）的 model_id 每次运行都不同：换成空字符串，JupyterLab 打开时不显示它
    kept = {**widget, "data": {NB.WIDGET_VIEW: {"model_id": "", "version_major": 2}}}
    assert cell["outputs"] == [_stream("abc"), {**image, "metadata": {}}, _stream("d"), kept]
    dropped = NB.normalise(_run_nb(json.loads(json.dumps(outputs))), drop_widget_views=True)
    assert dropped["cells"][0]["outputs"] == [_stream("abc"), {**image, "metadata": {}}, _stream("d")]


def test_normalise_replaces_paths_and_host_of_the_building_machine():
    """输出里的本机路径（Python 环境、仓库、家目录）和主机名换成占位符；图片（base64）不动。"""
    host = socket.gethostname()
    text = f"解释器 {sys.prefix}/bin/python，仓库 {ROOT}/toyllm，家 {Path.home()}/x，主机 {host}\n"
    image = {"output_type": "display_data", "data": {"image/png": f"{host}AAAA", "text/plain": text}, "metadata": {}}
    nb = NB.normalise(_run_nb([_stream(text), image]))
    want = "解释器 <venv>/bin/python，仓库 <repo>/toyllm，家 ~/x，主机 <host>\n"
    assert nb["cells"][0]["outputs"] == [_stream(want), {**image, "data": {"image/png": f"{host}AAAA", "text/plain": want}}]


def test_output_problems():
    error = {"output_type": "error", "ename": "NameError", "evalue": "x", "traceback": []}
    assert NB.output_problems(_run_nb([_stream("✓ 通过")])) == []
    assert NB.output_problems(_run_nb([error])) == ["单元格 0：错误 NameError: x"]
    assert "stderr" in NB.output_problems(_run_nb([_stream("啊", "stderr")]))[0]
    assert NB.output_problems(_run_nb([_stream("UserWarning: Glyph 1 missing from font")])) == \
        ["单元格 0：输出里有 'Glyph'", "单元格 0：输出里有 'missing from font'", "单元格 0：输出里有 'Warning'"]
    failed = _run_nb([_stream("✗ 不对")])
    assert NB.output_problems(failed) == []                                    # 讲课 notebook 不管 ✗
    assert "检查没有通过" in NB.output_problems(failed, failed_marks=("✗", "还没有实现"))[0]
