"""
每一个内部链接、每一处"第几节"的引用都指向真的存在的东西（讲义、notebook、作业、README）。

【思路】学生在浏览器里点一个链接、照着"讲义 7.2"或"第 3 节"去找，就该找到。这里把四类文字都读进来：
    · lectures/*.md、README.md；
    · notebooks/src/*.py（jupytext 源，只看 markdown 单元格；渲染后的位置是 notebooks/NN_*.ipynb）；
    · notebooks/homework/src/*.py（渲染后在 notebooks/homework/release/hwN/）。
    然后检查：
    1. 相对链接 [文字](路径#锚点)：路径存在；有锚点时，锚点等于目标文件里某个标题按 GitHub 规则算出的锚点；
    2. 裸网址：必须写成 <https://…> 或 [文字](https://…)，否则渲染时网址会和后面的中文连在一起；
    3. 讲义的节号："讲义 7.2"、"（7.2 节）"、"第 6 讲第 2 节"、讲义里的"第 9 节"，都要有对应编号的标题；
    4. notebook 里的"第 N 节"（不带"讲义"）指本 notebook 的"## N."；"第 0K 个 notebook 第 N 节"指 notebook K 的"## N."；
    5. 节号后面跟着名字时（"第 4 节「梯度：…」"），名字必须和那个标题一字不差。
"""

import re

import jupytext
import pytest

from paths import ROOT

L06 = ROOT / "lectures" / "lecture06_scaling_rl.md"
NB_SRC = sorted((ROOT / "notebooks" / "src").glob("*.py"))
HW_SRC = sorted((ROOT / "notebooks" / "homework" / "src").glob("*.py"))
MD_FILES = sorted((ROOT / "lectures").glob("*.md")) + [ROOT / "README.md"]

LINK_RE = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*$", re.M)


# -----------------------------------------------------------------------------
# 读文字：每个来源 → (渲染后所在的目录, markdown 文字)
# -----------------------------------------------------------------------------
def _markdown_of_source(path):
    nb = jupytext.read(path)
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _rendered_dir(path):
    """jupytext 源渲染以后，notebook 所在的目录（相对链接从那里算）。"""
    if path.parent.name == "src" and path.parent.parent.name == "homework":
        return ROOT / "notebooks" / "homework" / "release" / path.stem.split("_")[0]
    if path.parent.name == "src":
        return ROOT / "notebooks"
    return path.parent


def _text(path):
    if path.suffix == ".py":
        return _markdown_of_source(path)
    if path.suffix == ".ipynb":
        import nbformat
        nb = nbformat.read(path, as_version=4)
        return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return path.read_text(encoding="utf-8")


SOURCES = MD_FILES + NB_SRC + HW_SRC


def _rel(path):
    return str(path.relative_to(ROOT))


def _without_code(text):
    """去掉代码块和行内代码、数学公式：它们里面的方括号不是链接。"""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
    return re.sub(r"\$[^$\n]*\$", "", text)


# -----------------------------------------------------------------------------
# 锚点：GitHub / jupyter 的规则
# -----------------------------------------------------------------------------
def github_anchor(title):
    """GitHub 给标题生成的锚点：小写；去掉标点（保留字母、数字、中日韩文字、空格、- 和 _）；空格变 -。"""
    t = re.sub(r"`|\*\*|\*|\$", "", title).strip().lower()
    t = "".join(ch for ch in t if ch.isalnum() or ch in " -_")
    return t.replace(" ", "-")


def headings(text):
    return [m.group(2) for m in HEADING_RE.finditer(re.sub(r"```.*?```", "", text, flags=re.S))]


def anchors_of(path):
    """标题的锚点，加上显式的 HTML 锚点 <a id="…"></a>（来源表 sources.md 的每一行用它）。"""
    text = _text(path)
    return {github_anchor(h) for h in headings(text)} | set(re.findall(r'<a id="([^"]+)"></a>', text))


def test_github_anchor_rule():
    assert github_anchor("6.1 一次 GRPO 训练") == "61-一次-grpo-训练"
    assert github_anchor("给老师") == "给老师"
    assert github_anchor("7. PPO 的裁剪、旧策略与 μ；KL 与 k1/k2/k3") == "7-ppo-的裁剪旧策略与-μkl-与-k1k2k3"


# -----------------------------------------------------------------------------
# 1. 相对链接和锚点
# -----------------------------------------------------------------------------
def _links(text):
    for m in LINK_RE.finditer(_without_code(text)):
        yield m.group(2) or m.group(3)


@pytest.mark.parametrize("path", SOURCES, ids=_rel)
def test_internal_links_resolve(path):
    base = _rendered_dir(path)
    bad = []
    for target in _links(_text(path)):
        if re.match(r"[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (base / file_part).resolve() if file_part else path
        if file_part and not dest.exists():
            bad.append(f"{target}：文件不存在（从 {_rel(base) if base != ROOT else '.'} 算）")
            continue
        if anchor and dest.suffix in (".md", ".ipynb", ".py") and anchor not in anchors_of(dest):
            bad.append(f"{target}：{dest.name} 里没有这个锚点")
    assert not bad, f"{_rel(path)} 里有坏链接：\n" + "\n".join(bad)


# -----------------------------------------------------------------------------
# 2. 裸网址
# -----------------------------------------------------------------------------
@pytest.mark.parametrize("path", SOURCES, ids=_rel)
def test_urls_are_delimited(path):
    text = re.sub(r"```.*?```", "", _text(path), flags=re.S)       # 先去掉代码块，再去掉行内代码
    text = re.sub(r"`[^`\n]*`", "", text)
    bare = [m.group(0) for m in re.finditer(r"(?<![(<])https?://[^\s)>]+", text)]
    assert not bare, f"{_rel(path)}：裸网址要写成 <网址> 或 [文字](网址)：{bare}"


# -----------------------------------------------------------------------------
# 3–5. 节号和节名
# -----------------------------------------------------------------------------
def numbered_headings(text):
    """{"7": "PPO 的裁剪…", "7.2": "μ = 1 时…"}：以编号开头的标题。"""
    out = {}
    for h in headings(text):
        m = re.match(r"(\d+(?:\.\d+)*)\.?\s+(.*)", h)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


LECTURE06 = numbered_headings(L06.read_text(encoding="utf-8"))
def _nb_key(path):
    """notebook 的编号："06_ppo_kl_dapo" → "06"，"06b_critic_gspo_cispo" → "06b"。"""
    return path.stem.split("_")[0]


NOTEBOOK_HEADINGS = {_nb_key(p): numbered_headings(_text(p)) for p in NB_SRC}

NUM = r"(\d+(?:\.\d+)?)"
NAME = r"(?:\s*「([^」]+)」)?"


def lecture_refs(text, own):
    """(编号, 名字或 None, 原文)：text 里指向讲义 06 的节号；own=True 表示 text 就是讲义 06 本身。"""
    refs = []
    pats = [rf"讲义\s*(?:第\s*)?{NUM}\s*(?:节)?{NAME}", rf"第 6 讲第\s*{NUM}\s*节{NAME}",
            rf"lecture06_scaling_rl\.md\)\s*第\s*{NUM}\s*节{NAME}", rf"（{NUM} 节）"]
    if own:
        pats += [rf"(?<!notebook \d\d )第\s*{NUM}\s*节{NAME}", rf"(?<![\d.])(?<!第 ){NUM} 节"]
    else:   # "对应讲义：…"那一行里的每个"第 N 节"都指讲义
        for line in re.findall(r"^.*对应讲义.*$", text, flags=re.M):
            refs += [(m.group(1), m.group(2), m.group(0)) for m in re.finditer(rf"第\s*{NUM}\s*节{NAME}", line)]
    for pat in pats:
        for m in re.finditer(pat, text):
            name = m.group(2) if m.lastindex and m.lastindex >= 2 else None
            refs.append((m.group(1), name, m.group(0)))
    return refs


def _check(refs, table, where):
    bad = []
    for num, name, raw in refs:
        if num not in table:
            bad.append(f"「{raw}」：没有编号为 {num} 的节")
        elif name is not None and name != table[num]:
            bad.append(f"「{raw}」：第 {num} 节的标题是「{table[num]}」")
    assert not bad, f"{where}：\n" + "\n".join(bad)


def test_lecture06_cites_its_own_sections():
    _check(lecture_refs(_without_code(L06.read_text(encoding="utf-8")), own=True), LECTURE06, "lecture06")


def test_lecture01_cites_lecture06_sections():
    text = (ROOT / "lectures" / "lecture01_toy_llm.md").read_text(encoding="utf-8")
    _check(lecture_refs(text, own=False), LECTURE06, "lecture01 → lecture06")


@pytest.mark.parametrize("path", NB_SRC + HW_SRC + [ROOT / "README.md"], ids=_rel)
def test_notebooks_cite_lecture_sections_by_their_numbers_and_names(path):
    text = _without_code(_text(path))
    _check(lecture_refs(text, own=False), LECTURE06, _rel(path))
    # 作业引用讲义时写出节号和名字；只写名字时，名字也必须是讲义里真有的标题
    for name in re.findall(r"lecture06_scaling_rl\.md\)[^\n]*?「([^」]+)」", text):
        assert name in LECTURE06.values(), f"{_rel(path)}：讲义里没有叫「{name}」的节"


@pytest.mark.parametrize("path", NB_SRC, ids=_rel)
def test_notebooks_cite_their_own_and_other_notebooks_sections(path):
    text = _without_code(_text(path))
    own = NOTEBOOK_HEADINGS[_nb_key(path)]
    bad = []
    for m in re.finditer(rf"第 ?(\d\d[a-z]?) ?个 notebook ?(?:的)?第 ?{NUM} ?节", text):
        other = NOTEBOOK_HEADINGS.get(m.group(1), {})
        if m.group(2) not in other:
            bad.append(f"「{m.group(0)}」：notebook {m.group(1)} 没有这一节")
    cleaned = re.sub(r"^.*对应讲义.*$", "", text, flags=re.M)
    cleaned = re.sub(rf"(讲义|第 6 讲|lecture06_scaling_rl\.md\))[^。\n]*?第\s*{NUM}\s*节", "", cleaned)
    cleaned = re.sub(rf"第 ?\d\d ?个 notebook ?(?:的)?第 ?{NUM} ?节", "", cleaned)
    for m in re.finditer(rf"第\s*{NUM}\s*节{NAME}", cleaned):
        if m.group(1) not in own:
            bad.append(f"「{m.group(0)}」：本 notebook 没有这一节（有 {sorted(own)}）")
        elif m.group(2) and m.group(2) != own[m.group(1)]:
            bad.append(f"「{m.group(0)}」：标题是「{own[m.group(1)]}」")
    assert not bad, f"{_rel(path)}：\n" + "\n".join(bad)


@pytest.mark.parametrize("path", SOURCES, ids=_rel)
def test_references_to_notebook_sections_exist(path):
    """"notebook 07 第 3.2 节"、"第 05 个 notebook 第 2 节"：那个 notebook 有这个编号的标题。"""
    text = _without_code(_text(path))
    bad = []
    for m in re.finditer(rf"(?:notebook (\d\d[a-z]?)|第 ?(\d\d[a-z]?) ?个 notebook ?(?:的)?) ?第 ?{NUM} ?节", text):
        nb = m.group(1) or m.group(2)
        if m.group(3) not in NOTEBOOK_HEADINGS.get(nb, {}):
            bad.append(f"「{m.group(0)}」：notebook {nb} 没有这一节")
    assert not bad, f"{_rel(path)}：\n" + "\n".join(bad)


def test_the_section_checker_catches_a_wrong_reference():
    """检查本身能失败：编造的节号和节名都被抓住。"""
    with pytest.raises(AssertionError, match="没有编号为 99"):
        _check(lecture_refs("见讲义 99.1", own=False), LECTURE06, "例子")
    with pytest.raises(AssertionError, match="标题是"):
        _check(lecture_refs("见讲义 7「策略梯度」", own=False), LECTURE06, "例子")
