"""
来源表 lectures/sources.md：关于 verl、TRL、CS336 和论文的每一句话都指向表里的一行（issue 26）。

【核对什么】
    · 表的每一行格式对：编号唯一；"用在"的文件存在，而且真的带着这个编号；出处是固定 commit 的文件和行号、
      论文和章节，或者带日期的网页；原文不空；
    · 反过来：讲义、notebook 源文件、作业源文件的文字单元格和 toyllm 的说明（docstring）里出现的编号都在表里，
      而且那个文件登记在那一行的"用在"里；
    · 提到 verl、TRL、CS336、arXiv、"论文"、"et al." 的每一句话都带着编号（标题、代码、参考文献列表除外；
      只是提到名字、不是说法的句子列在 MENTIONS 里，各有理由）。
    原文是否真的在出处写的那几行：tools/check_sources.py（要有 verl、TRL、CS336 仓库的本地副本，CI 里没有）。
"""

import ast
import json
import re

import pytest

from tools import check_sources

from paths import ROOT

TABLE = check_sources.TABLE
MARK = re.compile(r"\[(S\d{3})\]")
"""句子里的编号：讲义和 notebook 里是链接 [S101](sources.md#S101)，说明里是 [S101]。"""
CLAIM = re.compile(r"(?<![A-Za-z0-9_./-])(?:verl|TRL)(?![A-Za-z0-9_])|CS336|arXiv|论文|et al\.")
"""说到 verl、TRL、CS336 或论文的句子。"""
MENTIONS = {
    # (文件, 句子里的一段): 理由。只是提到名字、不是关于它们怎么做的说法。
    ("lectures/lecture06_scaling_rl.md", "| 预设 | 算法 | verl | TRL |"):
        "8.4 节预设对照表的表头，只是列名；各格的说法由表前的说明句 S126、S127 和后面的 S124、S128 指向来源",
    ("lectures/lecture06_scaling_rl.md", "| `reinforce` | REINFORCE | — | —（CS336 作业 5 的 no_baseline） |"):
        "check:preset-peers 表的格子必须逐字等于 toyllm.peers.PRESET_PEERS（tests/test_lectures.py），不能加编号；"
        "同一说法在第 6 节的表里带着 S106",
    ("lectures/lecture06_scaling_rl.md", "| 选项（取值） | TRL（`GRPOConfig` 的关键字参数） |"):
        "8.11 节生成的 TRL 对照表的表头，只是列名；表的说明句带 S149，每一格的出处带那个文件的编号",
    ("lectures/lecture06_scaling_rl.md", "| 选项（取值） | verl（`main_ppo` 的覆盖项） |"):
        "8.11 节生成的 verl 对照表的表头，只是列名；表的说明句带 S149，每一格的出处带那个文件的编号",
    ("lectures/lecture06_scaling_rl.md", "| `reinforce_pp` | REINFORCE++-baseline | adv_estimator=reinforce_plus_plus_baseline |"):
        "check:preset-peers 表的格子必须逐字等于 toyllm.peers.PRESET_PEERS，不能加编号；"
        "TRL 那一格的说法在表后的句子里带着 S581",
}


ROWS = check_sources.read_table()
STORED = json.loads(check_sources.LINES.read_text(encoding="utf-8")) if check_sources.LINES.exists() else {}
"""tools/check_sources.py --write 从 verl、TRL、CS336 的固定 commit 里取出的、来源表引用的行。"""


# =============================================================================
# 读文字：讲义、notebook 的文字单元格、toyllm 的说明
# =============================================================================
def _markdown_of_source(path):
    """jupytext percent 格式的源文件里，markdown 单元格的文字（去掉行首的 "# "）。"""
    text, cells, current = path.read_text(encoding="utf-8"), [], None
    for line in text.splitlines():
        if line.startswith("# %%"):
            current = [] if "[markdown]" in line else None
            if current is not None:
                cells.append(current)
            continue
        if current is not None:
            current.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
    return "\n\n".join("\n".join(c) for c in cells)


def _docstrings(path):
    """一个模块里所有的说明：模块、类、函数的 docstring，字段后面的字符串（属性说明），
    和 RLConfig 选项的说明（option(...) 里的字符串，拼进 RLConfig 的 docstring 和命令行帮助）。"""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [node.value.value for node in ast.walk(tree)
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "option":
            # 第 1、2 个参数是默认值和中文名（"verl"、"TRL δ" 是取值和名字，不是说法），从 help 起是说明
            found += [a.value for a in node.args[2:] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return "\n\n".join(found)


def texts():
    """{相对路径: 要检查的文字}。"""
    out = {}
    for path in sorted((ROOT / "lectures").glob("*.md")):
        if path != TABLE:
            text = path.read_text(encoding="utf-8")
            out[path.relative_to(ROOT).as_posix()] = re.split(r"^## \d+\. 参考文献", text, flags=re.M)[0]
    for folder in ("notebooks/src", "notebooks/homework/src"):
        for path in sorted((ROOT / folder).glob("*.py")):
            out[path.relative_to(ROOT).as_posix()] = _markdown_of_source(path)
    for path in sorted((ROOT / "toyllm" / "peers").rglob("*.py")):
        out[path.relative_to(ROOT).as_posix()] = _docstrings(path)
    return out


def core_docstrings():
    """{相对路径: 说明}：学生读的包（toyllm/ 除了 peers/）。那里的说明只用平常的话说出处（论文、verl / TRL 的名字），
    不带编号、commit 和行号：这些出处写在来源表和 peers 的对照表里（issue 37）。"""
    return {path.relative_to(ROOT).as_posix(): _docstrings(path) for path in sorted((ROOT / "toyllm").rglob("*.py"))
            if "peers" not in path.relative_to(ROOT / "toyllm").parts}


TEXTS = texts()


def sentences(text):
    """把文字切成句子：去掉代码块和标题；表格一行一句；段落、列表项分开；段落里按 。！？ 切。"""
    text = re.sub(r"```.*?```", "\n\n", text, flags=re.S)
    units = []
    for para in re.split(r"\n\s*\n", text):
        for item in re.split(r"\n(?=\s*(?:[-*·]\s|\d+\.\s|\|))", para):
            if re.match(r"\s*#", item) or re.match(r"\s*\|[-:| ]+\|\s*$", item):
                continue
            if item.lstrip().startswith("|"):
                units.append(item.strip())
                continue
            units.extend(s.strip() for s in re.split(r"(?<=[。！？])", item) if s.strip())
    return units


# =============================================================================
# 测试
# =============================================================================
def test_table_has_rows_with_valid_sources():
    assert ROWS, "来源表是空的"
    for key, row in ROWS.items():
        where = f"sources.md 第 {row['line']} 行（{key}）"
        assert not row["problems"], f"{where}：{row['problems']}"
        assert row["claim"] and row["quote"], f"{where}：说法和原文不能空"
        assert row["used"], f"{where}：\"用在\"至少写一个文件（用反引号括起来）"
        found = list(check_sources.SOURCE.finditer(row["sources"]))
        assert found, f"{where}：出处的格式不对：{row['sources']!r}"
        for m in found:
            if m.group("repo"):
                pinned = check_sources.REPOS[m.group("repo")][1]
                assert pinned.startswith(m.group("commit")), \
                    f"{where}：{m.group('repo')} 的 commit 应是 {pinned[:8]}，写的是 {m.group('commit')}"


def test_every_quote_is_in_the_lines_it_cites():
    """原文出现在引用的行附近（行由 tools/check_sources.py --write 从固定 commit 取出，存在 tests/data/source_lines.json）。"""
    problems = check_sources.problems_of(ROWS, STORED)
    assert not problems, "\n".join(f"{k}：{p}" for k, p in problems)


def test_every_quote_is_inside_the_cited_range_not_just_near_it():
    """原文在引用的行之内，不只是在前后 CONTEXT 行的余量里（issue 40：S124 引 L422–L470，原文在 L471）。"""
    problems = check_sources.range_problems_of(ROWS, STORED)
    assert not problems, "\n".join(f"{k}：{p}" for k, p in problems)


def test_range_check_catches_an_off_by_one_range():
    cited = "verl@b178a3cd:f.py#L5-L6"
    stored = {"verl@b178a3cd:f.py#L5-L6": "\n".join(f"line {i}" for i in range(2, 10))}   # 第 2–9 行（前后各 3 行）
    rows = {"S1": {"sources": cited, "quote": "`line 9`"}, "S2": {"sources": cited, "quote": "`line 6`"}}
    assert [k for k, _ in check_sources.range_problems_of(rows, stored)] == ["S1"]
    assert not check_sources.problems_of(rows, stored)                      # 宽松的检查放过了 S1


def test_quote_matching_is_not_trivial():
    """核对原文的函数会说"不在"：换一个字、顺序颠倒都找不到。"""
    stored = "def agg_loss(loss_mat, loss_mask):\n    seq_mask = (torch.sum(loss_mask, dim=-1) > 0).float()"
    assert check_sources.quote_found("`seq_mask = (torch.sum(loss_mask, dim=-1) > 0)`", stored)
    assert check_sources.quote_found("def agg_loss(…seq_mask", stored)
    assert not check_sources.quote_found("seq_mask … def agg_loss", stored)
    assert not check_sources.quote_found("seq_mask = (torch.mean", stored)
    assert not check_sources.quote_found("``", stored)


@pytest.mark.parametrize("key", sorted(ROWS))
def test_every_used_at_place_exists_and_carries_the_mark(key):
    """"用在"的文件存在；讲义、notebook、peers 的文字里真的有这个编号（学生读的包的说明不带编号，只核对文件在）。"""
    for rel in ROWS[key]["used"]:
        path = ROOT / rel
        assert path.is_file(), f"{key} 的\"用在\"写着 {rel}，这个文件不存在"
        if rel in TEXTS:
            assert key in MARK.findall(TEXTS[rel]), f"{key} 的\"用在\"写着 {rel}，但它的文字里没有 [{key}]"


COMMIT_OR_LINE = re.compile(r"\b[0-9a-f]{8,40}\b|#L\d+|\.py:\d+")
"""说明里不该有的出处细节：commit、文件的行号。"""


CORE = core_docstrings()


@pytest.mark.parametrize("rel", sorted(CORE))
def test_the_students_package_names_sources_without_marks_or_line_numbers(rel):
    text = CORE[rel]
    assert not MARK.findall(text), f"{rel} 的说明里有来源编号 {MARK.findall(text)[:3]}：出处写在 lectures/sources.md"
    found = [m.group(0) for m in COMMIT_OR_LINE.finditer(text) if not m.group(0).isdigit()]
    assert not found, f"{rel} 的说明里有 commit 或行号 {found[:3]}：出处写在 lectures/sources.md"


def test_the_no_marks_check_catches_one():
    assert MARK.findall("GRPO 的优势[S533]") and COMMIT_OR_LINE.search("verl b178a3cd 的 core_algos.py:73")


def test_every_mark_is_a_row_that_lists_its_file():
    for rel, text in TEXTS.items():
        for key in MARK.findall(text):
            assert key in ROWS, f"{rel} 里的 [{key}] 不在来源表里"
            assert rel in ROWS[key]["used"], f"{rel} 里有 [{key}]，但来源表那一行的\"用在\"没有写 {rel}"


def test_mentions_are_still_there():
    """MENTIONS 里的每一段都还在它的文件里（改了文字以后别留下过时的豁免）。"""
    for (rel, fragment), reason in MENTIONS.items():
        assert reason, f"{rel} 的豁免 {fragment!r} 没写理由"
        assert fragment in TEXTS.get(rel, ""), f"MENTIONS 里 {rel} 的 {fragment!r} 已经不在文件里了，删掉这一项"


@pytest.mark.parametrize("rel", sorted(TEXTS))
def test_every_claim_about_a_peer_or_paper_points_to_a_row(rel):
    exempt = [fragment for (where, fragment) in MENTIONS if where == rel]
    missing = [s for s in sentences(TEXTS[rel])
               if CLAIM.search(s) and not MARK.search(s) and not any(f in s for f in exempt)]
    assert not missing, (f"{rel} 里有 {len(missing)} 句说到 verl / TRL / CS336 / 论文、却没有来源编号：\n"
                         + "\n".join(f"  · {s[:160]}" for s in missing))
