"""
python tools/train_cli.py：在命令行上用任意预设（和任意选项）训练一个模型（维护者和老师做实验用，不在学生的包里；
学生在 notebook 里调用同一个 toyllm.rl.train）。

【用法】（在仓库根目录）
    python tools/train_cli.py --preset grpo --size 1e9 --iters 200 --seed 0
    python tools/train_cli.py --preset dapo --iters 100 --plot dapo.png --save dapo_1B.safetensors
    python tools/train_cli.py --preset grpo --mu 4 --eps-high 0.28 --beta 0.04 --kl-estimator k3
    python tools/train_cli.py --help          # 列出每个选项和它的默认值

【思路】选项先取预设（--preset）的值，命令行上写了的选项再覆盖它；全部交给 toyllm.rl.train（第 6 讲的同一个循环）。
    选项从 RLConfig 的字段自动生成（说明和 RLConfig 的文档同源）。终端上显示 tqdm 进度条，每隔几次迭代打印一行
    中文的训练记录；结束时打印训练前后每个情境选 correct 的概率。
    按 Ctrl+C 会停下来，保留已经训练的部分（照样可以 --save / --plot）。
"""

import argparse
import dataclasses
import sys
from pathlib import Path

from toyllm._checks import as_real
from toyllm.demo import context_table
from toyllm.exact import correct_paths
import toyllm.peers  # 登记 verl / TRL 的损失、选项和预设：命令行也列出它们
from toyllm.problems import default_problems
from toyllm.rl import PRESET_NAMES, PRESETS, RLConfig, train
from toyllm.rl.config import option_label
from toyllm.rl.presets import format_option
from toyllm.tables import fmt_size
from toyllm.trainable import TrainableLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # python tools/train_cli.py 时也能 import tools.checkpoint


def _flag(field):
    return "--iters" if field.name == "iterations" else "--" + field.name.replace("_", "-")


_FIELDS = dataclasses.fields(RLConfig)[:-1] + dataclasses.fields(toyllm.peers.PeerOptions)
"""RLConfig 自己的选项（最后一个字段 peer 另算），加上 toyllm.peers 登记的选项。"""
_OPTIONS = [(_flag(f), f.name, f.type, f.metadata["help"]) for f in _FIELDS if f.name != "seed"]
"""命令行选项 → RLConfig 的 (选项, 字段名, 类型, 说明)：全部从 RLConfig 的字段生成，说明和 RLConfig 的文档同源。"""

TABLE_COLUMNS = ["iteration", "reward", "pass1_exact", "pass1_sampled", "entropy", "kl_exact", "clip_low", "clip_high",
                 "zero_std", "loss", "samples"]


def _default_text(field):
    """某个选项在各预设里的默认值，例如 "默认 1；ppo、dapo 为 4"。"""
    base = getattr(RLConfig(), field)
    others = {}
    for name, cfg in PRESETS.items():
        v = getattr(cfg, field)
        if v != base:
            others.setdefault(format_option(v), []).append(name)
    return "；".join([f"默认 {format_option(base)}"] + [f"{'、'.join(names)} 为 {v}" for v, names in others.items()])


def add_arguments(parser):
    """
    给 argparse 的解析器加上 train 的全部选项（build_parser 调用它）。

    【思路】RLConfig 的每个字段（seed 除外，它有自己的 --seed）生成一个选项：名字、类型、可选值和说明都取自字段，
        默认是 None，表示"用预设的值"；帮助里写出每个预设的默认值。RLConfig 加一个字段，这里自动多一个选项。
    【Python 小知识】argparse.BooleanOptionalAction 自动生成一对开关：--clip 和 --no-clip。
    """
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "预设：" + "、".join(f"{k}（{v}）" for k, v in PRESET_NAMES.items()) + \
        "。没写的选项取预设的值；python -c \"import toyllm.peers; from toyllm.rl import presets_table; print(presets_table())\" 列出各预设的差别。"
    g = parser.add_argument_group("算法")
    g.add_argument("--preset", default="grpo", choices=list(PRESETS), help="预设（默认 grpo）")
    g.add_argument("--size", default="1e9", help="模型参数量，例如 1e9、5e8、1e10（默认 1e9）")
    g.add_argument("--seed", type=int, default=0, help="训练的随机种子：选题和采样（默认 0）")
    choices = {f.name: f.metadata["choices"] for f in _FIELDS}
    for flag, field, typ, text in _OPTIONS:
        help_text = f"{text}。{_default_text(field)}"
        if typ is bool:
            g.add_argument(flag, dest=field, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        else:
            g.add_argument(flag, dest=field, type=typ, default=None, choices=choices[field], metavar=field.upper(),
                           help=help_text)
    d = parser.add_argument_group("题目")
    d.add_argument("--n-train", type=int, default=256, help="训练题数（默认 256）")
    d.add_argument("--n-heldout", type=int, default=200, help="留出题数，用来算路径 pass@1（默认 200）")
    d.add_argument("--min-steps", type=int, default=3, help="每道题最少几步（默认 3）")
    d.add_argument("--max-steps", type=int, default=8, help="每道题最多几步（默认 8）")
    d.add_argument("--problem-seed", type=int, default=0, help="出题的随机种子（默认 0）")
    o = parser.add_argument_group("输出")
    o.add_argument("--table-every", type=int, default=None,
                   help="每隔几次迭代打印一行训练记录（默认：迭代次数 / 10，至少 1）")
    o.add_argument("--save", default=None, metavar="PATH", help="训练后把模型存成 safetensors 文件、训练记录存在旁边的 .history.json（默认不存）")
    o.add_argument("--plot", default=None, metavar="PATH", help="把训练曲线画成 PNG 文件（默认不画）")
    o.add_argument("--no-progress", action="store_true", help="不显示进度条（默认：终端上显示）")
    return parser


def build_config(args):
    """从解析好的命令行参数得到 RLConfig：预设的值，再用命令行上写了的选项覆盖。"""
    overrides = {field: getattr(args, field) for _, field, _, _ in _OPTIONS if getattr(args, field, None) is not None}
    overrides["seed"] = args.seed
    return PRESETS[args.preset].replace(**overrides)


class _Progress:
    """
    训练时的输出（train 的 callback）：每隔 every 次迭代打印一行表格；终端上另有一个 tqdm 进度条
    （tqdm.auto：在 notebook 里是一个小部件）。不是终端（重定向到文件）时只打印表格行。
    """

    def __init__(self, total, every, out, tty):
        from tqdm.auto import tqdm
        self.total, self.every, self.out = total, every, out
        self.bar = tqdm(total=total, file=out, disable=not tty, desc="训练", unit="次", leave=False,
                        dynamic_ncols=True)
        self.header_done = False

    def __call__(self, hist, model):
        i = hist.n_rows
        row = hist.last()
        if i % self.every == 0 or i == self.total:
            table = hist.to_table(columns=TABLE_COLUMNS, rows=[i - 1], header=not self.header_done, min_width=10)
            self.header_done = True
            self.bar.write(table, file=self.out)
        self.bar.set_postfix_str(f"路径 pass@1 {row['pass1_exact']:.3f}  熵 {row['entropy']:.3f}", refresh=False)
        self.bar.update(1)

    def finish(self):
        self.bar.close()


def plot_history(hist, path, title=None):
    """把训练曲线存成 PNG（用 toyllm.plots.plot_training_curves）。【返回】path"""
    import matplotlib
    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")
    from toyllm.plots import plot_training_curves
    skip = {"reward"} if (hist.config or {}).get("reward", "outcome") == "outcome" else set()   # 结果奖励 = 采样 pass@1
    columns = [c for c in ("pass1_exact", "pass1_sampled", "reward", "entropy", "kl_exact", "clip_high", "clip_low",
                           "zero_std") if c in hist and c not in skip]
    fig = plot_training_curves(hist, columns=columns, title=title or "训练曲线")[0].figure
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt
    plt.close(fig)
    return path


def main(args, out=None):
    """
    命令的主体（测试也直接调用它）。

    【参数】args：argparse 的结果（add_arguments 定义的选项）；out：输出流，默认 sys.stdout
    【返回】退出码：0 正常结束；130 被 Ctrl+C 中断（模型照样保存 / 画图）；2 选项不合法
    """
    out = sys.stdout if out is None else out
    try:
        try:
            size = float(args.size)
        except ValueError:
            raise ValueError(f"--size 必须是一个数，例如 1e9，收到 {args.size!r}") from None
        size = as_real("--size", size, 0.0, low_open=True)
        cfg = build_config(args)
        train_set, heldout = default_problems(args.problem_seed, args.n_train, args.n_heldout, args.min_steps,
                                              args.max_steps)
        if args.table_every is not None and args.table_every < 1:
            raise ValueError(f"--table-every 必须 >= 1，收到 {args.table_every}")
    except (ValueError, TypeError) as e:
        print(f"选项不合法：{e}", file=sys.stderr)
        return 2
    every = args.table_every or max(1, cfg.iterations // 10)
    model = TrainableLLM(size)
    start = model.copy(name=f"{fmt_size(size)}（训练前）")
    name = PRESET_NAMES[args.preset]
    print(f"用 {name} 训练 {fmt_size(size)} 模型：{cfg.iterations} 次迭代 × {cfg.batch_problems} 题 × G = "
          f"{cfg.group_size}，学习率 {cfg.lr:g}，种子 {cfg.seed}；训练题 {len(train_set)} 道，留出题 {len(heldout)} 道。",
          file=out)
    changed = {k: v for k, v in cfg.to_dict().items() if v != getattr(PRESETS[args.preset], k)}
    if changed:
        print("改动的选项：" + "，".join(f"{option_label(k).split('（')[0]} = {v}" for k, v in changed.items()), file=out)
    tty = (not args.no_progress) and hasattr(out, "isatty") and out.isatty()
    progress = _Progress(cfg.iterations, every, out, tty)
    hist = train(model, cfg, train_set, correct_paths(heldout), callback=progress)
    progress.finish()
    print("", file=out)
    print(f"留出题上的路径 pass@1：{hist.meta['start_pass1_exact']:.3f} → {hist.meta['final_pass1_exact']:.3f}"
          f"（一共采样 {hist['samples'][-1] if hist.n_rows else 0} 份解答）", file=out)
    print("训练前后每个情境选 correct 的概率：", file=out)
    print(context_table(start, model), file=out)
    code = 0
    if hist.interrupted:
        print(hist.message, file=out)
        code = 130
    if args.save:
        from tools.checkpoint import save_model
        from toyllm.saving import history_path
        save_model(model, args.save, history=hist,
                   metadata={"algorithm": args.preset, "options": cfg.to_dict(), "seed": cfg.seed, "size": size,
                             "problems": {"seed": args.problem_seed, "n_train": args.n_train,
                                          "n_heldout": args.n_heldout, "min_steps": args.min_steps,
                                          "max_steps": args.max_steps},
                             "interrupted": hist.interrupted})
        print(f"模型已保存到 {args.save}，训练记录在 {history_path(args.save)}", file=out)
    if args.plot:
        plot_history(hist, args.plot, title=f"{name}：{fmt_size(size)} 模型的训练曲线")
        print(f"训练曲线已保存到 {args.plot}", file=out)
    return code


def build_parser():
    """命令行参数（add_arguments 的全部选项）。"""
    return add_arguments(argparse.ArgumentParser(prog="python tools/train_cli.py",
                                                 description="用某个预设训练模型，打印训练过程，可以保存模型和曲线"))


if __name__ == "__main__":
    sys.exit(main(build_parser().parse_args()))
