"""
由 percent 格式的 .py 源文件生成 notebook、从头运行一遍、把输出存进去。
讲课 notebook（scripts/build_notebooks.py）和作业的教师版（python -m toyllm.homework build）共用这一份实现。

【思路】notebook 是 JSON，改起来、审起来都不方便；所以每个 notebook 先写成一个普通的 .py 文件，
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
    然后用 nbformat 生成 notebook（parse_source、make_notebook），用 nbconvert 的 ExecutePreprocessor
    在**当前解释器**的 python3 内核里、以指定的文件夹为工作目录从头运行（execute），
    去掉每次运行都会变的东西（normalise），检查输出（output_problems），没问题才写文件（build_notebook）。
    讲课和作业只在几个选项上不同（输出流怎样合并、要不要丢掉小部件输出、还要拒绝哪些字样、怎样写文件），
    由调用者传进来。

【可重复】同一份源文件、同样的环境，重新生成的 .ipynb 逐字节相同：单元格 id 由序号决定（不是随机的）；
    不记录运行时间（record_timing=False）；language_info 里去掉 Python 的版本号；不保存小部件状态；
    JSON 的格式由写文件的函数固定（缩进 1、键排序）。

【边界】生成和运行需要 nbformat、nbconvert、ipykernel（开发依赖，pip install -e '.[dev]'）。
    它们只在用到的函数里面才 import，所以没装它们时 import 这个模块、检查单元格是否同步（source_status）
    都照常工作。运行时终端上可能出现内核自己的日志（例如 "[IPKernelApp] WARNING | Kernel is running over
    TCP ..."），那是内核进程的 stderr，不会进入 notebook，可以不管。

【Python 小知识】import 写在函数里面时，只有函数真的被调用才会去找那个包；
    包没装也不影响模块里别的函数。第二次 import 同一个包几乎不花时间（sys.modules 里已经有了）。
"""

import json
import re
import time
from pathlib import Path

MARKER = re.compile(r"^# %%(?P<rest>.*)$")
"""单元格标记：以 "# %%" 开头的一行，后面可以跟 " [markdown]"。"""
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
"""写进 notebook 元数据的内核说明（和 Jupyter 默认的 python3 内核相同）。"""
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
"""小部件显示输出的 MIME 类型。"""
FORBIDDEN = ("Glyph", "missing from font", "Warning")
"""输出里不允许出现的字样（字体缺字、各种警告），和 tests/test_notebooks.py 的检查一致。"""


# =============================================================================
# 源文件 → 单元格
# =============================================================================
def _strip_blank(lines):
    """去掉列表首尾的空行。"""
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def parse_source(text, name="<源文件>"):
    """
    把 percent 格式的源文本拆成单元格。

    【思路】逐行扫描：遇到标记就结束上一个单元格、开始新的；markdown 单元格的行去掉开头的 "# "。
    【参数】text：源文件的全部文字（str）；name：出错时说明是哪个文件
    【返回】list of (cell_type, source)，cell_type 是 "markdown" 或 "code"，source 是不带首尾空行的 str
    【边界】markdown 单元格里不以 "#" 开头的非空行报 ValueError（多半是忘了写 "# %%"）；
        不认识的标记（例如 "# %% [raw]"）也报错；空单元格被丢掉；一个单元格都没有时报 ValueError。
    【例子】parse_source("说明\\n# %% [markdown]\\n# # 标题\\n#\\n# 文字\\n# %%\\nx = 1\\n")
        → [("markdown", "# 标题\\n\\n文字"), ("code", "x = 1")]
    【Python 小知识】str.splitlines() 按各种换行符（\\n、\\r\\n）切开，结果里不带换行符。
    """
    cells, kind, body = [], None, []
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = MARKER.match(line)
        if m:
            if kind is not None:
                cells.append((kind, body))
            rest = m.group("rest").strip()
            if rest not in ("", "[markdown]"):
                raise ValueError(f"{name} 第 {lineno} 行：不认识的单元格标记 {line!r}；只能是 '# %%' 或 '# %% [markdown]'")
            kind, body = ("code" if rest == "" else "markdown"), []
            continue
        if kind is None:
            continue                      # 第一个标记之前的说明，不进入 notebook
        if kind == "markdown":
            if line == "#" or not line.strip():
                line = ""
            elif line.startswith("# "):
                line = line[2:]
            else:
                raise ValueError(f"{name} 第 {lineno} 行：markdown 单元格里的每一行都要以 '# ' 开头，收到 {line!r}")
        body.append(line)
    if kind is not None:
        cells.append((kind, body))
    out = []
    for kind, body in cells:
        body = _strip_blank(body)
        if body:                          # 空单元格丢掉
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


def execute(nb, workdir, timeout=600, name="notebook", **options):
    """
    在当前解释器的内核里、以 workdir 为工作目录从头运行 nb，把输出存进 nb（原地修改）。

    【参数】nb：make_notebook 的结果；workdir：工作目录（不存在时先建好）；timeout：每个单元格最多运行几秒；
        name：出错时说明是哪个 notebook；options：交给 ExecutePreprocessor 的其他选项
        （例如 coalesce_streams=True、store_widget_state=False）
    【返回】用时秒数（float）
    【边界】单元格报错不会中断运行（allow_errors=True），错误留在输出里，由 output_problems 找出来。
    """
    from nbconvert.preprocessors import CellExecutionError, ExecutePreprocessor

    ep = ExecutePreprocessor(timeout=timeout, kernel_name=KERNELSPEC["name"], record_timing=False,
                             allow_errors=True, **options)
    Path(workdir).mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        ep.preprocess(nb, {"metadata": {"path": str(workdir)}}, km=kernel_manager())
    except CellExecutionError as e:          # allow_errors=True 时不会发生，留着以防万一
        raise RuntimeError(f"{name} 运行失败：{e}") from None
    return time.perf_counter() - start


def normalise(nb, drop_widget_views=False):
    """
    去掉每次运行都会变、又和内容无关的东西，让重新生成的文件逐字节相同。原地修改 nb，并返回它。

    【思路】去掉 language_info 里的 Python 版本号、notebook 元数据里的小部件状态（widgets）、
        单元格元数据里的运行时间（execution）、图片输出元数据里的 needs_background；
        连续的同一种输出流（print 分几次到达，分几段取决于快慢）合成一段。
    【参数】nb：运行过的 notebook（nbformat 对象或普通 dict）；
        drop_widget_views：是否丢掉小部件的显示输出（没有保存状态的小部件打开时只会显示 "model not found"）
    【返回】nb
    """
    info = nb["metadata"].get("language_info", {})
    info.pop("version", None)
    nb["metadata"]["language_info"] = info
    nb["metadata"].pop("widgets", None)
    for cell in nb["cells"]:
        cell["metadata"].pop("execution", None)
        if cell["cell_type"] != "code":
            continue
        outs = []
        for out in cell.get("outputs", []):
            if drop_widget_views and WIDGET_VIEW in out.get("data", {}):
                continue
            if out.get("output_type") in ("display_data", "execute_result"):
                out["metadata"] = {k: v for k, v in out.get("metadata", {}).items() if k != "needs_background"}
            if out.get("output_type") == "stream":
                out["text"] = _text(out)
                last = outs[-1] if outs else {}
                if last.get("output_type") == "stream" and last.get("name") == out.get("name"):
                    last["text"] += out["text"]
                    continue
            outs.append(out)
        cell["outputs"] = outs
    return nb


def _text(out):
    """输出流的文字（文件里可能存成一行一个字符串的列表）。"""
    text = out.get("text", "")
    return "".join(text) if isinstance(text, list) else text


def output_problems(nb, forbidden=FORBIDDEN, failed_marks=()):
    """
    运行后的 notebook 里不允许保存的东西。

    【参数】nb：运行过的 notebook；forbidden：任何输出（连同元数据）里都不能出现的字样；
        failed_marks：打印出来就说明检查没通过的字样（作业教师版用 ("✗", "还没有实现")）
    【返回】说明文字（中文，指明第几个单元格）的列表；空列表表示没问题
    【边界】错误输出、stderr 输出总是问题。
    【例子】output_problems(nb) == [] 时才写文件；否则例如 ["单元格 3：错误 NameError: name 'x' is not defined"]
    """
    bad = []
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "error":
                bad.append(f"单元格 {i}：错误 {out.get('ename')}: {out.get('evalue')}")
                continue
            if kind == "stream" and out.get("name") == "stderr":
                bad.append(f"单元格 {i}：stderr 输出 {_text(out)[:300]!r}")
                continue
            if kind == "stream" and any(mark in _text(out) for mark in failed_marks):
                bad.append(f"单元格 {i}：检查没有通过 {_text(out)[:300]!r}")
            text = json.dumps(out, ensure_ascii=False)
            bad.extend(f"单元格 {i}：输出里有 {word!r}" for word in forbidden if word in text)
    return bad


# =============================================================================
# 一个 notebook：生成、运行、检查、写出
# =============================================================================
def build_notebook(src, out, write, workdir=None, timeout=600, executor_options=None, drop_widget_views=False,
                   forbidden=FORBIDDEN, failed_marks=()):
    """
    由一个 percent 格式的源文件生成并运行 notebook，没有问题才写到 out。

    【参数】src：.py 源文件；out：要写的 .ipynb；write：写文件的函数 write(nb, out)
        （讲课 notebook 用 nbformat.write，作业用 release.notebook_bytes）；
        workdir：运行时的工作目录（默认是 out 所在的文件夹）；timeout：每个单元格最多运行几秒；
        executor_options：交给 ExecutePreprocessor 的其他选项；drop_widget_views、forbidden、failed_marks：
        见 normalise 和 output_problems
    【返回】(out, 用时秒数)
    【边界】源文件格式不对报 ValueError；运行出错、有 stderr、有不允许的字样时抛 RuntimeError，不写文件。
    【例子】build_notebook("notebooks/src/02_gradient.py", "notebooks/02_gradient.ipynb", write=my_write)
    """
    src, out = Path(src).resolve(), Path(out)
    nb = make_notebook(parse_source(src.read_text(encoding="utf-8"), src.name))
    seconds = execute(nb, out.parent if workdir is None else workdir, timeout, src.name, **(executor_options or {}))
    normalise(nb, drop_widget_views)
    bad = output_problems(nb, forbidden, failed_marks)
    if bad:
        raise RuntimeError(f"{src.name} 的输出有问题（没有写出 .ipynb）：\n  " + "\n  ".join(bad))
    write(nb, out)
    return out, seconds


def notebook_cells(path):
    """读一个 .ipynb，返回它的单元格：list of (cell_type, source)，和 parse_source 的结果可以直接比较。只用标准库。"""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    return [(c["cell_type"], "".join(c["source"]) if isinstance(c["source"], list) else c["source"]) for c in cells]


def source_status(src, out):
    """
    不运行，只看 out 的单元格（类型和源码）是否和源文件 src 一致。

    【返回】"ok"（一致）、"missing"（out 不存在）或 "stale"（不一致，需要重新生成）
    【例子】source_status("notebooks/src/02_gradient.py", "notebooks/02_gradient.ipynb") → "ok"
    """
    src, out = Path(src), Path(out)
    if not out.exists():
        return "missing"
    want = parse_source(src.read_text(encoding="utf-8"), src.name)
    return "ok" if notebook_cells(out) == want else "stale"
