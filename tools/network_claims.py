"""
真网络上的第 6 讲：在仓库带的预训练小 transformer 上量讲义的每一个中心说法，每个数带标准误和判定
（notebook 09、讲义 §10.4）。

【思路】compute() 跑全部实验（固定种子），得到一个字典，写进 lectures/figures/numbers.json 的 "network" 键
    （别的键原样保留）；render_network(numbers) 把它排成讲义 §10.4 的生成块（tools/make_lecture_figures.py 的
    render_blocks 调用它，make figures 重写 numbers.json 时保留这个键，不重新计算）。实验分三部分（PARTS），
    可以只重算一部分（--part），其余的数从 numbers.json 读回：
    "scaling"  说法 1：三种大小（固定的模型）在新题上的采样 pass@1、pass@k；
    "recipe"   说法 2、3：SETUP["recipe"] 这一个 GRPO 配方（配置、迭代次数、RL 训练题、评估题都在里面，换配方只改它），
               每个训练种子训练一次：采样 pass@1 提高了吗；基座和 RL 之后的 pass@k（k = 1 … n）交叉吗（Yue et al. 2025）；
    "clip"     说法 4：tiny_config("grpo", mu=4) 改上界，每个种子训练一次：clip-higher（DAPO 的 ε_high = 0.28）让熵更高吗；
    "drift"    说法 5、6：tiny_config("grpo") 加 β 或换聚合方式，每个种子训练一次：KL 惩罚 β 减少离开基座的漂移吗；
               seq-mean-token-mean 让错的解答变长吗（Dr. GRPO）。
    玩具的判定放在旁边（读 numbers.json 里玩具的数；KL 一项这里现算，长度一项玩具量不了）。
    判定的两条规则：
    - 训练的效果（说法 2–6）：每个训练种子一个配对的差 d_s，toyllm.estimators.seed_verdict（t = 平均差 /
      (std(d_s) / √种子数)，和两侧 1% 的 t 临界值比，5 个种子是 4.604）。一次训练在一批题上的标准误只是评估的
      采样误差，只作为附加信息列出，不拿来判定训练的效果。
    - 固定的模型（说法 1：三个预训练网络）：toyllm.estimators.verdict，差 > 3 个标准误；同一批题上两个模型的差用
      配对的标准误 std(q̂_a,i − q̂_b,i)/√N。

【用法】（在仓库根目录）
    .venv/bin/python tools/network_claims.py                  # 重新计算全部，写进 numbers.json 的 "network"，更新讲义
    .venv/bin/python tools/network_claims.py --part recipe    # 只重算说法 2、3（换了配方时），其余照旧
    .venv/bin/python tools/network_claims.py --quick          # 只试跑（题少、迭代少），不写文件
    .venv/bin/python tools/network_claims.py --render         # 不重新计算，用 numbers.json 里的数重写讲义的生成块
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

from toyllm import TrainableLLM  # noqa: E402
from toyllm import tinylm as tl  # noqa: E402
from toyllm.arithmetic import make_problem_set  # noqa: E402
from toyllm.entropy import kl_divergence  # noqa: E402
from toyllm.estimators import VERDICTS, pass_at_k, seed_verdict, verdict  # noqa: E402
from toyllm.rl import default_problems, preset, train  # noqa: E402
from toyllm.tinylm import pretraining  # noqa: E402

NUMBERS = ROOT / "lectures" / "figures" / "numbers.json"
LECTURE = ROOT / "lectures" / "lecture06_scaling_rl.md"

# ---- 说法 2、3 的 GRPO 配方：换配方只改这一项 ----
# 来自 tools/network_sweep.py：在另一批调参题（种子 4041）和调参种子（100–104）上比较了迭代次数、学习率和训练题的组成，
# 挑出的配方只把迭代次数从 100 改成 300；评估题是搜索之前定下的那一批（种子 4040 的 1,000 道 2 步新题，
# 去掉预训练的题、RL 训练题和搜索时候选的两组训练题），搜索时没有用过。
RECIPE = {
    "preset": "grpo",                 # tiny_config(preset, **overrides)
    "overrides": {},
    "iterations": 300,
    "rl_train": {"seed": 3, "count": 2000, "min_steps": 1, "max_steps": 2},      # RL 训练题
    "eval": {"seed": 4040, "count": 1000, "min_steps": 2, "max_steps": 2,        # 评估题（新题，见 new_problems）
             "exclude": [{"seed": 4042, "count": 2000, "min_steps": 2, "max_steps": 2},
                         {"seed": 4043, "count": 4000, "min_steps": 2, "max_steps": 2}]},
    "n": 64,                          # 评估时每道题采样几份（pass@k 的 k ≤ n）
    "prefix": 20,                     # notebook 09 现场重跑种子 0 的前几次迭代，和记下的逐位比较
}

# ---- 实验设置（notebook 09 和讲义从 numbers.json 读回它们）----
SETUP = {
    "fresh": {"seed": 2026, "count": 1000, "min_steps": 1, "max_steps": 2},    # 说法 1、4–6 的新题
    "rl_train": {"seed": 3, "count": 2000, "min_steps": 1, "max_steps": 2},    # 说法 4–6 的 RL 训练题
    "n": 64,                      # 说法 1：每道新题采样几份
    "seeds": [0, 1, 2, 3, 4],     # 训练种子（说法 2–6）
    "recipe": RECIPE,
    "iterations": 100,            # 说法 4–6：tiny_config("grpo", ...) 训练几次迭代
    "small_eval": {"problems": 500, "n": 8},   # 说法 4–6 的每次训练之后：前 500 道新题 × 8 份
    "kl_eval": {"problems": 200, "n": 8},      # 说法 5：精确 KL 用的样本
    "betas": [0.0, 0.4],
    "clip": {"mu": 4, "eps_high": [0.2, 0.28], "last": 20},
    "aggs": ["seq-mean-token-mean", "seq-mean-token-sum"],
}
PARTS = ("scaling", "recipe", "clip", "drift")
"""compute 的三部分：每部分写进 numbers.json["network"] 的哪些键见 PART_KEYS。"""
PART_KEYS = {"scaling": ("fresh_drawn", "one_step_share", "scaling"), "recipe": ("grpo", "passk"),
             "clip": ("clip_higher",), "drift": ("kl", "length", "toy_kl")}
PASS_KS = (1, 2, 4, 8, 16, 32, 64)
CHUNK = 250                        # 一次生成多少道题的样本（KV 缓存的内存）


def _r(x, nd=6):
    return float(round(float(x), nd))


def _se(x):
    """一组数的平均值的标准误 std（ddof = 1）/ √n。"""
    x = np.asarray(x, float)
    return float(x.std(ddof=1) / math.sqrt(x.size))


def _claim(diff, se):
    """固定模型的说法：{diff, se, verdict}，verdict 用 toyllm.estimators.verdict（3 个标准误）。"""
    return {"diff": _r(diff), "se": _r(se), "verdict": verdict(diff, se)}


def _seeds(a, b=None):
    """训练的说法：toyllm.estimators.seed_verdict 的结果（数字取 6 位），加上每个种子的差 by_seed。"""
    d = np.asarray(a, float) - (0.0 if b is None else np.asarray(b, float))
    v = seed_verdict(d)
    return {"by_seed": [_r(x) for x in d], "diff": _r(v["diff"]), "se": _r(v["se"]), "t": _r(v["t"], 3),
            "n": v["n"], "critical": v["critical"], "verdict": v["verdict"]}


def recipe_config(recipe, seed):
    """配方 → RLConfig：tiny_config(preset, **overrides)，种子和迭代次数。"""
    return tl.tiny_config(recipe["preset"], **{**recipe["overrides"], "seed": seed,
                                                "iterations": recipe["iterations"]})


# =============================================================================
# 题目
# =============================================================================
def problem_examples(spec):
    """一组题（种子、个数、步数）写成思维链（Example；奖励只看最终答案对不对）。"""
    return [tl.problem_example(p) for p in make_problem_set(random.Random(spec["seed"]), spec["count"],
                                                             spec["min_steps"], spec["max_steps"])]


def rl_examples(setup=SETUP):
    """说法 4–6 的 RL 训练题：setup["rl_train"]。"""
    return problem_examples(setup["rl_train"])


_TAKEN = []


def pretraining_prompts():
    """预训练的训练题和清单的留出题的算式（集合；第一次要几十秒，之后用缓存）。"""
    if not _TAKEN:
        taken = {e.prompt for e in pretraining.training_examples()}
        taken |= {tl.problem_example(p).prompt for p in pretraining.heldout_problems()}
        _TAKEN.append(frozenset(taken))
    return _TAKEN[0]


def new_problems(spec, exclude=(), log=print):
    """
    新题：种子 spec["seed"] 的题，去掉和预训练的训练题、清单的留出题、exclude（几组题的设置，例如 RL 训练题）
    一样的算式，也去掉重复的，取前 count 道。【返回】(Example 的列表, 为了凑满抽了几道)
    """
    t = time.perf_counter()
    taken = set(pretraining_prompts())
    for other in exclude:
        taken |= {e.prompt for e in problem_examples(other)}
    rng, out, drawn = random.Random(spec["seed"]), [], 0
    while len(out) < spec["count"]:
        for p in make_problem_set(rng, spec["count"], spec["min_steps"], spec["max_steps"]):
            drawn += 1
            e = tl.problem_example(p)
            if e.prompt not in taken and len(out) < spec["count"]:
                taken.add(e.prompt)
                out.append(e)
    log(f"  新题：抽了 {drawn} 道，留下 {len(out)} 道（{time.perf_counter() - t:.1f} s）")
    return out, drawn


def fresh_examples(setup=SETUP, log=print):
    """说法 1、4–6 的新题：setup["fresh"]，去掉说法 4–6 的 RL 训练题（配方换了，这批题也不变）。"""
    return new_problems(setup["fresh"], (setup["rl_train"],), log)


def recipe_eval_examples(setup=SETUP, log=print):
    """
    说法 2、3 的评估题：配方的 eval，去掉两组 RL 训练题和 eval["exclude"] 里的几组题（例如搜索配方时用过的训练题；
    和 fresh 的设置一样、没有 exclude 时就是同一批题）。
    """
    r = setup["recipe"]
    return new_problems(r["eval"], (setup["rl_train"], r["rl_train"], *r["eval"].get("exclude", ())), log)


def recipe_train_examples(recipe):
    """
    配方的 RL 训练题：recipe["rl_train"]。给了 lo、hi 时只留基座"半会"的题：base 每题采样 n 份（采样种子
    sample_seed），答对 lo … hi 份的那些。
    【返回】(Example 的列表, 留下的题在 problem_examples(spec) 里的序号；没有筛时是 None)
    """
    spec = recipe["rl_train"]
    pool = problem_examples(spec)
    if "lo" not in spec:
        return pool, None
    c, _, _ = sample(tl.pretrained(), pool, spec["n"], spec["sample_seed"])
    kept = [i for i, k in enumerate(c.sum(axis=1)) if spec["lo"] <= k <= spec["hi"]]
    return [pool[i] for i in kept], kept


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


def greedy_correct(model, examples):
    """每道题贪心解码对不对：(N,) 的 0 / 1。"""
    got = tl.greedy(model, [e.prompt for e in examples])
    return np.array([e.is_correct(o) for o, e in zip(got, examples)], float)


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
# 说法 1：规模（三个固定的模型）
# =============================================================================
def compute_scaling(setup, log=print):
    fresh, drawn = fresh_examples(setup, log)
    out = {"fresh_drawn": drawn}
    one_step = [sum(";" not in e.target for e in ex) / len(ex)         # 1 步题的比例：新题 vs 清单的留出题
                for ex in (fresh, [tl.problem_example(p) for p in pretraining.heldout_problems()])]
    out["one_step_share"] = {"fresh": _r(one_step[0]), "heldout": _r(one_step[1])}
    n = setup["n"]
    per_size, rows = {}, []
    for name in tl.PRETRAINED:
        model = tl.pretrained(name)
        c, _, _ = sample(model, fresh, n, seed=0)
        per_size[name] = c
        ks = [k for k in PASS_KS if k <= n]
        pk = pass_k_per_problem(c, ks)
        rows.append({"name": name, "n_params": int(model.n_params), "lr": tl.manifest(name)["lr"],
                     "greedy": _r(greedy_correct(model, fresh).mean()),
                     **{f"pass{k}": mean_se(pk[:, j]) for j, k in enumerate(ks)}})
        log(f"  {name}: pass@1 {rows[-1]['pass1']['value']:.4f}")
    steps = []
    for a, b in zip(tl.PRETRAINED, tl.PRETRAINED[1:]):
        d = per_size[b].mean(1) - per_size[a].mean(1)
        steps.append({"from": a, "to": b, **_claim(d.mean(), _se(d))})
    out["scaling"] = {"rows": rows, "steps": steps,
                      "verdict": VERDICTS[0] if all(s["verdict"] == VERDICTS[0] for s in steps) else
                      VERDICTS[1] if any(s["verdict"] == VERDICTS[1] for s in steps) else VERDICTS[2]}
    return out


# =============================================================================
# 说法 2、3：一个 GRPO 配方，每个种子训练一次
# =============================================================================
def compute_recipe(setup, log=print):
    r, seeds = setup["recipe"], setup["seeds"]
    train_set, kept = recipe_train_examples(r)
    ev, _ = recipe_eval_examples(setup, log)
    base = tl.pretrained()
    n, ks = r["n"], list(range(1, r["n"] + 1))
    g_base = greedy_correct(base, ev)
    per = []
    diffs, curves = [], []                               # 每个种子：(k,) 的 基座 − RL、(2, k) 的基座和 RL（对题平均）
    for s in seeds:
        model = tl.pretrained()
        t0 = time.process_time()
        hist = tl.rl_train(model, train_set, recipe_config(r, s))
        sec = time.process_time() - t0
        cb, _, _ = sample(base, ev, n, seed=s)           # 同一个采样种子：前后两个模型用同一串随机数
        cr, _, _ = sample(model, ev, n, seed=s)
        g_rl = greedy_correct(model, ev)
        pb, pr = pass_k_per_problem(cb, ks), pass_k_per_problem(cr, ks)
        diffs.append((pb - pr).mean(0))
        curves.append((pb.mean(0), pr.mean(0)))
        d1 = cr.mean(1) - cb.mean(1)
        lost, gained = (g_base == 1) & (g_rl == 0), (g_base == 0) & (g_rl == 1)
        per.append({"seed": s, "seconds": round(sec, 1), "base": _r(cb.mean()), "rl": _r(cr.mean()),
                    "eval_se": _r(_se(d1)), "greedy_rl": _r(g_rl.mean()),
                    "passk_eval_se": _r(_se((pb - pr)[:, -1])),
                    "lost": int(lost.sum()), "gained": int(gained.sum()),
                    "q_lost": [_r(cb.mean(1)[lost].mean()), _r(cr.mean(1)[lost].mean())] if lost.any() else None,
                    "q_kept": [_r(cb.mean(1)[g_base == 1].mean()), _r(cr.mean(1)[g_base == 1].mean())],
                    "q_wrong": [_r(cb.mean(1)[g_base == 0].mean()), _r(cr.mean(1)[g_base == 0].mean())],
                    "clip_high": _r(np.mean(hist["clip_high"]))})
        if s == seeds[0]:                                # notebook 09 现场重跑它的前 prefix 次迭代，逐位比较
            first = {"reward": [float(x) for x in hist["reward"]], "entropy": [float(x) for x in hist["entropy"]]}
        log(f"  种子 {s}：{sec:.1f} s，采样 pass@1 {cb.mean():.4f} → {cr.mean():.4f}，"
            f"贪心 {g_base.mean():.3f} → {g_rl.mean():.3f}")
    grpo = {"runs": per, "greedy_base": _r(g_base.mean()), "eval_count": len(ev), "history_seed0": first,
            "train_count": len(train_set), "train_kept": kept,
            **_seeds([p["rl"] for p in per], [p["base"] for p in per]),
            "greedy": _seeds([p["greedy_rl"] for p in per], [g_base.mean()] * len(per))}
    diffs, curves = np.array(diffs), np.mean(curves, axis=0)      # (种子, k)；(2, k) 几个种子平均
    rows = []
    for j, k in enumerate(ks):
        v = _seeds(diffs[:, j])
        rows.append({"k": k, "base": _r(curves[0, j]), "rl": _r(curves[1, j]), "diff": v["diff"], "se": v["se"],
                     "t": v["t"], "verdict": v["verdict"]})
    last = _seeds(diffs[:, -1])
    ahead = [x["k"] for x in rows if x["diff"] > 0]
    passk = {"rows": rows, **last,
             "first_k_base_ahead": ahead[0] if ahead else None,
             "first_k_base_ahead_seeds": next((x["k"] for x in rows if x["verdict"] == VERDICTS[0]), None),
             "first_k_rl_ahead_seeds": next((x["k"] for x in rows if x["verdict"] == VERDICTS[1]), None)}
    return {"grpo": grpo, "passk": passk}


# =============================================================================
# 说法 4–6：tiny_config("grpo") 加一个选项，每个种子训练一次
# =============================================================================
def compute_training(setup, log=print, claims=("clip_higher", "kl")):
    """说法 4（claims 里有 "clip_higher"）和说法 5、6（有 "kl"：两者共用 β = 0 的训练），加上玩具的 KL。"""
    fresh, _ = fresh_examples(setup, log)
    train_set = rl_examples(setup)
    base = tl.pretrained()
    se_eval, seeds = setup["small_eval"], setup["seeds"]
    small = fresh[:se_eval["problems"]]
    base_c, base_len, _ = sample(base, small, se_eval["n"], seed=1)
    runs = {}

    def run(key, cfg, seed):
        if (key, seed) in runs:
            return runs[(key, seed)]
        model = tl.pretrained()
        t0 = time.process_time()
        hist = tl.rl_train(model, train_set, cfg.replace(seed=seed, iterations=setup["iterations"]))
        sec = time.process_time() - t0
        c, lengths, outs = sample(model, small, se_eval["n"], seed=1)
        runs[(key, seed)] = {"model": model, "hist": hist, "seconds": sec, "correct": c, "lengths": lengths,
                             "outs": outs}
        log(f"  {key} 种子 {seed}：{sec:.1f} s，pass@1 {c.mean():.4f}")
        return runs[(key, seed)]

    out = {}
    if "clip_higher" in claims:
        # ---- 4. clip-higher ----
        cl = setup["clip"]
        arms = {eh: [run(("clip", eh), tl.tiny_config("grpo", mu=cl["mu"], eps_high=eh), s) for s in seeds]
                for eh in cl["eps_high"]}
        ent = {eh: [float(np.mean(x["hist"]["entropy"][-cl["last"]:])) for x in got] for eh, got in arms.items()}
        start = {eh: [float(np.mean(x["hist"]["entropy"][:cl["last"]])) for x in got] for eh, got in arms.items()}
        lo, hi = cl["eps_high"]
        out["clip_higher"] = {
            "rows": [{"eps_high": eh, "entropy_last": _r(np.mean(ent[eh])), "se": _r(_se(ent[eh])),
                      "by_seed": [_r(x) for x in ent[eh]], "entropy_first": _r(np.mean(start[eh])),
                      "clip_high": _r(np.mean([np.mean(x["hist"]["clip_high"]) for x in got])),
                      "clip_high_max": _r(max(np.max(x["hist"]["clip_high"]) for x in got)),
                      "pass1": _r(np.mean([x["correct"].mean() for x in got]))} for eh, got in arms.items()],
            "curves": {str(eh): [_r(x) for x in np.mean([x["hist"]["entropy"] for x in got], axis=0)]
                       for eh, got in arms.items()},
            "falls": _seeds(start[lo], ent[lo]),             # ε_high = 0.2 时熵降了吗（前 last 次 − 最后 last 次）
            **_seeds(ent[hi], ent[lo])}
    if "kl" in claims:
        # ---- 5. KL 惩罚 β ----
        ke = setup["kl_eval"]
        kl_rows, kl_by = [], {}
        for b in setup["betas"]:
            kls, p1 = [], []
            for s in seeds:
                x = run(("beta", b), tl.tiny_config("grpo", beta=b), s)
                outs = [o for i, o in enumerate(x["outs"]) if i < ke["problems"] * se_eval["n"] and
                        i % se_eval["n"] < ke["n"]]
                kls.append(exact_kl(x["model"], base, small[:ke["problems"]], outs, ke["n"]))
                p1.append(float(x["correct"].mean()))
            kl_by[b] = kls
            kl_rows.append({"beta": b, "kl": _r(np.mean(kls)), "kl_se": _r(_se(kls)), "by_seed": [_r(x) for x in kls],
                            "pass1": _r(np.mean(p1)), "pass1_se": _r(_se(p1))})
        out["kl"] = {"rows": kl_rows, "base_pass1": _r(base_c.mean()),
                     **_seeds(kl_by[setup["betas"][0]], kl_by[setup["betas"][-1]])}     # 说法：β 大，漂移小

        # ---- 6. 长度 ----
        def lengths(c, le):
            return float(le.mean()), float(le[c == 0].mean())

        b_all, b_wrong = lengths(base_c, base_len)
        agg_rows, dwrong = [], {}
        for a in setup["aggs"]:
            # seq-mean-token-mean 就是 grpo 预设的 "seq-mean"（同一个公式），β = 0 的那几次训练直接拿来用
            key = ("beta", 0.0) if a == "seq-mean-token-mean" and 0.0 in setup["betas"] else ("agg", a)
            got = [run(key, tl.tiny_config("grpo", loss_agg=a), s) for s in seeds]
            al = [lengths(x["correct"], x["lengths"]) for x in got]
            dwrong[a] = [w - b_wrong for _, w in al]
            agg_rows.append({"loss_agg": a, "len_all": _r(np.mean([x for x, _ in al])),
                             "len_all_se": _r(_se([x for x, _ in al])),
                             "len_wrong": _r(np.mean([w for _, w in al])), "len_wrong_se": _r(_se([w for _, w in al])),
                             "pass1": _r(np.mean([x["correct"].mean() for x in got]))})
        out["length"] = {"base_len_all": _r(b_all), "base_len_wrong": _r(b_wrong), "rows": agg_rows,
                         **_seeds(dwrong[setup["aggs"][0]], dwrong[setup["aggs"][1]])}   # 说法：按解答平均时错的更长
        out["toy_kl"] = toy_kl(setup["betas"])
    return out


def toy_kl(betas):
    """玩具上的同一个问题：TrainableLLM(1e9)、预设 grpo 加 β，最后一次迭代到参考策略的精确 KL（history 的 kl_exact）。"""
    train_set, heldout = default_problems(0)
    rows = []
    for b in betas:
        hist = train(TrainableLLM(1e9), preset("grpo", beta=b), train_set, heldout)
        rows.append({"beta": b, "kl_exact": _r(hist["kl_exact"][-1]), "pass1": _r(hist["pass1_exact"][-1])})
    return {"size": 1e9, "rows": rows}


COMPUTE = {"scaling": compute_scaling, "recipe": compute_recipe,
           "clip": lambda setup, log: compute_training(setup, log, ("clip_higher",)),
           "drift": lambda setup, log: compute_training(setup, log, ("kl",))}


def compute(setup=SETUP, parts=PARTS, old=None, log=print):
    """
    跑 parts 里的几部分实验。【参数】old：上一次的 "network" 字典（只重算一部分时，其余的键和用时从它来）
    【返回】numbers.json 的 "network" 字典（数字、设置、每部分的用时 seconds）。
    用时一律是这个进程的 CPU 秒数（time.process_time；计算是单线程的，空闲的机器上约等于墙钟秒数，
    机器被别的程序占着时墙钟秒数会虚高，CPU 秒数不会）。
    """
    out = {k: v for k, v in (old or {}).items() if k not in ("setup",)}
    times = dict(out.get("seconds", {}))
    for part in parts:
        t = time.process_time()
        log(f"{part} …")
        out.update(COMPUTE[part](setup, log))
        times[part] = round(time.process_time() - t, 1)
        log(f"  [{part}] {times[part]} s")
    times = {p: times[p] for p in PARTS if p in times}
    times["total"] = round(sum(times.values()), 1)
    out["seconds"], out["setup"] = times, setup
    return out


# =============================================================================
# 玩具的判定（放在表的最后一列）
# =============================================================================
def toy_clip_by_seed(clip_higher):
    """玩具 clip-higher 每个种子的熵差（ε_high 大的 − 小的）：numbers.json["clip_higher"] 里每个种子的数。"""
    for key in ("entropy_diff_by_seed", "diff_by_seed", "by_seed"):
        if isinstance(clip_higher.get(key), list):
            return np.asarray(clip_higher[key], float)
    lo, hi = (r.get("entropy_last_by_seed", r.get("by_seed")) for r in clip_higher["rows"][:2])
    return np.subtract(hi, lo)


def toy_verdicts(numbers):
    """
    每个说法上玩具的判定和依据：读 numbers.json 里玩具的数。精确值（没有抽样误差）用 verdict(差, 0)，即看符号；
    clip-higher 是玩具在几个种子上训练的结果，和网络一样用 seed_verdict。【返回】{说法: (判定, 依据)}
    """
    net = numbers["network"]
    cot = [r["cot"] for r in numbers["pass1_by_size"]]
    g, y = numbers["grpo"], numbers["yue"]
    c = numbers["clip_higher"]                          # 玩具自己的 seed_verdict（§8.2 的表）；没有时按每个种子的数现算
    ch = c["verdict"] if isinstance(c.get("verdict"), dict) else _seeds(toy_clip_by_seed(c))
    kl = net["toy_kl"]["rows"]
    return {
        "scaling": (verdict(min(np.diff(cot)), 0), f"精确值，1e8 → 1e12 的 pass@1 {cot[0]:.3f} → {cot[-1]:.3f}（§2.1）"),
        "grpo": (verdict(g["pass1_end"] - g["pass1_start"], 0),
                 f"精确值，路径 pass@1 {g['pass1_start']:.3f} → {g['pass1_end']:.3f}（§6.1）"),
        "passk": (verdict(y["max_base_minus_rl"], 0),
                  f"精确值，k ≤ 256 时 基座 − GRPO 最大 {y['max_base_minus_rl']:.1e}，不交叉（§10.2）"),
        "clip_higher": (ch["verdict"], f"{ch['n']} 个训练种子（lr = {c.get('lr', '?')}、μ = {c.get('mu', '?')}）："
                                       f"熵差 {ch['diff']:+.4f} ± {ch['se']:.4f}，t = {ch['t']:.2f}"
                                       f"（临界值 {ch['critical']}，§8.2）"),
        "kl": (verdict(kl[0]["kl_exact"] - kl[-1]["kl_exact"], 0),
               f"精确值，1e9、β = {kl[0]['beta']:g} / {kl[-1]['beta']:g} 的 KL "
               f"{kl[0]['kl_exact']:.4f} / {kl[-1]['kl_exact']:.4f}（本脚本现算）"),
        "length": ("量不了", "玩具的解答长度由题目的步数定，聚合方式改变不了长度"),
    }


# =============================================================================
# 讲义的生成块
# =============================================================================
def _pm(d, key="value", se="se", nd=4):
    return f"{d[key]:.{nd}f} ± {d[se]:.{nd}f}"


def _t(c):
    """训练说法的差：平均差 ± 种子之间的标准误，t。"""
    return f"{c['diff']:+.4f} ± {c['se']:.4f}，t = {c['t']:+.1f}"


def _seq(xs, nd=4):
    return "、".join(f"{x:.{nd}f}" for x in xs)


def recipe_text(recipe):
    """配方写成一句话：tiny_config(...)、几次迭代、RL 训练题、评估题。"""
    args = "".join(f", {k}={v!r}" for k, v in recipe["overrides"].items())
    steps = lambda s: f"{s['min_steps']}~{s['max_steps']} 步" if s["min_steps"] != s["max_steps"] else \
        f"{s['min_steps']} 步"                                           # noqa: E731
    tr, ev = recipe["rl_train"], recipe["eval"]
    return (f"`tiny_config(\"{recipe['preset']}\"{args})`、{recipe['iterations']} 次迭代；RL 训练题是种子 {tr['seed']} 的 "
            f"{tr['count']} 道 {steps(tr)}题；评估题是种子 {ev['seed']} 的 {ev['count']} 道 {steps(ev)}新题，每题采样 "
            f"{recipe['n']} 份"
            + ("（配方由 `tools/network_sweep.py` 在另一批调参题上挑出；这批评估题在搜索之前定下，搜索时没用过）"
               if ev.get("exclude") else ""))


def size_lr_text():
    """三个预训练网络的学习率（读清单 tl.manifest(name)["lr"]）：它们的训练配方只差这一项和宽度。"""
    lrs = {name: tl.manifest(name)["lr"] for name in tl.PRETRAINED}
    groups = {}
    for name, lr in lrs.items():
        groups.setdefault(lr, []).append(name)
    return "、".join(f"{' 和 '.join(names)} 的学习率是 {lr:g}" for lr, names in groups.items())


GREEDY_WORDS = dict(zip(VERDICTS, ("按种子判定，贪心准确率上升", "按种子判定，贪心准确率下降", "按种子分不出升降")))


def render_network(numbers):
    """讲义 §10.4 的生成块：规则、表（每个说法一行：差、网络的判定、玩具的判定）、各行的数、从表里读出的几句。"""
    net = numbers["network"]
    s = net["setup"]
    r = s["recipe"]
    toy = toy_verdicts(numbers)
    sc, g, pk, ch, kl, le = (net[k] for k in ("scaling", "grpo", "passk", "clip_higher", "kl", "length"))
    n_seeds = len(s["seeds"])
    crit = g["critical"]
    lines = [
        f"网络：仓库带的预训练网络（`toyllm.tinylm.pretrained`）。{size_lr_text()}（清单 `tl.manifest(name)[\"lr\"]`），"
        "其余的训练配方相同；所以说法 1 比较的是\"宽度加上各自的学习率\"。说法 2–6 的 RL 都从 base 开始。",
        "",
        f"判定有两条规则。说法 1 比较三个固定的网络：同一批新题上相邻两个网络配对的差超过 3 个标准误（题之间）为\"成立\"，"
        f"反方向超过 3 个标准误为\"不成立\"，否则\"这个大小上分不出\"（`toyllm.estimators.verdict`）。",
        "",
        f"说法 2–6 是训练的效果：每个设置训练 {n_seeds} 个种子，每个种子得到一个配对的差；"
        f"t = 平均差 / 种子之间的标准误，t 超过自由度 {n_seeds - 1} 的两侧 1% 临界值 {crit} 为\"成立\"，"
        f"低于 −{crit} 为\"不成立\"，否则分不出（`toyllm.estimators.seed_verdict`）。"
        "表里这几行写的是：平均差 ± 种子之间的标准误，t。"
        "一次训练在一批题上的标准误只是评估的采样误差，不是训练的不确定性，表下面只作为附加信息列出。",
        "",
        f"玩具一列：玩具的数大多是精确值，没有抽样误差，判定只看符号；clip-higher 一行例外，"
        "它是玩具在几个训练种子上的结果，和网络一样按种子判定。",
        "",
        "| 说法 | 网络：差 ± 标准误 | 网络 | 玩具 |", "|---|---|---|---|",
        f"| 1. 越大越好（pass@1） | " + "、".join(f"{x['diff']:+.4f} ± {x['se']:.4f}" for x in sc["steps"])
        + f" | {sc['verdict']} | {toy['scaling'][0]} |",
        f"| 2. GRPO 提高采样 pass@1 | {_t(g)} | {g['verdict']} | {toy['grpo'][0]} |",
        f"| 3. 大 k 时基座反超 RL（Yue et al. [S400](sources.md#S400)） | k = {pk['rows'][-1]['k']}：{_t(pk)} | "
        f"{pk['verdict']} | {toy['passk'][0]} |",
        f"| 4. clip-higher 让熵更高（DAPO [S402](sources.md#S402)） | {_t(ch)} | {ch['verdict']} | {toy['clip_higher'][0]} |",
        f"| 5. KL 惩罚 β 减少漂移 | {_t(kl)} | {kl['verdict']} | {toy['kl'][0]} |",
        f"| 6. 按解答平均让错的变长（Dr. GRPO [S403](sources.md#S403)） | {_t(le)} | {le['verdict']} | "
        f"{toy['length'][0]} |",
        "",
        "各行的数（± 后面是标准误）和玩具的依据：",
        "",
    ]
    sizes = "、".join(f"{x['name']}（{x['n_params']:,} 参数）{_pm(x['pass1'])}" for x in sc["rows"])
    lines.append(f"1. 新题（种子 {s['fresh']['seed']} 的 {s['fresh']['count']} 道 1~2 步题，不在预训练的训练题、留出题和 "
                 f"RL 训练题里；新题里 1 步题只占 {net['one_step_share']['fresh']:.0%}，清单的留出题里占 "
                 f"{net['one_step_share']['heldout']:.0%}）每题采样 {s['n']} 份（T = 1）的 pass@1：{sizes}。"
                 f"玩具：{toy['scaling'][1]}。")
    secs = [x["seconds"] for x in g["runs"]]
    first = g["runs"][0]
    lines.append(f"2. 配方：从 base 开始，{recipe_text(r)}。每个种子训练前 → 后的采样 pass@1（同一批评估题、同一串随机数）："
                 + "；".join(f"{x['base']:.4f} → {x['rl']:.4f}" for x in g["runs"])
                 + f"。贪心准确率 {g['greedy_base']:.3f} → " + _seq([x["greedy_rl"] for x in g["runs"]], 3)
                 + f"（变化 {_t(g['greedy'])}：{GREEDY_WORDS[g['greedy']['verdict']]}）。"
                 f"每次训练 {min(secs):.0f}–{max(secs):.0f} CPU 秒。附加信息：种子 {first['seed']} 这一次训练，"
                 f"评估题之间的配对标准误是 {first['eval_se']:.4f}（只是评估的采样误差）。玩具：{toy['grpo'][1]}。")
    cross = ("没有一个 k 上基座的平均差为正" if pk["first_k_base_ahead"] is None else
             f"{n_seeds} 个种子平均，基座从 k = {pk['first_k_base_ahead']} 起领先（点估计）")
    cross += ("；按种子判定，没有一个 k 上基座领先\"成立\"" if pk["first_k_base_ahead_seeds"] is None else
              f"；按种子判定，基座领先从 k = {pk['first_k_base_ahead_seeds']} 起\"成立\"")
    lines.append(f"3. 同一批评估题、同样的 {n_seeds} 次训练，基座 − RL 的 pass@k，k = 1 … {r['n']}："
                 f"事先定好在 k = {pk['rows'][-1]['k']} 上判定，每个种子 " + _seq(pk["by_seed"])
                 + f"。{cross}（逐个 k 看出来的，只是观察，不是事先定的检验）。附加信息：种子 {first['seed']} 这一次训练，"
                 f"k = {pk['rows'][-1]['k']} 上评估题之间的标准误 {first['passk_eval_se']:.4f}。玩具：{toy['passk'][1]}。")
    eh0, eh1 = ch["rows"]
    lines.append(f"4. `tiny_config(\"grpo\", mu={s['clip']['mu']}, eps_high=…)`、{s['iterations']} 次迭代，"
                 f"最后 {s['clip']['last']} 次迭代的熵：ε_high = {eh0['eps_high']:g} {_pm(eh0, 'entropy_last')}，"
                 f"{eh1['eps_high']:g} {_pm(eh1, 'entropy_last')}（种子之间）；前 {s['clip']['last']} 次迭代的熵 "
                 f"{eh0['entropy_first']:.4f} / {eh1['entropy_first']:.4f}。上界裁剪的 token 比例（全部迭代平均）"
                 f"{eh0['clip_high']:.2%} / {eh1['clip_high']:.2%}，单次迭代最多 {eh0['clip_high_max']:.2%} / "
                 f"{eh1['clip_high_max']:.2%}。玩具：{toy['clip_higher'][1]}。")
    b0, b1 = kl["rows"][0], kl["rows"][-1]
    lines.append(f"5. 到基座的精确 KL（nats / token，{s['kl_eval']['problems']} 道新题 × {s['kl_eval']['n']} 份自己采的解答）："
                 f"β = {b0['beta']:g} {_pm(b0, 'kl', 'kl_se')}，β = {b1['beta']:g} {_pm(b1, 'kl', 'kl_se')}；"
                 f"采样 pass@1 {b0['pass1']:.4f} / {b1['pass1']:.4f}（训练前 {kl['base_pass1']:.4f}）。"
                 f"玩具：{toy['kl'][1]}。")
    a0, a1 = le["rows"]
    lines.append(f"6. 错的解答的平均长度（token）：基座 {le['base_len_wrong']:.2f}，"
                 f"{a0['loss_agg']} {_pm(a0, 'len_wrong', 'len_wrong_se', 3)}，"
                 f"{a1['loss_agg']} {_pm(a1, 'len_wrong', 'len_wrong_se', 3)}。玩具：{toy['length'][1]}。")
    lines += ["", "从表里读出：", ""] + [f"- {x}" for x in readings(numbers)]
    lines += ["", f"脚本 `tools/network_claims.py` 一共用了 {net['seconds']['total'] / 60:.1f} 分钟 CPU 时间"
                  "（单线程，空闲的机器上约等于墙钟时间）。"]
    return "\n".join(lines)


SWEEP = ROOT / "lectures" / "figures" / "network_sweep.json"


def sweep_explain(recipe):
    """
    tools/network_sweep.py 对"贪心降、采样升"的分组分析（network_sweep.json 的 final.explain）。
    没有这个文件、或它挑的配方和评估题不是 recipe 的，返回 None。
    """
    if not SWEEP.is_file():
        return None
    sweep = json.loads(SWEEP.read_text(encoding="utf-8"))
    chosen, cfg = sweep["final"]["recipe"], tl.tiny_config(recipe["preset"], **recipe["overrides"])
    mix = sweep["setup"]["mixes"][chosen["mix"]]
    if (chosen["iterations"], chosen["lr"], sweep["setup"]["eval"]["seed"], mix["seed"]) != \
            (recipe["iterations"], cfg.lr, recipe["eval"]["seed"], recipe["rl_train"]["seed"]):
        return None
    e = sweep["final"]["explain"]
    hi = next(g for g in e["groups"] if g["group"] == "基座 ≥ 一半")
    return {"hi": hi, "lost": [f["lost"]["margin_before"] for f in e["greedy_flips"]]}


def readings(numbers):
    """表下面的几句话：每句的说法随 numbers.json 里的数和判定而定（换了配方、重算以后仍然是真的）。"""
    net = numbers["network"]
    s, g, pk, ch, le = net["setup"], net["grpo"], net["passk"], net["clip_higher"], net["length"]
    n = len(s["seeds"])
    runs = g["runs"]
    out = []
    if g["verdict"] == VERDICTS[0]:
        head = f"GRPO 从预训练的网络出发，按 {n} 个训练种子判定，这个配方提高了采样 pass@1（平均 {g['diff']:+.4f}）"
    else:
        head = (f"按 {n} 个训练种子判定，这个配方的采样 pass@1 变化（平均 {g['diff']:+.4f}，t = {g['t']:+.1f}）"
                f"是\"{g['verdict']}\"")
    falls = sum(x["greedy_rl"] < g["greedy_base"] for x in runs)
    out.append(f"{head}；同一批题上，贪心解码的准确率在 {falls} / {n} 个种子上下降（{GREEDY_WORDS[g['greedy']['verdict']]}）。")
    lost = [x for x in runs if x["q_lost"] is not None]
    if lost:
        q0, q1 = (float(np.mean([x["q_lost"][i] for x in lost])) for i in (0, 1))
        kept = [float(np.mean([x["q_kept"][i] for x in runs])) for i in (0, 1)]
        out.append("贪心降、采样升并不矛盾。贪心解码每一步取概率最大的字，只看分布的最高点；采样 pass@1 是答对的概率 "
                   "$q_i$ 的平均，看整个分布，RL 按采样的奖励调的正是它。"
                   f"训练前贪心做对的题，$\\hat q_i$ 平均 {kept[0]:.3f} → {kept[1]:.3f}；"
                   f"每个种子平均有 {np.mean([x['lost'] for x in runs]):.0f} 道题贪心由对变错、"
                   f"{np.mean([x['gained'] for x in runs]):.0f} 道由错变对。由对变错的那些题，训练前的 $\\hat q_i$ 平均是 "
                   f"{q0:.3f}（训练后 {q1:.3f}）"
                   + ("：对的路和错的路概率接近，分布挪一点，最高点就换到了错的路上" if 0.3 < q0 < 0.7 else "")
                   + "（notebook 09 第 2 节的表）。")
    sw = sweep_explain(s["recipe"])
    if sw:
        hi, n_lost = sw["hi"], sw["lost"]
        out.append(f"再细一点（`tools/network_sweep.py` 在同一批评估题、同样 {n} 个种子上量的，"
                   "数在 `lectures/figures/network_sweep.json`；它每个种子只采样 16 份，数和上面的略有不同）："
                   f"基座答对一半以上的题占 {hi['share']:.0%}，它们的贪心本来几乎全对（{hi['greedy_before']:.3f}）。"
                   f"RL 把这组题上正确思维链的概率从 {hi['p_chain_before']:.3f} 提到 {hi['p_chain_after']:.3f}，"
                   f"每一步的熵从 {hi['entropy_before']:.3f} 降到 {hi['entropy_after']:.3f}：采样 pass@1 的涨幅几乎都来自这一组，"
                   f"贪心却没有可涨的地方，只会丢（{hi['greedy_before']:.3f} → {hi['greedy_after']:.3f}）。"
                   f"贪心由对变错的题，最窄的一步上正确的字原来领先 {min(n_lost):.1f}–{max(n_lost):.1f} nats（各种子的中位数），"
                   "RL 之后反被别的字领先：RL 把概率集中起来，多数题上集中到对的写法，一部分五五开的题上集中到了错的一边。")
    k_last = pk["rows"][-1]["k"]
    first, first_s = pk["first_k_base_ahead"], pk["first_k_base_ahead_seeds"]
    if first is None:
        cross = "几个种子平均，没有一个 k 上基座领先"
    else:
        cross = f"几个种子平均，基座的 pass@k 从 k = {first} 起更高（点估计）"
        cross += ("，但按种子判定没有一个 k 上基座领先成立" if first_s is None else
                  f"，按种子判定从 k = {first_s} 起成立（逐个 k 找的，是观察）")
    out.append(f"pass@k：{cross}；事先定好的 k = {k_last} 上，\"基座领先\"按种子判定为\"{pk['verdict']}\"。"
               "Yue et al. 在大模型上看到基座在大 k 时反超 [S400](sources.md#S400)；玩具在 $k \\le 256$ 内没有交叉（§10.2）。"
               "notebook 08 第 5 节的加法模型是另一个网络，结论各自只对自己的模型成立。")
    lo, hi = ch["rows"]
    binds = max(lo["clip_high"], hi["clip_high"]) > 0
    clip = (f"clip-higher：上界裁剪只在它真的裁到 token 时才起作用（§8.2）。这里 ε_high = {lo['eps_high']:g} 时，"
            f"上界裁到的 token 平均 {lo['clip_high']:.2%}、单次迭代最多 {lo['clip_high_max']:.2%}"
            + ("：裁到了，但很少，放宽上界只改了这很少几个 token 的梯度。" if binds else "：一个也没裁到，放宽上界什么也改变不了。"))
    falls_lo = lo["entropy_first"] > lo["entropy_last"] and hi["entropy_first"] > hi["entropy_last"]
    clip += (f"两种设置下熵都在下降（前 {s['clip']['last']} 次迭代的平均比最后 {s['clip']['last']} 次高），"
             if falls_lo else "")
    clip += f"说法\"ε_high = {hi['eps_high']:g} 让最后的熵更高\"按种子判定为\"{ch['verdict']}\"。"
    out.append(clip)
    if le["verdict"] == VERDICTS[2]:
        out.append("正确解答的长度由题目定，错的解答也差不多一样长：两种聚合下长度的变化分不出来。Dr. GRPO 说的长度偏差"
                   "（错的解答越写越长 [S403](sources.md#S403)）要在能\"写长一点\"的格式上才看得到。")
    else:
        out.append(f"长度：说法\"seq-mean-token-mean 让错的解答变长\"按种子判定为\"{le['verdict']}\""
                   "（Dr. GRPO [S403](sources.md#S403)）。")
    return out


# =============================================================================
# 入口
# =============================================================================
QUICK = {**SETUP, "fresh": {**SETUP["fresh"], "count": 60}, "n": 8, "small_eval": {"problems": 40, "n": 4},
         "kl_eval": {"problems": 20, "n": 2}, "seeds": [0, 1], "iterations": 3,
         "recipe": {**RECIPE, "iterations": 3, "n": 8, "prefix": 2, "eval": {**RECIPE["eval"], "count": 60}}}


def main(argv=None):
    parser = argparse.ArgumentParser(description="在预训练的小 transformer 上量第 6 讲的说法，写进 numbers.json 的 network")
    parser.add_argument("--quick", action="store_true", help="只试跑（题少、迭代少），不写文件")
    parser.add_argument("--render", action="store_true", help="不重新计算：用 numbers.json 里存的数重写讲义的生成块")
    parser.add_argument("--part", choices=PARTS, action="append",
                        help="只重算这一部分（可以给几次），其余的数从 numbers.json 读回")
    args = parser.parse_args(argv)
    numbers = json.loads(NUMBERS.read_text(encoding="utf-8"))
    if not args.render:
        parts = tuple(args.part) if args.part else PARTS
        old = numbers.get("network") if args.part else None
        numbers["network"] = json.loads(json.dumps(compute(QUICK if args.quick else SETUP, parts, old)))
    net = numbers["network"]
    if args.quick:
        print(json.dumps({k: v for k, v in net.items() if k != "setup"}, ensure_ascii=False)[:3000])
        if all(k in net for keys in PART_KEYS.values() for k in keys):
            print(render_network(numbers))
        return 0
    if not args.render:                                         # 先存数，再排讲义（排版出错时数不丢）
        NUMBERS.write_text(json.dumps(numbers, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(render_network(numbers))
    import make_lecture_figures as figures                      # 同一个文件夹：用它的 render_blocks 更新讲义
    LECTURE.write_text(figures.fill_blocks(LECTURE.read_text(encoding="utf-8"), figures.render_blocks(numbers)),
                       encoding="utf-8")
    print(f"已写入 {NUMBERS.relative_to(ROOT)} 的 network 和讲义 §10.4 的生成块（计算用了 {net['seconds']['total']:.0f} s）")
    return 0


if __name__ == "__main__":
    sys.exit(main())
