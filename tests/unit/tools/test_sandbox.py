"""
评分的沙盒（tools/sandbox.py）：同学的代码写不了仓库和课程文件夹，分配不了 4 GB，看不见别人的作业；
这台机器上能用的每一种隔离（bubblewrap；root 时还有 setpriv）都试一遍。
"""

import os
import subprocess
import sys

import pytest
from paths import ROOT

from tools import sandbox
from toyllm import isolation

PROBE = """
import os, sys, numpy as np
repo, course = sys.argv[1], sys.argv[2]
for path in (os.path.join(repo, "tools", "grader.py"), os.path.join(repo, "toyllm", "__init__.py"),
             os.path.join(course, "gradebook.db")):
    try:
        with open(path, "a") as f:
            f.write("# 改过了")
        print("写进去了", path)
    except OSError as e:
        print("写不了", type(e).__name__)
try:
    np.ones(2 ** 29)
    print("分配了 4 GB")
except MemoryError:
    print("MemoryError")
print("看得见别人的作业" if os.path.exists(os.path.join(course, "submitted", "someone.txt")) else "看不见别人的作业")
"""


def kinds():
    """这台机器上能用的隔离。setpriv 只在 root、并且用户 nobody 运行得了这个 Python 时能用。"""
    kind, _ = isolation.grading_isolation()
    out = [kind] if kind else []
    runs = subprocess.run(["setpriv", *isolation.SETPRIV, sys.executable, "-c", "import numpy"],
                          capture_output=True).returncode == 0 \
        if os.geteuid() == 0 and os.path.exists("/usr/bin/setpriv") else False
    return out + (["setpriv"] if kind == "bwrap" and runs else [])


@pytest.mark.parametrize("kind", kinds() or [pytest.param(None, marks=pytest.mark.skip(reason="这台机器没有隔离"))])
def test_the_sandbox_stops_writes_and_big_allocations(kind, tmp_path):
    course = tmp_path / "course"
    (course / "submitted").mkdir(parents=True)
    (course / "submitted" / "someone.txt").write_text("别人的作业")
    (course / "gradebook.db").write_text("成绩")
    before = {p: p.read_bytes() for p in (ROOT / "tools" / "grader.py", ROOT / "toyllm" / "__init__.py",
                                          course / "gradebook.db")}
    mine = course / "autograded" / "me"
    mine.mkdir(parents=True)
    cmd = sandbox.wrap([sys.executable, "-c", PROBE, str(ROOT), str(course)], mine, hide=[course], kind=kind)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("写不了") >= 2, out.stdout           # 仓库里的两个文件
    # 课程文件夹：bwrap 换成了空的临时文件夹（写进去的东西随沙盒消失），setpriv 下没有写的权限；真的 gradebook 都没变
    assert "MemoryError" in out.stdout
    if kind == "bwrap":                     # setpriv 只挡写：文件权限允许的都读得到（README 写明了）
        assert "看不见别人的作业" in out.stdout
    assert {p: p.read_bytes() for p in before} == before


def test_no_isolation_means_no_grading(monkeypatch):
    monkeypatch.setattr(isolation.sys, "platform", "darwin")
    kind, why = isolation.grading_isolation()
    assert kind is None and "Linux" in why
    with pytest.raises(RuntimeError, match="评分需要隔离"):
        sandbox.wrap(["true"], ROOT, kind=None)
