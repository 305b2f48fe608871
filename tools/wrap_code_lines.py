"""
把 jupytext 源文件（notebooks/src/*.py、notebooks/homework/src/*.py）代码单元格里超过 100 列的行折开：
1280 像素宽的 JupyterLab（左边文件浏览器开着）里，代码区只放得下约 108 列，更长的行被截断（tests/e2e/test_browser_fit.py）。

【怎么折】只在括号里的逗号后面折（新行和括号对齐），或者把括号里的一个字符串字面量拆成两个相邻的字面量
    （Python 会把它们接起来）；下标 x[i, j] 里的逗号、for 和 in 之间的逗号不折；优先折最外层的括号。
    折完以后比较前后的抽象语法树（ast.dump）：不一样就不写回文件、报错 —— 所以它不会改变程序的意思，输出不变。
    markdown 单元格和注释不动；注释太长、或者没有能折的地方的行，列出来，手工改。
【列数】一个汉字（东亚宽字符）算 2 列，和浏览器里等宽字体的宽度一致。
【用法】python tools/wrap_code_lines.py notebooks/src/06b_critic_gspo_cispo.py    # 改写文件，列出还太长的行
        python tools/wrap_code_lines.py --check notebooks/src/*.py               # 只列出太长的行；有就以 1 退出
    改完以后重新生成 notebook（python tools/build_notebooks.py 源文件）：代码变了，输出不变。
"""

import argparse
import ast
import io
import sys
import tokenize
import unicodedata
from pathlib import Path

LIMIT = 100
"""代码行最多几列（一个汉字算 2 列）。"""


def cols(s):
    """s 在等宽字体里占几列：东亚宽字符（汉字、全角标点）算 2 列。"""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def md_lines(lines):
    """markdown 单元格里的行号（从 1 数）。"""
    md, out = False, set()
    for i, l in enumerate(lines, 1):
        if l.startswith("# %%"): md = "[markdown]" in l; continue
        if md: out.add(i)
    return out

def one_pass(src):
    """折开第一处能折的太长的行；返回 (新文本, 折了没有)。"""
    lines = src.split("\n")
    skip = md_lines(lines) | hidden_lines(lines)
    toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    stack = []  # (row, col) of open brackets
    by_line = {}
    prev = None
    in_for = None
    strings = []
    for t in toks:
        if t.type == tokenize.STRING and stack and t.start[0] == t.end[0]:
            strings.append((t, stack[-1]))
        if t.type == tokenize.OP and t.string in "([{":
            subscript = t.string == "[" and prev is not None and (
                (prev.type == tokenize.NAME and prev.string not in ("in", "if", "else", "return", "and", "or", "not"))
                or prev.string in (")", "]") or prev.type == tokenize.STRING)
            stack.append(None if subscript else t.start)
        elif t.type == tokenize.OP and t.string in ")]}":
            stack.pop()
        elif t.type == tokenize.NAME and t.string == "for":
            in_for = len(stack)
        elif t.type == tokenize.NAME and t.string == "in":
            in_for = None
        elif t.type == tokenize.OP and t.string == "," and stack and stack[-1] is not None and in_for != len(stack):
            by_line.setdefault(t.end[0], []).append((t.end[1], stack[-1], len(stack)))
        if t.type not in (tokenize.NL, tokenize.COMMENT):
            prev = t
    multiline_str = set()
    for t in toks:
        if t.type == tokenize.STRING and t.start[0] != t.end[0]:
            multiline_str.update(range(t.start[0], t.end[0] + 1))
    for i, l in enumerate(lines, 1):
        if i in skip or i in multiline_str or cols(l) <= LIMIT or l.lstrip().startswith("#"):
            continue
        cands = []
        for endcol, (brow, bcol), depth in by_line.get(i, []):
            if cols(l[:endcol]) > LIMIT or endcol >= len(l.rstrip()):
                continue
            indent = cols(lines[brow - 1][:bcol]) + 1          # 新行和左括号后面的第一个字符对齐
            rest = l[endcol:].lstrip()
            cands.append((depth, -endcol, endcol, indent, rest))
        # 最外层的括号优先，同一层里取最靠右的逗号；新行的缩进要比折掉的部分短，才真的变短
        for _, _, endcol, indent, rest in sorted(cands):
            if indent >= cols(l[:endcol]):
                continue
            new = l[:endcol].rstrip() + "\n" + " " * indent + rest
            lines[i - 1] = new
            return "\n".join(lines), True
        # 没有能折的逗号：把括号里的一个单行字符串字面量在空格或中文标点处拆成两个（f-string 不在 {...} 里面拆）
        for t, br in strings:
            if t.start[0] != i or br is None:
                continue
            s0, c0 = t.string, t.start[1]
            if cols(l[:c0]) >= LIMIT - 10 or cols(l[:t.end[1]]) <= LIMIT:
                continue
            q = s0.index(s0[-1])           # 前缀（f、r、rf……）的长度，后面是引号
            prefix, quote = s0[:q], s0[-1]
            if s0[q:q + 3] == quote * 3:
                continue
            depth, best = 0, None
            for k in range(q + 1, len(s0) - 1):
                ch = s0[k]
                if "f" in prefix.lower():
                    if ch == "{": depth += 1
                    elif ch == "}": depth -= 1
                if depth == 0 and k > q + 1 and s0[k - 1] != "\\" and cols(l[:c0 + k]) + 1 <= LIMIT \
                        and (ch in " ，；：（、" or s0[k - 1] in "，；："):
                    best = k
            if best is None:
                continue
            indent = cols(lines[br[0] - 1][:br[1]]) + 1
            if indent >= cols(l[:c0 + best]) - 5:
                indent = cols(l[:c0])     # 和字符串本身对齐
                if indent >= cols(l[:c0 + best]) - 5:
                    continue
            first = s0[:best] + quote
            second = prefix + quote + s0[best:]
            if "f" in prefix.lower() and "{" not in second[len(prefix):]:     # 没有 {...} 的一半不需要 f
                second = prefix.replace("f", "").replace("F", "") + quote + s0[best:]
            if "f" in prefix.lower() and "{" not in first:
                first = prefix.replace("f", "").replace("F", "") + s0[q:best] + quote
            lines[i - 1] = l[:c0] + first + "\n" + " " * indent + second + l[t.end[1]:]
            return "\n".join(lines), True
    return src, False

def wrap(src):
    """反复 one_pass，直到没有能折的地方。"""
    for _ in range(500):
        src, changed = one_pass(src)
        if not changed: break
    return src


def hidden_lines(lines):
    """nbgrader 隐藏测试（### BEGIN HIDDEN TESTS 到 ### END HIDDEN TESTS）的行号：学生版里没有它们，格式由
    tests/notebooks/test_homework_notebooks.py 规定，不折。"""
    out, inside = set(), False
    for i, line in enumerate(lines, 1):
        if line.strip() == "### BEGIN HIDDEN TESTS":
            inside = True
        if inside:
            out.add(i)
        if line.strip() == "### END HIDDEN TESTS":
            inside = False
    return out


def long_lines(text):
    """
    代码单元格里超过 LIMIT 列的行：[(行号, 列数, 行)]。不算：markdown 单元格、`# %%` 开头的单元格标记行
    （jupytext 的元数据，notebook 里看不到）、nbgrader 的隐藏测试（学生看不到）。
    """
    lines = text.split("\n")
    skip = md_lines(lines) | hidden_lines(lines)
    return [(i, cols(line), line) for i, line in enumerate(lines, 1)
            if i not in skip and not line.startswith("# %%") and cols(line) > LIMIT]


def main(argv=None):
    parser = argparse.ArgumentParser(description="把 jupytext 源文件代码单元格里超过 100 列的行折开（不改变程序）")
    parser.add_argument("sources", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true", help="只列出太长的行，不改文件")
    args = parser.parse_args(argv)
    bad = 0
    for path in args.sources:
        old = path.read_text(encoding="utf-8")
        new = old if args.check else wrap(old)
        if ast.dump(ast.parse(old)) != ast.dump(ast.parse(new)):
            print(f"{path}：折行改变了程序（这是本工具的错误），没有写回", file=sys.stderr)
            return 2
        if new != old:
            path.write_text(new, encoding="utf-8")
        rest = long_lines(new)
        bad += len(rest)
        for i, n, line in rest:
            print(f"{path}:{i}: {n} 列：{line.strip()[:70]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
