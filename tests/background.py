"""
慢的准备工作在后台先开始：make test 只用一个进程，但 nbgrader 评分、构建课程网站、把 notebook 转成 HTML 大部分时间
花在子进程里（或者在等死循环的超时），这段时间里别的测试可以照常运行。

【怎么用】测试文件定义 start_in_background(tmp_path_factory) 和 BACKGROUND_PRIORITY（数越大越早开始）；
    conftest.py 在运行任何测试之前调用它，并把这个文件的测试排到最后（越早开始的排得越后）。
    文件自己的 fixture 用 Background.result() 等它做完：拿到结果，或者在测试里重新抛出它的异常（包括 pytest.skip）。
    只跑这一个文件、或者用 pytest-xdist 的几个进程时，没有人调用 start_in_background，fixture 就地去做。
"""

import threading


class Background:
    """一件在后台线程里做的事：start(fn, *args) 开始，result() 等它做完，返回 fn 的结果或重新抛出它的异常。"""

    def __init__(self):
        self.thread, self.value, self.error = None, None, None

    @property
    def started(self):
        return self.thread is not None

    def start(self, fn, *args):
        def run():
            try:
                self.value = fn(*args)
            except BaseException as e:                # noqa: BLE001 —— 交给 result() 在测试里重新抛出
                self.error = e
        self.thread = threading.Thread(target=run, name=getattr(fn, "__name__", "background"), daemon=True)
        self.thread.start()

    def result(self):
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.value
