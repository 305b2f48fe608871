"""
矩阵乘法用哪一种 BLAS 内核：让小 transformer（notebook 08）在不同的机器上算出逐位相同的数。

【思路】numpy 的矩阵乘法交给 OpenBLAS。OpenBLAS 按 CPU 挑一种内核（AVX-512 的 SkylakeX、AVX2 的 Haswell……），
    不同的内核求和的顺序不同，float32 的结果最后一位会差一点。玩具模型不受影响；可小 transformer 训练几百步以后，
    这一点差别会长大到看得见（准确率不同）。所以在 x86-64 上一律用 Haswell 内核：所有带 AVX2 的机器
    （2013 年以后的 Intel、2015 年以后的 AMD）结果逐位相同，numpy 1.24 和 2.x 自带的 OpenBLAS 也相同。
    内核由环境变量 OPENBLAS_CORETYPE 决定，必须在 numpy 载入之前设好：Makefile 的每个目标（make lab 启动的
    JupyterLab 和它的内核也一样）、tests 的 conftest.py、tools/build_notebooks.py 都设了它。
    别的 CPU（例如 Apple 芯片）上 notebook 08 照样能运行，数字会略有不同，结论应当一样。
    另一件事：小 transformer 的矩阵很小，BLAS 只用一个线程更快，求和顺序也固定（one_blas_thread）。
【注意】这个模块不在载入时 import numpy 和 threadpoolctl（要在 numpy 载入之前用）。
"""

import functools
import os
import platform
import sys

BLAS_CORETYPE = "Haswell"
"""notebook 08 提交的数字是在哪种 OpenBLAS 内核上算出来的。"""


def is_x86_64():
    """这台机器是不是 x86-64（只有 x86-64 的 OpenBLAS 认识 Haswell 内核）。"""
    return platform.machine().lower() in ("x86_64", "amd64")


def pin_blas_kernel(env=None):
    """
    在 x86-64 上把 env（默认 os.environ）里的 OPENBLAS_CORETYPE 设成 BLAS_CORETYPE（已经设了别的值时不动）。

    【返回】env 里 OPENBLAS_CORETYPE 现在的值（不是 x86-64 时是 None）
    【边界】对这个进程自己，只有在 numpy 载入之前调用才有用；对之后启动的子进程（notebook 的内核）总是有用。
    【例子】tests/conftest.py 里：pin_blas_kernel()；之后 nbval 启动的内核都用 Haswell 内核
    """
    env = os.environ if env is None else env
    if not is_x86_64():
        return None
    return env.setdefault("OPENBLAS_CORETYPE", BLAS_CORETYPE)


def blas_kernel():
    """
    这个进程里 numpy 用的 BLAS：{"库": "openblas", "内核": "Haswell", "版本": "0.3.31"}；numpy 还没载入或查不到时返回 None。

    【例子】在 x86-64 上 blas_kernel()["内核"] == BLAS_CORETYPE 时，notebook 08 的数字和提交的一样
    """
    if "numpy" not in sys.modules:
        return None
    from threadpoolctl import threadpool_info
    for info in threadpool_info():
        if info.get("user_api") == "blas":
            return {"库": info.get("internal_api"), "内核": info.get("architecture"), "版本": info.get("version")}
    return None


def kernel_of(python, env, timeout=60):
    """
    另一个 Python（例如 notebook 的内核）在环境变量 env 下启动时，numpy 用的 BLAS：和 blas_kernel() 一样的 dict 或 None。

    【思路】内核由 OPENBLAS_CORETYPE 和 CPU 决定，只有真的启动那个解释器、载入 numpy 才知道（doctor 用它查 notebook 的内核）。
    【边界】解释器不存在时抛出 OSError，超时抛出 subprocess.TimeoutExpired；那个 Python 里没有 toyllm 时返回 None。
    """
    import json
    import subprocess
    code = "import json, numpy; from toyllm.blas import blas_kernel; print(json.dumps(blas_kernel()))"
    proc = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, encoding="utf-8", timeout=timeout)
    lines = proc.stdout.strip().splitlines()
    return json.loads(lines[-1]) if proc.returncode == 0 and lines else None


def one_blas_thread(fn):
    """
    让 fn 运行时 BLAS 只用一个线程（threadpoolctl）。

    【思路】小 transformer 的矩阵很小（64 × 256）：多线程的开销比计算还大，几个进程抢 2 个核时一步会慢 6 倍；
        单线程时矩阵乘法的求和顺序也固定，同一个种子每次得到逐位相同的结果。
    【Python 小知识】functools.wraps 让包过的函数保留原来的名字和文档。
    """
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with _controller().limit(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapped


@functools.lru_cache(maxsize=None)
def _controller():
    """
    这个进程里载入的线程池（threadpoolctl.ThreadpoolController），第一次调用时查一次，以后直接用。

    【思路】threadpool_limits 每次都把进程载入的动态库重新找一遍（约 0.5 毫秒，RL 引擎一次训练才几十毫秒）；
        先查好再反复 limit 只要几微秒。numpy 的 OpenBLAS 在 import numpy 时就载入了，所以第一次调用时一定查得到。
    """
    from threadpoolctl import ThreadpoolController      # 到调用时才载入（这个模块不能先载入 numpy）
    return ThreadpoolController()


__all__ = ["BLAS_CORETYPE", "blas_kernel", "is_x86_64", "kernel_of", "one_blas_thread", "pin_blas_kernel"]
