"""
由 notebooks/src/*.py 生成讲课 notebook：jupytext 读源文件，nbclient 在当前解释器的内核里从头运行，
整理掉随机器、随运行而变的东西，检查输出，写出 notebooks/<同名>.ipynb。

【思路】源文件是标准的 jupytext "percent" 格式（`# %% [markdown]` 开始一个 markdown 单元格，`# %%` 开始一个
    代码单元格；`%matplotlib inline` 这样的魔法命令在 .py 里写成 `# %matplotlib inline`；`# NBVAL_IGNORE_OUTPUT`
    只是代码里的一行注释，原样进入 notebook，由 nbval 读）。讲课源文件是 jupytext 的"标准写法"：
    jupytext 读进来再写出去一字不变（tests/notebooks/test_notebook_build.py 检查），所以也可以直接用 jupytext 打开、改、存。
    这里只做 jupytext 和 nbclient 不管的几件事：
    · read_source：jupytext 读源文件；第一个 `# %%` 之前只有注释的一段（给维护者的说明）不进入 notebook；
      markdown 单元格里没有以 "#" 开头的行报错（多半是忘了写 `# %%`，jupytext 会把代码悄悄当成文字）；
    · execute：nbclient 在**当前解释器**的 python3 内核里运行（和 nbval --nbval-current-env 一样）；
    · normalise：去掉随机器、随运行而变的东西——language_info 里的 Python 版本、运行时间、小部件状态、
      图片的 needs_background；输出里本机的路径（含家目录里的用户名）、主机名换成 <venv>、<repo>、~、<host>
      （例如 00 的环境检查单元格）；连续的同一种输出流合成一段；
    · output_problems：错误、stderr、警告、缺字不许保存。
    作业另有 tools/homework.py（jupytext + nbclient + nbgrader）。

【可重复】同一份源文件、同样的环境，重新生成的 .ipynb 逐字节相同：单元格 id 由序号决定（cell-00、cell-01……）；
    不记录运行时间；JSON 由 nbformat.write 写出（缩进 1、键排序）。

【用法】（在仓库根目录；需要构建依赖 pip install -e '.[build]'，make notebooks 会自动装）
    python tools/build_notebooks.py notebooks/src/02_gradient.py     # 生成并运行一个
    python tools/build_notebooks.py --all                             # notebooks/src/ 下的全部（make notebooks）
    python tools/build_notebooks.py --check --all                     # 只检查 .ipynb 的单元格是否和源文件一致

【边界】某个单元格报错、输出里有 stderr、"Warning"、缺字（"Glyph ... missing from font"）时，打印是哪个 notebook、
    哪个单元格，以非 0 退出，不写出 .ipynb。终端上可能出现内核自己的日志（例如 "Kernel is running over TCP"），
    那是内核进程的 stderr，不进入 notebook。
"""

import argparse
import json
import os
import re
import socket
import sys
import time
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOURCES = NOTEBOOKS / "src"
FORMAT = "py:percent"
"""源文件的 jupytext 格式。"""
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
"""写进 notebook 元数据的内核说明（和 Jupyter 默认的 python3 内核相同）。"""
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
"""小部件显示输出的 MIME 类型。"""
FORBIDDEN = ("Glyph", "missing from font", "Warning")
"""输出里不允许出现的字样（字体缺字、各种警告），和 tests/notebooks/test_notebooks.py 的检查一致。"""
MARKER = re.compile(r"^# %%(?P<rest>.*)$")


# =============================================================================
# 源文件 → 单元格
# =============================================================================
def parse_source(text, name="<源文件>"):
    """
    用 jupytext 把 percent 格式的源文本拆成单元格。

    【参数】text：源文件的全部文字；name：出错时说明是哪个文件
    【返回】list of (cell_type, source)，cell_type 是 "markdown" 或 "code"
    【边界】第一个 `# %%` 之前的一段（说明）丢掉；空单元格丢掉；markdown 单元格里不以 "#" 开头的非空行、
        markdown / 代码以外的单元格（例如 `# %% [raw]`）、一个单元格都没有，都报 ValueError。
    【例子】parse_source("说明\\n# %% [markdown]\\n# # 标题\\n#\\n# 文字\\n# %%\\nx = 1\\n")
        → [("markdown", "# 标题\\n\\n文字"), ("code", "x = 1")]
    """
    markdown = False
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = MARKER.match(line)
        if m:
            markdown = "[markdown]" in m.group("rest") or "[md]" in m.group("rest")
        elif markdown and line.strip() and not line.startswith("#"):
            raise ValueError(f"{name} 第 {lineno} 行：markdown 单元格里的每一行都要以 '# ' 开头，收到 {line!r}"
                             "（是不是忘了写 '# %%'？）")
    cells = jupytext.reads(text, fmt=FORMAT).cells
    if cells and not MARKER.match(text.lstrip().split("\n", 1)[0]) and not text.startswith("# ---"):
        cells = cells[1:]                 # 第一个标记之前的说明，不进入 notebook
    out = []
    for cell in cells:
        if cell.cell_type not in ("markdown", "code"):
            raise ValueError(f"{name}：不认识的单元格标记（{cell.cell_type}）；只能是 '# %%' 或 '# %% [markdown]'")
        if cell.source.strip():
            out.append((cell.cell_type, cell.source))
    if not out:
        raise ValueError(f"{name} 里没有任何单元格（需要 '# %%' 或 '# %% [markdown]' 标记）")
    return out


def make_notebook(cells):
    """由 (cell_type, source) 列表生成一个未运行的 nbformat v4 notebook；单元格 id 是 cell-00、cell-01……"""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}})
    for i, (kind, source) in enumerate(cells):
        new = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        nb.cells.append(new(source, id=f"cell-{i:02d}"))
    return nb


# =============================================================================
# 运行
# =============================================================================
def kernel_manager():
    """一个总是启动**当前解释器**（sys.executable）里 ipykernel 的内核管理器（和 nbval --nbval-current-env 一样）。"""
    import ipykernel.kernelspec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    class CurrentEnvSpecs(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):
            return self.kernel_spec_class(resource_dir=ipykernel.kernelspec.RESOURCES,
                                          **ipykernel.kernelspec.get_kernel_dict())

    return AsyncKernelManager(kernel_name=KERNELSPEC["name"], kernel_spec_manager=CurrentEnvSpecs())


def execute(nb, workdir, timeout=600, **options):
    """
    用 nbclient 在当前解释器的内核里、以 workdir 为工作目录从头运行 nb，输出存进 nb（原地修改）。

    【参数】options：交给 nbclient.NotebookClient 的其他选项（例如 coalesce_streams=True、store_widget_state=False）
    【返回】用时秒数
    【边界】单元格报错不中断运行（allow_errors=True），错误留在输出里，由 output_problems 找出来。
        内核在 x86-64 上用 OpenBLAS 的 Haswell 内核（toyllm.blas.pin_blas_kernel）：notebook 08 的数字在哪台机器上都一样。
    """
    from nbclient import NotebookClient

    from toyllm.blas import pin_blas_kernel
    pin_blas_kernel()

    Path(workdir).mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name=KERNELSPEC["name"], record_timing=False, allow_errors=True,
                   km=kernel_manager(), resources={"metadata": {"path": str(workdir)}}, **options).execute()
    return time.perf_counter() - start


def machine_strings():
    """
    输出里要换掉的本机信息：[(原文, 替换成)]，长的在前（.venv 在仓库里面时先换 .venv）。

    【例子】[("/work/venv", "<venv>"), ("/work/wt/tools", "<repo>"), ("/root", "~"), (主机名的正则, "<host>")]
    【边界】用户名出现在路径里（/home/某人）时随家目录一起换掉；单独的用户名不换（它可能就是一个普通的词）。
    """
    pairs = {sys.prefix: "<venv>", str(ROOT): "<repo>", os.path.expanduser("~"): "~"}
    pairs = sorted(((k, v) for k, v in pairs.items() if len(k) > 1), key=lambda kv: -len(kv[0]))
    host = socket.gethostname()
    return pairs + ([(re.compile(rf"(?<![\w/+.-]){re.escape(host)}(?![\w/+=.-])"), "<host>")] if host else [])


def scrub(text, pairs=None):
    """把 text 里的本机路径、用户名、主机名换成占位符（见 machine_strings）。"""
    for old, new in pairs if pairs is not None else machine_strings():
        text = old.sub(new, text) if isinstance(old, re.Pattern) else text.replace(old, new)
    return text


def _text(value):
    """输出里的文字（文件里可能存成一行一个字符串的列表）。"""
    return "".join(value) if isinstance(value, list) else value


def normalise(nb, drop_widget_views=False):
    """
    去掉随机器、随运行而变的东西，让重新生成的文件逐字节相同，也不带构建它的机器的信息。原地修改 nb，并返回它。

    【思路】notebook 元数据只留 kernelspec 和 language_info（去掉 Python 版本号）；单元格元数据去掉运行时间；
        图片输出去掉 needs_background；文字输出里的本机信息换成占位符（scrub）；连续的同一种输出流合成一段。
    【参数】drop_widget_views：是否丢掉小部件的显示输出（没有保存状态的小部件打开时只会显示 "model not found"）。
        不丢时 model_id 换成空字符串：JupyterLab 遇到空的 model_id 就不显示它（例如 tqdm 的进度条），
        model_id 每次运行都不同，换掉以后文件逐字节相同；nbval 本来就不比较这一项，只比较 text/plain
    """
    info = {k: v for k, v in nb["metadata"].get("language_info", {}).items() if k != "version"}
    nb["metadata"] = {"kernelspec": nb["metadata"].get("kernelspec", dict(KERNELSPEC)), "language_info": info}
    pairs = machine_strings()
    for cell in nb["cells"]:
        cell["metadata"].pop("execution", None)
        if cell["cell_type"] != "code":
            continue
        outs = []
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if drop_widget_views and WIDGET_VIEW in data:
                continue
            if WIDGET_VIEW in data:                 # 状态不保存：空的 model_id 让 JupyterLab 把它藏起来，文件也逐字节相同
                data[WIDGET_VIEW] = {**data[WIDGET_VIEW], "model_id": ""}
            if "metadata" in out:
                out["metadata"].pop("needs_background", None)
            for mime in [m for m in data if m.startswith("text/")]:
                data[mime] = scrub(_text(data[mime]), pairs)
            if out.get("output_type") == "stream":
                out["text"] = scrub(_text(out["text"]), pairs)
                last = outs[-1] if outs else {}
                if last.get("output_type") == "stream" and last.get("name") == out.get("name"):
                    last["text"] += out["text"]
                    continue
            outs.append(out)
        cell["outputs"] = outs
    return nb


def output_problems(nb, forbidden=FORBIDDEN, failed_marks=()):
    """
    运行后的 notebook 里不允许保存的东西。

    【参数】forbidden：任何输出（连同元数据）里都不能出现的字样；
        failed_marks：打印出来就说明检查没通过的字样（作业教师版用 ("✗", "还没有实现")）
    【返回】说明文字（中文，指明第几个单元格）的列表；空列表表示没问题。错误输出、stderr 输出总是问题。
    """
    bad = []
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            kind, text = out.get("output_type"), _text(out.get("text", ""))
            if kind == "error":
                bad.append(f"单元格 {i}：错误 {out.get('ename')}: {out.get('evalue')}")
                continue
            if kind == "stream" and out.get("name") == "stderr":
                bad.append(f"单元格 {i}：stderr 输出 {text[:300]!r}")
                continue
            if kind == "stream" and any(mark in text for mark in failed_marks):
                bad.append(f"单元格 {i}：检查没有通过 {text[:300]!r}")
            dump = json.dumps(out, ensure_ascii=False)
            bad.extend(f"单元格 {i}：输出里有 {word!r}" for word in forbidden if word in dump)
    return bad


# =============================================================================
# 一个 notebook：生成、运行、检查、写出
# =============================================================================
def write_notebook(nb, out):
    """用 nbformat.write 写出（缩进 1、键排序、源码存成"每行一个字符串"的列表）。"""
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        nbformat.write(nb, f)


def build_notebook(src, out, write=write_notebook, workdir=None, timeout=600, executor_options=None,
                   drop_widget_views=False, forbidden=FORBIDDEN, failed_marks=()):
    """
    由一个源文件生成并运行 notebook，没有问题才写到 out。

    【参数】src：.py 源文件；out：要写的 .ipynb；write：写文件的函数 write(nb, out)；
        workdir：运行时的工作目录（默认是 out 所在的文件夹）；timeout：每个单元格最多运行几秒；
        executor_options：交给 nbclient 的其他选项；drop_widget_views、forbidden、failed_marks：见 normalise、output_problems
    【返回】(out, 用时秒数)
    【边界】源文件格式不对报 ValueError；运行出错、有 stderr、有不允许的字样时抛 RuntimeError，不写文件。
    """
    src, out = Path(src).resolve(), Path(out)
    nb = make_notebook(parse_source(src.read_text(encoding="utf-8"), src.name))
    seconds = execute(nb, out.parent if workdir is None else workdir, timeout, **(executor_options or {}))
    normalise(nb, drop_widget_views)
    bad = output_problems(nb, forbidden, failed_marks)
    if bad:
        raise RuntimeError(f"{src.name} 的输出有问题（没有写出 .ipynb）：\n  " + "\n  ".join(bad))
    write(nb, out)
    return out, seconds


def notebook_cells(path):
    """一个 .ipynb 的单元格：list of (cell_type, source)，可以和 parse_source 的结果直接比较。"""
    return [(c["cell_type"], _text(c["source"])) for c in json.loads(Path(path).read_text(encoding="utf-8"))["cells"]]


def source_status(src, out):
    """
    不运行，只看 out 的单元格（类型和源码）是否和源文件 src 一致。

    【返回】"ok"（一致）、"missing"（out 不存在）或 "stale"（不一致，需要重新生成）
    """
    src, out = Path(src), Path(out)
    if not out.exists():
        return "missing"
    return "ok" if notebook_cells(out) == parse_source(src.read_text(encoding="utf-8"), src.name) else "stale"


# =============================================================================
# 讲课 notebook 的命令行
# =============================================================================
def build(src, timeout=600):
    """生成并运行一个讲课 notebook（以 notebooks/ 为工作目录，合并输出流），写到 notebooks/<同名>.ipynb。"""
    return build_notebook(src, NOTEBOOKS / (Path(src).stem + ".ipynb"), timeout=timeout,
                          executor_options={"coalesce_streams": True})


def check(src):
    """不运行，只检查 notebooks/<同名>.ipynb 是否和源文件一致。返回问题列表（中文）。"""
    src = Path(src).resolve()
    out = NOTEBOOKS / (src.stem + ".ipynb")
    status = source_status(src, out)
    if status == "missing":
        return [f"{out.relative_to(ROOT)} 不存在；请运行 python tools/build_notebooks.py {src.relative_to(ROOT)}"]
    if status == "stale":
        return [f"{out.relative_to(ROOT)} 和 {src.relative_to(ROOT)} 不一致；请重新生成（make notebooks）"]
    return []


def main(argv=None):
    """命令行入口；返回退出码（有任何失败时为 1）。"""
    parser = argparse.ArgumentParser(description="由 notebooks/src/*.py 生成并运行讲课 notebook")
    parser.add_argument("sources", nargs="*", type=Path, help="notebooks/src/ 下的源文件")
    parser.add_argument("--all", action="store_true", help="处理 notebooks/src/ 下的全部 .py")
    parser.add_argument("--check", action="store_true", help="只检查 .ipynb 是否和源文件一致，不运行")
    parser.add_argument("--timeout", type=int, default=600, help="每个单元格最多运行几秒（默认 600）")
    args = parser.parse_args(argv)
    sources = sorted(SOURCES.glob("*.py")) if args.all else args.sources
    if not sources:
        parser.error("请给出源文件，或者用 --all")
    failed = 0
    for src in sources:
        try:
            if not src.exists():
                raise ValueError(f"找不到 {src}")
            if args.check:
                problems = check(src)
                if problems:
                    raise ValueError("\n".join(problems))
                continue
            out, seconds = build(src, args.timeout)
        except (RuntimeError, ValueError) as e:
            print(e, file=sys.stderr)
            failed += 1
            continue
        print(f"{out.relative_to(ROOT)}  运行 {seconds:.1f} 秒")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
