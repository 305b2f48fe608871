"""
由 notebooks/homework/src/*.py 生成教师版作业 notebook，运行一遍、把输出存进去。

【思路】和讲课 notebook 的做法相同（scripts/build_notebooks.py）：notebook 先写成 percent 格式的 .py
    （`# %% [markdown]` 开始一个 markdown 单元格，`# %%` 开始一个代码单元格），方便修改和审阅；
    这里把它变成 .ipynb，在当前解释器的内核里、以 notebooks/homework/source/ 为工作目录从头运行，
    写到 notebooks/homework/source/<同名>.ipynb。

【可重复】单元格 id 由序号决定；不记录运行时间；language_info 去掉 Python 版本号；连续的同一种输出流
    （print 分几次到达）合成一段；
    不保存小部件状态，也不保存小部件的显示输出（没有状态的小部件输出打开时只会显示
    "model not found"，重新运行单元格才有意义）；JSON 格式由 notebook_bytes 固定。

【边界】需要 nbformat、nbconvert、ipykernel（开发依赖，pip install -e '.[dev]'）。任何单元格报错、
    有 stderr，或者检查单元格打印了 ✗ / "还没有实现"（教师版的答案必须全部通过），都不写文件。
"""

import re
import time
from pathlib import Path

from .release import SOURCE_DIR, notebook_bytes, _atomic_write

SRC_DIR = SOURCE_DIR.parent / "src"
"""作业的 percent 格式源文件（notebooks/homework/src/）。"""

MARKER = re.compile(r"^# %%(?P<rest>.*)$")
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def parse_source(text, name="<源文件>"):
    """
    把 percent 格式的源文本拆成单元格：list of (cell_type, source)。

    【边界】markdown 单元格里不以 "#" 开头的非空行、不认识的标记都报 ValueError；首尾空行去掉；空单元格丢掉。
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
            continue
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
        while body and not body[0].strip():
            body = body[1:]
        while body and not body[-1].strip():
            body = body[:-1]
        if body:
            out.append((kind, "\n".join(body)))
    if not out:
        raise ValueError(f"{name} 里没有任何单元格")
    return out


def make_notebook(cells):
    """由 (cell_type, source) 列表生成未运行的 notebook（nbformat 对象），单元格 id 为 cell-00、cell-01……"""
    import nbformat

    nb = nbformat.v4.new_notebook()
    for i, (kind, source) in enumerate(cells):
        new = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        nb.cells.append(new(source, id=f"cell-{i:02d}"))
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def _kernel_manager():
    """总是启动当前解释器（sys.executable）里的 ipykernel（和 nbval --nbval-current-env 一样）。"""
    import ipykernel.kernelspec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    class CurrentEnvSpecs(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):
            return self.kernel_spec_class(resource_dir=ipykernel.kernelspec.RESOURCES,
                                          **ipykernel.kernelspec.get_kernel_dict())

    return AsyncKernelManager(kernel_name=KERNELSPEC["name"], kernel_spec_manager=CurrentEnvSpecs())


def normalise(nb):
    """去掉每次运行都会变、又和内容无关的东西（见模块说明）。返回普通 dict。"""
    import json

    nb = json.loads(json.dumps(nb))
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
            if WIDGET_VIEW in out.get("data", {}):
                continue
            if out.get("output_type") in ("display_data", "execute_result"):
                out["metadata"] = {k: v for k, v in out.get("metadata", {}).items() if k != "needs_background"}
            if out.get("output_type") == "stream":
                out["text"] = "".join(out["text"]) if isinstance(out["text"], list) else out["text"]
                last = outs[-1] if outs else {}
                if last.get("output_type") == "stream" and last.get("name") == out.get("name"):
                    last["text"] += out["text"]          # 连续的同一种输出流合成一段（分几段到达取决于快慢）
                    continue
            outs.append(out)
        cell["outputs"] = outs
    return nb


def problems_in(nb):
    """运行后的教师版里不允许出现的东西：错误、stderr、没通过的检查。返回说明的列表。"""
    bad = []
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            text = out.get("text", "")
            text = "".join(text) if isinstance(text, list) else text
            if kind == "error":
                bad.append(f"单元格 {i}：错误 {out.get('ename')}: {out.get('evalue')}")
            elif kind == "stream" and out.get("name") == "stderr":
                bad.append(f"单元格 {i}：stderr 输出 {text[:300]!r}")
            elif kind == "stream" and ("✗" in text or "还没有实现" in text):
                bad.append(f"单元格 {i}：检查没有通过 {text[:300]!r}")
    return bad


def build(src, timeout=600):
    """
    生成并运行一个教师版作业 notebook，写到 notebooks/homework/source/<源文件名>.ipynb。

    【参数】src：notebooks/homework/src/ 下的 .py；timeout：每个单元格最多运行几秒
    【返回】(输出路径, 用时秒数)
    【边界】出错、有 stderr、检查没通过时抛 RuntimeError，不写文件。
    """
    from nbconvert.preprocessors import ExecutePreprocessor

    src = Path(src).resolve()
    nb = make_notebook(parse_source(src.read_text(encoding="utf-8"), src.name))
    ep = ExecutePreprocessor(timeout=timeout, kernel_name=KERNELSPEC["name"], record_timing=False,
                             allow_errors=True, store_widget_state=False)
    SOURCE_DIR.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    ep.preprocess(nb, {"metadata": {"path": str(SOURCE_DIR)}}, km=_kernel_manager())
    seconds = time.perf_counter() - start
    nb = normalise(nb)
    bad = problems_in(nb)
    if bad:
        raise RuntimeError(f"{src.name} 的输出有问题（没有写出 .ipynb）：\n  " + "\n  ".join(bad))
    out = SOURCE_DIR / (src.stem + ".ipynb")
    _atomic_write(out, notebook_bytes(nb))
    return out, seconds


def check_sources(src_dir=SRC_DIR, source_dir=SOURCE_DIR):
    """不运行，只检查每个教师版 .ipynb 的单元格（类型和源码）是否和 src/ 里的 .py 一致。返回问题列表。"""
    import json

    problems = []
    for src in sorted(Path(src_dir).glob("*.py")):
        out = Path(source_dir) / (src.stem + ".ipynb")
        if not out.exists():
            problems.append(f"缺少教师版 {out.name}；请运行 python -m toyllm.homework build")
            continue
        want = parse_source(src.read_text(encoding="utf-8"), src.name)
        cells = json.loads(out.read_text(encoding="utf-8"))["cells"]
        have = [(c["cell_type"], "".join(c["source"]) if isinstance(c["source"], list) else c["source"]) for c in cells]
        if want != have:
            problems.append(f"教师版 {out.name} 和源文件 {src.name} 不一致；请运行 python -m toyllm.homework build")
    return problems
