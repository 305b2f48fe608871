"""
nbgrader 真的能给一个班的作业评分，交的作业是不可信的代码：在课程（notebooks/homework/）的临时副本里运行真实的
nbgrader 命令 generate_assignment → autograde（每份作业一次，所有学生一起）→ generate_feedback → export。
评分走课程的 nbgrader_config.py（tools/grader.py：内核在沙盒里，分数由评分程序在自己的进程里算）。每份作业交这些：

    solution        学生版填上教师的答案                              → 自动评分的部分满分，问答等老师手工评分
    untouched       没动过的学生版                                    → 0 分，除评分单元格外没有单元格报错
    mistake         任务 2 换掉一行（常见错误，检查认得）              → 只丢任务 2，反馈里有对应的提示
    fake_check      任务 2 写错，又在答案单元格里重新定义检查函数，让它打印 ✓ → 任务 2 记 0
    package_call    一个任务直接调用包里同一个任务的实现               → 这个任务记 0，反馈里写明原因
    loop            任务 2 的函数里有死循环                            → 只丢任务 2，反馈里有「超时」，这份不超过 70 秒
    reset           任务 2 的答案单元格第一行是 %reset -f              → 满分（评分时魔法命令不运行，函数本身是对的）
    missing_import  任务 2 的答案单元格导入一个没装的包                → 只丢任务 2
再加上 ATTACKS 里的各种作弊和出意外的诚实作业（每种至少在一份作业里出现一次），见 ATTACKS 的说明。
作弊的提交 a_tamper 最先单独评分（grade_all 的 first），其余的再一起评：untouched、solution 仍然是 0 分和满分。

常见错误的各种提示在 tests/unit/homework/test_homework_checks.py 里逐个测（不启动内核）；这里每份作业只交一种。
分数表和用时打印在测试输出里（pytest -s 或失败时可见；CI 日志里直接可见）。
【边界】每份作业一个课程副本，三份作业同时评分（tools/homework.py 的 grade_all）。时间上限用测试专用的短上限（CONFIG）。
    整个测试运行时（make test），评分在运行别的测试之前就在后台开始（tests/background.py），这个文件的测试排在最后。
"""

import hashlib
import importlib.util
import json
import os
import sqlite3
import subprocess
import time
from datetime import datetime

import numpy as np
import pytest
from background import Background
from paths import ROOT

pytest.importorskip("nbgrader", reason="需要教师工具：pip install -e '.[instructor]'")


def _isolation_or_skip():
    """评分要隔离同学的代码（bubblewrap，或者 root 时的 setpriv）。没有时：平时跳过并说明；CI（TOYLLM_REQUIRE_BROWSER=1）里失败。"""
    from toyllm.isolation import grading_isolation

    kind, why = grading_isolation()
    if kind is None:
        if os.environ.get("TOYLLM_REQUIRE_BROWSER") == "1":
            pytest.fail(f"TOYLLM_REQUIRE_BROWSER=1（CI），但是评分没有隔离可用：{why}")
        pytest.skip(f"评分没有隔离可用，跳过真的评分：{why}")

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


CONFIG = "\n".join(["c.SandboxExecute.ordinary_seconds = 25", "c.SandboxExecute.train_seconds = 90",
                    "c.Verdicts.cell_seconds = 6", "c.Verdicts.call_seconds = 6"])
"""测试专用的时间上限（课程的设置是 60 / 300 / 60 / 10 秒）：卡住的提交不必每份等一分钟。"""

TAMPER_DISK = """
import importlib, os, sqlite3, pathlib
import toyllm, toyllm.homework.{a} as mine
repo = pathlib.Path(toyllm.__file__).resolve().parents[1]
for target, text in [(repo / "tools" / "grader.py", "\\nTASKS = {{}}\\n"),
                     (pathlib.Path(mine.__file__), "\\ndef check_solution_grad(fn, rng=None):\\n    return True\\n")]:
    try:
        with open(target, "a") as f:
            f.write(text)
        importlib.reload(mine)
    except OSError as e:
        print("写不了", target.name, type(e).__name__)
for db in ["../../../gradebook.db", str(repo / "notebooks" / "homework" / "gradebook.db")]:
    try:
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE IF NOT EXISTS hacked (x)")
        con.execute("UPDATE grade SET manual_score = 99")
        con.commit()
    except Exception as e:
        print("成绩库", type(e).__name__)
"""
"""作弊：改写评分程序和包里的检查（磁盘上），往课程的 gradebook.db 里写分数。"""
TAMPER_KERNEL = """
import builtins, importlib.util, sys, types
import numpy as np
np.allclose = lambda *a, **k: True
_getattr = builtins.getattr
builtins.getattr = lambda o, n, *d: (lambda *a, **k: True) if str(n).startswith("check") else _getattr(o, n, *d)
fake = types.ModuleType("toyllm.homework.{a}")
fake.__file__ = sys.modules["toyllm.homework.{a}"].__file__
class Passed:
    ok, status = True, "pass"
    def __call__(self, *a, **k):
        return self
    def check(self, *a, **k):
        return self
for n in dir(sys.modules["toyllm.homework.{a}"]):
    if n.startswith("check_"):
        setattr(fake, n, Passed().check)
sys.modules["toyllm.homework.{a}"] = fake
_find = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: _find("json") if "grad" in name else _find(name, *a)
"""
"""作弊：在自己的内核里改 numpy、builtins.getattr、sys.modules（假模块带真的 __file__）、import 的查找，检查换成绑定方法。"""
MEMORY = """
import numpy as np
try:
    big = np.ones(2 ** 29)
    print("分配了 4 GB")
except MemoryError:
    print("内存超过上限：MemoryError")
"""
THREAD = """def rejection_sampling_round(model, problems, k, rng, epochs=30, lr=2.0):
    import sys, threading
    from toyllm.imitation import rejection_sampling_ft
    out = []
    sys.setprofile(None)
    t = threading.Thread(target=lambda: out.append(rejection_sampling_ft(model, problems, problems, k=k, dedup=False, epochs=epochs, lr=lr)))
    t.start(); t.join()
    return out[0][0], out[0][1]
"""
"""作弊：在另一个线程里、关掉 profile，调用包里同一个任务的实现。"""
SWALLOW = """import time
while True:
    try:
        time.sleep(0.05)
    except KeyboardInterrupt:
        pass
"""
"""出意外：一个接住中断的死循环（诚实的作业后面多了这个单元格）。"""


def with_extra_cell(nb, after, source, tags=()):
    """在 grade_id 为 after 的单元格后面插入一个同学自己加的代码单元格（没有 nbgrader 元数据）。"""
    nb = json.loads(json.dumps(nb))
    i = next(i for i, c in enumerate(nb["cells"]) if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == after)
    nb["cells"].insert(i + 1, {"cell_type": "code", "execution_count": None, "id": f"extra-{i}-{len(nb['cells'])}",
                               "metadata": {"tags": list(tags)}, "outputs": [], "source": source})
    return nb


def table_answer(solution_src):
    """作弊：只会查表的 group_advantages —— 包里公开的输入都查得到，评分时新抽的输入查不到。"""
    from toyllm.homework.hw3 import ADVANTAGE_CASES
    from toyllm.rl import group_advantages

    table = {(tuple(r), g): group_advantages(np.array(r, dtype=float), g, "grpo", "group", 1e-4).tolist()
             for r, g in ADVANTAGE_CASES}
    return (f"TABLE = {table!r}\n\n\ndef group_advantages(rewards, group_size, eps=1e-4):\n"
            "    return np.array(TABLE[(tuple(float(x) for x in rewards), group_size)])\n")


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


def attacks(assignment, solution, wrong):
    """
    {学生: notebook}：这份作业交的作弊和出意外的诚实作业（每种至少在一份作业里出现一次）。

        a_tamper      改写磁盘上的评分程序和包里的检查、写 gradebook（hw1）；在内核里改 numpy、builtins、sys.modules、
                      import 的查找（hw2）；分配 4 GB 内存（hw3）。任务 2 写错        → 任务 2 记 0，别人不受影响
        stderr        诚实，函数里 print(..., file=sys.stderr)                         → 满分
        exit / os_exit / swallow  诚实，任务 1 的检查后面多一个 exit() / os._exit(0) / 接住中断的死循环
                      → 照样评分、满分（分数本来就不从内核来），反馈里说明内核在哪里停了
        thread        在线程里、关掉 profile 调用包里的 rejection_sampling_ft           → 任务 2 记 0
        train_tag     任务 1 的答案单元格自己加上 train 标签，运行 200 秒             → 超时，任务 1 记 0
        table         group_advantages 只会查包里公开的输入                           → 任务 1 记 0（评分新抽输入）
    """
    t1, t2 = TASKS[assignment]
    check1 = CHECK_OF[t1]
    if assignment == "hw1":
        return {"a_tamper": with_extra_cell(wrong, "hw1-setup", TAMPER_DISK.format(a=assignment)),
                "stderr": with_cell(solution, t1, lambda src: src.replace(
                    "    ### BEGIN SOLUTION\n", "    ### BEGIN SOLUTION\n    import sys\n"
                    "    print('调试：', logits, file=sys.stderr)\n", 1)),
                "exit": with_extra_cell(solution, check1, "exit()\n")}
    if assignment == "hw2":
        return {"a_tamper": with_extra_cell(wrong, "hw2-setup", TAMPER_KERNEL.format(a=assignment)),
                "thread": with_cell(solution, t2, lambda src: THREAD),
                "os_exit": with_extra_cell(solution, check1, "import os\nos._exit(0)\n")}
    train = with_cell(solution, t1, lambda src: src + "\n\nimport time\ntime.sleep(200)\n")
    for c in train["cells"]:
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == t1:
            c["metadata"]["tags"] = ["train"]
    return {"a_tamper": with_extra_cell(wrong, "hw3-setup", MEMORY),
            "train_tag": train, "swallow": with_extra_cell(solution, check1, SWALLOW),
            "table": with_cell(solution, t1, table_answer)}


ATTACK_LOST = {"hw1": {"a_tamper": "t2", "stderr": "", "exit": ""},
               "hw2": {"a_tamper": "t2", "thread": "t2", "os_exit": ""},
               "hw3": {"a_tamper": "t2", "train_tag": "t1", "swallow": "", "table": "t1"}}
"""每种作弊和意外丢分的任务（""：不丢分）。"""
ATTACK_WHY = {("hw2", "os_exit"): "内核退出了", ("hw3", "swallow"): "停不下来",
              ("hw3", "train_tag"): "超时", ("hw2", "thread"): "rejection_sampling_ft"}
"""(作业, 提交) → 反馈里应有的原因。"""


def submissions(assignment):
    """{学生: notebook}：除了 solution、untouched（grade_assignment 自己交）以外的各种。"""
    t1, t2 = TASKS[assignment]

    def make(solution):
        cell, old, new, _ = MISTAKES[assignment]
        pkg_cell, pkg_src = PACKAGE_CALLS[assignment]
        wrong = with_mistake(solution, cell, old, new)
        fake = FAKE_CHECK.format(check=_visible_check(solution, t2), task=t2)
        return {**attacks(assignment, solution, wrong),
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
    task = {"t1": {CHECK_OF[t1]}, "t2": {CHECK_OF[t2]}, "": set()}
    return {"mistake": {CHECK_OF[t2]}, "fake_check": {CHECK_OF[t2]}, "package_call": {pkg}, "loop": {CHECK_OF[t2]},
            "reset": set(), "missing_import": {CHECK_OF[t2]}, "untouched": {CHECK_OF[t1], CHECK_OF[t2]},
            "solution": set(), **{k: task[v] for k, v in ATTACK_LOST[assignment].items()}}


def checksums():
    """{文件: sha256}：评分程序和包（tools/、toyllm/ 里的 .py）和课程的设置。"""
    files = [*sorted((ROOT / "tools").rglob("*.py")), *sorted((ROOT / "toyllm").rglob("*.py")),
             ROOT / "notebooks" / "homework" / "nbgrader_config.py"]
    return {str(f.relative_to(ROOT)): hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


def _status():
    run = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
    return run.stdout if run.returncode == 0 else None


def _grade(root):
    from toyllm.isolation import grading_isolation

    if grading_isolation()[0] is None:                 # 没有隔离：不评分（fixture 跳过或失败，并说明）
        return None
    before = checksums(), _status()
    start = time.perf_counter()
    results = H.grade_all(root, extra={a: submissions(a) for a in H.assignments()}, config=CONFIG, first=["a_tamper"])
    return results, time.perf_counter() - start, before


BACKGROUND = Background(_grade, "course", priority=3)
"""评分最慢（大部分时间在等 nbgrader 的子进程和死循环的 60 秒超时）：最先在后台开始，这个文件的测试排在最后。"""


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    _isolation_or_skip()
    return BACKGROUND.get(tmp_path_factory)


def test_every_kind_of_submission_gets_its_score(graded, capsys):
    results, seconds, _ = graded
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
    results = graded[0]
    for a, r in results.items():
        solution = _feedback(r, a, "solution")
        assert solution.count("✓ ") >= 2 and "结果不对" not in solution and "还没有实现。" not in solution
        assert "还没有实现" in _feedback(r, a, "untouched")
        assert MISTAKES[a][3] in _feedback(r, a, "mistake") and MISTAKES[a][3] not in solution
        assert MISTAKES[a][3] in _feedback(r, a, "fake_check"), f"{a}：假的检查函数挡不住真的检查"
        assert "自己写出来" in _feedback(r, a, "package_call"), f"{a}：反馈里没有说明调用了包里的实现"
        assert "超时" in _feedback(r, a, "loop")
        assert "toyllm_extension_not_installed" in _feedback(r, a, "missing_import")
        for (b, student), why in ATTACK_WHY.items():
            if b == a:
                assert why in _feedback(r, a, student), f"{a} 的 {student}：反馈里没有说明原因 {why}"


def test_every_submission_is_graded(graded):
    """exit()、os._exit、接住中断的死循环也有评分结果（前面的部分照常给分），没有一份评分失败。"""
    for a, r in graded[0].items():
        assert r["ungraded"] == [], f"{a}：没能评分的提交 {r['ungraded']}"


def test_tampering_reaches_nothing_outside_the_submission(graded):
    """作弊的提交先评分：仓库（评分程序、包、课程设置）一个字节都没变，git status 不变，成绩库里只有评分程序写的东西。"""
    results, _, (sums, status) = graded
    assert checksums() == sums
    assert _status() == status
    for a, r in results.items():
        con = sqlite3.connect(r["course"] / "gradebook.db")
        tables = {t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "hacked" not in tables
        assert not con.execute("SELECT COUNT(*) FROM grade WHERE manual_score = 99").fetchone()[0]
        con.close()
    nb = H.read_nb(results["hw1"]["course"] / "autograded" / "a_tamper" / "hw1" / f"{H.assignments()['hw1']}.ipynb")
    text = json.dumps(nb, ensure_ascii=False)
    assert "写不了 grader.py" in text and "写不了 hw1.py" in text, "沙盒里写评分程序和包应该失败"
    nb = H.read_nb(results["hw3"]["course"] / "autograded" / "a_tamper" / "hw3" / f"{H.assignments()['hw3']}.ipynb")
    assert "内存超过上限：MemoryError" in json.dumps(nb, ensure_ascii=False), "4 GB 的数组应该分配失败"


def test_the_long_limit_comes_from_the_teachers_notebook(graded):
    """同学自己给答案单元格加的 train 标签不算：这个单元格在普通的上限（测试里 25 秒）被停下。"""
    r = graded[0]["hw3"]
    nb = H.read_nb(r["course"] / "autograded" / "train_tag" / "hw3" / f"{H.assignments()['hw3']}.ipynb")
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == TASKS["hw3"][0])
    assert any(o.get("ename") == "CellTimeoutError" for o in cell["outputs"]), "答案单元格应该超时"
    times = cell["metadata"]["execution"]
    start = datetime.fromisoformat(times["iopub.execute_input"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(times["shell.execute_reply"].replace("Z", "+00:00"))
    assert (end - start).total_seconds() < 60


def test_a_stuck_notebook_costs_at_most_70_seconds(graded):
    """死循环的那份：从第一个单元格开始运行到最后一个单元格结束，不超过 70 秒（nbclient 记下的时间）。"""
    results = graded[0]
    for a, r in results.items():
        nb = H.read_nb(r["course"] / "autograded" / "loop" / a / f"{H.assignments()[a]}.ipynb")
        times = [c["metadata"]["execution"] for c in nb["cells"] if c.get("metadata", {}).get("execution")]
        start = datetime.fromisoformat(times[0]["iopub.execute_input"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(times[-1]["shell.execute_reply"].replace("Z", "+00:00"))
        assert (end - start).total_seconds() <= 70, f"{a}：死循环的作业运行了 {(end - start).total_seconds():.0f} 秒"


def test_the_gradebook_exports_every_student_and_assignment(graded):
    results = graded[0]
    for a, r in results.items():
        rows = r["csv"].splitlines()
        assert rows[0].startswith("assignment,"), rows[0]
        assert {row.split(",")[0] for row in rows[1:]} == {a}
        assert {s for s in r["scores"]} <= {f for row in rows[1:] for f in row.split(",")}


def test_unfinished_work_runs_to_the_end(graded):
    """自动评分时每个单元格都运行了；报错的只有评分单元格（隐藏测试的 assert），没做完的作业也能跑到底。"""
    results = graded[0]
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
    results = graded[0]
    for a, r in results.items():
        name = H.assignments()[a]
        committed = H.COURSE / "release" / a / f"{name}.ipynb"
        assert committed.read_bytes() == (r["course"] / "release" / a / f"{name}.ipynb").read_bytes(), \
            f"{committed.relative_to(ROOT)} 过期了：请运行 python tools/homework.py release"
