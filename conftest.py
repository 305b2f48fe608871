"""
pytest 的全局设置（tests/ 和 notebooks/ 都用）。

在 x86-64 上把 OPENBLAS_CORETYPE 设成 Haswell（见 toyllm/blas.py）：这个进程里的测试和 nbval 之后启动的
notebook 内核都用同一种矩阵乘法内核，notebook 08 训练出来的数字和提交的逐位相同，不管这台机器的 CPU 是哪一种。
必须赶在 numpy 载入之前，所以直接按文件载入 toyllm/blas.py（它不 import numpy），不经过 import toyllm。
"""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("_toyllm_blas", Path(__file__).parent / "toyllm" / "blas.py")
_blas = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_blas)
_blas.pin_blas_kernel()


def pytest_collection_modifyitems(items):
    """标了 slow 的测试排到最前面，其余顺序不变：make test 的两个进程（pytest-xdist，按收集的顺序分配）里，
    最慢的作业评分（tests/test_grading.py）最先开始，不会最后才开始、让另一个进程空等。"""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
