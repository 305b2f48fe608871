"""
数代码行：一个 .py 文件里有多少行是代码（文档字符串、注释、空行不算）。

【用法】（在仓库根目录）
    python tools/codelines.py            # toyllm/ 里每个模块：物理行数、代码行数；最后是合计
    python tools/codelines.py some/dir

【思路】tokenize 把源码切成记号：注释、换行、缩进这些记号不占"代码行"，其余记号（名字、数、运算符、字符串……）
    跨过的每一行都是代码行。文档字符串是单独成句的字符串字面量（模块、类、函数的第一句，或者属性下面的说明），
    用 ast 找出它们占的行，从代码行里去掉。tools/bench_import.py 用它打印每个模块的代码行。
"""

import ast
import io
import sys
import tokenize
from pathlib import Path

NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def docstring_lines(source):
    """单独成句的字符串字面量（文档字符串）占的行号。"""
    return {line for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for line in range(node.lineno, node.end_lineno + 1)}


def code_lines(source):
    """source 里的代码行数：有代码记号的行，去掉文档字符串的行。"""
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in NOT_CODE:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines - docstring_lines(source))


def count_tree(root):
    """{相对路径: (物理行数, 代码行数)}：root 下面每个 .py 文件。"""
    root = Path(root)
    out = {}
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        out[path.relative_to(root).as_posix()] = (len(source.splitlines()), code_lines(source))
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "toyllm"
    counts = count_tree(root)
    for name, (physical, code) in counts.items():
        print(f"{name:<28}{physical:>8}{code:>8}")
    print(f"{'合计':<28}{sum(p for p, _ in counts.values()):>8}{sum(c for _, c in counts.values()):>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
