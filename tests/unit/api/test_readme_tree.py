"""
README 的「包的结构」那棵树和包里真有的模块一致：每个 .py 文件都列出来了，列出来的都存在（issue 40：树旧了没人发现）。

【规则】树里一行是 "├── 名字  说明"；一行可以写几个名字（用"、"分开）；以 / 结尾的是文件夹，它下面缩进的行是里面的文件，
    文件夹那一行代表它的 __init__.py。只读 README，不导入包，很快。
"""

import re

from paths import ROOT

PKG = ROOT / "toyllm"


def readme_tree(text):
    """README 里包的树：列出的路径（相对 toyllm/，文件夹以 / 结尾）的集合。"""
    block = text.split("### 包的结构", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    listed, folders = set(), []
    for line in block.strip().splitlines()[1:]:                       # 第一行是 toyllm/
        m = re.match(r"((?:│   |    )*)[├└]── (\S+)", line)
        assert m, f"README 的树里看不懂这一行：{line!r}"
        depth = len(m.group(1)) // 4
        del folders[depth:]
        for name in m.group(2).split("、"):
            listed.add("".join(folders) + name)
        if m.group(2).endswith("/"):
            folders.append(m.group(2))
    return listed


def package_modules():
    """包里的模块和文件夹：每个 .py（子包的 __init__.py 由文件夹代表）、每个文件夹（子包、字体、权重）。"""
    found = set()
    for path in PKG.rglob("*"):
        rel = path.relative_to(PKG).as_posix()
        if "__pycache__" in rel or (path.is_file() and path.suffix != ".py"):
            continue
        if path.name == "__init__.py" and path.parent != PKG:
            continue                                                  # 子包：文件夹那一行代表它
        found.add(rel + "/" if path.is_dir() else rel)
    return found


def test_readme_tree_lists_exactly_the_package_modules():
    listed = readme_tree((ROOT / "README.md").read_text(encoding="utf-8"))
    real = package_modules()
    assert not real - listed, f"包里有、README 的树里没有：{sorted(real - listed)}"
    assert not listed - real, f"README 的树里有、包里没有：{sorted(listed - real)}"


def test_readme_tree_parser_reads_folders_and_several_names_per_line():
    text = "### 包的结构\n\n```text\ntoyllm/\n├── a.py、b.py  两个\n├── rl/   文件夹\n│   └── c.py   里面\n└── d.py\n```\n"
    assert readme_tree(text) == {"a.py", "b.py", "rl/", "rl/c.py", "d.py"}
