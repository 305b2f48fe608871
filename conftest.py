"""
pytest 的全局设置（tests/ 和 notebooks/ 都用）。

在 x86-64 上把 OPENBLAS_CORETYPE 设成 Haswell（见 toyllm/blas.py）：这个进程里的测试和 nbval 之后启动的
notebook 内核都用同一种矩阵乘法内核，notebook 08 训练出来的数字和提交的逐位相同，不管这台机器的 CPU 是哪一种。
必须赶在 numpy 载入之前，所以直接按文件载入 toyllm/blas.py（它不 import numpy），不经过 import toyllm。
"""

import importlib.util
import os
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("_toyllm_blas", Path(__file__).parent / "toyllm" / "blas.py")
_blas = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_blas)
_blas.pin_blas_kernel()


def _background_modules(session):
    """
    有后台准备工作的测试文件（模块里的 BACKGROUND，见 tests/background.py），越早开始的（priority 大）排在越前面。
    只在一个进程跑测试时（make test 的默认）；pytest-xdist 的进程里是空的（每个进程各自就地准备）。
    """
    if os.environ.get("PYTEST_XDIST_WORKER") or session.config.getoption("numprocesses", None):
        return []
    modules = {id(m): m for m in (getattr(item, "module", None) for item in session.items)
               if m is not None and hasattr(m, "BACKGROUND")}
    return sorted(modules.values(), key=lambda m: -m.BACKGROUND.priority)


def pytest_collection_modifyitems(session, items):
    """
    测试的顺序。最慢的几件准备工作（作业评分、构建课程网站、在 JupyterLab 里量 notebook）大部分时间在等子进程：
    · 一个进程时（make test 的默认）：它们在运行测试之前就在后台开始（pytest_runtestloop，tests/background.py），
      它们的测试排到最后（越早开始的越靠后：作业评分最后），其余的测试在等待的同时运行；
    · 几个进程时（pytest-xdist，按收集的顺序分配）：标了 slow 的测试排到最前面，最慢的最先开始，不会让另一个进程空等。
    其余顺序不变。
    """
    background = _background_modules(session)
    if background:
        rank = {id(m): len(background) - i for i, m in enumerate(background)}
        items.sort(key=lambda item: rank.get(id(getattr(item, "module", None)), 0))
    else:
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session):
    if not session.config.option.collectonly:
        factory = session.config._tmp_path_factory
        factory.getbasetemp()       # 先在主线程里建好临时文件夹的根：几个线程同时第一次调用时会各建一个（mktemp 随后报错）
        for module in _background_modules(session):
            module.BACKGROUND.start(factory)
    yield
