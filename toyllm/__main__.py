"""
命令行入口：python -m toyllm [子命令]

    python -m toyllm            第 6 讲的演示（训练前的情境表、pass@1、一次短训练的前后对比）
    python -m toyllm demo       同上
    python -m toyllm doctor     检查环境（Python、依赖、字体、JupyterLab 小部件）

每个子命令放在自己的模块里，这里只负责分发：只导入要运行的那一个子命令的模块
（python -m toyllm doctor 不会导入训练引擎），所以启动快。用任意预设在命令行上训练的是维护者的工具
tools/train_cli.py（不在学生的包里）。
"""

import argparse
import importlib
import sys

COMMANDS = {"demo": "第 6 讲的演示：训练前后每个情境选 correct 的概率和 pass@1", "doctor": "检查学习环境是否就绪"}
"""子命令 → 说明；子命令 x 的代码在模块 toyllm.x 里（它的 main(args) 返回退出码）。"""


def build_parser():
    """命令行参数：每个子命令一个子解析器。"""
    parser = argparse.ArgumentParser(prog="python -m toyllm", description="toyllm：第 6 讲「规模与强化学习」配套工具")
    sub = parser.add_subparsers(dest="command", metavar="子命令")
    for name, help_text in COMMANDS.items():
        sub.add_parser(name, help=help_text, description=help_text)
    return parser


def main(argv=None):
    """python -m toyllm [子命令] [参数]：没有子命令时运行 demo；只导入要运行的那个子命令的模块；返回退出码。"""
    argv = (sys.argv[1:] if argv is None else list(argv)) or ["demo"]
    args = build_parser().parse_args(argv)
    return importlib.import_module(f"toyllm.{args.command}").main(args) or 0


if __name__ == "__main__":
    sys.exit(main())
