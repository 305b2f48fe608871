"""
make bench（python tools/bench.py）：引擎和"地板"（tools/floor.py，同一个 GRPO 最精简的 numpy 写法）的用时之比、
DAPO / GRPO 的用时之比、exact.answer_probs 算 1,000 道题的用时；再比较朴素 Python 循环和向量化引擎，给出每个预设的用时
（第 6 讲：引擎为什么快 —— 策略只取决于情境，一批几千步的梯度按情境一次加起来）。

【思路】两边做的是**同一个算法**：每次迭代随机挑 32 道题，每题采样 G = 8 份，优势
        A = (r − 组平均) / (组标准差 + 1e-4)（样本标准差），损失按"先解答内平均、再对解答平均"（seq-mean），
        μ = 1，学习率相同，一共 50 次迭代。
    · 朴素循环按参考模块的写法：model.generate 一步一步采样，step_records / probs_for 重建每一步的情境和概率，
      add_grad 把每一步的梯度加进字典，apply_grads 更新 Δ。
    · 引擎（toyllm.rl.train，预设 "grpo"）：所有题 × 所有份 × 所有步放在 numpy 数组里一起算，梯度用 np.bincount 合并；
      它每次迭代还顺便算了留出题上的路径 pass@1、熵、KL 等记录，朴素循环没有做这些。
    两边的随机数用法不同（random.Random 和 numpy），所以训练轨迹不同，但最后的路径 pass@1 应该差不多。
    速度目标：引擎至少快 25 倍，并且 GRPO 在 2 核的机器上 0.2 秒以内跑完。之后同样的工作量（50 次迭代 × 32 题 × G = 8）
    把每个预设各跑几遍，打印最快的一次（DAPO 的动态采样会多采几批，PPO / DAPO 每批更新 μ = 4 次）。
    计时只在这里打印，不写成单元测试。维护者的工具，不在学生的包里。

【用法】（在仓库根目录）
    .venv/bin/python tools/bench.py [--size 1e9] [--seed 0] [--repeats 5] [--rounds 7]
"""

import argparse
import math
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toyllm.arithmetic import make_problem_set  # noqa: E402
from toyllm.exact import answer_probs, correct_paths, exact_pass_at_1  # noqa: E402
from toyllm.problems import default_problems  # noqa: E402
from toyllm.rl import PRESET_NAMES, PRESETS, preset, train  # noqa: E402
from toyllm.rl.losses import group_advantages  # noqa: E402
from toyllm.tables import display_width, pad  # noqa: E402
from toyllm.trainable import TrainableLLM, add_grad, apply_grads, probs_for, step_records  # noqa: E402
from tools.floor import floor_grpo, path_tables  # noqa: E402

ITERATIONS = 50
PRESET_TARGET_SECONDS = 0.5
PRESET_TARGET_RATIO = 2.0
BATCH_PROBLEMS = 32
GROUP_SIZE = 8


def plain_grpo_gradient(model, groups, batch_problems, std_eps=1e-4):
    """
    一次迭代的梯度（参考模块的写法）：groups 是 [(题目, [G 份 Sample]), ...]。

    【思路】A = (r − 组平均) / (组样本标准差 + std_eps)（rl.group_advantages）；每一步
        add_grad(权重 = A / (题数 × G × 这份解答的步数))，即 seq-mean 聚合。奖励全相同的组优势全是 0，直接跳过。
    【返回】{情境: [g0, g1, g2]}（上升方向，交给 apply_grads）
    """
    grads = {}
    for problem, samples in groups:
        rewards = [1.0 if s.correct else 0.0 for s in samples]
        if max(rewards) == min(rewards):
            continue                                      # 奖励全相同：优势全是 0，没有梯度
        for sample, adv in zip(samples, group_advantages(rewards, len(samples), eps=std_eps).tolist()):
            records = step_records(problem, sample)
            weight = adv / (batch_problems * len(samples) * len(records))            # seq-mean
            for (key, action), probs in zip(records, probs_for(model, problem, sample)):
                add_grad(grads, key, action, probs, weight)
    return grads


def plain_grpo(model, problems, iterations=ITERATIONS, batch_problems=BATCH_PROBLEMS, group_size=GROUP_SIZE, lr=2.0,
               std_eps=1e-4, seed=0):
    """
    参考模块风格的 GRPO（纯 Python，一步一步算）。和 rl.train(model, "grpo") 是同一个算法。

    【参数】model：TrainableLLM（原地训练）；problems：list of Problem；其余同 RLConfig
    【返回】model
    """
    rng = random.Random(seed)
    for _ in range(iterations):
        groups = [(p, [model.generate(p, rng) for _ in range(group_size)]) for p in rng.sample(problems, batch_problems)]
        apply_grads(model, plain_grpo_gradient(model, groups, batch_problems, std_eps), lr)
    return model


def run(size=1e9, seed=0, out=print, repeats=5):
    """
    跑基准并打印结果。【返回】dict：plain_seconds、engine_seconds、ratio、各自的 pass@1（测试可以直接调用）。
    """
    train_set, heldout = default_problems(seed)
    paths = correct_paths(heldout)
    cfg = preset("grpo", iterations=ITERATIONS, batch_problems=BATCH_PROBLEMS, group_size=GROUP_SIZE, seed=seed)
    start = exact_pass_at_1(TrainableLLM(size), paths)
    out(f"同一个 GRPO 训练：{ITERATIONS} 次迭代 × {BATCH_PROBLEMS} 题 × G = {GROUP_SIZE}，{TrainableLLM(size).name} 模型，"
        f"学习率 {cfg.lr:g}；训练前留出题上的路径 pass@1 = {start:.3f}")

    train(TrainableLLM(size), cfg.replace(iterations=2), train_set, paths)          # 预热（第一次调用的额外开销）
    engine_times, engine_model = [], None

    def time_engine():
        nonlocal engine_model
        for _ in range(repeats):
            model = TrainableLLM(size)
            t0 = time.perf_counter()
            train(model, cfg, train_set, paths)
            engine_times.append(time.perf_counter() - t0)
            engine_model = model

    # 引擎跑得快，在朴素循环前后各跑 repeats 次、取最快的一次（和 timeit 的建议一样：最小值受机器上其他负载的干扰最小）
    time_engine()
    plain_model = TrainableLLM(size)
    t0 = time.perf_counter()
    plain_grpo(plain_model, train_set, lr=cfg.lr, std_eps=cfg.std_eps, seed=seed)
    plain_s = time.perf_counter() - t0
    time_engine()
    engine_s = min(engine_times)

    p_plain, p_engine = exact_pass_at_1(plain_model, paths), exact_pass_at_1(engine_model, paths)
    ratio = plain_s / engine_s if engine_s > 0 else math.inf
    out(f"朴素 Python 循环（generate / step_records / probs_for / add_grad / apply_grads）：{plain_s:.3f} 秒，"
        f"训练后路径 pass@1 = {p_plain:.3f}")
    out(f"向量化引擎（toyllm.rl.train）：{engine_s:.3f} 秒（{len(engine_times)} 次里最快的一次），训练后路径 pass@1 = {p_engine:.3f}")
    out(f"引擎快 {ratio:.1f} 倍。目标：≥ 25 倍{'（达到）' if ratio >= 25 else '（没达到）'}，"
        f"引擎 < 0.2 秒{'（达到）' if engine_s < 0.2 else '（没达到）'}。")
    close = abs(p_plain - p_engine) < 0.05
    out(f"两边训练后的 pass@1 {'相近' if close else '相差较大'}（差 {abs(p_plain - p_engine):.3f}；"
        f"随机数不同，训练轨迹不同，允许几个百分点的差别）。")
    presets = preset_times(size, seed, repeats, train_set, paths)
    out(f"每个预设同样的工作量（{ITERATIONS} 次迭代 × {BATCH_PROBLEMS} 题 × G = {GROUP_SIZE}，{repeats} 次里最快的一次；"
        f"目标：每个 < {PRESET_TARGET_SECONDS} 秒；issue 24：verl / TRL 的新预设 ≤ {PRESET_TARGET_RATIO:g} × GRPO）：")
    width = max(display_width(PRESET_NAMES[name]) for name in presets) + 2
    grpo_s = presets["grpo"][0]
    for name, (secs, samples) in presets.items():
        mark = "" if secs < PRESET_TARGET_SECONDS else "（没达到）"
        out(f"  {pad(PRESET_NAMES[name], width)}{secs:6.3f} 秒{mark}  = {secs / grpo_s:4.2f} × GRPO（采样 {samples} 份解答）")
    return {"plain_seconds": plain_s, "engine_seconds": engine_s, "ratio": ratio, "start_pass1": start,
            "plain_pass1": p_plain, "engine_pass1": p_engine, "presets": presets}


def floor_comparison(size=1e9, seed=0, rounds=7, seeds=5, out=print):
    """
    引擎和"地板"（tools/floor.py：同样的采样规则、优势和更新，什么都不记）在同一个进程里交替各跑 rounds 次，取中位数；
    量的是这个进程的 CPU 时间（time.process_time；两边都只用一个线程）：机器上别的进程抢核时，墙上时间会乱跳，CPU 时间稳得多。
    DAPO 和 GRPO 也交替跑。引擎不做留出题评估：留出题只给 1 道（train 每次迭代都算留出题的路径 pass@1，1 道题几乎不花时间）。
    再在 seeds 个种子上比较两者训练后留出题的路径 pass@1（平均值 ± 标准误），并检查同一个种子下 Δ 是否逐位相同。

    【返回】dict：engine、floor、dapo 的中位秒数，ratio = engine / floor，dapo_ratio = dapo / engine，
        pass1（{"engine": (平均, 标准误), "floor": (平均, 标准误)}），identical（每个种子的 Δ 都逐位相同）
    """
    train_set, heldout = default_problems(seed)
    tables, one, paths = path_tables(train_set), correct_paths(heldout[:1]), correct_paths(heldout)
    work = dict(iterations=ITERATIONS, batch_problems=BATCH_PROBLEMS, group_size=GROUP_SIZE, seed=seed)
    grpo, dapo = preset("grpo", **work), preset("dapo", **work)
    train(TrainableLLM(size), grpo.replace(iterations=2), train_set, one)          # 预热
    floor_grpo(size, train_set, iterations=2, tables=tables)
    times = {"engine": [], "floor": [], "dapo": []}
    for _ in range(rounds):
        for name, fn in (("engine", lambda: train(TrainableLLM(size), grpo, train_set, one)),
                         ("floor", lambda: floor_grpo(size, train_set, lr=grpo.lr, std_eps=grpo.std_eps, seed=seed,
                                                      tables=tables)),
                         ("dapo", lambda: train(TrainableLLM(size), dapo, train_set, one))):
            t0 = time.process_time()
            fn()
            times[name].append(time.process_time() - t0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    p1, identical = {"engine": [], "floor": []}, True
    for s in range(seeds):
        model = TrainableLLM(size)
        train(model, grpo.replace(seed=s), train_set, one)
        floor_model = TrainableLLM(size)
        floor_model.params[:] = floor_grpo(size, train_set, lr=grpo.lr, std_eps=grpo.std_eps, seed=s, tables=tables)
        identical &= bool(np.array_equal(model.params, floor_model.params))
        p1["engine"].append(exact_pass_at_1(model, paths))
        p1["floor"].append(exact_pass_at_1(floor_model, paths))
    p1 = {k: (float(np.mean(v)), float(np.std(v, ddof=1) / np.sqrt(len(v)))) for k, v in p1.items()}
    ratio, dapo_ratio = med["engine"] / med["floor"], med["dapo"] / med["engine"]
    # DAPO 的动态采样丢掉奖励全相同的组再补采：同样的迭代次数，它采的解答多好几倍。按采到的每份解答算一次比值
    drawn = {name: train(TrainableLLM(size), cfg, train_set, one)["samples"][-1] for name, cfg in (("grpo", grpo),
                                                                                                    ("dapo", dapo))}
    per_sample = dapo_ratio * drawn["grpo"] / drawn["dapo"]
    out(f"引擎 / 地板（tools/floor.py，同样的采样规则、优势和更新，不记录、不评估；交替 {rounds} 轮的中位数，CPU 时间）："
        f"{med['engine'] * 1000:.1f} ms / {med['floor'] * 1000:.1f} ms = {ratio:.2f} 倍"
        f"（上限 ≤ 1.6：RL 循环按讲义写，速度只在采样器和精确答案引擎里{'，达到' if ratio <= 1.6 else '，没达到'}）")
    out(f"DAPO / GRPO（同样的工作量，交替）：{med['dapo'] * 1000:.1f} ms / {med['engine'] * 1000:.1f} ms = "
        f"{dapo_ratio:.2f} 倍（目标 ≤ 2{'，达到' if dapo_ratio <= 2 else '，没达到'}）；DAPO 采了 {drawn['dapo']} 份解答，"
        f"GRPO {drawn['grpo']} 份（{drawn['dapo'] / drawn['grpo']:.2f} 倍），按每份解答算 DAPO / GRPO = {per_sample:.2f} 倍")
    out(f"训练后留出题的路径 pass@1（{seeds} 个种子，平均 ± 标准误）：引擎 {p1['engine'][0]:.4f} ± {p1['engine'][1]:.4f}，"
        f"地板 {p1['floor'][0]:.4f} ± {p1['floor'][1]:.4f}；同一个种子下 Δ {'逐位相同' if identical else '不同'}")
    return {**med, "ratio": ratio, "dapo_ratio": dapo_ratio, "dapo_per_sample": per_sample, "samples": drawn,
            "pass1": p1, "identical": identical}


def answer_probs_time(size=1e9, n=1000, seed=0, out=print, repeats=3):
    """exact.answer_probs（答对的精确概率）算 n 道 3~8 步的题要几秒（repeats 次里最少的 CPU 时间，单线程）。【返回】秒数"""
    problems = make_problem_set(random.Random(seed), n, 3, 8)
    model = TrainableLLM(size)
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        q = answer_probs(model, problems)
        times.append(time.process_time() - t0)
    secs = min(times)
    out(f"exact.answer_probs：{n} 道 3~8 步的题 {secs:.3f} 秒（{repeats} 次里最少的 CPU 时间；目标 ≤ 0.1 秒"
        f"{'，达到' if secs <= 0.1 else '，没达到'}）；平均答对的概率 {q.mean():.4f}，路径 pass@1 {exact_pass_at_1(model, problems):.4f}")
    return secs


def preset_times(size=1e9, seed=0, repeats=5, train_set=None, paths=None):
    """每个预设在基准工作量上的用时：{预设名: (最快的秒数, 采样的解答数)}。"""
    if train_set is None or paths is None:
        train_set, heldout = default_problems(seed)
        paths = correct_paths(heldout)
    out = {}
    for name in PRESETS:
        cfg = preset(name, iterations=ITERATIONS, batch_problems=BATCH_PROBLEMS, group_size=GROUP_SIZE, seed=seed)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            hist = train(TrainableLLM(size), cfg, train_set, paths)
            times.append(time.perf_counter() - t0)
        out[name] = (min(times), hist["samples"][-1])
    return out


def main(argv=None):
    """python tools/bench.py 的入口。"""
    parser = argparse.ArgumentParser(description="速度基准：同一个 GRPO 训练，朴素循环 vs 向量化引擎；各预设用时")
    parser.add_argument("--size", type=float, default=1e9, help="模型参数量（默认 1e9）")
    parser.add_argument("--seed", type=int, default=0, help="随机种子（默认 0）")
    parser.add_argument("--repeats", type=int, default=5, help="引擎跑几次取最快的一次（默认 5）")
    parser.add_argument("--rounds", type=int, default=7, help="引擎和地板交替跑几轮取中位数（默认 7）")
    args = parser.parse_args(argv)
    out = lambda s: print(s, flush=True)  # noqa: E731
    floor_comparison(args.size, args.seed, args.rounds, out=out)
    answer_probs_time(args.size, out=out)
    run(args.size, args.seed, out=out, repeats=args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
