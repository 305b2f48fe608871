"""
由 notebooks/homework/src/*.py 生成教师版作业 notebook，运行一遍、把输出存进去。

【思路】和讲课 notebook 共用同一份实现（toyllm.notebook_build，scripts/build_notebooks.py 也用它）：
    notebook 先写成 percent 格式的 .py（`# %% [markdown]` 开始一个 markdown 单元格，`# %%` 开始一个代码单元格），
    方便修改和审阅；这里把它变成 .ipynb，在当前解释器的内核里、以 notebooks/homework/source/ 为工作目录
    从头运行，写到 notebooks/homework/source/<同名>.ipynb。作业和讲课不同的只有几个选项：
    · 连续的同一种输出流（print 分几次到达）合成一段，其余输出保持原来的顺序；
    · 不保存小部件状态，也不保存小部件的显示输出（没有状态的小部件输出打开时只会显示
      "model not found"，重新运行单元格才有意义）；
    · 检查单元格打印了 ✗ / "还没有实现" 也算失败：教师版的答案必须全部通过；
    · JSON 由 release.notebook_bytes 写出（源码存成一整个字符串），先写临时文件再改名。

【边界】需要 nbformat、nbconvert、ipykernel（开发依赖，pip install -e '.[dev]'）。任何单元格报错、
    有 stderr、有警告或缺字（toyllm.notebook_build.FORBIDDEN），或者检查没有通过，都不写文件。
"""

from pathlib import Path

from tools.build_notebooks import build_notebook, parse_source, source_status
from .release import SOURCE_DIR, _atomic_write, notebook_bytes

__all__ = ["SRC_DIR", "FAILED_MARKS", "build", "check_sources", "parse_source"]

SRC_DIR = SOURCE_DIR.parent / "src"
"""作业的 percent 格式源文件（notebooks/homework/src/）。"""
FAILED_MARKS = ("✗", "还没有实现")
"""检查单元格打印出这些字样，说明教师版的答案没有通过检查。"""


def _write(nb, out):
    """按 notebook_bytes 的固定格式写出教师版（先写临时文件再改名）。"""
    _atomic_write(out, notebook_bytes(nb))


def build(src, timeout=600):
    """
    生成并运行一个教师版作业 notebook，写到 notebooks/homework/source/<源文件名>.ipynb。

    【参数】src：notebooks/homework/src/ 下的 .py；timeout：每个单元格最多运行几秒
    【返回】(输出路径, 用时秒数)
    【边界】出错、有 stderr、检查没通过时抛 RuntimeError，不写文件。
    """
    return build_notebook(src, SOURCE_DIR / (Path(src).stem + ".ipynb"), _write, timeout=timeout,
                          executor_options={"store_widget_state": False}, drop_widget_views=True,
                          failed_marks=FAILED_MARKS)


def check_sources(src_dir=SRC_DIR, source_dir=SOURCE_DIR):
    """不运行，只检查每个教师版 .ipynb 的单元格（类型和源码）是否和 src/ 里的 .py 一致。返回问题列表。"""
    problems = []
    for src in sorted(Path(src_dir).glob("*.py")):
        out = Path(source_dir) / (src.stem + ".ipynb")
        status = source_status(src, out)
        if status == "missing":
            problems.append(f"缺少教师版 {out.name}；请运行 python -m toyllm.homework build")
        elif status == "stale":
            problems.append(f"教师版 {out.name} 和源文件 {src.name} 不一致；请运行 python -m toyllm.homework build")
    return problems
