"""
作业的教师工具：生成教师版、用 nbgrader 生成学生版、在临时文件夹里把整个评分流程跑一遍。

【思路】notebooks/homework/ 是一个 nbgrader 课程文件夹（nbgrader 的默认布局）：

        nbgrader_config.py
        src/hw1_gradient.py              教师版的文字源：jupytext 的 percent 格式，nbgrader 的单元格元数据
                                         （答案、分数、只读）写在 `# %% nbgrader={...}` 那一行
        source/hw1/hw1_gradient.ipynb    教师版：由 src 生成并运行过（输出保存着，严格 nbval 比对）
        release/hw1/hw1_gradient.ipynb   学生版：nbgrader generate_assignment（默认设置）生成

    这里没有自己的转换代码，只把现成的工具串起来：
        build    jupytext 读 src/*.py → nbclient 在 source/hwN/ 里运行 → 写 source/hwN/*.ipynb
        release  把课程复制到临时文件夹 → nbgrader generate_assignment → 学生版复制回 release/hwN/
        check    同上，但只比较、不写（学生版过期时退出码 1）
        grade    在临时文件夹里：generate_assignment → 交两份作业（教师的答案、没动过的学生版）
                 → nbgrader autograde → generate_feedback → export → 打印分数表、还要手工评分的问答和成绩 CSV

【用法】（在仓库根目录；需要 pip install -e '.[instructor]'）
        python tools/homework.py build [hw1 ...]    # 改了 src/*.py 以后
        python tools/homework.py release            # 再生成学生版
        python tools/homework.py grade [--keep 文件夹]

【边界】运行 nbgrader 用的是当前解释器（python -m nbgrader），它的 python3 内核要能 import toyllm。
    教师版的答案必须全部通过检查：运行出错、有 stderr、检查打印 ✗ 时不写文件。
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "notebooks" / "homework"
SRC = COURSE / "src"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
FAILED = ("✗", "还没有实现", "Warning", "Glyph")
"""教师版的输出里不能有的字样：检查没通过、警告、字体缺字。"""


def assignments():
    """{作业名: notebook 名}，例如 {"hw1": "hw1_gradient", ...}；作业名是 src 文件名里第一个 "_" 之前的部分。"""
    return {p.stem.split("_")[0]: p.stem for p in sorted(SRC.glob("hw*.py"))}


def _pick(names):
    known = assignments()
    bad = sorted(set(names) - set(known))
    if bad:
        raise SystemExit(f"✗ 不认识的作业 {'、'.join(bad)}；有：{'、'.join(known)}")
    return {a: n for a, n in known.items() if not names or a in names}


def joined(x):
    """notebook 文件里的源码或输出文字可能存成"一行一个字符串"的列表：合成一个字符串。"""
    return "".join(x) if isinstance(x, list) else x


def nbgrader_cells(nb):
    """notebook 里带 nbgrader 元数据的单元格：{grade_id: 单元格}。"""
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in nb["cells"] if "nbgrader" in c.get("metadata", {})}


# =============================================================================
# 教师版：jupytext + nbclient
# =============================================================================
def read_source(name):
    """jupytext 读 src/<name>.py，得到未运行的教师版：单元格 id 固定（有 grade_id 的用它，其余按序号），去掉 jupytext 的元数据。"""
    import jupytext

    nb = jupytext.read(SRC / f"{name}.py")
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    for i, cell in enumerate(nb.cells):
        cell["id"] = cell.metadata.get("nbgrader", {}).get("grade_id", f"cell-{i:02d}")
    return nb


def build(assignment, name, timeout=600):
    """生成并运行一份教师版，写到 source/<作业>/<name>.ipynb。返回用时秒数。出问题时 SystemExit，不写文件。"""
    import nbformat
    from nbclient import NotebookClient

    nb = read_source(name)
    out = COURSE / "source" / assignment / f"{name}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True, record_timing=False,
                   store_widget_state=True, coalesce_streams=True,
                   resources={"metadata": {"path": str(out.parent)}}).execute()
    # store_widget_state=False 时，nbclient 在面板的 Output 控件收到输出时报 KeyError（它没有记下控件的状态）；
    # 所以让它记下，再把记下的控件状态丢掉：作业文件里不存控件状态
    nb.metadata.pop("widgets", None)
    nb.metadata.get("language_info", {}).pop("version", None)
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        cell.outputs = [o for o in cell.outputs if WIDGET_VIEW not in o.get("data", {})]   # 没有状态的小部件存了也没用
        for o in cell.outputs:
            o.get("metadata", {}).pop("needs_background", None)
            text = json.dumps(o, ensure_ascii=False)
            if o.output_type == "error" or o.get("name") == "stderr" or any(w in text for w in FAILED):
                problems.append(f"单元格 {i}：{text[:300]}")
    if problems:
        raise SystemExit(f"✗ {name} 的输出有问题（没有写文件）：\n  " + "\n  ".join(problems))
    nbformat.write(nb, out)
    return time.perf_counter() - start


# =============================================================================
# nbgrader：在课程的临时副本里运行
# =============================================================================
def copy_course(dest, names=(), config=""):
    """
    把课程（nbgrader_config.py 和 source/ 里选中的作业，默认全部）复制到 dest，返回 dest。

    【参数】config：接在复制的 nbgrader_config.py 后面的设置（例如测试用的短时间上限 c.SandboxExecute.ordinary_seconds = 20）
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(COURSE / "nbgrader_config.py", dest)
    if config:
        with open(dest / "nbgrader_config.py", "a", encoding="utf-8") as f:
            f.write("\n# 这份副本另加的设置\n" + config + "\n")
    for a in _pick(names):
        shutil.copytree(COURSE / "source" / a, dest / "source" / a, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return dest


def nbgrader(course, *args, check=True):
    """在课程文件夹 course 里运行 `python -m nbgrader 参数…`；失败时（check=True）抛 RuntimeError（带 nbgrader 的输出）。"""
    # nbgrader 会从 PATH 里找 alembic 命令（它的成绩库升级工具）：没有激活虚拟环境时，先把当前解释器的 bin 放到最前面
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, capture_output=True, text=True, env=env)
    if check and run.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} 失败（退出码 {run.returncode}）：\n{run.stdout}\n{run.stderr}")
    return run


def generate(course):
    """nbgrader generate_assignment（默认设置），课程 course 里的每份作业一起（一次 nbgrader）。返回 release 文件夹。"""
    nbgrader(course, "generate_assignment", "*", "--force")
    return Path(course) / "release"


def stale_releases(names=()):
    """重新生成学生版，和仓库里的比较（逐字节）。返回问题列表；空列表表示都是最新的。"""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        new = generate(copy_course(tmp, names))
        for a, name in _pick(names).items():
            old = COURSE / "release" / a / f"{name}.ipynb"
            if not old.exists():
                problems.append(f"缺少学生版 {old.relative_to(ROOT)}")
            elif old.read_bytes() != (new / a / f"{name}.ipynb").read_bytes():
                problems.append(f"学生版 {old.relative_to(ROOT)} 过期了；请运行 python tools/homework.py release")
    return problems


def release(names=()):
    """重新生成学生版，写到仓库的 release/<作业>/。"""
    with tempfile.TemporaryDirectory() as tmp:
        new = generate(copy_course(tmp, names))
        for a, name in _pick(names).items():
            dest = COURSE / "release" / a
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy(new / a / f"{name}.ipynb", dest)
            print(f"学生版  {(dest / f'{name}.ipynb').relative_to(ROOT)}")


# =============================================================================
# 评分
# =============================================================================
def filled(student, instructor):
    """学生版 notebook 里的答案单元格换成教师版里的同名单元格（按 grade_id）：一份"全做对"的提交。"""
    nb = json.loads(json.dumps(student))
    answers = nbgrader_cells(instructor)
    for gid, cell in nbgrader_cells(nb).items():
        if cell["metadata"]["nbgrader"].get("solution"):
            cell["source"] = joined(answers[gid]["source"])
    return nb


def submit(course, student, assignment, name, nb):
    """把 nb 作为 student 交的作业放进 submitted/<学生>/<作业>/<name>.ipynb（nbgrader 收作业后的布局）。"""
    path = Path(course) / "submitted" / student / assignment / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def read_nb(path):
    """读一个 .ipynb（普通的 dict，不需要 nbformat）。"""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def points(nb):
    """{grade_id: 分数}：notebook 里每个评分单元格的满分。"""
    return {gid: c["metadata"]["nbgrader"]["points"] for gid, c in nbgrader_cells(nb).items()
            if c["metadata"]["nbgrader"].get("grade")}


def scores(course, assignment, name):
    """从 nbgrader 的成绩库读分数：({学生: {grade_id: 得分}}, {学生: [还要老师手工评分的 grade_id]})。"""
    from nbgrader.api import Gradebook

    out, manual = {}, {}
    with Gradebook(f"sqlite:///{Path(course) / 'gradebook.db'}") as gb:
        for sub in gb.assignment_submissions(assignment):
            nb = gb.find_submission_notebook(name, assignment, sub.student_id)
            out[sub.student_id] = {g.name: g.score for g in nb.grades}
            manual[sub.student_id] = [g.name for g in nb.grades if g.needs_manual_grade]
    return out, manual


def crashed_cells(nb):
    """自动评分后的 notebook 里报错的单元格中，不是评分单元格的那些（说明没做完的作业没能跑到底）。"""
    bad = []
    for i, cell in enumerate(nb["cells"]):
        grade = cell.get("metadata", {}).get("nbgrader", {}).get("grade", False)
        if not grade and any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            bad.append(f"单元格 {i}：{joined(cell['source'])[:80]!r}")
    return bad


def ungraded(course, assignment, name, log=""):
    """交了、却没有自动评分结果的提交：[(学生, 原因)]（原因取自 nbgrader 的输出里提到这个学生的那几行）。"""
    course, out = Path(course), []
    for sub in sorted((course / "submitted").glob(f"*/{assignment}/{name}.ipynb")):
        student = sub.parts[-3]
        if not (course / "autograded" / student / assignment / f"{name}.ipynb").exists():
            lines = [l.strip() for l in log.splitlines() if student in l or "Error" in l or "不评分" in l]
            out.append((student, "；".join(lines[-3:]) or "nbgrader 没有写出评分结果（见 .nbgrader.log）"))
    return out


def grade_assignment(course, assignment, name, extra=None, first=()):
    """
    一份作业的整个评分流程（课程 course 里）：generate_assignment → 交作业 → autograde（所有学生一次）
    → generate_feedback → export。

    【思路】交的作业：solution（没动过的学生版，答案单元格和问答填上教师的答案）、untouched（没动过的学生版），
        再加上 extra(solution) 返回的 {学生: notebook}（例如由教师的答案改出来的错误版本）。
        autograde 有提交没评成时不中断：没评成的列在 ungraded 里（学生和原因）。first 里的学生先单独评分
        （按这个顺序），其余的再一起评：测试用它保证作弊的提交排在诚实的提交前面。
    【返回】dict：released（学生版）、full（{grade_id: 满分}）、scores（{学生: {grade_id: 得分}}）、
        manual（{学生: [还要老师手工评分的 grade_id]}）、csv（nbgrader export 的成绩表）、ungraded、course、seconds
    """
    course = Path(course)
    released = read_nb(generate(course) / assignment / f"{name}.ipynb")
    instructor = read_nb(COURSE / "source" / assignment / f"{name}.ipynb")
    solution = filled(released, instructor)
    for student, nb in {"solution": solution, "untouched": released, **(extra(solution) if extra else {})}.items():
        submit(course, student, assignment, name, nb)
    start = time.perf_counter()
    runs = [nbgrader(course, "autograde", assignment, "--force", "--student", student, check=False) for student in first]
    runs.append(nbgrader(course, "autograde", assignment, check=False))    # 其余的（已经评过的跳过）
    seconds = time.perf_counter() - start
    for step in (["generate_feedback", assignment, "--force"], ["export", "--to", "grades.csv"]):
        nbgrader(course, *step)
    got, manual = scores(course, assignment, name)
    return {"released": released, "full": points(instructor), "scores": got, "manual": manual, "course": course,
            "csv": (course / "grades.csv").read_text(encoding="utf-8"), "seconds": seconds,
            "ungraded": ungraded(course, assignment, name, "".join(r.stdout + r.stderr for r in runs))}


def grade_all(root, names=(), extra=None, config="", first=()):
    """
    每份作业在 root/<作业>/ 里的一个课程副本中评分，几份作业同时进行（各用各的成绩库）。

    【思路】nbgrader autograde 一个接一个地运行学生的 notebook：三份作业放在一个课程里一次评完，省下几次
        nbgrader 的启动（每次约 4 秒 CPU），却要把全部提交排成一串；分开同时评分，最长的一串只有一份作业的提交。
    【参数】extra：{作业: 函数}，见 grade_assignment；config：见 copy_course；first：先评分的学生，见 grade_assignment
    【返回】{作业: grade_assignment 的结果}
    """
    from concurrent.futures import ThreadPoolExecutor

    picked = _pick(names)
    with ThreadPoolExecutor(max_workers=len(picked)) as pool:
        futures = {a: pool.submit(grade_assignment, copy_course(Path(root) / a, [a], config), a, name, (extra or {}).get(a),
                                  first)
                   for a, name in picked.items()}
        return {a: f.result() for a, f in futures.items()}


def score_table(results):
    """grade_all 的结果 → 一张文字表格：每行一份提交，每列一个评分单元格（得分/满分），最后是总分。"""
    lines = []
    for a, r in results.items():
        full = r["full"]
        head = f"{a:<5}{'提交':<26}" + "".join(f"{g:>32}" for g in full) + f"{'总分':>8}"
        lines += [head, "-" * (len(head) + 6)]
        for student, got in r["scores"].items():
            cells = "".join(f"{'待评' if got[g] is None or g in r['manual'][student] else f'{got[g]:g}/{full[g]:g}':>32}"
                            for g in full)
            total = sum(v for g, v in got.items() if v is not None and g not in r["manual"][student])
            lines.append(f"{'':<5}{student:<26}{cells}{f'{total:g}/{sum(full.values()):g}':>10}")
        lines.append("")
    return "\n".join(lines)


def auto(r, student):
    """一份提交自动评分的部分：{grade_id: 得分}（去掉要老师手工评分的问答）。"""
    return {g: v for g, v in r["scores"][student].items() if g not in r["manual"]["solution"]}


def grade(names=(), keep=None):
    """
    教师的答案自动评分的部分应得满分，没动过的学生版应得 0 分。
    返回 (分数表 + 没评成的提交 + 还要手工评分的部分和评分要点 + nbgrader export 的 CSV, 是否都符合预期)。
    """
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import sandbox
    from rubric import rubric_sheet

    kind, why = sandbox.isolation()
    if kind is None:
        return f"✗ 不评分：{why}", False
    with tempfile.TemporaryDirectory() as tmp:
        results = grade_all(keep or tmp, names)
    ok = all(auto(r, "solution") == {g: p for g, p in r["full"].items() if g in auto(r, "solution")}
             and not any(auto(r, "untouched").values()) and not r["ungraded"] for r in results.values())
    left = [f"{a} {student}：{'、'.join(gids)}" for a, r in results.items() for student, gids in r["manual"].items() if gids]
    failed = [f"{a} {student}：{why}" for a, r in results.items() for student, why in r["ungraded"]]
    csv = "".join(r["csv"] if i == 0 else r["csv"].split("\n", 1)[1] for i, r in enumerate(results.values()))
    rubrics = "\n".join(rubric_sheet(COURSE / "source" / a / f"{name}.ipynb") for a, name in _pick(names).items())
    return (f"隔离：{why}\n\n" + score_table(results)
            + ("\n✗ 没能自动评分的提交：\n  " + "\n  ".join(failed) if failed else "\n✓ 每份提交都自动评分了")
            + "\n\n还要老师在 formgrader 里手工评分（问答题）：\n  " + "\n  ".join(left)
            + "\n\n评分要点和参考答案（学生版里没有）：\n" + rubrics
            + "\n\nnbgrader export 的成绩（CSV）：\n" + csv), ok


def grade_class(n, names=()):
    """
    给 n 个学生的作业评分（每人交教师的答案，三份作业同时进行）：返回 (用时秒数, 分数不对的 [(作业, 学生)])。
    一个班的评分要多久：python tools/homework.py class 80。
    """
    def honest(solution):
        return {f"s{i:03d}": solution for i in range(n - 2)}       # solution、untouched 由 grade_assignment 自己交

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        results = grade_all(tmp, names, {a: honest for a in _pick(names)})
    seconds = time.perf_counter() - start
    wrong = [(a, student) for a, r in results.items() for student in r["scores"] if student != "untouched"
             and auto(r, student) != {g: p for g, p in r["full"].items() if g in auto(r, student)}]
    wrong += [(a, student) for a, r in results.items() for student, _ in r["ungraded"]]
    return seconds, wrong


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python tools/homework.py", description="作业：生成教师版、学生版，跑一遍评分")
    parser.add_argument("command", choices=["build", "release", "check", "grade", "class"])
    parser.add_argument("names", nargs="*", help="只处理这几份作业（例如 hw1）；默认全部。class 的第一个参数是学生人数")
    parser.add_argument("--keep", help="grade：把课程副本（成绩库、自动评分结果、反馈）留在这个文件夹里")
    args = parser.parse_args(argv)
    if args.command == "build":
        for a, name in _pick(args.names).items():
            print(f"教师版  {name}  运行 {build(a, name):.1f} 秒")
        return 0
    if args.command == "release":
        release(args.names)
        return 0
    if args.command == "check":
        problems = stale_releases(args.names)
        print("\n".join(f"✗ {p}" for p in problems) or "✓ 学生版都是最新的")
        return 1 if problems else 0
    if args.command == "class":
        n = int(args.names[0]) if args.names else 80
        seconds, wrong = grade_class(n, args.names[1:])
        print(f"{n} 个学生 × {len(_pick(args.names[1:]))} 份作业：评分用时 {seconds:.0f} 秒；"
              + ("每份都是满分（除了一份没动过的）" if not wrong else f"✗ 分数不对：{wrong}"))
        return 1 if wrong else 0
    start = time.perf_counter()
    table, ok = grade(args.names, Path(args.keep).resolve() if args.keep else None)
    print(table)
    print(f"{'✓ 教师的答案自动评分部分满分、没动过的学生版 0 分' if ok else '✗ 分数和预期不同'}"
          f"（用时 {time.perf_counter() - start:.0f} 秒）")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
