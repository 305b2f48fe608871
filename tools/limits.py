"""
设好资源上限再运行一个命令（tools/sandbox.py 用）：python limits.py 内存字节数 CPU秒数 -- 命令 参数……

【思路】resource.setrlimit 设地址空间（RLIMIT_AS）和 CPU 时间（RLIMIT_CPU）的上限，再用 os.execvp 换成那个命令：
    上限随进程传下去，同学的代码改不回来（只能往小改）。
    SIGINT 设成忽略再 exec：nbgrader 中断超时的单元格时向整个进程组发 SIGINT，bwrap 收到会退出、连带结束内核；
    忽略以后只有内核自己（ipykernel 执行代码时装回 Python 的处理函数）把它变成 KeyboardInterrupt。
"""

import os
import resource
import signal
import sys


def main(argv):
    memory, cpu, sep, *cmd = argv
    if sep != "--" or not cmd:
        raise SystemExit("用法：python limits.py 内存字节数 CPU秒数 -- 命令 参数……")
    resource.setrlimit(resource.RLIMIT_AS, (int(memory), int(memory)))
    resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu)))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
