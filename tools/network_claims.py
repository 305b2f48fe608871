"""
真网络上的第 6 讲：在仓库带的预训练小 transformer 上量讲义的每一个中心说法，每个数带标准误和判定
（notebook 09、讲义 §10.4）。

【思路】compute() 跑全部实验（固定种子），得到一个字典，写进 lectures/figures/numbers.json 的 "network" 键
    （别的键原样保留）；render_network(字典) 把它排成讲义 §10.4 的表格（tools/make_lecture_figures.py 的
    render_blocks 调用它，make figures 重写 numbers.json 时保留这个键，不重新计算）。
    1. 规模：三种大小在新题上的采样 pass@1、pass@k；
    2. GRPO（tiny_config("grpo")，100 次迭代，从 pretrained() 开始）提高采样 pass@1 吗；
    3. 基座和 RL 之后的 pass@k，k = 1 … 64：曲线交叉吗（Yue et al. 2025），在哪里；
    4. clip-higher（DAPO 的 ε_high = 0.28）让熵保持得更高吗；
    5. KL 惩罚 β 减少离开基座的漂移吗；
    6. 长度：seq-mean-token-mean 和 seq-mean-token-sum 两种聚合下，错的解答变长了吗（Dr. GRPO 的长度偏差）；
    7. 玩具的判定，放在旁边（读 numbers.json 里玩具的数；KL 一项这里现算，长度一项玩具量不了）。
    判定一律用 toyllm.estimators.verdict：预期方向上的差 > 3 个标准误 → 成立；反方向 > 3 个标准误 → 不成立；
    否则"这个大小上分不出"。标准误：同一批题上两个模型的差用配对的标准误 std(q̂_a,i − q̂_b,i)/√N；
    训练的随机性（几个种子）用种子之间的标准误 std/√种子数。

【用法】（在仓库根目录）
    .venv/bin/python tools/network_claims.py            # 重新计算，写进 numbers.json 的 "network"，更新讲义的表格
    .venv/bin/python tools/network_claims.py --quick    # 只试跑（题少、迭代少），不写文件
    .venv/bin/python tools/network_claims.py --render   # 不重新计算，用 numbers.json 里的数重写讲义的表格
"""

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from toyllm import TrainableLLM, fmt_size  # noqa: E402
from toyllm import tinylm as tl  # noqa: E402
from toyllm.arithmetic import make_problem_set  # noqa: E402
from toyllm.entropy import kl_divergence  # noqa: E402
from toyllm.estimators import VERDICTS, pass_at_k, verdict  # noqa: E402
from toyllm.rl import default_problems, preset, train  # noqa: E402
from toyllm.tinylm import pretraining  # noqa: E402

NUMBERS = ROOT / "lectures" / "figures" / "numbers.json"
LECTURE = ROOT / "lectures" / "lecture06_scaling_rl.md"

# ---- 实验设置（notebook 09 和讲义从 numbers.json 读回它们）----
SETUP = {
    "fresh": {"seed": 2026, "count": 1000, "min_steps": 1, "max_steps": 2},    # 评估用的新题
    "rl_train": {"seed": 3, "count": 2000, "min_steps": 1, "max_steps": 2},    # RL 训练题（解答按正确答案判）
    "n": 64,                      # 规模、GRPO、pass@k：每道新题采样几份
    "small_eval": {"problems": 500, "n": 8},   # 说法 4–6 的每次训练之后：前 500 道新题 × 8 份
    "kl_eval": {"problems": 200, "n": 8},      # 说法 5：精确 KL 用的样本
    "seeds": [0, 1, 2],
    "iterations": 100,
    "betas": [0.0, 0.04, 0.4],
    "clip": {"mu": 4, "eps_high": [0.2, 0.28], "last": 20},
    "aggs": ["seq-mean-token-mean", "seq-mean-token-sum"],
}
PASS_KS = (1, 2, 4, 8, 16, 32, 64)
CHUNK = 250                        # 一次生成多少道题的样本（KV 缓存的内存）


def _r(x, nd=6):
    return float(round(float(x), nd))


def _se(x):
    """一组数的平均值的标准误 std（ddof = 1）/ √n。"""
    x = np.asarray(x, float)
    return float(x.std(ddof=1) / math.sqrt(x.size))


def _claim(diff, se):
    """{diff, se, verdict}：verdict 用 toyllm.estimators.verdict。"""
    return {"diff": _r(diff), "se": _r(se), "verdict": verdict(diff, se)}


# =============================================================================
# 题目
# =============================================================================
def rl_examples(setup=SETUP):
    """RL 的训练题：setup["rl_train"] 的 1~2 步题，写成思维链（Example；奖励只看最终答案对不对）。"""
    s = setup["rl_train"]
    return [tl.problem_example(p) for p in make_problem_set(random.Random(s["seed"]), s["count"], s["min_steps"],
                                                             s["max_steps"])]


def fresh_examples(setup=SETUP, log=print):
    """
    评估用的新题：种子 setup["fresh"]["seed"] 的 1~2 步题，去掉和预训练的训练题、清单的留出题、RL 训练题一样的算式，
    也去掉重复的，取前 count 道。
    """
    t = time.perf_counter()
    taken = {e.prompt for e in pretraining.training_examples()}
    taken |= {tl.problem_example(p).prompt for p in pretraining.heldout_problems()}
    taken |= {e.prompt for e in rl_examples(setup)}
    s = setup["fresh"]
    rng, out, drawn = random.Random(s["seed"]), [], 0
    while len(out) < s["count"]:
        for p in make_problem_set(rng, s["count"], s["min_steps"], s["max_steps"]):
            drawn += 1
            e = tl.problem_example(p)
            if e.prompt not in taken and len(out) < s["count"]:
                taken.add(e.prompt)
                out.append(e)
    log(f"  新题：抽了 {drawn} 道，留下 {len(out)} 道（{time.perf_counter() - t:.1f} s）")
    return out, drawn


# =============================================================================
# 评估
# =============================================================================
def sample(model, examples, n, seed):
    """每道题采样 n 份（T = 1）：(对错 (N, n)，长度 (N, n)，解答的列表)。长度 = 解答的 token（字符）数，含结束符。"""
    rng = np.random.default_rng(seed)
    correct, lengths, outs = [], [], []
    for i in range(0, len(examples), CHUNK):
        rows = [e for e in examples[i:i + CHUNK] for _ in range(n)]
        got = tl.generate(model, [e.prompt for e in rows], 1.0, rng)
        correct += [e.is_correct(o) for o, e in zip(got, rows)]
        lengths += [len(o) for o in got]
        outs += got
    shape = (len(examples), n)
    return np.array(correct, float).reshape(shape), np.array(lengths, float).reshape(shape), outs


def pass_k_per_problem(correct, ks):
    """每道题的 pass@k 无偏估计（toyllm.estimators.pass_at_k）：(N, len(ks))。"""
    n = correct.shape[1]
    table = np.array([[pass_at_k(n, c, k) for k in ks] for c in range(n + 1)])
    return table[correct.sum(axis=1).astype(int)]


def mean_se(x):
    """按题的数组 → {value, se}（题之间的标准误）。"""
    return {"value": _r(np.mean(x)), "se": _r(_se(x))}


def exact_kl(model, base, examples, outs, n):
    """
    精确的逐 token KL(π_θ ‖ π_base) = Σ_v π_θ(v) log(π_θ(v) / π_base(v))，在 model 自己采的解答的每个 token 上算，
    再对全部 token 平均（nats / token）。
    """
    prompts = [e.prompt for e in examples for _ in range(n)]
    total, count = 0.0, 0
    for i in range(0, len(prompts), 2000):
        x, y, m = tl.batch_tokens(model, prompts[i:i + 2000], outs[i:i + 2000])
        lp = tl.log_softmax(model.logits(x).astype(np.float64))
        lq = tl.log_softmax(base.logits(x).astype(np.float64))
        kl = kl_divergence(np.exp(lp), lp, lq)
        total += float(kl[m].sum())
        count += int(m.sum())
    return total / count


# =============================================================================
# 计算
# =============================================================================
def compute(setup=SETUP, log=print):
    """跑全部实验。【返回】numbers.json 的 "network" 字典（数字、设置、用时）。"""
    t_all = time.perf_counter()
    times = {}
    out = {"setup": setup}

    def done(name, t):
        times[name] = round(time.perf_counter() - t, 1)
        log(f"  [{name}] {times[name]} s")

    t = time.perf_counter()
    log("题目 …")
    fresh, drawn = fresh_examples(setup, log)
    train_set = rl_examples(setup)
    out["fresh_drawn"] = drawn
    one_step = [sum(";" not in e.target for e in ex) / len(ex)         # 1 步题的比例：新题 vs 清单的留出题
                for ex in (fresh, [tl.problem_example(p) for p in pretraining.heldout_problems()])]
    out["one_step_share"] = {"fresh": _r(one_step[0]), "heldout": _r(one_step[1])}
    done("problems", t)

    # ---- 1. 规模 ----
    t = time.perf_counter()
    log("1. 规模 …")
    n = setup["n"]
    per_size, rows = {}, []
    for name in tl.PRETRAINED:
        model = tl.pretrained(name)
        c, _, _ = sample(model, fresh, n, seed=0)
        per_size[name] = c
        ks = [k for k in PASS_KS if k <= n]
        pk = pass_k_per_problem(c, ks)
        rows.append({"name": name, "n_params": int(model.n_params), "greedy": _r(tl.accuracy(model, fresh)),
                     **{f"pass{k}": mean_se(pk[:, j]) for j, k in enumerate(ks)}})
        log(f"  {name}: pass@1 {rows[-1]['pass1']['value']:.4f}")
    steps = []
    for a, b in zip(tl.PRETRAINED, tl.PRETRAINED[1:]):
        d = per_size[b].mean(1) - per_size[a].mean(1)
        steps.append({"from": a, "to": b, **_claim(d.mean(), _se(d))})
    out["scaling"] = {"rows": rows, "steps": steps,
                      "verdict": VERDICTS[0] if all(s["verdict"] == VERDICTS[0] for s in steps) else
                      VERDICTS[1] if any(s["verdict"] == VERDICTS[1] for s in steps) else VERDICTS[2]}
    done("scaling", t)

    # ---- 训练：每个设置几个种子 ----
    base = tl.pretrained()
    se_eval = setup["small_eval"]
    small = fresh[:se_eval["problems"]]
    base_c, base_len, _ = sample(base, small, se_eval["n"], seed=1)
    runs = {}

    def run(key, cfg, seed):
        model = tl.pretrained()
        t0 = time.perf_counter()
        hist = tl.rl_train(model, train_set, cfg.replace(seed=seed, iterations=setup["iterations"]))
        sec = time.perf_counter() - t0
        c, lengths, outs = sample(model, small, se_eval["n"], seed=1)
        runs[(key, seed)] = {"model": model, "hist": hist, "seconds": sec, "correct": c, "lengths": lengths,
                             "outs": outs}
        log(f"  {key} 种子 {seed}：{sec:.1f} s，pass@1 {c.mean():.4f}")
        return runs[(key, seed)]

    # ---- 2. GRPO ----
    t = time.perf_counter()
    log("2. GRPO …")
    g = run("grpo", tl.tiny_config("grpo"), setup["seeds"][0])
    rl_c, _, _ = sample(g["model"], fresh, n, seed=0)
    d = rl_c.mean(1) - per_size["base"].mean(1)
    hist = g["hist"]
    out["grpo"] = {"seconds": round(g["seconds"], 1), "base": mean_se(per_size["base"].mean(1)),
                   "rl": mean_se(rl_c.mean(1)), **_claim(d.mean(), _se(d)),
                   "greedy_base": _r(tl.accuracy(base, fresh)), "greedy_rl": _r(tl.accuracy(g["model"], fresh)),
                   "reward": [_r(x) for x in hist["reward"]], "entropy": [_r(x) for x in hist["entropy"]]}
    done("grpo", t)

    # ---- 3. pass@k，k = 1 … 64 ----
    t = time.perf_counter()
    log("3. pass@k …")
    ks = list(range(1, n + 1))
    pb, pr = pass_k_per_problem(per_size["base"], ks), pass_k_per_problem(rl_c, ks)
    diff = pb - pr                                      # 基座 − RL：说法（曲线交叉）预期大 k 时为正
    curve = [{"k": k, "base": _r(pb[:, j].mean()), "rl": _r(pr[:, j].mean()), "diff": _r(diff[:, j].mean()),
              "se": _r(_se(diff[:, j]))} for j, k in enumerate(ks)]
    ahead = [r["k"] for r in curve if r["diff"] > 0]
    out["passk"] = {"rows": curve, **_claim(curve[-1]["diff"], curve[-1]["se"]),
                    "first_k_base_ahead": ahead[0] if ahead else None,
                    "first_k_base_ahead_3se": next((r["k"] for r in curve if r["diff"] > 3 * r["se"]), None)}
    done("passk", t)

    # ---- 4. clip-higher ----
    t = time.perf_counter()
    log("4. clip-higher …")
    cl = setup["clip"]
    ent = {}
    for eh in cl["eps_high"]:
        ent[eh] = [float(np.mean(run(("clip", eh), tl.tiny_config("grpo", mu=cl["mu"], eps_high=eh), s)["hist"]
                                 ["entropy"][-cl["last"]:])) for s in setup["seeds"]]
    dapo = [float(np.mean(run("dapo", tl.tiny_config("dapo"), s)["hist"]["entropy"][-cl["last"]:]))
            for s in setup["seeds"]]
    d = np.subtract(ent[cl["eps_high"][1]], ent[cl["eps_high"][0]])
    curves = {str(eh): [_r(x) for x in np.mean([runs[(("clip", eh), s)]["hist"]["entropy"]
                                               for s in setup["seeds"]], axis=0)] for eh in cl["eps_high"]}
    out["clip_higher"] = {
        "rows": [{"eps_high": eh, "entropy_last": _r(np.mean(ent[eh])), "se": _r(_se(ent[eh])),
                  "by_seed": [_r(x) for x in ent[eh]],
                  "clip_high": _r(np.mean([np.mean(runs[(("clip", eh), s)]["hist"]["clip_high"])
                                           for s in setup["seeds"]]))} for eh in cl["eps_high"]],
        "dapo": {"entropy_last": _r(np.mean(dapo)), "se": _r(_se(dapo))},
        # 只是第一个种子第 1 次迭代的熵（一批 16 道题，种子之间差很多）；看熵升还是降用 curves，见 entropy_start
        "entropy_first": _r(runs[(("clip", cl["eps_high"][0]), setup["seeds"][0])]["hist"]["entropy"][0]),
        "curves": curves, **_claim(d.mean(), _se(d))}
    done("clip_higher", t)

    # ---- 5. KL 惩罚 β ----
    t = time.perf_counter()
    log("5. KL β …")
    ke = setup["kl_eval"]
    kl_rows, kl_by = [], {}
    for b in setup["betas"]:
        kls, p1 = [], []
        for s in setup["seeds"]:
            r = runs[("grpo", s)] if b == 0 and ("grpo", s) in runs else \
                run("grpo" if b == 0 else ("beta", b), tl.tiny_config("grpo", beta=b), s)
            outs = [o for i, o in enumerate(r["outs"]) if i < ke["problems"] * se_eval["n"] and
                    i % se_eval["n"] < ke["n"]]
            kls.append(exact_kl(r["model"], base, small[:ke["problems"]], outs, ke["n"]))
            p1.append(float(r["correct"].mean()))
        kl_by[b] = kls
        kl_rows.append({"beta": b, "kl": _r(np.mean(kls)), "kl_se": _r(_se(kls)), "pass1": _r(np.mean(p1)),
                        "pass1_se": _r(_se(p1))})
    d = np.subtract(kl_by[setup["betas"][0]], kl_by[setup["betas"][-1]])    # 说法：β 大，漂移小
    out["kl"] = {"rows": kl_rows, "base_pass1": _r(base_c.mean()), **_claim(d.mean(), _se(d))}
    done("kl", t)

    # ---- 6. 长度 ----
    t = time.perf_counter()
    log("6. 长度 …")

    def lengths(c, le):
        return float(le.mean()), float(le[c == 0].mean())

    b_all, b_wrong = lengths(base_c, base_len)
    agg_rows, dwrong = [], {}
    for a in setup["aggs"]:
        got = [run(("agg", a), tl.tiny_config("grpo", loss_agg=a), s) for s in setup["seeds"]]
        al = [lengths(r["correct"], r["lengths"]) for r in got]
        dwrong[a] = [w - b_wrong for _, w in al]
        agg_rows.append({"loss_agg": a, "len_all": _r(np.mean([x for x, _ in al])), "len_all_se": _r(_se([x for x, _ in al])),
                         "len_wrong": _r(np.mean([w for _, w in al])), "len_wrong_se": _r(_se([w for _, w in al])),
                         "pass1": _r(np.mean([r["correct"].mean() for r in got]))})
    d = np.subtract(dwrong[setup["aggs"][0]], dwrong[setup["aggs"][1]])     # 说法：按解答平均时错的解答更长
    out["length"] = {"base_len_all": _r(b_all), "base_len_wrong": _r(b_wrong), "rows": agg_rows,
                     **_claim(d.mean(), _se(d))}
    done("length", t)

    # ---- 7. 玩具 ----
    t = time.perf_counter()
    out["toy_kl"] = toy_kl(setup["betas"])
    done("toy_kl", t)
    times["total"] = round(time.perf_counter() - t_all, 1)
    out["seconds"] = times
    return out


def toy_kl(betas):
    """玩具上的同一个问题：TrainableLLM(1e9)、预设 grpo 加 β，最后一次迭代到参考策略的精确 KL（history 的 kl_exact）。"""
    train_set, heldout = default_problems(0)
    rows = []
    for b in betas:
        hist = train(TrainableLLM(1e9), preset("grpo", beta=b), train_set, heldout)
        rows.append({"beta": b, "kl_exact": _r(hist["kl_exact"][-1]), "pass1": _r(hist["pass1_exact"][-1])})
    return {"size": 1e9, "rows": rows}


# =============================================================================
# 玩具的判定（说法 7）
# =============================================================================
def toy_verdicts(numbers):
    """每个说法上玩具的判定和出处：读 numbers.json 里玩具的数（精确值的标准误是 0）。【返回】{说法: (判定, 说明)}"""
    net = numbers["network"]
    cot = [r["cot"] for r in numbers["pass1_by_size"]]
    g, y, c = numbers["grpo"], numbers["yue"], numbers["clip_higher"]
    by_seed = np.subtract(c["rows"][1]["entropy_last_by_seed"], c["rows"][0]["entropy_last_by_seed"])
    kl = net["toy_kl"]["rows"]
    return {
        "scaling": (verdict(min(np.diff(cot)), 0), f"pass1_by_size：1e8 → 1e12 的精确 pass@1 {cot[0]:.3f} → {cot[-1]:.3f}（§2.1）"),
        "grpo": (verdict(g["pass1_end"] - g["pass1_start"], 0),
                 f"grpo：路径 pass@1 {g['pass1_start']:.3f} → {g['pass1_end']:.3f}（§6.1）"),
        "passk": (verdict(y["max_base_minus_rl"], 0),
                  f"yue：k ≤ 256 时 基座 − GRPO 最大 {y['max_base_minus_rl']:.1e}，不交叉（§10.2）"),
        "clip_higher": (verdict(by_seed.mean(), _se(by_seed)),
                        f"clip_higher：熵差 {by_seed.mean():+.4f} ± {_se(by_seed):.4f}（{len(by_seed)} 个种子，§8.2）"),
        "kl": (verdict(kl[0]["kl_exact"] - kl[-1]["kl_exact"], 0),
               f"network.toy_kl：1e9、β = {kl[0]['beta']:g} / {kl[-1]['beta']:g} 的精确 KL "
               f"{kl[0]['kl_exact']:.4f} / {kl[-1]['kl_exact']:.4f}（本脚本现算）"),
        "length": ("量不了", "玩具的解答长度由题目的步数定，聚合方式改变不了长度"),
    }


# =============================================================================
# 讲义的表格
# =============================================================================
def _pm(d, key="value", se="se", nd=4):
    return f"{d[key]:.{nd}f} ± {d[se]:.{nd}f}"


def entropy_start(clip_higher, last, eps_high):
    """clip-higher 的一个设置：前 last 次迭代的熵（几个种子平均的曲线再对迭代平均），和最后 last 次比看熵升还是降。"""
    return float(np.mean(clip_higher["curves"][str(eps_high)][:last]))


def render_network(numbers):
    """讲义 §10.4 的生成块：每个说法一行，网络量到的数 ± 标准误、判定，玩具的判定和出处。"""
    net = numbers["network"]
    s = net["setup"]
    toy = toy_verdicts(numbers)
    sc, g, pk, ch, kl, le = (net[k] for k in ("scaling", "grpo", "passk", "clip_higher", "kl", "length"))
    sizes = "、".join(f"{r['name']}（{r['n_params']:,} 参数）{_pm(r['pass1'])}" for r in sc["rows"])
    last = pk["rows"][-1]
    cross = "没有一个 k 上基座领先" if pk["first_k_base_ahead"] is None else \
        f"点估计上基座从 k = {pk['first_k_base_ahead']} 起领先"
    sig = [r["k"] for r in pk["rows"] if r["diff"] > 3 * r["se"]]
    if sig:
        cross += (f"，k = {sig[0]} … {sig[-1]} 中有 {len(sig)} 个 k 领先超过 3 个标准误"
                  "（逐个 k 看出来的，不是事先定的检验）")
    eh0, eh1 = ch["rows"]
    start0, start1 = (entropy_start(ch, s["clip"]["last"], eh) for eh in s["clip"]["eps_high"])
    b0, b1 = kl["rows"][0], kl["rows"][-1]
    a0, a1 = le["rows"]
    rows = [
        ("1. 越大越好：pass@1 随参数量上升", f"采样 pass@1：{sizes}；相邻两个的差 "
         + "、".join(f"{x['diff']:+.4f} ± {x['se']:.4f}" for x in sc["steps"]), sc["verdict"], "scaling"),
        ("2. GRPO 提高 pass@1", f"{_pm(g['base'])} → {_pm(g['rl'])}，差 {g['diff']:+.4f} ± {g['se']:.4f}"
         f"（训练 {g['seconds']:.1f} s；贪心 {g['greedy_base']:.3f} → {g['greedy_rl']:.3f}）", g["verdict"], "grpo"),
        ("3. 大 k 时基座追上、反超 RL（Yue et al. [S400](sources.md#S400)）", f"k = {last['k']}：基座 − RL = {last['diff']:+.4f} ± {last['se']:.4f}；"
         f"{cross}", pk["verdict"], "passk"),
        ("4. clip-higher（ε_high = 0.28）让熵更高（DAPO [S402](sources.md#S402)）",
         f"最后 {s['clip']['last']} 次迭代的熵：ε_high = 0.2 {_pm(eh0, 'entropy_last')}，"
         f"0.28 {_pm(eh1, 'entropy_last')}；差 {ch['diff']:+.4f} ± {ch['se']:.4f}；前 {s['clip']['last']} 次迭代的熵"
         f"（{len(s['seeds'])} 个种子平均）{start0:.4f} / {start1:.4f}；上界裁剪的 token 比例 "
         f"{eh0['clip_high']:.2%} / {eh1['clip_high']:.2%}", ch["verdict"], "clip_higher"),
        ("5. KL 惩罚 β 减少离开基座的漂移", f"到基座的精确 KL（nats / token）：β = {b0['beta']:g} {_pm(b0, 'kl', 'kl_se')}，"
         f"β = {b1['beta']:g} {_pm(b1, 'kl', 'kl_se')}；pass@1 {b0['pass1']:.4f} / {b1['pass1']:.4f}", kl["verdict"], "kl"),
        ("6. 按解答平均（seq-mean）让错的解答变长（Dr. GRPO [S403](sources.md#S403)）", f"错的解答的平均长度（token）：基座 {le['base_len_wrong']:.2f}，"
         f"{a0['loss_agg']} {_pm(a0, 'len_wrong', 'len_wrong_se', 3)}，{a1['loss_agg']} {_pm(a1, 'len_wrong', 'len_wrong_se', 3)}；"
         f"变化之差 {le['diff']:+.3f} ± {le['se']:.3f}", le["verdict"], "length"),
    ]
    lines = [f"网络：仓库带的预训练网络（`toyllm.tinylm.pretrained`），RL 都从 base 开始，`tiny_config(...)`、"
             f"{s['iterations']} 次迭代。新题：种子 {s['fresh']['seed']} 的 {s['fresh']['count']} 道 1~2 步题"
             f"（不在预训练的训练题、留出题和 RL 训练题里；1 步题的算式不多，几乎都在训练题里，所以新题里 1 步题只占 "
             f"{net['one_step_share']['fresh']:.0%}，清单的留出题里占 {net['one_step_share']['heldout']:.0%}）。说法 1–3 每道题采样 {s['n']} 份（T = 1），标准误在题之间算"
             f"（两个模型的差用配对的标准误）；说法 4–6 每个设置 {len(s['seeds'])} 个种子，标准误在种子之间算。"
             "判定：预期方向上的差 > 3 个标准误为\"成立\"，反方向 > 3 个标准误为\"不成立\"，否则\"这个大小上分不出\"。"
             f"脚本 `tools/network_claims.py` 一共用了 {net['seconds']['total'] / 60:.1f} 分钟。", "",
             "| 说法 | 网络上量到的 | 网络的判定 | 玩具的判定 | 玩具的依据 |", "|---|---|---|---|---|"]
    for claim, measured, v, key in rows:
        lines.append(f"| {claim} | {measured} | {v} | {toy[key][0]} | {toy[key][1]} |")
    return "\n".join(lines)


# =============================================================================
# 入口
# =============================================================================
QUICK = {**SETUP, "fresh": {**SETUP["fresh"], "count": 60}, "n": 8, "small_eval": {"problems": 40, "n": 4},
         "kl_eval": {"problems": 20, "n": 2}, "seeds": [0, 1], "iterations": 3}


def main(argv=None):
    parser = argparse.ArgumentParser(description="在预训练的小 transformer 上量第 6 讲的说法，写进 numbers.json 的 network")
    parser.add_argument("--quick", action="store_true", help="只试跑（题少、迭代少），不写文件")
    parser.add_argument("--render", action="store_true", help="不重新计算：用 numbers.json 里存的数重写讲义的表格")
    args = parser.parse_args(argv)
    numbers = json.loads(NUMBERS.read_text(encoding="utf-8"))
    if not args.render:
        numbers["network"] = json.loads(json.dumps(compute(QUICK if args.quick else SETUP)))
    net = numbers["network"]
    text = render_network(numbers)
    print(text)
    if args.quick:
        return 0
    if not args.render:
        NUMBERS.write_text(json.dumps(numbers, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    import make_lecture_figures as figures                      # 同一个文件夹：用它的 render_blocks 更新讲义
    LECTURE.write_text(figures.fill_blocks(LECTURE.read_text(encoding="utf-8"), figures.render_blocks(numbers)),
                       encoding="utf-8")
    print(f"已写入 {NUMBERS.relative_to(ROOT)} 的 network 和讲义 §10.4 的表格（计算用了 {net['seconds']['total']:.0f} s）")
    return 0


if __name__ == "__main__":
    sys.exit(main())
