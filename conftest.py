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


def _grading_in_background(session):
    """一个进程跑全部测试（make test 的默认）、而且选中了作业评分的测试时：评分在后台进行。"""
    return os.environ.get("PYTEST_XDIST_WORKER") is None and not session.config.getoption("numprocesses", None) \
        and any(item.module.__name__.endswith("test_grading") for item in session.items if hasattr(item, "module"))


def pytest_collection_modifyitems(session, items):
    """
    测试的顺序。作业评分（tests/test_grading.py）最慢，但它大部分时间在等子进程：
    · 一个进程时（make test 的默认）：评分在运行测试之前就在后台开始（pytest_runtestloop），它的测试排到最后，
      其余的测试在等待的同时运行；
    · 几个进程时（pytest-xdist，按收集的顺序分配）：标了 slow 的测试排到最前面，最慢的最先开始，不会让另一个进程空等。
    其余顺序不变。
    """
    if _grading_in_background(session):
        items.sort(key=lambda item: getattr(item, "module", None) is not None
                   and item.module.__name__.endswith("test_grading"))
    else:
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session):
    if _grading_in_background(session) and not session.config.option.collectonly:
        module = next(item.module for item in session.items
                      if hasattr(item, "module") and item.module.__name__.endswith("test_grading"))
        module.start_in_background(session.config._tmp_path_factory.mktemp("course"))
    yield
