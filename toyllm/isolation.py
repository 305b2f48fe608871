"""
评分的隔离：老师评分时（tools/grader.py）用什么把同学交上来的代码关起来。python -m toyllm doctor 也报告它。

【思路】Linux 上 bubblewrap（命令 bwrap）能创建命名空间时用它；不能、而我们是 root 时，用 setpriv 换成用户 nobody；
    都不行时（macOS、Windows、普通用户又没有 bwrap）没有隔离，评分程序拒绝评分。
"""

import os
import shutil
import subprocess
import sys

SETPRIV = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--inh-caps=-all"]
"""setpriv 的参数：换成没有权限的用户 nobody、去掉附加组和所有能力（capabilities）。"""

def grading_isolation():
    """这台机器上评分用什么隔离：("bwrap" / "setpriv" / None, 说明)。None 时说明里写怎么得到隔离。"""
    if not sys.platform.startswith("linux"):
        return None, f"{sys.platform} 上没有评分用的隔离：请在 Linux 机器或 Linux 容器（例如 docker）里评分"
    if shutil.which("bwrap"):
        probe = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--die-with-parent", "true"],
                               capture_output=True, text=True)
        if probe.returncode == 0:
            return "bwrap", "bubblewrap：只读的文件系统、看不见别人的作业和 gradebook、单独的进程空间"
        why = f"bwrap 不能创建命名空间（{probe.stderr.strip() or probe.returncode}）"
    else:
        why = "没有 bwrap（Debian / Ubuntu：apt-get install bubblewrap）"
    if os.geteuid() == 0 and shutil.which("setpriv"):
        if subprocess.run(["setpriv", *SETPRIV, sys.executable, "-c", "import numpy"], capture_output=True).returncode:
            return None, (f"{why}；setpriv 换成用户 nobody 以后运行不了 {sys.executable}（nobody 读不到它所在的文件夹）。"
                          "请安装 bubblewrap，或者把 Python 和虚拟环境放在所有人可读的地方")
        return "setpriv", f"{why}；改用 setpriv 以用户 nobody 运行：写不了 root 的文件，但看得见别的进程、读得到公开的文件"
    return None, f"{why}。请安装 bubblewrap，或者以 root 评分（那时用 setpriv 换成用户 nobody）"
