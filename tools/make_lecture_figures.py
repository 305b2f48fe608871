"""
重新生成讲义里的图和数字：lectures/figures/*.png、lectures/figures/numbers.json，
以及两份讲义里 <!-- generated:名字 --> … <!-- /generated:名字 --> 之间的表格。

【思路】讲义里的每一个结果数字都由这里的代码算出来，不手打：
    1. compute()：跑评估和几次 RL 训练（全部固定种子），得到一个"数字字典"和画图用的数据；
    2. render_blocks(numbers)：把数字排成 Markdown 表格（讲义里被标记的那几段）；
    3. draw_figures(data, 目录)：用 toyllm.plots 画图，存成 PNG（固定 dpi、不写软件版本，所以同样的输入得到同样的文件）。
    tests/notebooks/test_lectures.py 检查讲义里的表格 == render_blocks(numbers.json)，并检查正文里的定性说法
    （"越大越好"、"基座不会反超"……）和这些数字一致；慢测试（-m slow）重新运行 compute() 和 numbers.json 比较。

【用法】（在仓库根目录）
    .venv/bin/python tools/make_lecture_figures.py            # 重新计算，写图、numbers.json、讲义里的表格
    .venv/bin/python tools/make_lecture_figures.py --check    # 只检查讲义、numbers.json 是否和重新计算的一致
    .venv/bin/python tools/make_lecture_figures.py --no-figures   # 只更新数字和表格，不画图
    numbers.json 的 "network"（真网络上的说法，讲义 §10.4）由 tools/network_claims.py 算，这里不重算、原样保留。
"""

import argparse
import json
import math
import random
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from toyllm import CONTEXT_NAMES, CONTEXTS, ToyLLM, TrainableLLM, fmt_size, make_problem_set  # noqa: E402
from toyllm.estimators import seed_verdict  # noqa: E402
from toyllm.exact import answer_pass_at_k, answer_probs, correct_paths  # noqa: E402
from toyllm.experiments import inference_curves  # noqa: E402
from toyllm.policy import prob_table  # noqa: E402
from toyllm.rl import PRESETS, RLConfig, default_problems, preset, train  # noqa: E402
from toyllm.rl.presets import format_option  # noqa: E402
from toyllm.peers import ANY, ROWS, TRANSFORMERS_VERSION, TRL_COMMIT, VERL_COMMIT, hydra_value, to_trl, to_verl  # noqa: E402
from toyllm.scaling import fit_sigmoid, reach_target, scaling_curve  # noqa: E402
from toyllm.tinylm import tiny_config  # noqa: E402

LECTURES = ROOT / "lectures"
FIGURES = LECTURES / "figures"
NUMBERS = FIGURES / "numbers.json"
NOTES = (LECTURES / "lecture01_toy_llm.md", LECTURES / "lecture06_scaling_rl.md")
DPI = 100

# ---- 实验设置（讲义里的表格会把它们写出来）----
SIZES = (1e8, 1e9, 1e10, 1e11, 1e12)               # pass@1 随规模
TTC_SIZES = (1e9, 1e10)                            # 测试时计算：小模型多采样 vs 大模型采一次
TTC_N = 16                                         # 每道题采样几次
GRPO_SIZE = 1e9                                    # GRPO 训练曲线、Yue et al. 对照
CURVE_SIZES = (1e8, 1e9, 1e10)                     # RL 计算量曲线
TARGET = 0.8                                       # "到 pass@1 ≥ 0.8 用了多少解答"
CLIP = {"size": 1e8, "lr": 30.0, "mu": 4, "iterations": 100, "seeds": tuple(range(10)), "last": 20}
CLIP_GRID = {"lr": (2.0, 8.0, 30.0), "mu": (1, 2, 4), "seeds": (0, 1, 2)}   # 上界什么时候裁得到：lr × μ（慢测试要重跑：种子少一些）
YUE_KS = tuple(2 ** i for i in range(9))           # 1 … 256
YUE_TABLE_KS = (1, 4, 16, 64, 256)
DAPO_IGNORE = ("dynamic_sampling", "gen_batch_scale")   # 讲义 8.11 节的例子：TRL 没有动态采样（max_draws、on_short 跟着它不起作用）


def lecture_problems():
    """课堂上反复用的 100 道 3~8 步的题。"""
    return make_problem_set(random.Random(0), 100, 3, 8)


def _r(x, nd=6):
    return float(round(float(x), nd))


def _harmless_contexts(problems):
    """在正确路径上 bug 从不咬人的情境（下标）：出现过、而且每一次 bug 都恰好算对。"""
    paths = correct_paths(problems)
    out = []
    for i in range(len(CONTEXTS)):
        sel = paths.mask & (paths.ctx == i)
        if sel.any() and paths.bug_ok[sel].all():
            out.append(i)
    return out


# =============================================================================
# 计算
# =============================================================================
def compute_evaluation():
    """不需要训练的部分（几秒钟）：pass@1 随规模、测试时计算。【返回】(numbers, data)"""
    problems = lecture_problems()
    numbers, data = {}, {}

    # 1. pass@1 随规模（精确值：答对的概率）
    numbers["pass1_by_size"] = [
        {"size": s, "cot": _r(answer_probs(ToyLLM(s), problems).mean()),
         "no_cot": _r(answer_probs(ToyLLM(s, cot=False), problems).mean())} for s in SIZES]
    data["scaling"] = scaling_curve(problems, np.random.default_rng(0))

    # 2. 测试时计算
    ttc = inference_curves([ToyLLM(s) for s in TTC_SIZES], problems, TTC_N, np.random.default_rng(1))
    data["ttc"] = ttc
    rows = []
    for s, m in zip(TTC_SIZES, ttc["models"]):
        for k, ex, mj, mse in zip(ttc["ks"], m["exact_pass_at_k"], m["maj_at_k"], m["maj_at_k_se"]):
            rows.append({"size": s, "k": int(k), "compute": s * k, "exact_pass_at_k": _r(ex),
                         "maj_at_k": _r(mj), "maj_at_k_se": _r(mse)})
    numbers["test_time_compute"] = {"n": TTC_N, "problems": len(problems), "rows": rows}
    return numbers, data


def compute():
    """跑全部实验（约半分钟）。【返回】(numbers, data)：numbers 是写进 numbers.json 的数字；data 是画图用的东西。"""
    numbers, data = compute_evaluation()
    numbers.update(compute_training(data))
    numbers["trl"], data["trl"] = trl_run()
    return numbers, data


TRL_RECORD = FIGURES / "trl_grpo.json"
TRL_COMMAND = "python -m toyllm.peers.trl --preset grpo --steps 20 --record lectures/figures/trl_grpo.json"
"""讲义 8.11 节"在真的训练框架上跑同一个实验"的记录：这条命令（.venv-peers 里）写的，配方、版本、两条曲线、用时都在里面。
这里只读它（make figures 不装 torch）；重新记录就重跑这条命令，再 make figures。"""


def trl_run():
    """TRL 和 numpy 的同一个 GRPO：从记录里取配方、版本、用时、两边的平均奖励和熵、留出题的贪心准确率。"""
    rec = json.loads(TRL_RECORD.read_text(encoding="utf-8"))
    mean = {side: {c: _r(float(np.mean([row[c] for row in rec[side]]))) for c in ("reward", "entropy", "zero_std")}
            for side in ("trl", "numpy")}
    numbers = {"recipe": {k: rec["recipe"][k] for k in ("preset", "steps", "model", "seed")},
               "grpo_config": rec["recipe"]["grpo_config"], "versions": rec["versions"],
               "seconds": {k: round(v, 1) for k, v in rec["seconds"].items()},
               "greedy": {k: _r(v) for k, v in rec["greedy"].items()}, "mean": mean}
    return numbers, rec


def compute_training(data):
    """RL 训练的部分：GRPO 曲线、RL 计算量的 S 形拟合、Yue et al. 对照、clip-higher。画图用的东西放进 data。"""
    numbers = {}
    # 3. GRPO 训练（1B），以及 RL 计算量曲线（三种大小）
    train_set, heldout = default_problems(0)
    runs = {}
    for s in CURVE_SIZES:
        model = TrainableLLM(s)
        hist = train(model, preset("grpo"), train_set, heldout)
        runs[s] = (model, hist)
    model, hist = runs[GRPO_SIZE]
    cfg = hist.meta["config"]
    numbers["grpo"] = {
        "size": GRPO_SIZE, "iterations": cfg["iterations"], "batch_problems": cfg["batch_problems"],
        "group_size": cfg["group_size"], "lr": cfg["lr"], "n_train": len(train_set), "n_heldout": len(heldout),
        "pass1_start": _r(hist.meta["start_pass1_exact"]), "pass1_end": _r(hist["pass1_exact"][-1]),
        "entropy_first": _r(hist["entropy"][0]), "entropy_last": _r(hist["entropy"][-1]),
        "zero_std_first": _r(hist["zero_std"][0]), "zero_std_last": _r(hist["zero_std"][-1]),
        "samples": int(hist["samples"][-1]),
    }
    data["grpo_hist"], data["grpo_model"] = hist, model

    curves = []
    data["curves"] = {}
    for s in CURVE_SIZES:
        m, h = runs[s]
        C = np.asarray(h["samples"], dtype=float)
        R = np.asarray(h["pass1_exact"], dtype=float)
        R0 = float(h.meta["start_pass1_exact"])
        fit = fit_sigmoid(C, R, R0, A_max=1.0)            # pass@1 不会超过 1
        hit = reach_target(h, TARGET)
        curves.append({"size": s, "R0": _r(R0), "A": _r(fit.A), "B": _r(fit.B), "C_mid": _r(fit.C_mid, 1),
                       "rmse": _r(fit.rmse), "final": _r(R[-1]), "samples_to_target": None if hit is None else hit[1],
                       "samples": int(C[-1])})
        data["curves"][s] = (C, R, R0, fit)
    numbers["sigmoid_fit"] = {"target": TARGET, "rows": curves}

    # 4. Yue et al.：基座 vs GRPO 之后，pass@k（精确，留出题）
    base = answer_pass_at_k(TrainableLLM(GRPO_SIZE), heldout, YUE_KS)
    rl = answer_pass_at_k(model, heldout, YUE_KS)
    numbers["yue"] = {
        "size": GRPO_SIZE,
        "rows": [{"k": k, "base": _r(base[k]), "rl": _r(rl[k]), "diff": _r(base[k] - rl[k])} for k in YUE_KS],
        "max_base_minus_rl": float(max(base[k] - rl[k] for k in YUE_KS)),
    }
    data["yue"] = (base, rl)

    # 5. 对称裁剪 vs clip-higher：先看上界什么时候裁得到（lr × μ），再在裁得到的设置上比较两种 ε_high（每个种子配对）
    numbers["clip_higher"] = data["clip"] = clip_higher(train_set, heldout)
    return numbers


def _clip_run(eps_high, seed, lr=CLIP["lr"], mu=CLIP["mu"], train_set=None, heldout=None):
    """clip-higher 实验的一次训练（CLIP 的设置，改 ε_high、种子，以及 lr、μ）。【返回】(模型, History)"""
    m = TrainableLLM(CLIP["size"])
    h = train(m, preset("grpo", mu=mu, lr=lr, iterations=CLIP["iterations"], eps_high=eps_high, seed=seed),
              train_set, heldout)
    return m, h


def clip_higher(train_set, heldout):
    """
    讲义 8.2 节：上界裁剪什么时候发生（lr × μ 的网格，ε_high = 0.2 时的上界裁剪比例，两种 ε_high 的训练是否逐位相同），
    和一个裁得到的设置上的配对比较（CLIP 的每个种子各训练两次，toyllm.estimators.seed_verdict 判定）。
    【返回】numbers.json 的 "clip_higher"（画图也用它）
    """
    grid = []
    for lr in CLIP_GRID["lr"]:
        for mu in CLIP_GRID["mu"]:
            hi, lo, same = [], [], []
            for seed in CLIP_GRID["seeds"]:
                (_, a), (_, b) = (_clip_run(eh, seed, lr, mu, train_set, heldout) for eh in (0.2, 0.28))
                hi.append(float(np.mean(a["clip_high"])))
                lo.append(float(np.mean(a["clip_low"])))
                same.append(all(np.array_equal(a[c], b[c]) for c in ("entropy", "pass1_exact", "clip_low", "clip_high")))
            grid.append({"lr": lr, "mu": mu, "clip_high": _r(np.mean(hi), 8), "clip_low": _r(np.mean(lo), 8),
                         "identical": sum(same), "identical_by_seed": same, "clip_high_by_seed": [_r(x, 8) for x in hi]})
    harmless = _harmless_contexts(heldout)
    others = [i for i in range(len(CONTEXTS)) if i not in harmless]
    rows = []
    for eh in (0.2, 0.28):
        ent, p1, pb_h, pb_o, cl_hi = [], [], [], [], []
        for seed in CLIP["seeds"]:
            m, h = _clip_run(eh, seed, train_set=train_set, heldout=heldout)
            e = np.asarray(h["entropy"], dtype=float)
            ent.append(float(np.mean(e[-CLIP["last"]:])))
            p1.append(h["pass1_exact"][-1])
            pt = prob_table(m)
            pb_h.append(float(pt[harmless, 1].mean()))
            pb_o.append(float(pt[others, 1].mean()))
            cl_hi.append(float(np.mean(h["clip_high"])))
        rows.append({"eps_high": eh, "entropy_last": _r(np.mean(ent)), "pass1_end": _r(np.mean(p1)),
                     "p_bug_harmless": _r(np.mean(pb_h)), "p_bug_other": _r(np.mean(pb_o)),
                     "clip_high": _r(np.mean(cl_hi), 8),
                     "entropy_last_by_seed": [_r(x) for x in ent], "pass1_end_by_seed": [_r(x) for x in p1],
                     "p_bug_harmless_by_seed": [_r(x) for x in pb_h], "clip_high_by_seed": [_r(x, 8) for x in cl_hi]})
    sym, hi = rows

    def judged(key):
        v = seed_verdict(hi[key], sym[key])
        return {k: (_r(x, 8) if isinstance(x, float) else x) for k, x in v.items()}

    numbers = {**{k: (list(v) if isinstance(v, tuple) else v) for k, v in CLIP.items()},
               "harmless_contexts": [CONTEXT_NAMES[CONTEXTS[i]] for i in harmless], "rows": rows,
               "entropy_diff_by_seed": [_r(b - a) for a, b in zip(sym["entropy_last_by_seed"], hi["entropy_last_by_seed"])],
               "verdict": judged("entropy_last_by_seed"), "p_bug_harmless_verdict": judged("p_bug_harmless_by_seed"),
               "pass1_verdict": judged("pass1_end_by_seed"),
               "grid": {"lr": list(CLIP_GRID["lr"]), "mu": list(CLIP_GRID["mu"]), "seeds": list(CLIP_GRID["seeds"]),
                        "rows": grid}}
    return numbers


# =============================================================================
# 表格
# =============================================================================
def _sci(x):
    """1e9 → "1e9"（10 的整数次幂写成短的科学计数法）。"""
    e = round(math.log10(x))
    return f"1e{e}" if 10.0 ** e == x else f"{x:g}"


def _f(x, nd=4):
    return f"{x:.{nd}f}"


def render_blocks(numbers):
    """把数字排成 Markdown：{块名: 文本}。讲义里 <!-- generated:块名 --> 和 <!-- /generated:块名 --> 之间就是这段文本。"""
    blocks = {"trl_run": render_trl(numbers["trl"])}

    lines = ["| 参数量 | pass@1（有思维链） | pass@1（无思维链） |", "|---|---|---|"]
    for row in numbers["pass1_by_size"]:
        lines.append(f"| {fmt_size(row['size'])} | {_f(row['cot'])} | {_f(row['no_cot'])} |")
    blocks["pass1_by_size"] = "\n".join(lines)

    t = numbers["test_time_compute"]
    lines = [f"每道题采样 {t['n']} 次，{t['problems']} 道题。pass@k 是精确值：每道题 $1-(1-q)^k$（$q$ 是答对的概率，"
             "`answer_probs`）的平均；maj@k 是采样估计（± 后是标准误）。", "",
             "| 模型 | k | 推理计算量（k × 参数量） | pass@k（精确） | maj@k |", "|---|---|---|---|---|"]
    for row in t["rows"]:
        lines.append(f"| {fmt_size(row['size'])} | {row['k']} | {fmt_size(row['compute'])} | "
                     f"{_f(row['exact_pass_at_k'])} | {_f(row['maj_at_k'])} ± {_f(row['maj_at_k_se'])} |")
    blocks["test_time_compute"] = "\n".join(lines)

    g = numbers["grpo"]
    blocks["grpo"] = "\n".join([
        f"设置：`TrainableLLM({_sci(g['size'])})`，预设 `grpo`（G = {g['group_size']}，每次 {g['batch_problems']} 道题，"
        f"lr = {g['lr']:g}），{g['iterations']} 次迭代，{g['n_train']} 道训练题，{g['n_heldout']} 道留出题，"
        f"一共采样 {g['samples']} 份解答。", "",
        "| 量 | 第一次迭代 | 最后一次迭代 |", "|---|---|---|",
        f"| 留出题上的路径 pass@1 | {_f(g['pass1_start'])}（训练前） | {_f(g['pass1_end'])} |",
        f"| 策略的平均熵（nats） | {_f(g['entropy_first'])} | {_f(g['entropy_last'])} |",
        f"| 奖励全相同的组的比例 | {_f(g['zero_std_first'])} | {_f(g['zero_std_last'])} |",
    ])

    blocks["clip_higher"] = render_clip_higher(numbers["clip_higher"])

    s = numbers["sigmoid_fit"]
    lines = ["每个基座用默认的 `grpo` 预设训练；横轴 C 是累计采样的解答数，纵轴是留出题上的路径 pass@1。", "",
             f"| 基座 | $R_0$ | $A$ | $B$ | $C_{{\\text{{mid}}}}$（解答数） | 拟合误差（RMSE） | "
             f"到 pass@1 ≥ {s['target']:g} 用的解答数 |",
             "|---|---|---|---|---|---|---|"]
    for row in s["rows"]:
        reach = "没有达到" if row["samples_to_target"] is None else str(row["samples_to_target"])
        lines.append(f"| {fmt_size(row['size'])} | {_f(row['R0'])} | {_f(row['A'])} | {_f(row['B'], 2)} | "
                     f"{row['C_mid']:.0f} | {_f(row['rmse'])} | {reach} |")
    blocks["sigmoid_fit"] = "\n".join(lines)

    y = numbers["yue"]
    lines = [f"`TrainableLLM({_sci(y['size'])})` 训练前（基座）和上面那次 GRPO 训练之后，留出题上的**精确** pass@k。", "",
             "| k | 基座 | GRPO 之后 | 基座 − GRPO |", "|---|---|---|---|"]
    by_k = {row["k"]: row for row in y["rows"]}
    for k in YUE_TABLE_KS:
        row = by_k[k]
        lines.append(f"| {k} | {_f(row['base'])} | {_f(row['rl'])} | {row['diff']:+.4f} |")
    lines += ["", f"k = 1, 2, 4, …, 256 中，\"基座 − GRPO\" 的最大值是 {y['max_base_minus_rl']:.1e}。"]
    blocks["yue"] = "\n".join(lines)
    blocks["peers"] = render_peers()
    if "network" in numbers:                           # 真网络上的说法（§10.4）：tools/network_claims.py 算的
        from tools.network_claims import render_network
        blocks["network"] = render_network(numbers)
    return blocks


def _pct(x):
    """裁剪比例写成百分数；恰好是 0 就写 0（一步也没有裁剪）。"""
    return "0" if x == 0 else f"{x:.3%}"


def render_clip_higher(c):
    """讲义 8.2 节的表：上界裁剪的比例（lr × μ），和裁得到的设置上两种 ε_high 的配对比较。"""
    g = c["grid"]
    n_grid = len(g["seeds"])
    cell = {(r["lr"], r["mu"]): r for r in g["rows"]}
    lines = [f"设置：`TrainableLLM({_sci(c['size'])})`，预设 `grpo`（ε_low = 0.2），{c['iterations']} 次迭代，"
             "只改学习率 lr、每批更新次数 μ 和 ε_high。", "",
             f"**上界什么时候裁得到**：ε_high = 0.2 时，上界裁剪的步占多少（{n_grid} 个种子平均）；"
             f"括号里是把 ε_high 改成 0.28 以后，训练逐位相同的种子数（共 {n_grid} 个）。", "",
             "| lr | " + " | ".join(f"μ = {mu}" for mu in g["mu"]) + " |", "|---" * (len(g["mu"]) + 1) + "|"]
    for lr in g["lr"]:
        lines.append(f"| {lr:g} | " + " | ".join(
            f"{_pct(cell[(lr, mu)]['clip_high'])}（{cell[(lr, mu)]['identical']}/{n_grid} 相同）" for mu in g["mu"]) + " |")
    v, vb = c["verdict"], c["p_bug_harmless_verdict"]
    lines += ["", f"**裁得到的时候**：lr = {c['lr']:g}、μ = {c['mu']}，{len(c['seeds'])} 个种子，"
              f"每个种子用两种 ε_high 各训练一次，下表是平均值。熵取最后 {c['last']} 次迭代的平均。"
              f"\"bug 不咬人的情境\"指在正确路径上 bug 总是恰好算对的情境："
              f"{''.join('「' + n + '」' for n in c['harmless_contexts'])}。", "",
              "| 裁剪 | 熵（nats） | 最终路径 pass@1 | bug 不咬人的情境里 π(bug) | 其余情境里 π(bug) | 上界裁剪比例 |",
              "|---|---|---|---|---|---|"]
    for row in c["rows"]:
        name = "对称" if row["eps_high"] == 0.2 else "clip-higher"
        lines.append(f"| {name}：ε_low = 0.2，ε_high = {row['eps_high']:g} | {_f(row['entropy_last'])} | "
                     f"{_f(row['pass1_end'])} | {_f(row['p_bug_harmless'])} | {_f(row['p_bug_other'])} | "
                     f"{_pct(row['clip_high'])} |")
    lines += ["", "每个种子的熵差（0.28 − 0.2）：" + "、".join(f"{d:+.4f}" for d in c["entropy_diff_by_seed"]) + "。",
              "", f"跨种子的判定（`toyllm.estimators.seed_verdict`，配对的差，SE = 标准差 / √{v['n']}，"
              f"和自由度 {v['n'] - 1} 的两侧 1% 临界值 {v['critical']:.3f} 比）：",
              "", "| 量（0.28 − 0.2） | 平均差 ± SE | t | 判定 |", "|---|---|---|---|",
              f"| 熵 | {v['diff']:+.4f} ± {v['se']:.4f} | {v['t']:.2f} | {v['verdict']} |",
              f"| bug 不咬人的情境里 π(bug) | {vb['diff']:+.4f} ± {vb['se']:.4f} | {vb['t']:.2f} | {vb['verdict']} |"]
    return "\n".join(lines)


def render_trl(t):
    """讲义 8.11 节：记录下来的 TRL 运行（配方、版本、用时、两边的平均值）。"""
    r, v, s, g, m = t["recipe"], t["versions"], t["seconds"], t["greedy"], t["mean"]
    side = {"trl": "TRL", "numpy": "numpy"}
    lines = [f"记录的配方：预设 `{r['preset']}`、{r['steps']} 次迭代、网络 `{r['model']}`、种子 {r['seed']}；"
             f"torch {v['torch']}、transformers {v['transformers']}、trl {v['trl']}；命令 `{TRL_COMMAND}`"
             "（配方和两条曲线都存在 `lectures/figures/trl_grpo.json`）。", "",
             "| | `GRPOTrainer`（torch） | numpy（`rl_train`） |", "|---|---|---|",
             f"| 训练用时（这台机器，各用一个 CPU 线程） | {s['trl']:.1f} s | {s['numpy']:.1f} s |"]
    for c, label in (("reward", "平均奖励（20 次迭代）"), ("entropy", "平均熵（nats）"), ("zero_std", "奖励全相同的组的比例")):
        lines.append(f"| {label} | {m['trl'][c]:.3f} | {m['numpy'][c]:.3f} |")
    lines.append(f"| 留出题（前 200 道）贪心准确率：训练前 {g['start']:.3f} | {g['trl']:.3f} | {g['numpy']:.3f} |")
    return "\n".join(lines)


def _example_config(option, value):
    """选项取这个值、其余取默认值的配置；只配序列级比率的取值（loss_agg="luspo"）再加上 is_level="sequence"。"""
    try:
        return RLConfig(**{option: value})
    except ValueError:
        return RLConfig(**{option: value, "is_level": "sequence"})


def _peer_cell(row, peer):
    """对照表的一格：对方的名字（按取值分的行写成 名字=值）和说明；没有对应时是"没有"加原因。出处单独一列。"""
    rule = getattr(row, peer)
    if rule.convert is None:
        return f"没有：{rule.note}"
    # 按取值分的行：这个取值（其余选项取默认值）换算出来的值；管所有取值的行只写名字
    fixed = rule.convert(_example_config(row.option, row.value[0])) if row.value != ANY else None
    short = lambda n: n.replace("actor_rollout_ref.", "")                       # noqa: E731
    show = hydra_value if peer == "verl" else repr
    if isinstance(fixed, dict) and fixed:
        names = "、".join(f"`{short(k)}={show(v)}`" for k, v in fixed.items())
    else:
        names = "、".join(f"`{short(n)}`" for n in rule.names)
    return "；".join(x for x in (names, rule.note) if x) or "（不用设）"


PEER_SOURCE_ROWS = {
    "examples/cispo_trainer/run_cispo_qwen2_5_0_5b_gsm8k.sh": "S150",
    "trl/experimental/gmpo/gmpo_config.py": "S152",
    "trl/trainer/grpo_config.py": "S153",
    "trl/trainer/grpo_trainer.py": "S154",
    "trl/trainer/rloo_config.py": "S155",
    "verl/trainer/config/actor/actor.yaml": "S156",
    "verl/trainer/config/algorithm.py": "S157",
    "verl/trainer/config/algorithm/rollout_correction.yaml": "S158",
    "verl/trainer/config/critic/critic.yaml": "S159",
    "verl/trainer/config/data/legacy_data.yaml": "S160",
    "verl/trainer/config/optim/fsdp.yaml": "S161",
    "verl/trainer/config/ppo_trainer.yaml": "S162",
    "verl/trainer/config/rollout/rollout.yaml": "S163",
    "verl/trainer/ppo/core_algos.py": "S164",
    "verl/trainer/ppo/ray_trainer.py": "S165",
}
"""8.11 节的表：出处的文件 → 来源表 lectures/sources.md 里那个文件的一行（行里列出表中引用的每一行，
原文由 tools/check_sources.py 核对；tests/peers/test_peers.py 逐格核对名字就在那一行）。
transformers 的 training_args.py 不在固定的仓库里，没有编号；这些行的另一边总有 verl 的出处。"""
PEER_TABLE_ROW = "S149"
"""8.11 节表的说明：名字取自哪两个固定提交；也给两边都没写出处、却说到对方做法的行（staleness）。"""


def _mark(key):
    return f"[{key}](sources.md#{key})"


def _source_cell(rule):
    if not rule.source:
        return ""
    path = rule.source.split(":")[0]
    if path.startswith("transformers/"):              # 不在固定的仓库里：只写文件和行（tests/peers/test_peers.py 用存下的原文核对）
        return f"`{rule.source}`"
    if path not in PEER_SOURCE_ROWS:
        raise KeyError(f"8.11 节表的出处 {path} 在来源表里没有对应的行：在 PEER_SOURCE_ROWS 和 lectures/sources.md 里加上")
    shown = rule.source
    for prefix in ("trl/trainer/", "verl/trainer/"):
        if shown.startswith(prefix):
            shown = shown[len(prefix):]
            break
    return f"`{shown}` {_mark(PEER_SOURCE_ROWS[path])}"


NOTE_SOURCE_ROWS = {"grpo_trainer.py": "S154", "core_algos.py": "S164", "critic.yaml": "S159", "ray_trainer.py": "S165",
                    "fsdp_workers.py": "S131", "rollout_corr_helper.py": "S166", "fsdp.yaml": "S566", "dp_actor.yaml": "S566",
                    "dp_actor.py": "S580"}
"""格子的说明里引用的"文件:行"（短文件名）→ 来源表里列着那一行的编号。"""


NOTE_CLAIM_ROWS = {"TRL 1.10.0": "S559"}
"""格子的说明里说到某个发布版本时，指向来源表里那个版本的一行。"""


def _note_marks(rule):
    """说明里引用了"文件:行"时，在格子后面加那个文件的编号（同一个编号只加一次）；说到发布版本时加那一行的编号。"""
    keys = [key for phrase, key in NOTE_CLAIM_ROWS.items() if phrase in rule.note]
    for name in re.findall(r"([\w.-]+\.(?:py|yaml|sh)):\d+", rule.note):
        if name not in NOTE_SOURCE_ROWS:
            raise KeyError(f"8.11 节表的说明引用了 {name}，来源表里没有对应的行：在 NOTE_SOURCE_ROWS 和 lectures/sources.md 里加上")
        if NOTE_SOURCE_ROWS[name] not in keys:
            keys.append(NOTE_SOURCE_ROWS[name])
    return "".join(" " + _mark(k) for k in keys)


def _rule_marks(rule):
    """没有出处的一格，说明里又提到 TRL / verl 时，指向表的说明那一行。"""
    if rule.source:
        return ""
    return f" {_mark(PEER_TABLE_ROW)}" if any(w in rule.note for w in ("trl/", "verl/", "TRL", "verl")) else ""


def render_peers():
    """讲义 8.11 节：RLConfig 的选项在 TRL 和 verl 里的名字，由 toyllm.peers.ROWS 生成（to_trl / to_verl 查的是同一张表）。"""
    lines = [f"名字取自 TRL 提交 `{TRL_COMMIT[:8]}`（`GRPOConfig` 从 transformers 继承的字段：transformers "
             f"{TRANSFORMERS_VERSION} 的 `training_args.py`）和 verl 提交 `{VERL_COMMIT[:8]}`{_mark(PEER_TABLE_ROW)}。"
             "出处是文件和行号，后面的编号指向来源表里那个文件的一行（TRL 的文件省去 `trl/trainer/`，"
             f"verl 的省去 `verl/trainer/`；verl 的名字省去了开头的 `actor_rollout_ref.`）{_mark(PEER_TABLE_ROW)}。"
             "同一个选项有几行时，按取值分开；\"不用设\"是对方本来就这样做。"
             f"为了在笔记本宽的屏幕上放得下，TRL 和 verl 各一张表，出处写在格子的末尾{_mark(PEER_TABLE_ROW)}。"]
    for peer, title in (("trl", "TRL（`GRPOConfig` 的关键字参数）"), ("verl", "verl（`main_ppo` 的覆盖项）")):
        lines += ["", f"| 选项（取值） | {title} |", "|---|---|"]
        for row in ROWS:
            rule = getattr(row, peer)
            value = "" if row.value == ANY else " = " + " / ".join(f"`{format_option(v)}`" for v in row.value)
            marks = _note_marks(rule) + _rule_marks(rule)
            source = _source_cell(rule)
            lines.append(f"| `{row.option}`{value} | {_peer_cell(row, peer)}{marks}"
                         + (f"；出处 {source}" if source else "") + " |")
    kw = to_trl(tiny_config("dapo"), ignore=DAPO_IGNORE, max_completion_length=10)
    lines += ["", "例（网络用 `tiny_config` 的 Adam 和学习率，不用玩具的 lr = 2、SGD）："
              f"`to_trl(tiny_config(\"dapo\"), ignore={DAPO_IGNORE!r}, max_completion_length=10)` 给出", "", "```python",
              "dict(" + ", ".join(f"{k}={v!r}" for k, v in kw.items()) + ")", "```", "",
              "`to_verl(tiny_config(\"gspo\"))` 给出（接在 `python -m verl.trainer.main_ppo` 后面"
              f"{_mark('S129')}）：", "", "```text",
              *to_verl(tiny_config("gspo")), "```"]
    return "\n".join(lines)


BLOCK_RE = re.compile(r"(<!-- generated:(?P<name>[a-z0-9_]+) -->\n)(?P<body>.*?)(<!-- /generated:(?P=name) -->)",
                      re.S)


def read_blocks(text):
    """讲义里的生成块 {名字: 内容（不含首尾换行）}。"""
    return {m.group("name"): m.group("body").strip("\n") for m in BLOCK_RE.finditer(text)}


def fill_blocks(text, blocks):
    """把讲义里的生成块换成新内容；讲义里提到、但 blocks 里没有的块报错。"""
    def sub(m):
        name = m.group("name")
        if name not in blocks:
            raise KeyError(f"讲义里的生成块 {name!r} 没有对应的内容（render_blocks 里没有这个名字）")
        return f"{m.group(1)}{blocks[name]}\n{m.group(4)}"
    return BLOCK_RE.sub(sub, text)


# =============================================================================
# 画图
# =============================================================================
def draw_clip_higher(plt, c):
    """讲义 8.2 节的图：左边是上界裁剪的比例随 lr、μ 变化；右边是每个种子的熵差（0.28 − 0.2）和判定用的区间。"""
    from toyllm.plots import SINGLE

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(SINGLE[0] * 1.6, SINGLE[1]))
    g = c["grid"]
    for i, mu in enumerate(g["mu"]):
        rows = [r for r in g["rows"] if r["mu"] == mu]
        ax1.plot([r["lr"] for r in rows], [100 * r["clip_high"] for r in rows], marker="o", color=f"C{i}",
                 label=f"μ = {mu}")
    ax1.set(xlabel="学习率 lr", ylabel="上界裁剪的步（%）",
            title=f"ε_high = 0.2 时上界裁剪的比例（{len(g['seeds'])} 个种子平均）")
    ax1.set_xticks(g["lr"])
    ax1.grid(alpha=0.3)
    ax1.legend(title="每批更新次数")
    v, d = c["verdict"], c["entropy_diff_by_seed"]
    ax2.axhline(0, color="k", lw=0.8)
    ax2.plot(np.arange(len(d)), d, "o", color="C0", label="每个种子：熵差")
    half = v["critical"] * v["se"]
    ax2.errorbar([len(d) + 0.8], [v["diff"]], yerr=[half], fmt="s", color="C3", capsize=4,
                 label=f"平均 ± {v['critical']:.2f} SE（{v['verdict']}）")
    ax2.set_xticks(list(range(len(d))) + [len(d) + 0.8], [str(s) for s in c["seeds"]] + ["平均"])
    ax2.set(xlabel="训练种子", ylabel="熵差（nats）：ε_high 0.28 − 0.2",
            title=f"lr = {c['lr']:g}、μ = {c['mu']}：最后 {c['last']} 次迭代的熵差")
    ax2.grid(alpha=0.3)
    ax2.legend(loc="upper right")
    fig.tight_layout()
    return fig


def draw_figures(data, out):
    """画讲义里的全部图，存到 out 目录。"""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from toyllm.plots import (SINGLE, plot_context_bars, plot_pass_at_k, plot_scaling, plot_test_time_compute,
                              plot_training_curves)
    from toyllm.plotstyle import use_chinese_font

    use_chinese_font()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)

    def save(fig, name):
        if not hasattr(fig, "savefig"):                    # plots 的函数返回坐标轴（一个或一组）：取它们的图
            fig = np.ravel(fig)[0].figure
        fig.savefig(out / name, dpi=DPI, metadata={"Software": None})
        plt.close(fig)

    save(plot_scaling(data["scaling"]), "pass1_vs_size.png")
    save(plot_test_time_compute(data["ttc"]), "passk_two_sizes.png")
    save(plot_training_curves(data["grpo_hist"], x="iteration", columns=["pass1_exact", "entropy", "zero_std"],
                              title=f"GRPO 训练曲线（{fmt_size(GRPO_SIZE)} 模型，默认设置）"), "grpo_curve.png")
    save(plot_context_bars(TrainableLLM(GRPO_SIZE), data["grpo_model"], labels=("训练前", "GRPO 之后")),
         "context_bars.png")
    base, rl = data["yue"]
    save(plot_pass_at_k({f"基座 {fmt_size(GRPO_SIZE)}": base, "GRPO 之后": rl},
                        title="基座与 RL 之后的 pass@k（留出题，精确值）"), "passk_base_vs_rl.png")

    rec = data["trl"]
    fig, axes = plt.subplots(1, 2, figsize=(SINGLE[0] * 1.6, SINGLE[1]))
    for ax, col, label in zip(axes, ("reward", "entropy"), ("平均奖励", "熵（nats）")):
        for side, name in (("trl", "GRPOTrainer（torch）"), ("numpy", "numpy rl_train")):
            ax.plot([r["iteration"] for r in rec[side]], [r[col] for r in rec[side]], marker=".", label=name)
        ax.set_xlabel("迭代次数")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle(f"同一个 GRPO（{rec['recipe']['model']} 网络，种子 {rec['recipe']['seed']}）：GRPOTrainer 和 numpy "
                 "只在分布上一致")
    fig.tight_layout()
    save(fig, "trl_vs_numpy.png")

    save(draw_clip_higher(plt, data["clip"]), "clip_higher_entropy.png")

    fig, ax = plt.subplots(figsize=SINGLE)
    for i, (s, (C, R, R0, fit)) in enumerate(data["curves"].items()):
        ax.plot(C, R, ".", ms=3, color=f"C{i}", alpha=0.6)
        grid = np.geomspace(C.min(), C.max(), 200)
        ax.plot(grid, fit.predict(grid), color=f"C{i}", label=f"{fmt_size(s)}：A = {fit.A:.3f}，B = {fit.B:.2f}")
    ax.axhline(TARGET, color="0.5", ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("RL 计算量 C（累计采样的解答数）")
    ax.set_ylabel("留出题上的路径 pass@1")
    ax.set_title("RL 计算量与 pass@1：点是训练记录，线是 S 形拟合")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    save(fig, "rl_compute_sigmoid.png")


# =============================================================================
# 入口
# =============================================================================
def main(argv=None):
    parser = argparse.ArgumentParser(description="重新生成讲义的图、numbers.json 和讲义里的表格")
    parser.add_argument("--check", action="store_true", help="只检查，不写文件；不一致时退出码为 1")
    parser.add_argument("--no-figures", action="store_true", help="不画图")
    args = parser.parse_args(argv)

    numbers, data = compute()
    if NUMBERS.is_file():                              # "network" 由 tools/network_claims.py 算（十几分钟），这里原样保留
        old = json.loads(NUMBERS.read_text(encoding="utf-8"))
        numbers.update({k: old[k] for k in ("network",) if k in old})
    blocks = render_blocks(numbers)
    text_json = json.dumps(numbers, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    if args.check:
        ok = NUMBERS.is_file() and NUMBERS.read_text(encoding="utf-8") == text_json
        for note in NOTES:
            text = note.read_text(encoding="utf-8")
            if fill_blocks(text, blocks) != text:
                print(f"✗ {note.relative_to(ROOT)} 里的表格和重新计算的不一致")
                ok = False
        print("✓ 讲义的数字都是最新的" if ok else "✗ 请运行 python tools/make_lecture_figures.py")
        return 0 if ok else 1
    FIGURES.mkdir(parents=True, exist_ok=True)
    NUMBERS.write_text(text_json, encoding="utf-8")
    for note in NOTES:
        note.write_text(fill_blocks(note.read_text(encoding="utf-8"), blocks), encoding="utf-8")
    if not args.no_figures:
        draw_figures(data, FIGURES)
    print(f"已写入 {NUMBERS.relative_to(ROOT)}、两份讲义里的表格" + ("" if args.no_figures else "和 lectures/figures/*.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
