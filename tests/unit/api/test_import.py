"""
`import toyllm` 是轻的：不导入 matplotlib、ipywidgets；子模块在第一次用到时才导入（toyllm/__init__.py 的 __getattr__）。
导入用时由 tools/bench_import.py 打印（速度和机器有关，这里不计时）。
"""

import json
import os
import subprocess
import sys

import pytest

import toyllm

from paths import ROOT


def _fresh(code):
    """在一个新的 Python 进程里（PYTHONPATH 指向本仓库、空文件夹里）运行 code，返回它打印的 JSON。"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT / "toyllm" / "fonts", capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def test_import_toyllm_leaves_matplotlib_and_ipywidgets_out():
    loaded = _fresh("import sys, json, toyllm; "
                    "print(json.dumps([m for m in ('matplotlib', 'ipywidgets', 'toyllm.rl') if m in sys.modules]))")
    assert loaded == []


def test_submodules_are_imported_on_first_use():
    loaded = _fresh("import sys, json, toyllm; f = toyllm.rl.train; "
                    "print(json.dumps(['toyllm.rl' in sys.modules, 'matplotlib' in sys.modules]))")
    assert loaded == [True, False]
    from toyllm import plots
    assert toyllm.plots is plots and sys.modules["toyllm.plots"] is plots


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_thing"):
        toyllm.no_such_thing
    with pytest.raises(AttributeError):
        toyllm.__no_such_dunder__
