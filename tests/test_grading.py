"""
nbgrader 真的能给三份作业评分：在课程（notebooks/homework/）的临时副本里运行真实的 nbgrader 命令
generate_assignment → autograde → generate_feedback，每份作业交这些"学生"的作业：

    solution   没动过的学生版，答案单元格填上教师的答案             → 满分
    untouched  没动过的学生版                                       → 0 分，而且除了评分单元格之外没有单元格报错
    三种常见错误  教师的答案里换掉一行（MISTAKES），检查能认出这种错误 → 只丢这一个任务的分数

反馈（feedback/<学生>/<作业>/*.html）里要有检查打印的中文提示；重新生成的学生版要和仓库里提交的逐字节相同。
分数表和用时打印在测试输出里（pytest -s 或失败时可见；CI 日志里直接可见）。

【边界】每份作业一个课程副本，三份作业同时评分（tools/homework.py 的 grade_all）；整个测试一两分钟。
"""

import importlib.util
import json
import time
from pathlib import Path

import pytest

pytest.importorskip("nbgrader", reason="需要教师工具：pip install -e '.[instructor]'")

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("homework_tools", ROOT / "tools" / "homework.py")
H = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(H)

pytestmark = pytest.mark.slow

# (作业, 学生, 改哪个答案单元格, 原来的代码, 改成, 反馈里应有的提示)：每一种都是检查能认出的常见错误
MISTAKES = [
    ("hw1", "overflow", "grad_log_softmax", "p = np.exp(z - z.max())", "p = np.exp(z)",
     "普通的 logits 都对了，但很大的 logits（例如 800）算出了 NaN 或错误的数"),
    ("hw1", "overwrite", "solution_grad", "grad[CONTEXT_INDEX[key]] += ", "grad[CONTEXT_INDEX[key]] = ",
     "同一个情境在一份解答里出现好几次时，要把每一步的梯度「加起来」"),
    ("hw1", "divide_by_steps", "solution_grad", "    return grad\n", "    return grad / len(problem.steps)\n",
     "梯度也是各步之和；不要除以步数"),
    ("hw2", "biased_estimate", "pass_at_k_unbiased",
     "    if n - c < k:\n        return 1.0\n    return 1.0 - math.comb(n - c, k) / math.comb(n, k)\n",
     "    return 1.0 - (1.0 - c / n) ** k\n", "这是有放回抽样的估计 1 − (1 − c/n)^k"),
    ("hw2", "no_filter", "rejection_sampling_round", "keep=roll.correct", "keep=None",
     "没有过滤：所有解答都拿去做 SFT 了"),
    ("hw2", "default_epochs_lr", "rejection_sampling_round", "sft(new_model, data, epochs=epochs, lr=lr)",
     "sft(new_model, data)", "SFT 没有用传进来的 epochs 和 lr"),
    ("hw3", "population_std", "group_advantages", "ddof=1", "ddof=0", "用了总体标准差（除以 G）"),
    ("hw3", "max_not_min", "clipped_surrogate", "np.minimum(", "np.maximum(", "应该取 min"),
    ("hw3", "one_epsilon", "clipped_surrogate", "1.0 + eps_high)", "1.0 + eps_low)", "上下界用了同一个 ε（ε_low）"),
]
CHECK_OF = {"grad_log_softmax": "check_grad_log_softmax", "solution_grad": "check_solution_grad",
            "pass_at_k_unbiased": "check_pass_at_k_unbiased",
            "rejection_sampling_round": "check_rejection_sampling_round",
            "group_advantages": "check_group_advantages", "clipped_surrogate": "check_clipped_surrogate"}
"""每个答案单元格由哪个评分单元格给分。"""


def with_mistake(solution, cell_id, old, new):
    """教师的答案（一份 notebook dict）里，答案单元格 cell_id 的 old 换成 new（old 必须正好出现一次）。"""
    nb = json.loads(json.dumps(solution))
    cell = H.nbgrader_cells(nb)[cell_id]
    src = H.joined(cell["source"])
    assert src.count(old) == 1, f"{cell_id} 里找不到要换的代码 {old!r}（答案改过了？请同时改 MISTAKES）"
    cell["source"] = src.replace(old, new)
    return nb


def _extra(assignment):
    def make(solution):
        return {student: with_mistake(solution, cell, old, new)
                for a, student, cell, old, new, _ in MISTAKES if a == assignment}
    return make


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    start = time.perf_counter()
    results = H.grade_all(root, extra={a: _extra(a) for a in H.assignments()})
    return results, time.perf_counter() - start


def test_every_assignment_has_three_mistakes():
    for a in H.assignments():
        assert sum(1 for m in MISTAKES if m[0] == a) >= 3, a


def test_score_table(graded, capsys):
    results, seconds = graded
    with capsys.disabled():
        print("\n" + H.score_table(results) + f"nbgrader 评分用时 {seconds:.0f} 秒（三份作业同时进行）")
    for a, r in results.items():
        full, got = r["full"], r["scores"]
        total = sum(full.values())
        assert total == 10, f"{a} 的满分应该是 10，现在是 {total}"
        assert got["solution"] == full, f"{a}：教师的答案没有得满分：{got['solution']}"
        assert got["untouched"] == {g: 0 for g in full}, f"{a}：没动过的学生版应该 0 分：{got['untouched']}"
        for m in (m for m in MISTAKES if m[0] == a):
            lost = CHECK_OF[m[2]]
            want = dict(full, **{lost: 0})
            assert got[m[1]] == want, f"{a} 的 {m[1]}：应该只丢 {lost} 的 {full[lost]} 分，实际 {got[m[1]]}"


def test_unfinished_work_runs_to_the_end(graded):
    """自动评分时每个单元格都运行了；报错的只有评分单元格（隐藏测试的 assert），没做完的作业也能跑到底。"""
    results, _ = graded
    for a, r in results.items():
        name = H.assignments()[a]
        for student in r["scores"]:
            nb = H.read_nb(r["course"] / "autograded" / student / a / f"{name}.ipynb")
            assert H.crashed_cells(nb) == [], f"{a} 的 {student}：非评分单元格报错"
            assert all(c["execution_count"] for c in nb["cells"] if c["cell_type"] == "code"), f"{a} {student}"
            graded_cells = [c for c in H.nbgrader_cells(nb).values() if c["metadata"]["nbgrader"]["grade"]]
            assert all("### BEGIN HIDDEN TESTS" in H.joined(c["source"]) for c in graded_cells), \
                "自动评分时隐藏测试应该被放回评分单元格"


def _feedback(r, a, student):
    return (r["course"] / "feedback" / student / a / f"{H.assignments()[a]}.html").read_text(encoding="utf-8")


def test_feedback_shows_the_chinese_hints(graded):
    results, _ = graded
    for a, r in results.items():
        solution = _feedback(r, a, "solution")
        assert solution.count("✓ ") >= 2 and "结果不对" not in solution and "还没有实现。" not in solution
        assert "还没有实现" in _feedback(r, a, "untouched")
        for m in (m for m in MISTAKES if m[0] == a):
            hint = m[5]
            assert hint in _feedback(r, a, m[1]), f"{a} 的 {m[1]}：反馈里没有提示 {hint!r}"
            assert hint not in solution


def test_committed_student_versions_are_what_nbgrader_generates(graded):
    """仓库里的学生版 = nbgrader generate_assignment（默认设置）的结果；不一致时运行 python tools/homework.py release。"""
    results, _ = graded
    for a, r in results.items():
        name = H.assignments()[a]
        committed = H.COURSE / "release" / a / f"{name}.ipynb"
        assert committed.read_bytes() == (r["course"] / "release" / a / f"{name}.ipynb").read_bytes(), \
            f"{committed.relative_to(ROOT)} 过期了：请运行 python tools/homework.py release"
