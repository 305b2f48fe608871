"""
测试共用的路径：仓库的根目录。测试文件在 tests/ 下面的几层文件夹里（unit/rl/、e2e/ ……），用 ROOT 就不用数
文件在第几层：`from paths import ROOT`（pyproject.toml 的 pythonpath 把 tests/ 放进 sys.path，background.py 也这样导入）。
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""仓库的根目录（pyproject.toml、Makefile、toyllm/ 所在的文件夹）。"""
