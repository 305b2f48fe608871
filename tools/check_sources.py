"""
来源表 lectures/sources.md 的读取，和"原文真的在出处写的那几行"的核对（issue 26）。

【思路】来源表每一行的出处可以是仓库的固定 commit 里的文件和行号（verl@b178a3cd:路径#L10-L12）。
    这里从仓库的本地副本里取出那几行（前后各多取 CONTEXT 行），存进 tests/data/source_lines.json；
    tests/notebooks/test_sources.py 不需要仓库，只用这个文件核对：每一行的原文出现在它引用的某一段里。
    原文里的 "…" 表示省略：各段按顺序出现即可；"；" 分开几段原文，每一段出现在引用的某一处即可（一行引用几处时）。
    比较前把连续的空白压成一个空格。写在 “ ” 里的一段是论文或网页的原文，不和仓库比较。
    论文和网页的出处不在这里核对（没有网络）；它们的原文由写的人对着论文写，测试只检查格式。

【用法】（在仓库根目录；仓库是 git 目录，要有固定的 commit）
    python tools/check_sources.py --write      # 取出引用的行，写 tests/data/source_lines.json，再核对
    python tools/check_sources.py              # 只核对（用 json；有仓库副本时也核对 json 和仓库一致）
    python tools/check_sources.py --table 路径/sources.md --mirrors 路径   # 别的来源表、别的仓库位置
    仓库副本默认在 ../.mirror/<owner>+<name>/repo（fetch 工具放的位置），--mirrors 可以改。

【边界】出处的 commit 在副本里没有、文件不存在、行号超出文件：报错并指出哪一行。
"""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "lectures" / "sources.md"
LINES = ROOT / "tests" / "data" / "source_lines.json"
CONTEXT = 3
"""取出引用的行时，前后各多取几行（原文"在出处写的行附近"即可）。"""
REPOS = {"verl": ("volcengine+verl", "b178a3cd56f58b2d502255daba591e92833930a7"),
         "TRL": ("huggingface+trl", "f2cd57710ae345ea6428ae95363267fcf38a3dc8"),
         "CS336": ("stanford-cs336+assignment5-alignment", "eb2c562e05802d3c9ee4c4ec2eec43b104d77e9e")}
"""仓库的简称 → (fetch 放副本的文件夹名, 固定的 commit)。"""
SOURCE = re.compile(
    r"(?P<repo>verl|TRL|CS336)@(?P<commit>[0-9a-f]{7,8}):(?P<path>[\w./-]+)#L(?P<start>\d+)(?:-L(?P<end>\d+))?"
    r"|arXiv:\d{4}\.\d{4,5}(?:v\d)? (?:§[\w.]+|表 \d+|图 \d+|算法 \d+|附录 [\w.]+|式 \(\d+\)|摘要)"
    r"|<https?://[^>\s]+>（\d{4}-\d{2}-\d{2} 查阅）")
"""一个出处：仓库@commit:文件#L行、arXiv 编号加章节（或表、图、算法、附录、式、摘要）、网址加查阅日期。"""
ROW = re.compile(r'\|\s*<a id="(S\d{3})"></a>(S\d{3})\s*\|')


def _cells(line):
    """表格一行的各列（\\| 是格子里的竖线，不分列）。"""
    parts = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [p.strip().replace("\\|", "|") for p in parts]


def read_table(path=TABLE):
    """来源表的行：{编号: {"claim", "used", "sources", "quote", "line", "problems"}}；problems 是格式上的问题。"""
    rows = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        m = ROW.match(line)
        if not m:
            if re.match(r"\|\s*S\d{3}\s*\|", line):
                rows[f"?{number}"] = {"line": number, "problems": [f"编号要写成 <a id=\"S…\"></a>S…"]}
            continue
        cells, problems = _cells(line), []
        if len(cells) != 5:
            problems.append(f"应有 5 列，实际 {len(cells)} 列")
            cells += [""] * 5
        if m.group(1) != m.group(2):
            problems.append(f"锚点 {m.group(1)} 和编号 {m.group(2)} 不同")
        key = m.group(2)
        if key in rows:
            problems.append(f"编号 {key} 重复（第 {rows[key]['line']} 行也是）")
            key = f"{key}?{number}"
        rows[key] = {"claim": cells[1], "used": re.findall(r"`([^`]+)`", cells[2]), "sources": cells[3],
                     "quote": cells[4], "line": number, "problems": problems}
    return rows


def citations(sources):
    """一格出处里的仓库引用：[(仓库, commit, 文件, 起, 止)]。"""
    return [(m.group("repo"), m.group("commit"), m.group("path"), int(m.group("start")),
             int(m.group("end") or m.group("start")))
            for m in SOURCE.finditer(sources) if m.group("repo")]


def key_of(citation):
    repo, commit, path, start, end = citation
    return f"{repo}@{commit}:{path}#L{start}-L{end}"


def _normal(text):
    return re.sub(r"\s+", " ", text).strip()


def quote_found(quote, stored):
    """原文（去掉反引号和外面的 “ ”；"…" 分开的各段按顺序）是否出现在 stored（取出的几行，也去掉反引号）里。"""
    parts = [_normal(p).strip("“”") for p in quote.replace("`", "").split("…") if _normal(p).strip("“”")]
    text, at = _normal(stored.replace("`", "")), 0
    for part in parts:
        at = text.find(part, at)
        if at < 0:
            return False
        at += len(part)
    return bool(parts)


def _git_dir(mirrors, repo):
    return Path(mirrors) / REPOS[repo][0] / "repo"


def extract(citation, mirrors):
    """从仓库副本里取出引用的行（前后各多 CONTEXT 行）；出错时抛 ValueError，说明哪里不对。"""
    repo, commit, path, start, end = citation
    git = _git_dir(mirrors, repo)
    if not git.is_dir():
        raise ValueError(f"没有 {repo} 的副本 {git}（用 fetch 取来，或者用 --mirrors 指出位置）")
    run = subprocess.run(["git", "--git-dir", str(git), "show", f"{commit}:{path}"], capture_output=True, text=True)
    if run.returncode != 0:
        raise ValueError(f"{key_of(citation)}：{run.stderr.strip()}")
    lines = run.stdout.splitlines()
    if not 1 <= start <= end <= len(lines):
        raise ValueError(f"{key_of(citation)}：行号超出文件（文件有 {len(lines)} 行）")
    return "\n".join(lines[max(0, start - 1 - CONTEXT):end + CONTEXT])


def exact_lines(citation, stored):
    """取出的几行里，去掉前后各 CONTEXT 行的余量，只留引用的那几行（文件开头不足 CONTEXT 行时少去掉几行）。"""
    repo, commit, path, start, end = citation
    lines = stored[key_of(citation)].split("\n")
    head = min(CONTEXT, start - 1)
    return "\n".join(lines[head:head + end - start + 1])


def range_problems_of(rows, stored):
    """比 problems_of 严：原文的每一段必须出现在某一处引用的行**之内**（不算前后的余量）。
    抓的是"引用 L422–L470、原文却在 L471"这种差一两行的出处。只看有仓库引用、行已取出的行。"""
    out = []
    for key, row in rows.items():
        cited = [c for c in citations(row.get("sources", "")) if key_of(c) in stored]
        if not cited:
            continue
        for part in (p for p in row["quote"].split("；") if p.strip() and not p.strip().startswith("“")):
            if not any(quote_found(part, exact_lines(c, stored)) for c in cited):
                out.append((key, f"原文 {part[:60]!r} 不在引用的行之内（只在前后 {CONTEXT} 行的余量里）"))
    return out


def problems_of(rows, stored):
    """每一行的原文在不在它引用的行里：[(编号, 问题)]。只看有仓库引用的行。"""
    out = []
    for key, row in rows.items():
        cited = citations(row.get("sources", ""))
        if not cited:
            continue
        missing = [key_of(c) for c in cited if key_of(c) not in stored]
        if missing:
            out.append((key, f"没有取出 {missing[0]} 的行（运行 python tools/check_sources.py --write）"))
        else:
            for part in (p for p in row["quote"].split("；") if p.strip() and not p.strip().startswith("“")):
                if not any(quote_found(part, stored[key_of(c)]) for c in cited):
                    out.append((key, f"原文 {part[:60]!r} 不在 {', '.join(key_of(c) for c in cited)} 附近"))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description="核对来源表的原文和出处")
    parser.add_argument("--table", default=str(TABLE))
    parser.add_argument("--mirrors", default=str(ROOT.parent / ".mirror"))
    parser.add_argument("--lines", default=None,
                        help="取出的行存在哪里（默认：来源表所在仓库的 tests/data/source_lines.json）")
    parser.add_argument("--write", action="store_true", help="从仓库副本里取出引用的行，写进 --lines")
    args = parser.parse_args(argv)
    rows = read_table(args.table)
    if args.lines is None:
        args.lines = str(Path(args.table).resolve().parent.parent / LINES.relative_to(ROOT))
    bad = [(k, p) for k, r in rows.items() for p in r["problems"]]
    stored = json.loads(Path(args.lines).read_text(encoding="utf-8")) if Path(args.lines).exists() else {}
    wanted = sorted({key_of(c) for r in rows.values() for c in citations(r.get("sources", ""))})
    fresh = {}
    for r in rows.values():
        for c in citations(r.get("sources", "")):
            if key_of(c) in fresh:
                continue
            try:
                fresh[key_of(c)] = extract(c, args.mirrors)
            except ValueError as e:
                if args.write or "没有" not in str(e):
                    bad.append((f"第 {r['line']} 行", str(e)))
    if args.write:
        stored = {k: fresh[k] for k in wanted if k in fresh}
        tmp = Path(args.lines).with_suffix(".tmp")
        tmp.write_text(json.dumps(stored, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(args.lines)
        print(f"写了 {args.lines}：{len(stored)} 段引用的行")
    else:
        bad += [(k, "存的行和仓库里的不一样（运行 --write）") for k in fresh if k in stored and stored[k] != fresh[k]]
    bad += problems_of(rows, stored)
    for key, problem in bad:
        print(f"{key}：{problem}")
    print(f"来源表 {len(rows)} 行，引用仓库 {len(wanted)} 段；问题 {len(bad)} 个")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
