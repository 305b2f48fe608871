"""
评分时同学的代码在哪里运行：一个只读的沙盒（老师的工具，不在学生的包里）。

【思路】同学交上来的代码是不可信的。评分时它在两种进程里运行 —— nbgrader 执行整本 notebook 的内核（输出给老师和
    同学看），和评分程序给每个任务开的新进程（tools/grading_worker.py，分数只从这里来）—— 两种都用 wrap() 包起来：
        · Linux 上有 bubblewrap（Debian 的 bubblewrap 包，命令 bwrap）时：整个文件系统只读；/tmp、家目录、课程文件夹
          （别人交的作业、gradebook.db）换成空的临时文件夹，只把运行需要的（仓库、Python、这份作业的文件夹）只读地放回来；
          看不见别的进程（新的 PID 命名空间）；父进程结束它也结束。
        · 没有 bwrap、或者不能创建命名空间（有的容器不许），而老师是 root 时：用 setpriv 换成没有权限的用户 nobody 运行，
          它写不了 root 的文件（仓库、包、课程文件夹、gradebook.db）；看得见别的进程、能读所有人可读的文件。
        · 都没有时（macOS、Windows、普通用户又没有 bwrap）：isolation() 返回 None 和原因，评分程序拒绝评分。
    另外每个进程都有资源上限：内存（地址空间）MEMORY_BYTES、CPU 时间 CPU_SECONDS（tools/limits.py 设好再运行）。
【边界】沙盒挡住的是写：仓库、装好的包、评分程序、课程文件夹、gradebook。bwrap 下同学的代码也读不到别人的作业和成绩；
    setpriv 下读得到所有人可读的文件（课程文件夹的权限要老师自己收紧），网络也不隔离。
"""

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
"""这个仓库（评分程序和 toyllm 包都在这里）。"""
MEMORY_BYTES = 3 * 2 ** 30
"""每个进程的地址空间上限（3 GiB）：分配 4 GB 的数组会得到 MemoryError。内核和 numpy 本身约占 1 GiB 地址空间。"""
CPU_SECONDS = 900
"""每个进程的 CPU 时间上限（秒）：墙上时间的上限另外由 nbgrader（单元格）和评分程序（每次调用）管。"""


def isolation():
    """这台机器上用什么隔离同学的代码：("bwrap" / "setpriv" / None, 说明)；见 toyllm.isolation。"""
    from toyllm.isolation import grading_isolation

    return grading_isolation()


def _inside(path, dirs):
    return any(path == d or d in path.parents for d in dirs)


def _home():
    return Path(os.path.expanduser("~")).resolve()


def wrap(cmd, cwd, *, hide=(), show=(), writable=(), net=True, kind=None):
    """
    把命令 cmd（list）包进沙盒：返回新的命令（list）。

    【参数】cwd：进程的工作目录（只读地放进沙盒）；hide：另外要藏起来的文件夹（例如课程文件夹；换成空的）；
        show：藏起来的文件夹里又要只读放回来的路径（HOME、TMPDIR 指向沙盒里一个可写的空文件夹）；
        writable：沙盒里可写、外面也看得见的文件夹（内核和 nbgrader 通信用的 unix 套接字放在这里）；
        net：False 时连本机网络也没有（评分的新进程用管道通信，不需要网络）；kind：默认 isolation() 的结果
    【边界】没有隔离可用时报错（中文，说明怎么得到）。
    """
    kind = kind or isolation()[0]
    limits = [sys.executable, "-I", str(REPO / "tools" / "limits.py"), str(MEMORY_BYTES), str(CPU_SECONDS), "--"]
    if kind is None:
        raise RuntimeError("评分需要隔离同学的代码：" + isolation()[1])
    cwd = Path(cwd).resolve()
    if kind == "setpriv":
        from toyllm.isolation import SETPRIV

        return [*limits, "env", "HOME=/tmp", "TMPDIR=/tmp", "MPLCONFIGDIR=/tmp", "setpriv", *SETPRIV, *cmd]
    hidden = [Path("/tmp"), _home(), *(Path(h).resolve() for h in hide)]
    needed = [REPO, Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(sys.executable).resolve().parent,
              cwd, *(Path(s).resolve() for s in show)]
    args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-ipc",
            "--unshare-uts", "--die-with-parent"]
    if not net:
        args.append("--unshare-net")
    for h in sorted(set(hidden), key=lambda p: len(p.parts)):
        args += ["--tmpfs", str(h)]
    for s in sorted({p for p in needed if _inside(p, hidden) and p.exists()}, key=lambda p: len(p.parts)):
        args += ["--ro-bind", str(s), str(s)]
    for w in writable:
        args += ["--bind", str(Path(w).resolve()), str(Path(w).resolve())]
    scratch = "/dev/shm"                                 # --dev 给的新 /dev 里：一个空的、可写的临时文件夹
    # JPY_PARENT_PID：ipykernel 看父进程还在不在；新的 PID 命名空间里父进程号是 1，它会以为父进程没了而退出
    # （--die-with-parent 已经管了这件事）
    args += ["--tmpfs", scratch, "--unsetenv", "JPY_PARENT_PID", "--setenv", "HOME", scratch, "--setenv", "TMPDIR", scratch,
             "--setenv", "MPLCONFIGDIR", scratch, "--setenv", "IPYTHONDIR", scratch + "/.ipython",
             "--chdir", str(cwd), "--"]
    return limits + args + list(cmd)
