"""
仓库里的每个 notebook（讲课、作业教师版、学生版）在别人的电脑上打开时不显示"已修改"，也不带构建它的机器的信息。

【思路】文件里不存 language_info.version：那是构建机器的 Python 版本，和学生的无关。（注意：JupyterLab 打开
    notebook 时会把内核的 language_info（含版本号）写进去，所以不论存不存版本号，只要 Python 版本和构建机器
    不同，打开后都会显示"已修改"——这是 JupyterLab 的行为，文件本身做不到。）输出和元数据里的路径（/root/、/home/某人/、/work/、/tmp/）、主机名
    会泄露构建机器的信息，对学生也没有意义。tools/build_notebooks.py 的 normalise 负责去掉它们，这里逐个文件检查。
【边界】base64 编码的图片（image/png 等）不是文字，不检查（里面的字母碰巧拼出主机名不算）。
"""

import json
import re
import socket
import subprocess

import pytest

from paths import ROOT

# git 管理的 notebook（不含 .venv*、构建产物、nbgrader 评分时生成的文件）
NOTEBOOKS = sorted(ROOT / line for line in subprocess.run(
    ["git", "ls-files", "*.ipynb"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines())
MACHINE_PATHS = ("/root/", "/home/", "/work/", "/tmp/")
BINARY_MIME = re.compile(r"^(image/(png|jpeg|gif|webp)|application/pdf)$")


def _strings(value, key=""):
    """notebook JSON 里的全部文字（跳过 base64 图片），连同它所在的键。"""
    if isinstance(value, dict):
        for k, v in value.items():
            if not BINARY_MIME.match(k):
                yield from _strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)
    elif isinstance(value, str):
        yield key, value


def machine_traces(nb, host=None):
    """nb（dict）里指向某台机器的文字：list of (键, 找到的片段)。"""
    host = socket.gethostname() if host is None else host
    word = re.compile(rf"(?<![\w/+.-]){re.escape(host)}(?![\w/+=.-])") if host else None
    found = []
    for key, text in _strings(nb):
        found += [(key, p) for p in MACHINE_PATHS if p in text]
        if word and word.search(text):
            found.append((key, host))
    return found


def test_every_notebook_of_the_repository_is_scanned():
    names = {p.relative_to(ROOT).as_posix() for p in NOTEBOOKS}
    assert "notebooks/00_quickstart.ipynb" in names
    assert any(n.startswith("notebooks/homework/") for n in names)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_notebook_holds_nothing_of_the_machine_that_built_it(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert "version" not in nb["metadata"].get("language_info", {}), (
        f"{path.name} 的 language_info 里存了 Python 版本号：在别的 Python 上打开会显示已修改")
    assert machine_traces(nb) == [], f"{path.name} 里有构建机器的路径或主机名；请用 make notebooks 重新生成"


def test_the_scan_finds_paths_and_the_host_but_not_inside_images():
    out = {"output_type": "stream", "text": ["解释器 /home/ada/.venv/bin/python\n", "主机 lab-7\n"]}
    image = {"output_type": "display_data", "data": {"image/png": "/tmp/lab-7", "text/plain": "<Figure>"}}
    nb = {"metadata": {}, "cells": [{"cell_type": "code", "outputs": [out, image]}]}
    assert machine_traces(nb, host="lab-7") == [("text", "/home/"), ("text", "lab-7")]
    assert machine_traces(nb, host="lab-70") == [("text", "/home/")]
