"""
命令行入口：python -m toyllm [子命令]

    python -m toyllm            第 6 讲的演示（训练前的情境表、pass@1、一次短训练的前后对比）
    python -m toyllm demo       同上
    python -m toyllm train ...  用任意预设训练（REINFORCE、RLOO、GRPO、Dr. GRPO、PPO、DAPO）
    python -m toyllm bench      速度基准：朴素 Python 循环 vs 向量化引擎
    python -m toyllm doctor     检查环境（Python、依赖、字体、JupyterLab 小部件）

每个子命令放在自己的模块里，这里只负责分发（模块用到时才导入，启动快）。
"""

import argparse
import importlib
import sys

COMMANDS = {
    "demo": ("toyllm.demo", "第 6 讲的演示：训练前后每个情境选 correct 的概率和 pass@1"),
    "train": ("toyllm.train_cli", "用某个预设训练模型，打印训练过程，可以保存模型和曲线"),
    "bench": ("toyllm.bench", "速度基准：同一个 GRPO 训练，朴素循环 vs 向量化引擎"),
    "doctor": ("toyllm.doctor", "检查学习环境是否就绪"),
}


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m toyllm", description="toyllm：第 6 讲「规模与强化学习」配套工具")
    sub = parser.add_subparsers(dest="command", metavar="子命令")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
            p.set_defaults(_missing=True)
            continue
        if hasattr(mod, "add_arguments"):
            mod.add_arguments(p)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv or ["demo"])
    if getattr(args, "_missing", False):
        print(f"子命令 {args.command} 还没有实现。", file=sys.stderr)
        return 2
    return importlib.import_module(args._module).main(args) or 0


if __name__ == "__main__":
    sys.exit(main())
