"""
由教师版作业 notebook 生成学生版：去掉答案、清空输出（nbgrader 的约定）。

【思路】教师版 notebook 里，答案写在两行标记之间：

        def grad_log_softmax(logits, action):
            ### BEGIN SOLUTION
            p = softmax(logits)
            ...
            ### END SOLUTION

    学生版把这一段（连同两行标记）换成两行"桩"，缩进和 BEGIN 那一行相同：

        def grad_log_softmax(logits, action):
            # YOUR CODE HERE
            raise NotImplementedError()

    markdown 单元格里的答案换成 "YOUR ANSWER HERE"。这和 nbgrader 的 ClearSolutions 完全一样，
    用 nbgrader 的老师可以直接拿教师版去用。然后清空所有输出和运行序号，去掉运行时记下的元数据
    （运行时间、小部件状态），写出的字节只由教师版决定：同一份教师版，生成的学生版逐字节相同，
    所以"提交的学生版是不是最新的"可以用一个测试来判断（见 check_release）。

【用法】（在仓库根目录）
    python -m toyllm.homework release      # 重新生成 notebooks/homework/release/ 下的学生版
    python -m toyllm.homework check        # 只检查，不写文件；不一致时以非 0 退出

【Python 小知识】notebook 文件就是 JSON：{"cells": [...], "metadata": {...}, "nbformat": 4, ...}，
    每个单元格有 cell_type、source、metadata，代码单元格还有 outputs 和 execution_count。
    所以这里只用标准库的 json 就够了，不需要 nbformat。
"""

import json
import os
import re
import tempfile
from pathlib import Path

BEGIN_SOLUTION = "BEGIN SOLUTION"
END_SOLUTION = "END SOLUTION"
CODE_STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")
MARKDOWN_STUB = ("YOUR ANSWER HERE",)

_REPO = Path(__file__).resolve().parents[2]
SOURCE_DIR = _REPO / "notebooks" / "homework" / "source"
"""教师版 notebook 所在的文件夹（仓库里的 notebooks/homework/source/）。"""
RELEASE_DIR = _REPO / "notebooks" / "homework" / "release"
"""学生版 notebook 所在的文件夹（仓库里的 notebooks/homework/release/）。"""

_CELL_METADATA_DROP = ("execution", "collapsed", "scrolled")


class ReleaseError(ValueError):
    """教师版 notebook 的答案标记不成对（嵌套、缺 END、多余的 END），或者文件不是 notebook。"""


# =============================================================================
# 一个单元格
# =============================================================================
def strip_solutions(source, cell_type="code", where="单元格"):
    """
    把一个单元格源码里 BEGIN SOLUTION … END SOLUTION 之间的答案换成桩。

    【思路】逐行扫描：遇到含 "BEGIN SOLUTION" 的行，按它的缩进写入桩，进入"答案区"；
        答案区里的行都丢掉；遇到含 "END SOLUTION" 的行，离开答案区（这一行也丢掉）。
    【参数】source：单元格源码（str）；cell_type："code" 或 "markdown"；where：出错时说明是哪个单元格
    【返回】(新源码, 是否替换过)
    【边界】嵌套的 BEGIN、没有 BEGIN 的 END、缺少 END 都报 ReleaseError（中文说明是哪个单元格、第几行）。
        没有标记的单元格原样返回。
    【例子】
        strip_solutions("def f():\\n    ### BEGIN SOLUTION\\n    return 1\\n    ### END SOLUTION")
        → ("def f():\\n    # YOUR CODE HERE\\n    raise NotImplementedError()", True)
    【Python 小知识】re.match(r"\\s*", line).group(0) 取出行首的空白（空格或 tab），就是这一行的缩进。
    """
    if not isinstance(source, str):
        raise TypeError(f"source 必须是字符串，收到 {type(source).__name__}")
    if cell_type not in ("code", "markdown", "raw"):
        raise ValueError(f"cell_type 必须是 'code'、'markdown' 或 'raw' 之一，收到 {cell_type!r}")
    stub = CODE_STUB if cell_type == "code" else MARKDOWN_STUB
    out, inside, replaced, begin_line = [], False, False, 0
    for lineno, line in enumerate(source.split("\n"), start=1):
        if BEGIN_SOLUTION in line:
            if inside:
                raise ReleaseError(f"{where} 第 {lineno} 行：答案区里又出现了 BEGIN SOLUTION"
                                   f"（第 {begin_line} 行的 BEGIN SOLUTION 还没有 END SOLUTION）")
            inside, replaced, begin_line = True, True, lineno
            indent = re.match(r"\s*", line).group(0)
            out.extend(indent + s for s in stub)
        elif END_SOLUTION in line:
            if not inside:
                raise ReleaseError(f"{where} 第 {lineno} 行：END SOLUTION 前面没有 BEGIN SOLUTION")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ReleaseError(f"{where} 第 {begin_line} 行的 BEGIN SOLUTION 没有对应的 END SOLUTION")
    return "\n".join(out), replaced


def _source_text(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _split_lines(text):
    """nbformat 写文件时的习惯：源码存成"每行一个字符串"的列表（保留换行符）。"""
    return text.splitlines(keepends=True)


# =============================================================================
# 一个 notebook
# =============================================================================
def release_notebook(nb, name="notebook"):
    """
    由教师版 notebook（已经读成 dict）生成学生版 dict。不修改传进来的 nb。

    【思路】每个单元格：去掉答案（strip_solutions）；代码单元格清空 outputs、execution_count 设为 None；
        去掉单元格元数据里运行时记下的 execution（时间）等；notebook 元数据去掉 widgets（小部件状态）。
    【参数】nb：notebook 的 dict（json.load 的结果）；name：出错时说明是哪个 notebook
    【返回】新的 dict
    【边界】不是 nbformat 4 的 notebook 报 ReleaseError；答案标记不成对报 ReleaseError。
    【Python 小知识】json.loads(json.dumps(x)) 是复制嵌套 dict / list 的简单办法（深拷贝）。
    """
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list) or nb.get("nbformat") != 4:
        raise ReleaseError(f"{name} 不是 nbformat 4 的 notebook（需要 'cells' 列表和 \"nbformat\": 4）")
    nb = json.loads(json.dumps(nb))
    nb.setdefault("metadata", {}).pop("widgets", None)
    for i, cell in enumerate(nb["cells"]):
        kind = cell.get("cell_type")
        text, _ = strip_solutions(_source_text(cell), kind if kind in ("code", "markdown") else "raw",
                                  where=f"{name} 的第 {i} 个单元格")
        cell["source"] = _split_lines(text)
        meta = cell.get("metadata", {})
        for key in _CELL_METADATA_DROP:
            meta.pop(key, None)
        cell["metadata"] = meta
        if kind == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return nb


def notebook_bytes(nb):
    """
    把 notebook dict 写成字节：和 nbformat.write 相同的格式（缩进 1、键排序、不转义中文、末尾换行）。

    【思路】格式固定，同一个 dict 总是得到同样的字节，git 里也不会出现无意义的改动。
    """
    return (json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def release_bytes(path):
    """读一个教师版 .ipynb，返回它的学生版应有的字节。【边界】文件不是合法 JSON 时报 ReleaseError。"""
    path = Path(path)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ReleaseError(f"{path.name} 不是合法的 JSON（第 {e.lineno} 行）：{e.msg}") from None
    return notebook_bytes(release_notebook(nb, path.name))


def count_solutions(nb):
    """教师版 notebook 里一共有几段答案（BEGIN SOLUTION 的个数）。测试和 release 的汇报用。"""
    return sum(_source_text(c).count(BEGIN_SOLUTION) for c in nb.get("cells", []))


# =============================================================================
# 整个文件夹
# =============================================================================
def _sources(source_dir):
    source_dir = Path(source_dir)
    if not source_dir.is_dir():
        raise FileNotFoundError(f"找不到教师版 notebook 的文件夹 {source_dir}（请在仓库根目录运行）")
    return sorted(source_dir.glob("*.ipynb"))


def _atomic_write(path, data):
    """先写到同一文件夹里的临时文件，再改名：中途出错也不会留下写了一半的文件。"""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def release_all(source_dir=SOURCE_DIR, release_dir=RELEASE_DIR):
    """
    为 source_dir 里的每个教师版 .ipynb 生成学生版，写到 release_dir 里的同名文件。

    【参数】source_dir、release_dir：文件夹路径（默认是仓库里的 notebooks/homework/source 和 release）
    【返回】list of (学生版路径, 是否有改动)
    【边界】内容没变的文件不重写（修改时间不变）；release_dir 里多出来的、没有教师版的 .ipynb 不会被删除，
        但 check_release 会报告它。任何一个教师版出错时，一个文件都不写。
    """
    release_dir = Path(release_dir)
    planned = [(release_dir / src.name, release_bytes(src)) for src in _sources(source_dir)]
    results = []
    for dest, data in planned:
        changed = not dest.exists() or dest.read_bytes() != data
        if changed:
            _atomic_write(dest, data)
        results.append((dest, changed))
    return results


def check_release(source_dir=SOURCE_DIR, release_dir=RELEASE_DIR):
    """
    检查提交的学生版是否和教师版同步（不写任何文件）。

    【返回】问题说明的列表（中文）；空列表表示全部同步
    【例子】assert check_release() == []
    """
    release_dir = Path(release_dir)
    sources = _sources(source_dir)
    problems = []
    if not sources:
        problems.append(f"{source_dir} 里没有教师版 notebook")
    for src in sources:
        dest = release_dir / src.name
        try:
            want = release_bytes(src)
        except ReleaseError as e:
            problems.append(str(e))
            continue
        if not dest.exists():
            problems.append(f"缺少学生版 {dest.name}；请运行 python -m toyllm.homework release")
        elif dest.read_bytes() != want:
            problems.append(f"学生版 {dest.name} 和教师版不一致；请运行 python -m toyllm.homework release")
    names = {src.name for src in sources}
    if release_dir.is_dir():
        for extra in sorted(release_dir.glob("*.ipynb")):
            if extra.name not in names:
                problems.append(f"学生版文件夹里的 {extra.name} 没有对应的教师版；请删除它或补上教师版")
    return problems
