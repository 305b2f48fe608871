"""
把 notebooks/src/ 里的 .py 源文件变成 notebooks/ 里的 .ipynb，并运行一遍、把输出存进去。

【思路】这里只是命令行；源文件的写法（percent 格式："# %% [markdown]" / "# %%" 分单元格）、生成、运行、
    去掉每次都会变的东西、检查输出，都在 toyllm/notebook_build.py 里，作业的教师版
    （python -m toyllm.homework build）也用同一份实现。讲课 notebook 特有的选项：
    · 以 notebooks/ 为工作目录运行；
    · 同一个单元格里同一种输出流合成一段（nbconvert 的 coalesce_streams）；
    · 用 nbformat.write 写出（缩进 1、键排序、源码存成"每行一个字符串"的列表）。

【可重复】同一份源文件、同样的环境，重新生成的 .ipynb 逐字节相同（见 toyllm/notebook_build.py）。

【用法】（在仓库根目录）
    .venv/bin/python tools/build_notebooks.py notebooks/src/02_gradient.py     # 生成并运行一个
    .venv/bin/python tools/build_notebooks.py --all                             # notebooks/src/ 下的全部
    .venv/bin/python tools/build_notebooks.py --check --all                     # 只检查 .ipynb 的单元格是否和源文件一致（不运行）

【边界】某个单元格报错时，脚本打印是哪个 notebook、哪个单元格，以非 0 退出，不写出 .ipynb。
    输出里出现 stderr、"Warning"、缺字（"Glyph ... missing from font"）也算失败：讲课 notebook 不允许保存它们。
    运行时终端上可能出现内核自己的日志（例如 "[IPKernelApp] WARNING | Kernel is running over TCP ..."），
    那是内核进程的 stderr，不会进入 notebook，可以不管。
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOURCES = NOTEBOOKS / "src"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from toyllm.notebook_build import build_notebook, source_status  # noqa: E402


def _write(nb, out):
    """用 nbformat.write 写出（格式由 nbformat 固定）。"""
    import nbformat

    with open(out, "w", encoding="utf-8", newline="\n") as f:
        nbformat.write(nb, f)


def build(src, timeout=600):
    """
    生成并运行一个讲课 notebook，写到 notebooks/<源文件名>.ipynb。

    【参数】src：notebooks/src/ 下的 .py 路径；timeout：每个单元格最多运行几秒
    【返回】(输出路径, 用时秒数)
    【边界】运行出错、有 stderr 或不允许的字样时抛 RuntimeError，不写文件。
    """
    return build_notebook(src, NOTEBOOKS / (Path(src).stem + ".ipynb"), _write, timeout=timeout,
                          executor_options={"coalesce_streams": True})


def check(src):
    """不运行，只检查 notebooks/<同名>.ipynb 的单元格（类型和源码）是否和源文件一致。返回问题列表。"""
    src = Path(src).resolve()
    out = NOTEBOOKS / (src.stem + ".ipynb")
    status = source_status(src, out)
    if status == "missing":
        return [f"{out.relative_to(ROOT)} 不存在；请运行 python tools/build_notebooks.py {src.relative_to(ROOT)}"]
    if status == "stale":
        return [f"{out.relative_to(ROOT)} 和 {src.relative_to(ROOT)} 不一致；请重新生成"]
    return []


def main(argv=None):
    """命令行入口；返回退出码（有任何失败时为 1）。"""
    parser = argparse.ArgumentParser(description="由 notebooks/src/*.py 生成并运行讲课 notebook")
    parser.add_argument("sources", nargs="*", help="notebooks/src/ 下的源文件")
    parser.add_argument("--all", action="store_true", help="处理 notebooks/src/ 下的全部 .py")
    parser.add_argument("--check", action="store_true", help="只检查 .ipynb 是否和源文件一致，不运行")
    parser.add_argument("--timeout", type=int, default=600, help="每个单元格最多运行几秒（默认 600）")
    args = parser.parse_args(argv)
    sources = sorted(SOURCES.glob("*.py")) if args.all else [Path(s) for s in args.sources]
    if not sources:
        parser.error("请给出源文件，或者用 --all")
    failed = 0
    for src in sources:
        if not src.exists():
            print(f"找不到 {src}", file=sys.stderr)
            failed += 1
            continue
        if args.check:
            problems = check(src)
            for p in problems:
                print(p, file=sys.stderr)
            failed += bool(problems)
            continue
        try:
            out, seconds = build(src, args.timeout)
        except (RuntimeError, ValueError) as e:
            print(e, file=sys.stderr)
            failed += 1
            continue
        print(f"{out.relative_to(ROOT)}  运行 {seconds:.1f} 秒")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
