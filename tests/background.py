"""
慢的准备工作在后台先开始：make test 只用一个进程，但 nbgrader 评分、构建课程网站、把 notebook 转成 HTML、在浏览器里
量 notebook 大部分时间花在子进程里（或者在等死循环的超时），这段时间里别的测试可以照常运行。纯 Python 的计算
（重跑预训练的前 50 步、重算讲义里网络的数字）用 process=True 放进另一个进程：它用第二个核，不和测试抢同一个 GIL，
并且降低优先级（nice 10），只用别人空出来的 CPU。

【怎么用】测试文件写 BACKGROUND = Background(准备函数, 临时文件夹名, priority)，fixture 里 BACKGROUND.get(tmp_path_factory)。
    conftest.py 在运行任何测试之前调用 BACKGROUND.start(...)（priority 越大越早开始），并把这个文件的测试排到最后
    （越早开始的排得越后）。get 等它做完：拿到结果，或者在测试里重新抛出它的异常（包括 pytest.skip）。
    只跑这一个文件、或者用 pytest-xdist 的几个进程时，没有人调用 start，get 就地去做。
    process=True 时准备函数在一个新启动（spawn）的 Python 进程里运行：它必须是模块顶层的函数，结果要能 pickle；
    环境变量（OPENBLAS_CORETYPE 等）和 sys.path 跟着传过去，所以算出的数和就地算的逐位相同。
"""

import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor


def _lower_priority():
    """
    另一个进程里的纯计算让着别的测试（nice 10）：它的测试排在最后，有的是时间；作业评分和主线程的测试才决定
    make test 要多久。优先级只影响什么时候轮到它，不影响算出来的数。没有 os.nice 的系统上什么也不做。
    """
    if hasattr(os, "nice"):
        os.nice(10)


class Background:
    """一件可以在后台先做的准备工作：fn(临时文件夹) → 结果（process=True 时在另一个进程里做）。"""

    def __init__(self, fn, folder, priority, process=False):
        self.fn, self.folder, self.priority, self.process = fn, folder, priority, process
        self.thread, self.value, self.error = None, None, None

    def start(self, tmp_path_factory):
        """在后台线程里开始 fn(新的临时文件夹)；process=True 时这个线程只是等另一个进程做完。"""
        folder = tmp_path_factory.mktemp(self.folder)

        def run():
            try:
                if self.process:
                    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_lower_priority) as pool:
                        self.value = pool.submit(self.fn, folder).result()
                else:
                    self.value = self.fn(folder)
            except BaseException as e:                # noqa: BLE001 —— 交给 get() 在测试里重新抛出
                self.error = e
        self.thread = threading.Thread(target=run, name=self.folder, daemon=True)
        self.thread.start()

    def get(self, tmp_path_factory):
        """结果：后台已经开始时等它做完（出错就重新抛出），没开始时就地做。"""
        if self.thread is None:
            return self.fn(tmp_path_factory.mktemp(self.folder))
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.value
