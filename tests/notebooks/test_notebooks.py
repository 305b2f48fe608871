"""
notebook 的结构检查（nbval 负责重新运行并比较输出；这里检查 nbval 看不到的东西）。

每个讲课 notebook 和作业的教师版：
    · 有保存的输出（否则严格的 nbval 什么也没比较）；
    · 输出里没有错误、没有 stderr、没有 "Glyph missing" 之类的字体警告；
    · 第一个单元格是 markdown：标题、「你将学到」、指向讲义的链接；
    · 最后一个 markdown 单元格有「小结」和「试一试」。
"""

import json

import pytest

from paths import ROOT

LECTURE_NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
EXPECTED = ["00_quickstart", "01_toyllm_recap", "02_gradient", "03_sft_star", "04_evaluation",
            "05_policy_gradient_grpo", "06_ppo_kl_dapo", "06b_critic_gspo_cispo", "07_scaling", "08_tiny_transformer",
            "09_real_network"]


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _text(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def test_all_lecture_notebooks_exist():
    assert [p.stem for p in LECTURE_NOTEBOOKS] == EXPECTED


@pytest.mark.parametrize("path", LECTURE_NOTEBOOKS, ids=lambda p: p.name)
def test_lecture_notebook_structure(path):
    cells = _cells(path)
    first = cells[0]
    assert first["cell_type"] == "markdown"
    head = _text(first)
    assert head.startswith("# ") and "你将学到" in head
    assert "lecture06_scaling_rl.md" in head
    markdown = [c for c in cells if c["cell_type"] == "markdown"]
    last = _text(markdown[-1])
    assert "小结" in last and "试一试" in last
    _check_outputs(path, cells)


def _check_outputs(path, cells):
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code, f"{path.name} 没有代码单元格"
    assert all(c.get("execution_count") is not None for c in code), f"{path.name} 有没运行过的单元格"
    for c in code:
        for out in c.get("outputs", []):
            assert out.get("output_type") != "error", f"{path.name} 保存了错误输出：{out.get('ename')}"
            assert out.get("name") != "stderr", f"{path.name} 保存了 stderr：{''.join(out.get('text', ''))[:200]}"
            text = json.dumps(out, ensure_ascii=False)
            assert "Glyph" not in text and "missing from font" not in text and "Warning" not in text


def test_every_code_cell_is_preceded_by_markdown():
    """每个代码单元格前面都有一段说明（看什么），连续的代码单元格最多两个。"""
    for path in LECTURE_NOTEBOOKS:
        run = 0
        for c in _cells(path):
            run = run + 1 if c["cell_type"] == "code" else 0
            assert run <= 2, f"{path.name}：连续三个代码单元格之间没有说明"
