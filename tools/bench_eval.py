"""
评估的速度：路径 pass@1（1000 道题）要多久，采样评估每秒能做多少份解答。

【用法】（在仓库根目录）
    .venv/bin/python tools/bench_eval.py              # 默认：1000 道 3~8 步的题，重复 50 次取中位数
    .venv/bin/python tools/bench_eval.py --problems 5000 --repeats 20

【思路】计时用 time.perf_counter，每项重复多次取**中位数**（不受偶尔的系统抖动影响）。
    路径 pass@1 分两种情况报告：
        · 从 list of Problem 开始（要先用 Python 把题目沿正确路径拆成数组：correct_paths）；
        · 已经有了 CorrectPaths（同一批题反复评估时，RL 训练里就是这样）：只剩 numpy 的数组运算。
    这些都是"走对路径的概率"；answer_probs（答对的概率，所有路径都算）重复几次。
    这是打印数字的脚本，不是测试：速度和机器有关，测试里不检查它。
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from toyllm import TrainableLLM, make_problem_set  # noqa: E402
from toyllm.evaluation import draw_samples  # noqa: E402
from toyllm.experiments import evaluate_sampled  # noqa: E402
from toyllm.exact import (answer_probs, correct_paths, exact_entropy, exact_pass_at_1,  # noqa: E402
                          grad_expected_reward)
from toyllm.sampler import prepare_problems  # noqa: E402


def median_time(fn, repeats):
    """运行 fn repeats 次，返回用时的中位数（秒）。"""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description="评估速度：路径 pass@1 与采样评估的吞吐量")
    parser.add_argument("--problems", type=int, default=1000, help="题数（默认 1000）")
    parser.add_argument("--repeats", type=int, default=50, help="每项重复几次取中位数（默认 50）")
    parser.add_argument("--n", type=int, default=16, help="采样评估时每道题的样本数（默认 16）")
    args = parser.parse_args(argv)
    if args.problems < 1 or args.repeats < 1 or args.n < 1:
        parser.error("--problems、--repeats、--n 都必须 ≥ 1")

    problems = make_problem_set(random.Random(0), args.problems, 3, 8)
    model = TrainableLLM(1e9)
    model.params[...] = np.random.default_rng(0).normal(scale=0.3, size=model.params.shape)
    paths = correct_paths(problems)
    steps = int(paths.mask.sum())
    P = len(problems)
    print(f"{P} 道题（3~8 步，共 {steps} 步），模型 1B，每项重复 {args.repeats} 次取中位数\n")

    print("精确计算")
    batch = prepare_problems(problems)
    t = t_path = median_time(lambda: exact_pass_at_1(model, problems), args.repeats)
    print(f"  exact_pass_at_1（从题目列表开始）      {t * 1e3:8.2f} ms")
    t = median_time(lambda: correct_paths(problems), args.repeats)
    print(f"    其中 correct_paths（拆成数组）        {t * 1e3:8.2f} ms")
    t = median_time(lambda: exact_pass_at_1(model, paths), args.repeats)
    print(f"  exact_pass_at_1（已有 CorrectPaths）    {t * 1e3:8.2f} ms")
    t = median_time(lambda: grad_expected_reward(model, paths), args.repeats)
    print(f"  grad_expected_reward（已有 CorrectPaths）{t * 1e3:7.2f} ms")
    t = median_time(lambda: exact_entropy(model, paths), args.repeats)
    print(f"  exact_entropy（已有 CorrectPaths）      {t * 1e3:8.2f} ms")
    reps = max(1, args.repeats // 25)
    t = median_time(lambda: answer_probs(model, batch), reps)
    print(f"  answer_probs（答对的概率，所有路径）    {t * 1e3:8.0f} ms   （重复 {reps} 次；"
          f"是走对路径的 {t / t_path:,.0f} 倍）")

    print("\n采样评估")
    rng = np.random.default_rng(0)
    reps = max(1, args.repeats // 10)
    t = median_time(lambda: draw_samples(model, batch, args.n, rng), reps)
    print(f"  draw_samples（每道题 {args.n} 次）          {t * 1e3:8.1f} ms   "
          f"≈ {P * args.n / t:,.0f} 份解答/秒，{steps * args.n / t:,.0f} 步/秒")
    t = median_time(lambda: evaluate_sampled(model, batch, args.n, rng), reps)
    print(f"  evaluate_sampled（pass@k、maj@k、best-of-k 全部）{t * 1e3:8.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
