"""
把 notebooks/src/ 里的 .py 源文件变成 notebooks/ 里的 .ipynb，并运行一遍、把输出存进去。

【思路】notebook 是 JSON，改起来、审起来都不方便；所以每个讲课 notebook 先写成一个普通的 .py 文件，
    用"单元格标记"分段（和 VS Code / Jupytext 的 percent 格式相同）：

        # %% [markdown]
        # # 02 · 梯度推导
        #
        # **你将学到**
        # - ……

        # %%
        import numpy as np
        print(np.arange(3))

    · `# %% [markdown]` 开始一个 markdown 单元格，下面每一行去掉开头的 "# "（或单独的 "#"）就是内容；
    · `# %%` 开始一个代码单元格，下面的行原样保留；
    · 第一个标记之前的内容（例如说明这个源文件的注释）不会进入 notebook；
    · 每个单元格首尾的空行会被去掉。
    然后用 nbformat 生成 notebook，用 nbconvert 的 ExecutePreprocessor 在**当前解释器**的 python3 内核里、
    以 notebooks/ 为工作目录从头运行，写回 notebooks/<同名>.ipynb。

【可重复】同一份源文件、同样的环境，重新生成的 .ipynb 逐字节相同：
    单元格 id 由序号决定（不是随机的）；不记录运行时间（record_timing=False）；
    language_info 里去掉 Python 的版本号；JSON 的格式由 nbformat.write 固定（缩进 1、键排序）。

【用法】（在仓库根目录）
    .venv/bin/python scripts/build_notebooks.py notebooks/src/02_gradient.py     # 生成并运行一个
    .venv/bin/python scripts/build_notebooks.py --all                             # notebooks/src/ 下的全部
    .venv/bin/python scripts/build_notebooks.py --check --all                     # 只检查 .ipynb 的单元格是否和源文件一致（不运行）

【边界】某个单元格报错时，脚本打印是哪个 notebook、哪个单元格，以非 0 退出，不写出 .ipynb。
    输出里出现 stderr、"Warning"、缺字（"Glyph ... missing from font"）也算失败：讲课 notebook 不允许保存它们。
    运行时终端上可能出现内核自己的日志（例如 "[IPKernelApp] WARNING | Kernel is running over TCP ..."），
    那是内核进程的 stderr，不会进入 notebook，可以不管。
"""

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOURCES = NOTEBOOKS / "src"

MARKER = re.compile(r"^# %%(?P<rest>.*)$")
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


# =============================================================================
# 源文件 → 单元格
# =============================================================================
def _strip_blank(lines):
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def parse_source(text, name="<源文件>"):
    """
    把 percent 格式的源文本拆成单元格。

    【返回】list of (cell_type, source)，cell_type 是 "markdown" 或 "code"
    【边界】markdown 单元格里不以 "#" 开头的行会报 ValueError（多半是忘了写 "# %%"）；
        未知的标记（例如 "# %% [raw]"）也报错；空单元格被丢掉。
    """
    cells, kind, body, lineno_of_cell = [], None, [], 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = MARKER.match(line)
        if m:
            if kind is not None:
                cells.append((kind, body, lineno_of_cell))
            rest = m.group("rest").strip()
            if rest == "":
                kind = "code"
            elif rest == "[markdown]":
                kind = "markdown"
            else:
                raise ValueError(f"{name} 第 {lineno} 行：不认识的单元格标记 {line!r}；只能是 '# %%' 或 '# %% [markdown]'")
            body, lineno_of_cell = [], lineno
            continue
        if kind is None:
            continue                      # 第一个标记之前的说明，不进入 notebook
        if kind == "markdown":
            if line == "#":
                line = ""
            elif line.startswith("# "):
                line = line[2:]
            elif line.strip():
                raise ValueError(f"{name} 第 {lineno} 行：markdown 单元格里的每一行都要以 '# ' 开头，收到 {line!r}")
            else:
                line = ""
        body.append(line)
    if kind is not None:
        cells.append((kind, body, lineno_of_cell))
    out = []
    for kind, body, _ in cells:
        body = _strip_blank(body)
        if body:
            out.append((kind, "\n".join(body)))
    if not out:
        raise ValueError(f"{name} 里没有任何单元格（需要 '# %%' 或 '# %% [markdown]' 标记）")
    return out


def make_notebook(cells):
    """由 (cell_type, source) 列表生成一个未运行的 nbformat v4 notebook；单元格 id 是 cell-00、cell-01……"""
    import nbformat

    nb = nbformat.v4.new_notebook()
    for i, (kind, source) in enumerate(cells):
        new = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        nb.cells.append(new(source, id=f"cell-{i:02d}"))
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


# =============================================================================
# 运行
# =============================================================================
def _kernel_manager():
    """一个总是启动**当前解释器**（sys.executable）里 ipykernel 的内核管理器（和 nbval --nbval-current-env 一样）。"""
    import ipykernel.kernelspec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    class CurrentEnvSpecs(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):
            return self.kernel_spec_class(resource_dir=ipykernel.kernelspec.RESOURCES,
                                          **ipykernel.kernelspec.get_kernel_dict())

    return AsyncKernelManager(kernel_name=KERNELSPEC["name"], kernel_spec_manager=CurrentEnvSpecs())


def _normalise(nb):
    """去掉每次运行都会变、又和内容无关的元数据，让重新生成的文件逐字节相同。"""
    info = nb.metadata.get("language_info", {})
    info.pop("version", None)
    nb.metadata["language_info"] = info
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for out in cell.get("outputs", []):
            if out.get("output_type") in ("display_data", "execute_result"):
                out["metadata"] = {k: v for k, v in out.get("metadata", {}).items() if k != "needs_background"}
    return nb


FORBIDDEN = ("Glyph", "missing from font", "Warning")
"""输出里不允许出现的字样（字体缺字、各种警告），和 tests/test_notebooks.py 的检查一致。"""


def _problems(nb):
    """运行后的 notebook 里不允许有的东西：错误、stderr、警告。返回说明文字的列表。"""
    bad = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                bad.append(f"单元格 {i}：错误 {out.get('ename')}: {out.get('evalue')}")
            elif out.get("output_type") == "stream" and out.get("name") == "stderr":
                bad.append(f"单元格 {i}：stderr 输出 {out.get('text', '')[:300]!r}")
            else:
                text = json.dumps(out, ensure_ascii=False)
                for word in FORBIDDEN:
                    if word in text:
                        bad.append(f"单元格 {i}：输出里有 {word!r}")
    return bad


def build(src, timeout=600):
    """
    生成并运行一个 notebook，写到 notebooks/<源文件名>.ipynb。

    【参数】src：notebooks/src/ 下的 .py 路径；timeout：每个单元格最多运行几秒
    【返回】(输出路径, 用时秒数)
    【边界】运行出错或有 stderr 时抛 RuntimeError，不写文件。
    """
    import nbformat
    from nbconvert.preprocessors import CellExecutionError, ExecutePreprocessor

    src = Path(src).resolve()
    nb = make_notebook(parse_source(src.read_text(encoding="utf-8"), src.name))
    ep = ExecutePreprocessor(timeout=timeout, kernel_name=KERNELSPEC["name"], record_timing=False,
                             coalesce_streams=True, allow_errors=True)
    start = time.perf_counter()
    try:
        ep.preprocess(nb, {"metadata": {"path": str(NOTEBOOKS)}}, km=_kernel_manager())
    except CellExecutionError as e:          # allow_errors=True 时不会发生，留着以防万一
        raise RuntimeError(f"{src.name} 运行失败：{e}") from None
    seconds = time.perf_counter() - start
    bad = _problems(nb)
    if bad:
        raise RuntimeError(f"{src.name} 的输出有问题（没有写出 .ipynb）：\n  " + "\n  ".join(bad))
    out = NOTEBOOKS / (src.stem + ".ipynb")
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        nbformat.write(_normalise(nb), f)
    return out, seconds


def check(src):
    """不运行，只检查 notebooks/<同名>.ipynb 的单元格（类型和源码）是否和源文件一致。返回问题列表。"""
    import nbformat

    src = Path(src).resolve()
    out = NOTEBOOKS / (src.stem + ".ipynb")
    if not out.exists():
        return [f"{out.relative_to(ROOT)} 不存在；请运行 python scripts/build_notebooks.py {src.relative_to(ROOT)}"]
    want = parse_source(src.read_text(encoding="utf-8"), src.name)
    have = [(c.cell_type, c.source) for c in nbformat.read(out, as_version=4).cells]
    if want != have:
        return [f"{out.relative_to(ROOT)} 和 {src.relative_to(ROOT)} 不一致；请重新生成"]
    return []


def main(argv=None):
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
