"""
python -m toyllm.homework：作业 notebook 的命令。

    python -m toyllm.homework release       由教师版生成学生版（notebooks/homework/release/）
    python -m toyllm.homework check         检查学生版、教师版是否都和源文件同步（不写文件；不同步时退出码 1）
    python -m toyllm.homework build [名字]   由 notebooks/homework/src/*.py 生成并运行教师版，然后 release
                                            （需要开发依赖：nbformat、nbconvert、ipykernel）

【例子】python -m toyllm.homework build hw3_grpo     # 只重新生成作业三
"""

import argparse
import sys

from .release import RELEASE_DIR, SOURCE_DIR, ReleaseError, check_release, release_all


def build_parser():
    """命令行参数：子命令 release / check / build。"""
    parser = argparse.ArgumentParser(prog="python -m toyllm.homework", description="作业 notebook：生成学生版、检查是否同步")
    sub = parser.add_subparsers(dest="command", metavar="子命令", required=True)
    sub.add_parser("release", help="由教师版生成学生版（去掉答案、清空输出）")
    sub.add_parser("check", help="检查学生版和教师版是否同步（不写文件）")
    p = sub.add_parser("build", help="由 src/*.py 生成并运行教师版，再生成学生版")
    p.add_argument("names", nargs="*", help="只生成这几份（例如 hw1_gradient）；默认全部")
    p.add_argument("--timeout", type=int, default=600, help="每个单元格最多运行几秒（默认 600）")
    return parser


def _release():
    try:
        results = release_all()
    except (ReleaseError, FileNotFoundError) as e:
        print(f"✗ {e}", file=sys.stderr)
        return 1
    for path, changed in results:
        print(f"{'已更新' if changed else '没变化'}  {path.relative_to(RELEASE_DIR.parents[2])}")
    return 0


def _check():
    from .build import check_sources

    try:
        problems = check_sources() + check_release()
    except (ReleaseError, FileNotFoundError, ValueError) as e:
        problems = [str(e)]
    for p in problems:
        print(f"✗ {p}", file=sys.stderr)
    if not problems:
        print(f"✓ {SOURCE_DIR.parent.relative_to(SOURCE_DIR.parents[2])} 里的教师版和学生版都是最新的")
    return 1 if problems else 0


def _build(names, timeout):
    from .build import SRC_DIR, build

    sources = sorted(SRC_DIR.glob("*.py"))
    if names:
        sources = [s for s in sources if s.stem in names]
        missing = set(names) - {s.stem for s in sources}
        if missing:
            print(f"✗ 找不到 {'、'.join(sorted(missing))}（在 {SRC_DIR} 里）", file=sys.stderr)
            return 1
    for src in sources:
        try:
            out, seconds = build(src, timeout)
        except (RuntimeError, ValueError) as e:
            print(f"✗ {e}", file=sys.stderr)
            return 1
        print(f"教师版  {out.name}  运行 {seconds:.1f} 秒")
    return _release()


def main(argv=None):
    """命令行入口；返回退出码。"""
    args = build_parser().parse_args(argv)
    if args.command == "release":
        return _release()
    if args.command == "check":
        return _check()
    return _build(args.names, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
