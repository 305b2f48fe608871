"""
小 transformer（toyllm.tinylm）的基准：预训练网络的清单（每种大小的预训练用时、留出题准确率），SFT 一步、RL 一次迭代各要多久，notebook 08、09 整体要多久；
两个种子上 SFT 前后、RL 前后的留出题准确率（贪心和采样）。

【用法】（在仓库根目录）
    .venv/bin/python tools/bench_tinylm.py                 # 预训练网络的清单；种子 0 和 1；再执行一次 notebook 08、09
    .venv/bin/python tools/bench_tinylm.py --seeds 0 --no-notebook
    .venv/bin/python tools/bench_tinylm.py --cot           # 再加玩具的 1~2 步题：两种数的写法 × 每个种子（约 2 分钟）

【思路】和 notebook 08 同样的设置：2000 道两位数加法训练题，200 道留出题；SFT 450 步（每批 64 道，Adam lr 3e-3），
    然后 GRPO（tiny_config("grpo")：每次 16 道题 × G = 8，Adam lr 3e-4）。每步用时取**中位数**。
    另外量 DAPO 预设（μ = 4、token-mean、clip-higher）一次迭代的用时。
    --cot：玩具的 1~2 步题，和 notebook 08 第 8、9 节一样（SFT 700 步，GRPO 30 次迭代）；
    数按网络用的写法（补零、个位在前）和平常的写法各训练一次，看写法差多少。
    这是打印数字的脚本，不是测试：速度和机器有关（2 核的机器被别的进程占用时会慢好几倍），测试里不检查它。
"""

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from toyllm import tinylm as tl  # noqa: E402
from tools.bench_eval import median_time  # noqa: E402


def timed(fn, *args, **kwargs):
    """(fn(*args, **kwargs), 用了几秒)。"""
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def run_seed(seed, sft_steps, rl_iters):
    """一个种子：SFT 前后、RL 前后的准确率（贪心 / 采样），和总用时。"""
    model = tl.TinyLM(seed=seed)
    train = tl.addition_examples(2000, seed=seed)
    heldout = tl.addition_examples(200, seed=seed + 100, exclude=train)

    def acc():
        return tl.accuracy(model, heldout), tl.accuracy(model, heldout, 1.0, np.random.default_rng(seed))

    row = {"初始": acc()}
    _, t_sft = timed(tl.sft, model, train, steps=sft_steps, batch_size=64, lr=3e-3, seed=seed)
    row["SFT 后"] = acc()
    sft_model = model.copy()
    _, t_rl = timed(tl.rl_train, model, train, tl.tiny_config("grpo", iterations=rl_iters, seed=seed))
    row["GRPO 后"] = acc()
    return row, t_sft, t_rl, sft_model, train


def run_cot(seed, reversed_digits, sft_steps, rl_iters):
    """玩具的 1~2 步题：和 notebook 08 第 8、9 节同样的出题、网络和训练；reversed_digits=False 换成平常的写法。"""
    import random

    from toyllm.arithmetic import make_problem_set
    problems = make_problem_set(random.Random(seed), 10000, 1, 2)
    examples = [tl.problem_example(p, reversed_digits) for p in problems]
    train, heldout = examples[:-400], examples[-400:]
    model = tl.TinyLM(seed=seed, context=25)

    def acc():
        return tl.accuracy(model, heldout), tl.accuracy(model, heldout, 1.0, np.random.default_rng(0))

    _, t_sft = timed(tl.sft, model, train, steps=sft_steps, seed=seed)
    row = {"SFT 后": acc()}
    _, t_rl = timed(tl.rl_train, model, train, tl.tiny_config("grpo", iterations=rl_iters, seed=seed))
    row["GRPO 后"] = acc()
    return row, t_sft, t_rl


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--sft-steps", type=int, default=450)
    ap.add_argument("--rl-iterations", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--no-notebook", action="store_true", help="不执行 notebook 08")
    ap.add_argument("--cot", action="store_true",
                    help="再量玩具的 1~2 步题（思维链写成文字）：两种数的写法，每个种子各一次")
    ap.add_argument("--cot-sft-steps", type=int, default=700)
    ap.add_argument("--cot-rl-iterations", type=int, default=30)
    args = ap.parse_args(argv)

    from toyllm.blas import BLAS_CORETYPE, blas_kernel
    kernel = blas_kernel()
    print(f"矩阵乘法：{kernel}" + ("" if kernel and kernel["内核"] == BLAS_CORETYPE else
                                 f"（不是 {BLAS_CORETYPE}：准确率和 notebook 08 不可比；用 make bench，或设 OPENBLAS_CORETYPE）"))
    print("预训练的网络（make pretrain 记在清单里：CPU 时间、manifest 的 1,000 道留出题上的贪心准确率）：")
    for name in tl.PRETRAINED:
        info = tl.manifest(name)
        t0 = time.perf_counter()
        tl.pretrained(name)
        print(f"  {name:<6}{info['n_params']:>9,} 个参数  预训练 {info['cpu_seconds']:6.0f} s  "
              f"留出题贪心 {info['heldout']['greedy']:.3f}  （载入 {1e3 * (time.perf_counter() - t0):.0f} ms）")
    print(f"\n留出题准确率（200 道，贪心 / 采样 T = 1）：SFT {args.sft_steps} 步，GRPO {args.rl_iterations} 次迭代")
    trained = None
    for seed in args.seeds:
        row, t_sft, t_rl, sft_model, train = run_seed(seed, args.sft_steps, args.rl_iterations)
        trained = trained or (sft_model, train)
        cells = "  ".join(f"{k} {g:.3f} / {s:.3f}" for k, (g, s) in row.items())
        print(f"  种子 {seed}：{cells}   （SFT {t_sft:.1f} s，GRPO {t_rl:.1f} s）")

    model, train = trained                     # 在 SFT 以后的模型上计时：奖励有对有错，RL 真的在更新
    print(f"\n{model}；每项 {args.repeats} 次的中位数")
    sft_step = median_time(lambda: tl.sft(model.copy(), train, steps=1, batch_size=64, lr=3e-3), args.repeats)
    print(f"SFT 一步（64 道题）：{sft_step * 1e3:.1f} ms")
    for name, what in (("grpo", "μ = 1"), ("dapo", "μ = 4、token-mean、clip-higher")):
        t = median_time(lambda: tl.rl_train(model.copy(), train, tl.tiny_config(name, iterations=1)), args.repeats)
        print(f"{name.upper()} 一次迭代（16 道题 × G = 8，{what}）：{t * 1e3:.1f} ms")
    if args.cot:
        print(f"\n玩具的 1~2 步题（notebook 08 第 8、9 节的设置：10000 道题，最后 400 道留出；"
              f"SFT {args.cot_sft_steps} 步，GRPO {args.cot_rl_iterations} 次迭代）")
        print("留出题准确率，贪心 / 采样 T = 1：")
        for seed in args.seeds:
            for rev in (True, False):
                row, t_sft, t_rl = run_cot(seed, rev, args.cot_sft_steps, args.cot_rl_iterations)
                cells = "  ".join(f"{k} {g:.3f} / {s:.3f}" for k, (g, s) in row.items())
                layout = "补零、个位在前" if rev else "平常的写法    "
                print(f"  种子 {seed}，{layout}：{cells}   （SFT {t_sft:.1f} s，GRPO {t_rl:.1f} s）")
    if not args.no_notebook:
        import nbformat

        from tools.build_notebooks import execute
        for path in sorted((ROOT / "notebooks").glob("0[89]_*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            t0 = time.perf_counter()
            execute(nb, ROOT / "notebooks")
            print(f"\n{path.name} 执行一次（tools.build_notebooks.execute，含启动内核）：{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
