"""
nbgrader 真的能给一个班的作业评分：在课程（notebooks/homework/）的临时副本里运行真实的 nbgrader 命令
generate_assignment → autograde（每份作业一次，所有学生一起）→ generate_feedback → export，每份作业交这八种作业：

    solution        学生版填上教师的答案                              → 自动评分的部分满分，问答等老师手工评分
    untouched       没动过的学生版                                    → 0 分，除评分单元格外没有单元格报错
    mistake         任务 2 换掉一行（常见错误，检查认得）              → 只丢任务 2，反馈里有对应的提示
    fake_check      任务 2 写错，又在答案单元格里重新定义检查函数，让它打印 ✓ → 任务 2 记 0
    package_call    一个任务直接调用包里同一个任务的实现               → 这个任务记 0，反馈里写明原因
    loop            任务 2 的函数里有死循环                            → 只丢任务 2，反馈里有「超时」，这份不超过 70 秒
    reset           任务 2 的答案单元格第一行是 %reset -f              → 任务 1 的分数保留
    missing_import  任务 2 的答案单元格导入一个没装的包                → 只丢任务 2

常见错误的各种提示在 tests/unit/homework/test_homework_checks.py 里逐个测（不启动内核）；这里每份作业只交一种。
分数表和用时打印在测试输出里（pytest -s 或失败时可见；CI 日志里直接可见）。
【边界】每份作业一个课程副本，三份作业同时评分（tools/homework.py 的 grade_all）。整个测试运行时（make test），
    评分在运行别的测试之前就在后台开始（tests/background.py），这个文件的测试排在最后。
"""

import importlib.util
import json
import time
from datetime import datetime

import pytest
from background import Background
from paths import ROOT

pytest.importorskip("nbgrader", reason="需要教师工具：pip install -e '.[instructor]'")

_spec = importlib.util.spec_from_file_location("homework_tools", ROOT / "tools" / "homework.py")
H = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(H)

pytestmark = pytest.mark.slow

TASKS = {"hw1": ("grad_log_softmax", "solution_grad"), "hw2": ("pass_at_k_unbiased", "rejection_sampling_round"),
         "hw3": ("group_advantages", "clipped_surrogate")}
"""每份作业的两个答案单元格（任务 1、任务 2）。"""
CHECK_OF = {"grad_log_softmax": "check_grad_log_softmax", "solution_grad": "check_solution_grad",
            "pass_at_k_unbiased": "check_pass_at_k_unbiased",
            "rejection_sampling_round": "check_rejection_sampling_round",
            "group_advantages": "check_group_advantages", "clipped_surrogate": "check_clipped_surrogate"}
"""每个答案单元格由哪个评分单元格给分。"""

# (作业, 答案单元格, 原来的代码, 改成, 反馈里应有的提示)：任务 2 的一种常见错误
MISTAKES = {
    "hw1": ("solution_grad", "grad[CONTEXT_INDEX[key]] += ", "grad[CONTEXT_INDEX[key]] = ",
            "同一个情境在一份解答里出现好几次时，要把每一步的梯度「加起来」"),
    "hw2": ("rejection_sampling_round", "keep=roll.correct", "keep=None", "没有过滤：所有解答都拿去做 SFT 了"),
    "hw3": ("clipped_surrogate", "np.minimum(", "np.maximum(", "应该取 min"),
}
# (作业, 答案单元格, 整个单元格换成的代码)：调用包里同一个任务的实现
PACKAGE_CALLS = {
    "hw1": ("solution_grad", "def solution_grad(model, problem, sample):\n"
            "    from toyllm.homework.hw1 import reference_solution_grad\n"
            "    return reference_solution_grad(model, problem, sample)\n"),
    "hw2": ("pass_at_k_unbiased", "def pass_at_k_unbiased(n, c, k):\n    return float(pass_at_k(n, c, k))\n"),
    "hw3": ("group_advantages", "def group_advantages(rewards, group_size, eps=1e-4):\n"
            "    return rl.group_advantages(rewards, group_size)\n"),
}
FAKE_CHECK = ("\n\ndef {check}(fn):\n    print('✓ {task}：通过')\n\n    class Passed:\n        ok = True\n"
              "        status = 'pass'\n    return Passed()\n")
"""fake_check：任务 2 的答案单元格末尾重新定义它的检查函数（检查单元格里调用的那个名字）。"""
LOOP = "    ### BEGIN SOLUTION\n    while True:\n        __import__('time').sleep(0.05)\n"
"""loop：任务 2 的函数一开始就永远转下去。转圈时睡觉而不是空转：超时、中断、后面的单元格照常评分都和空转的
死循环一样，只是不占一个 CPU 核 60 秒（三份作业的三个死循环空转时要占去这台两核机器上 180 秒的 CPU）。"""


def with_mistake(solution, cell_id, old, new):
    """教师的答案（一份 notebook dict）里，答案单元格 cell_id 的 old 换成 new（old 必须正好出现一次）。"""
    nb = json.loads(json.dumps(solution))
    cell = H.nbgrader_cells(nb)[cell_id]
    src = H.joined(cell["source"])
    assert src.count(old) == 1, f"{cell_id} 里找不到要换的代码 {old!r}（答案改过了？请同时改这个测试）"
    cell["source"] = src.replace(old, new)
    return nb


def with_cell(solution, cell_id, edit):
    """答案单元格 cell_id 的代码换成 edit(原来的代码)。"""
    nb = json.loads(json.dumps(solution))
    cell = H.nbgrader_cells(nb)[cell_id]
    cell["source"] = edit(H.joined(cell["source"]))
    return nb


def _visible_check(nb, task):
    """任务的检查单元格里调用的检查函数名（例如 check_pass_at_k）。"""
    src = H.joined(H.nbgrader_cells(nb)[CHECK_OF[task]]["source"])
    return src.split("= ", 1)[1].split("(", 1)[0]


def submissions(assignment):
    """{学生: notebook}：除了 solution、untouched（grade_assignment 自己交）以外的六种。"""
    t1, t2 = TASKS[assignment]

    def make(solution):
        cell, old, new, _ = MISTAKES[assignment]
        pkg_cell, pkg_src = PACKAGE_CALLS[assignment]
        wrong = with_mistake(solution, cell, old, new)
        fake = FAKE_CHECK.format(check=_visible_check(solution, t2), task=t2)
        return {
            "mistake": wrong,
            "fake_check": with_cell(wrong, t2, lambda src: src + fake),
            "package_call": with_cell(solution, pkg_cell, lambda src: pkg_src),
            "loop": with_cell(solution, t2, lambda src: src.replace("    ### BEGIN SOLUTION\n", LOOP, 1)),
            "reset": with_cell(solution, t2, lambda src: "%reset -f\n" + src),
            "missing_import": with_cell(solution, t2, lambda src: "import toyllm_extension_not_installed\n" + src),
        }
    return make


def lost(assignment):
    """{学生: 丢分的评分单元格}（其余自动评分的部分应该满分）。"""
    t1, t2 = TASKS[assignment]
    pkg = CHECK_OF[PACKAGE_CALLS[assignment][0]]
    return {"mistake": {CHECK_OF[t2]}, "fake_check": {CHECK_OF[t2]}, "package_call": {pkg}, "loop": {CHECK_OF[t2]},
            "reset": {CHECK_OF[t2]}, "missing_import": {CHECK_OF[t2]}, "untouched": {CHECK_OF[t1], CHECK_OF[t2]},
            "solution": set()}


def _grade(root):
    start = time.perf_counter()
    results = H.grade_all(root, extra={a: submissions(a) for a in H.assignments()})
    return results, time.perf_counter() - start


BACKGROUND = Background(_grade, "course", priority=3)
"""评分最慢（大部分时间在等 nbgrader 的子进程和死循环的 60 秒超时）：最先在后台开始，这个文件的测试排在最后。"""


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    return BACKGROUND.get(tmp_path_factory)


def test_every_kind_of_submission_gets_its_score(graded, capsys):
    results, seconds = graded
    with capsys.disabled():
        print("\n" + H.score_table(results) + f"nbgrader 评分用时 {seconds:.0f} 秒（三份作业同时进行，每份一次 autograde）")
    for a, r in results.items():
        full = r["full"]
        assert sum(full.values()) == 10, f"{a} 的满分应该是 10，现在是 {sum(full.values())}"
        written = set(r["manual"]["solution"])
        assert written and all(g not in CHECK_OF.values() for g in written), f"{a}：问答题应该等老师手工评分：{written}"
        for student, gone in lost(a).items():
            want = {g: (0 if g in gone else p) for g, p in full.items() if g not in written}
            assert H.auto(r, student) == want, f"{a} 的 {student}：应该只丢 {sorted(gone)}，实际 {r['scores'][student]}"
        assert not any(r["manual"]["untouched"]), f"{a}：没动过的问答应该自动记 0，不用老师评"


def _feedback(r, a, student):
    return (r["course"] / "feedback" / student / a / f"{H.assignments()[a]}.html").read_text(encoding="utf-8")


def test_feedback_says_why(graded):
    results, _ = graded
    for a, r in results.items():
        solution = _feedback(r, a, "solution")
        assert solution.count("✓ ") >= 2 and "结果不对" not in solution and "还没有实现。" not in solution
        assert "还没有实现" in _feedback(r, a, "untouched")
        assert MISTAKES[a][3] in _feedback(r, a, "mistake") and MISTAKES[a][3] not in solution
        assert MISTAKES[a][3] in _feedback(r, a, "fake_check"), f"{a}：假的检查函数挡不住真的检查"
        assert "自己写出来" in _feedback(r, a, "package_call"), f"{a}：反馈里没有说明调用了包里的实现"
        assert "超时" in _feedback(r, a, "loop")
        assert "toyllm_extension_not_installed" in _feedback(r, a, "missing_import")


def test_a_stuck_notebook_costs_at_most_70_seconds(graded):
    """死循环的那份：从第一个单元格开始运行到最后一个单元格结束，不超过 70 秒（nbclient 记下的时间）。"""
    results, _ = graded
    for a, r in results.items():
        nb = H.read_nb(r["course"] / "autograded" / "loop" / a / f"{H.assignments()[a]}.ipynb")
        times = [c["metadata"]["execution"] for c in nb["cells"] if c.get("metadata", {}).get("execution")]
        start = datetime.fromisoformat(times[0]["iopub.execute_input"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(times[-1]["shell.execute_reply"].replace("Z", "+00:00"))
        assert (end - start).total_seconds() <= 70, f"{a}：死循环的作业运行了 {(end - start).total_seconds():.0f} 秒"


def test_the_gradebook_exports_every_student_and_assignment(graded):
    results, _ = graded
    for a, r in results.items():
        rows = r["csv"].splitlines()
        assert rows[0].startswith("assignment,"), rows[0]
        assert {row.split(",")[0] for row in rows[1:]} == {a}
        assert {s for s in r["scores"]} <= {f for row in rows[1:] for f in row.split(",")}


def test_unfinished_work_runs_to_the_end(graded):
    """自动评分时每个单元格都运行了；报错的只有评分单元格（隐藏测试的 assert），没做完的作业也能跑到底。"""
    results, _ = graded
    for a, r in results.items():
        name = H.assignments()[a]
        for student in ("solution", "untouched", "mistake", "fake_check", "package_call"):
            nb = H.read_nb(r["course"] / "autograded" / student / a / f"{name}.ipynb")
            assert H.crashed_cells(nb) == [], f"{a} 的 {student}：非评分单元格报错"
            assert all(c["execution_count"] for c in nb["cells"] if c["cell_type"] == "code"), f"{a} {student}"
            graded_cells = [c for c in H.nbgrader_cells(nb).values()
                            if c["metadata"]["nbgrader"]["grade"] and c["cell_type"] == "code"]
            assert all("### BEGIN HIDDEN TESTS" in H.joined(c["source"]) for c in graded_cells), \
                "自动评分时隐藏测试应该被放回评分单元格"


def test_committed_student_versions_are_what_nbgrader_generates(graded):
    """仓库里的学生版 = nbgrader generate_assignment（默认设置）的结果；不一致时运行 python tools/homework.py release。"""
    results, _ = graded
    for a, r in results.items():
        name = H.assignments()[a]
        committed = H.COURSE / "release" / a / f"{name}.ipynb"
        assert committed.read_bytes() == (r["course"] / "release" / a / f"{name}.ipynb").read_bytes(), \
            f"{committed.relative_to(ROOT)} 过期了：请运行 python tools/homework.py release"
