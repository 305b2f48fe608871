"""
作业（nbgrader 课程 notebooks/homework/）的静态检查，不启动内核：

    · 教师版 source/hwN/*.ipynb 和它的文字源 src/*.py 一致（jupytext 读出来的单元格、id、nbgrader 元数据）；
    · nbgrader 元数据齐全：答案单元格、带分数和隐藏测试的评分单元格、只读的开头和任务说明；
    · 开头单元格写明每个任务的分数，和评分单元格的分数一致，合计 10 分；
    · 学生版里没有答案、没有隐藏测试、没有维护者用的路径，答案换成了桩，输出清空；
    · 问答的参考答案和评分要点写在教师版的答案单元格里，学生版的任何地方都没有它们的原话；
    · 讲义等链接从教师版和学生版的位置都能打开，而且正文写出了文件在仓库里的路径；
    · 作业三「试一试」里依赖「优势」下拉框的一步说了要选哪个实现。

学生版是不是 nbgrader 重新生成的结果、评分对不对，见 tests/e2e/test_grading.py（要运行 nbgrader）。
"""

import ast
import importlib.util
import json
import re

import pytest

from paths import ROOT

_spec = importlib.util.spec_from_file_location("homework_tools", ROOT / "tools" / "homework.py")
H = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(H)

COURSE = ROOT / "notebooks" / "homework"
ASSIGNMENTS = {"hw1": "hw1_gradient", "hw2": "hw2_sft_eval", "hw3": "hw3_grpo"}
TITLES = {"hw1": "# 作业一 · 梯度", "hw2": "# 作业二 · SFT 与评估", "hw3": "# 作业三 · GRPO"}
STUB = re.compile(r"# YOUR CODE HERE\n\s*raise NotImplementedError\(\)")
TOTAL = 10
MAINTAINER = ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "notebooks/homework/source", "source/hw",
              "tools/homework", "nbgrader_config", "/work/", "toyllm.homework build", "homework/src")
"""学生版里不能出现的字样：答案和隐藏测试的标记、维护者用的路径和命令。"""


def _src(cell):
    return H.joined(cell["source"])


def _instructor(a):
    return H.read_nb(COURSE / "source" / a / f"{ASSIGNMENTS[a]}.ipynb")


def _student(a):
    return H.read_nb(COURSE / "release" / a / f"{ASSIGNMENTS[a]}.ipynb")


def _meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def test_course_layout():
    assert H.assignments() == ASSIGNMENTS
    assert (COURSE / "nbgrader_config.py").is_file()
    def listed(folder):                                   # JupyterLab 会建 .ipynb_checkpoints/，不算
        return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))

    for a, name in ASSIGNMENTS.items():
        assert listed(COURSE / "source" / a) == [f"{name}.ipynb"], "source/<作业>/ 里只放教师版（nbgrader 会把别的文件也发给学生）"
        assert listed(COURSE / "release" / a) == [f"{name}.ipynb"]
    assert listed(COURSE / "source") == sorted(ASSIGNMENTS)


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_instructor_notebook_matches_its_text_source(a):
    """教师版的单元格和 src/*.py 一致；否则请运行 python tools/homework.py build（再 release）。"""
    pytest.importorskip("jupytext", reason="需要教师工具：pip install -e '.[instructor]'")
    want = H.read_source(ASSIGNMENTS[a])
    got = _instructor(a)
    assert [(c["cell_type"], c["id"], _src(c), _meta(c)) for c in got["cells"]] == \
        [(c.cell_type, c.id, c.source, dict(c.metadata.get("nbgrader", {}))) for c in want.cells], \
        f"{a} 的教师版和 src/{ASSIGNMENTS[a]}.py 不一致：请运行 python tools/homework.py build {a}"


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_instructor_notebook_structure(a):
    cells = _instructor(a)["cells"]
    head = _src(cells[0])
    assert cells[0]["cell_type"] == "markdown" and head.startswith(TITLES[a] + "\n") and "你将练习" in head
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
            assert H.WIDGET_VIEW not in out.get("data", {})
            printed += H.joined(out.get("text", ""))
    assert "✗" not in printed and "还没有实现" not in printed and "Warning" not in printed
    checks = sum(1 for c in code if _meta(c).get("grade"))
    assert printed.count("✓") >= checks >= 2
    for c in code:
        if "dashboard(" in _src(c) and "import" in _src(c).split("dashboard(")[0]:
            assert _src(c).startswith("# NBVAL_IGNORE_OUTPUT"), "小部件单元格的输出不能稳定比较"


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_nbgrader_metadata(a):
    from tools.grader import TASKS

    cells = _instructor(a)["cells"]
    gids = [_meta(c)["grade_id"] for c in cells if _meta(c)]
    assert len(gids) == len(set(gids)), "grade_id 不能重复"
    assert _meta(cells[0]).get("locked"), "开头（分数说明）是只读的"
    setup = [c for c in cells if c["cell_type"] == "code"][0]
    assert _meta(setup).get("locked") and "import" in _src(setup), "第一个代码单元格（导入）是只读的"
    solutions = [c for c in cells if _meta(c).get("solution")]
    assert len(solutions) >= 2
    written = [c for c in cells if c["cell_type"] == "markdown" and _meta(c).get("grade")]
    assert len(written) >= 2, "每份作业至少两道手工评分的问答"
    for i, cell in enumerate(cells):
        m, src = _meta(cell), _src(cell)
        if cell["cell_type"] == "markdown" and m.get("grade"):           # 手工评分的问答：前面是只读的题目
            assert m.get("solution") and not m.get("locked") and m["points"] > 0, f"单元格 {i}"
            assert _meta(cells[i - 1]).get("locked"), f"单元格 {i}：前面是只读的题目"
            assert "评分要点" not in _src(cells[i - 1]), f"单元格 {i}：评分要点写在答案单元格里（学生版里没有），不写在题目下面"
            assert re.search(r"^\*\*参考答案\*\*：", src, re.M) and re.search(r"^\*\*评分要点\*\*：", src, re.M), \
                f"单元格 {i}：答案单元格里写 **参考答案**：…… 和 **评分要点**：……（tools/rubric.py 打印给老师）"
            continue
        assert ("### BEGIN SOLUTION" in src) == bool(m.get("solution")), f"单元格 {i}：答案标记只能在答案单元格里"
        assert ("### BEGIN HIDDEN TESTS" in src) == bool(m.get("grade")), f"单元格 {i}：评分单元格都有隐藏测试"
        if m.get("solution"):
            assert not m.get("grade") and not m.get("locked")
            fn = re.match(r"def (\w+)\(", src).group(1)
            assert m["grade_id"] == fn
            task = [c for c in cells[:i] if c["cell_type"] == "markdown"][-1]
            assert _meta(task).get("locked") and f"`{fn}(" in _src(task), "任务说明是只读的，写明函数名"
            grade = next(c for c in cells[i + 1:] if c["cell_type"] == "code")
            assert _meta(grade).get("grade"), f"{fn} 后面的第一个代码单元格应该是它的评分单元格"
        if m.get("grade"):
            assert m.get("locked") and m["points"] > 0
            visible, hidden = src.split("### BEGIN HIDDEN TESTS\n")
            var, check, fn = re.fullmatch(r"(ok_\w+) = (check_\w+)\((\w+)\)\n", visible).groups()
            assert m["grade_id"] == f"check_{fn}"
            # 隐藏测试里只有一行代码：没有用课程的 nbgrader_config.py 评分时记 0 分（评分程序会换掉这个单元格的输出）；
            # 分数由评分程序（tools/grader.py）在它自己的进程里算，它的任务表认得这个单元格
            code = [line for line in hidden.splitlines()[:-1] if line.strip() and not line.startswith("#")]
            assert hidden.endswith("### END HIDDEN TESTS") and len(code) == 1 and "nbgrader_config.py" in code[0]
            assert TASKS[a][m["grade_id"]].check == check and TASKS[a][m["grade_id"]].function == fn


def _points_in_text(head):
    return {fn: int(n) for fn, n in re.findall(r"^\| [^|]+ \| `(\w+)` \| (\d+) \|$", head, re.M)}


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_points_are_stated_in_the_opening_cell(a):
    nb = _instructor(a)
    head = _src(nb["cells"][0])
    stated = _points_in_text(head)
    graded = {c["metadata"]["nbgrader"]["grade_id"].removeprefix("check_"): p for c in nb["cells"]
              for p in [_meta(c).get("points")] if _meta(c).get("grade") and c["cell_type"] == "code"}
    written = [_meta(c)["points"] for c in nb["cells"] if _meta(c).get("grade") and c["cell_type"] == "markdown"]
    assert stated == graded, f"开头写的分数 {stated} 和评分单元格的分数 {graded} 不一致"
    assert re.search(r"^\| 问答[^|]+\| [^|]+\| " + " \\+ ".join(f"{p:g}" for p in written) + r" \|$", head, re.M), \
        f"开头要写明问答题的分数 {written}"
    assert sum(graded.values()) + sum(written) == TOTAL
    assert f"共 {TOTAL} 分" in head and f"| **合计** | | **{TOTAL}** |" in head


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_student_version_has_no_answers_hidden_tests_or_maintainer_paths(a):
    source, student = _instructor(a), _student(a)
    assert [c["id"] for c in student["cells"]] == [c["id"] for c in source["cells"]]
    text = "\n".join(_src(c) for c in student["cells"])
    for word in MAINTAINER:
        assert word not in text, f"学生版里有 {word!r}"
    answers = "\n".join(re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", "\n".join(
        _src(c) for c in source["cells"]), re.S))
    code = "\n".join(_src(c) for c in student["cells"] if c["cell_type"] == "code")
    elsewhere = "\n".join(_src(c) for c in source["cells"] if c["cell_type"] == "code" and not _meta(c).get("solution"))
    leaked = [line.strip() for line in answers.splitlines()
              if len(line.strip()) >= 12 and line.strip() in code and line.strip() not in elsewhere]
    assert leaked == [], f"学生版里有答案的代码：{leaked}"
    assert "assert ok_" not in code
    solutions = [c for c in student["cells"] if _meta(c).get("solution") and c["cell_type"] == "code"]
    assert solutions and all(STUB.search(_src(c)) for c in solutions)
    written = [c for c in student["cells"] if _meta(c).get("solution") and c["cell_type"] == "markdown"]
    assert written and all(_src(c) == "YOUR ANSWER HERE" for c in written), "问答的参考答案不能出现在学生版里"
    for cell in solutions:                                    # 答案区（连同标记）换成和它缩进相同的两行桩，别的不变
        original = _src(H.nbgrader_cells(source)[_meta(cell)["grade_id"]])
        assert _src(cell) == re.sub(r"( *)### BEGIN SOLUTION\n.*?### END SOLUTION",
                                    r"\1# YOUR CODE HERE\n\1raise NotImplementedError()", original, flags=re.S)
    assert code.count("raise NotImplementedError()") == len(solutions)
    for cell in student["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
            ast.parse(_src(cell))                                                 # 换成桩以后仍是合法的 Python
        if _meta(cell).get("locked"):
            assert cell["metadata"].get("editable") is False, "只读单元格在学生版里不能编辑"
    assert "widgets" not in student["metadata"]


def _fragments(text):
    """一段文字里够长的片段（按中文标点和换行切开，至少 8 个字）：学生版里出现其中任何一个，就是把答案漏出去了。"""
    return {f.strip() for f in re.split(r"[，。；：、（）()\n]|——", text) if len(f.strip().replace(" ", "")) >= 8}


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_student_version_does_not_give_away_its_written_answers(a):
    """学生版（题目、前后的说明、小结，所有单元格）里没有本份作业问答的参考答案和评分要点的任何一句话。"""
    from tools.rubric import written_answers

    answers = written_answers(COURSE / "source" / a / f"{ASSIGNMENTS[a]}.ipynb")
    assert len(answers) >= 2
    student = "\n".join(_src(c) for c in _student(a)["cells"])
    for answer in answers:
        for part in ("参考答案", "评分要点"):
            leaked = sorted(f for f in _fragments(answer[part]) if f in student)
            assert leaked == [], f"{a} 的学生版里有 {answer['grade_id']} 的{part}：{leaked}"


LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("where", ["source", "release"])
@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_links_work_and_name_the_file(a, where):
    """相对链接从 notebook 所在的文件夹能打开；正文还写出了仓库里的路径（在别处打开 notebook 时照着找）。"""
    path = COURSE / where / a / f"{ASSIGNMENTS[a]}.ipynb"
    links = 0
    for cell in H.read_nb(path)["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for target in LINK.findall(_src(cell)):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            links += 1
            file = (path.parent / target.split("#")[0]).resolve()
            assert file.is_file(), f"{path.relative_to(ROOT)} 的链接 {target} 打不开"
            assert f"`{file.relative_to(ROOT).as_posix()}`" in _src(cell), f"正文要写出 {target} 在仓库里的路径"
    assert links >= 1


def test_hw3_try_it_says_which_implementation_to_choose():
    last = _src([c for c in _student("hw3")["cells"] if c["cell_type"] == "markdown"][-1])
    steps = [s for s in last.split("## 试一试")[1].split("\n") if re.match(r"\d\. ", s)]
    uses_dropdown = [i for i, s in enumerate(steps) if "「优势」" in s]
    assert uses_dropdown, "试一试里应该有一步用到「优势」下拉框"
    block = last.split("## 试一试")[1]
    for i in uses_dropdown:
        item = block.split(f"{i + 1}. ")[1].split(f"\n{i + 2}. ")[0]
        from toyllm.dashboards import PACKAGE
        assert f"「{PACKAGE}」" in item, f"用到「优势」下拉框的一步要说先选「{PACKAGE}」（面板上那个选项的原名）"


def test_hw3_names_only_controls_the_dashboard_has():
    """
    作业三讲面板的文字里，「……」括起来的名字都是面板上真有的控件或选项（学生曾经找不到文字里说的「运行」按钮）；
    「正确」是做法的名字（条形图的标题），不是控件。
    """
    pytest.importorskip("ipywidgets")
    from toyllm.dashboards import grpo_dashboard

    dash = grpo_dashboard(advantage_fn=lambda r, g: r, surrogate_fn=lambda *a: a[0], iters=5)
    names = set()
    for w in dash.controls.values():
        names.add(w.description)
        names.update(label for label, _ in getattr(w, "options", ()) if isinstance(label, str))
    cells = [_src(c) for c in _student("hw3")["cells"] if c["cell_type"] == "markdown"]
    about = [c for c in cells if "## 第四部分：控制面板" in c or "## 试一试" in c]
    assert len(about) == 2
    quoted = {q for c in about for q in re.findall(r"「([^」]+)」", c)} - {"正确"}
    assert quoted, "讲面板的文字里应该用「……」写出控件的名字"
    missing = [q for q in quoted if not any(n.startswith(q) for n in names)]
    assert not missing, f"作业三的文字提到面板上没有的控件：{missing}（面板上有：{sorted(names)}）"
