"""
`import toyllm` 要多久，包里每个模块有多少行（物理行和代码行），哪些文件超过 450 行。

【用法】（在仓库根目录）
    python tools/bench_import.py                          # 这个仓库
    python tools/bench_import.py --baseline ../base       # 同一次运行里和另一份检出（例如改动之前）比较

【思路】每次都开一个新的 Python 进程（和学生在 notebook 里第一次 import 一样），先空跑一次让文件进入
    系统缓存（"热"的），再各跑 --repeats 次取**最快**的一次（最少受别的进程干扰）：
        · 空解释器：python -c pass 的总用时；
        · python -c "import toyllm" 的总用时，减去空解释器，就是 import 多花的时间（目标 < 0.3 秒）；
        · 进程里用 time.perf_counter 量的 import 语句本身的用时，以及 matplotlib、ipywidgets 有没有被带进来。
    每份检出都用 PYTHONPATH 指向它自己，在一个空的临时文件夹里运行（不会碰巧导入当前目录的东西）。
    这是打印数字的脚本，不是测试：速度和机器有关，测试里不检查它（tests/unit/api/test_import.py 只检查没有导入 matplotlib）。
    行数：每个模块的物理行数和代码行数（tools/codelines.py：文档字符串、注释、空行不算），合计；
    物理行数超过 MAX_LINES 的文件标上 ✗（目标：一个文件一个概念，读得完）。
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.codelines import count_tree  # noqa: E402
from toyllm.tables import display_width  # noqa: E402

GOAL = 0.3
MAX_LINES = 450
HEAVY = ("matplotlib", "ipywidgets")
PROBE = ("import sys, time; t = time.perf_counter(); import toyllm; t = time.perf_counter() - t; "
         f"print(__import__('json').dumps([t, [m for m in {HEAVY!r} if m in sys.modules]]))")


def best_run(code, tree, repeats, cwd):
    """用 PYTHONPATH=tree 运行 python -c code：(最快一次的总用时, 那一次打印的内容)。先空跑一次。"""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    best = (float("inf"), "")
    for i in range(repeats + 1):
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - start
        if i and seconds < best[0]:
            best = (seconds, out.stdout)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description="import toyllm 的用时，包里每个模块的物理行数和代码行数")
    parser.add_argument("--repeats", type=int, default=15, help="每项运行几次取最快的（默认 15）")
    parser.add_argument("--baseline", type=Path, help="另一份检出（例如改动之前），同一次运行里比较")
    args = parser.parse_args(argv)
    trees = {"这个仓库": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    print(f"Python {sys.version.split()[0]}（{sys.executable}），每项 {args.repeats} 次取最快")
    with tempfile.TemporaryDirectory() as empty:
        bare, _ = best_run("pass", ROOT, args.repeats, empty)
        print(f"{'空解释器':<12}{bare:8.3f} 秒")
        for label, tree in trees.items():
            total, out = best_run(PROBE, tree, args.repeats, empty)
            inside, heavy = json.loads(out)
            mark = "✓" if total - bare < GOAL else "✗"
            print(f"{label:<12}{total:8.3f} 秒，比空解释器多 {total - bare:.3f} 秒（目标 < {GOAL} 秒 {mark}）；"
                  f"import 语句本身 {inside:.3f} 秒；带进来的重型库：{', '.join(heavy) or '无'}")
    counts = {label: count_tree(Path(tree) / "toyllm") for label, tree in trees.items()}
    names = sorted(set().union(*counts.values()))
    print(f"\n包里每个模块的行数（物理行 / 代码行；代码行不算文档字符串、注释、空行；✗：超过 {MAX_LINES} 行）：")
    print("模块" + " " * 24 + "".join(" " * (18 - display_width(label)) + label for label in counts))
    for name in names:
        cells = []
        for table in counts.values():
            physical, code = table.get(name, ("-", "-"))
            mark = " ✗" if physical != "-" and physical > MAX_LINES else "  "
            cells.append(f"{physical:>8} / {code:>5}{mark}")
        print(f"{name:<28}" + "".join(f"{c:>18}" for c in cells))
    print("合计" + " " * 24 + "".join(f"{sum(p for p, _ in t.values()):>8} / {sum(c for _, c in t.values()):>5}  "
                                    for t in counts.values()))
    for label, table in counts.items():
        big = [f"{name}（{physical} 行）" for name, (physical, _) in table.items() if physical > MAX_LINES]
        print(f"{label}：超过 {MAX_LINES} 行的文件 {len(big)} 个" + (f"：{'、'.join(big)}" if big else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
