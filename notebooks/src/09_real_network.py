# %% [markdown]
# # 09 · 真网络上的第 6 讲
#
# **你将学到**
# - 仓库里带着三个预训练好的小 transformer（`toyllm.tinylm.pretrained`）：从它们出发，不用先训练几个小时；
# - 第 6 讲的每一个中心说法（越大越好、GRPO 提高 pass@1、大 k 时基座反超、clip-higher 保住熵、KL 拉住模型、长度偏差），
#   在真网络上量一遍：每个数带标准误，每个说法一个判定；
# - 训练的效果要在几个训练种子上看：一次训练的标准误只是评估的采样误差；
# - 同一个说法，玩具怎么说，网络怎么说，放在一张表里。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 10.4 节（真网络上的第 6 讲）。
#
# 大部分实验要训练几十次，由 `tools/network_claims.py` 算好，存在 `lectures/figures/numbers.json` 的 `"network"` 里。
# 这个 notebook 读出这些数、画图，并现场重跑第 2 节那次 GRPO 训练的开头几次迭代，核对它和存下的数逐位一致。
# 下一格的最后一行打印脚本一共用了多久（CPU 时间）。
#
# 这里的数是在 x86-64 的 OpenBLAS Haswell 内核上算出来的（`make lab` 已经设好，见 `toyllm/blas.py`）。

# %%
# %matplotlib inline
import json
import random
import re
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display
from matplotlib.ticker import NullLocator

from toyllm import tinylm as tl
from toyllm.arithmetic import make_problem_set
from toyllm.estimators import seed_verdict, verdict
from toyllm.plotstyle import use_chinese_font
from toyllm.tables import Table

use_chinese_font()
numbers = json.loads(Path("../lectures/figures/numbers.json").read_text(encoding="utf-8"))
net = numbers["network"]
setup = net["setup"]
recipe = setup["recipe"]
n_seeds = len(setup["seeds"])
print(f"tools/network_claims.py 一共用了 {net['seconds']['total'] / 60:.1f} 分钟 CPU 时间"
      "（numbers.json 记下的；单线程，空闲的机器上约等于墙钟时间）")


def pm(d, key="value", se="se", nd=4):
    """{value, se} 写成 "0.1234 ± 0.0012"。"""
    return f"{d[key]:.{nd}f} ± {d[se]:.{nd}f}"


def seeds_line(name, c):
    """一个训练说法的判定：平均差 ± 种子之间的标准误、t、临界值、判定（seed_verdict 的结果）。"""
    return (f"{name}：{c['diff']:+.4f} ± {c['se']:.4f}（{c['n']} 个种子，t = {c['t']:+.1f}，"
            f"临界值 {c['critical']}）→ {c['verdict']}")


def label(ax, xlabel, ylabel, title=None):
    """坐标轴的名字、标题、网格和图例（有带名字的线时）。"""
    ax.set(xlabel=xlabel, ylabel=ylabel, **({"title": title} if title else {}))
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend()


# %% [markdown]
# ## 1. 三个预训练网络
#
# 三个网络形状相同（2 层、4 个头、上下文 25），宽度 $d$ 不同。
# 训练题相同：60 万道 1~2 步的玩具题，解答是玩具 `ToyLLM(1e10)` **自己采样写下的**思维链，有对有错。
# 所以网络学到的是玩具的分布：贪心解码多半是对的，采样（$T = 1$）会犯玩具那样的错，RL 有东西可以磨尖。
#
# 训练的配方只差一项：学习率。看下表的"学习率"一列：large 的学习率比另外两个小。
# 所以第 3 节比较大小时，比较的是"宽度加上各自的学习率"。
#
# 下表读每个网络的清单（`tl.manifest`）：参数个数、学习率、留出题（1,000 道）上的贪心准确率、训练结束时的损失。

# %%
mans = {name: tl.manifest(name) for name in tl.PRETRAINED}
Table(["网络", "d", "参数个数", "学习率", "留出题贪心准确率", "最后的训练损失"],
      [[name, m["config"]["d"], m["n_params"], f"{m['lr']:g}", m["heldout"]["greedy"],
        m["final_loss"]]
       for name, m in mans.items()], digits=4)

# %% [markdown]
# **新题。** 下面的评估都在新题上做：种子不同（不是训练题的 1，也不是留出题的 12345），
# 去掉和预训练的训练题、留出题、RL 训练题一样的算式。下一格打印它的设置、为了凑满抽了几道，
# 以及 1 步题占多少。1 步题的算式不多，几乎都已经在 60 万道训练题里；去掉它们以后，新题大多是 2 步题。
# 所以同一个网络在新题上的贪心准确率，比清单里留出题上的低一些（第三行）。

# %%
print("新题：", setup["fresh"], f"（抽了 {net['fresh_drawn']} 道才凑满）")
share = net["one_step_share"]
print(f"1 步题的比例：新题 {share['fresh']:.1%}，清单的留出题 {share['heldout']:.1%}")
print(f"base 的贪心准确率：新题 {net['scaling']['rows'][1]['greedy']:.3f}，"
      f"留出题 {tl.manifest('base')['heldout']['greedy']:.3f}")
print(f"说法 1：每道新题采样 {setup['n']} 份")
print(f"说法 2–6：每个设置 {n_seeds} 个训练种子 {setup['seeds']}")

# %% [markdown]
# ## 判定的规则
#
# 每个说法都有一个预期的方向（例如"RL 之后的 pass@1 − 之前的 > 0"）。判定有两条规则，看差来自哪里。
#
# **固定的模型（说法 1）。** 三个预训练网络是固定的，差只来自评估时抽的题和样本。
# 每道题采样 $n$ 份，答对的比例 $\hat q_i$；两个模型在**同一批题**上比，
# 差的标准误是 $\mathrm{SE} = \mathrm{std}(\hat q_{a,i} - \hat q_{b,i})/\sqrt N$。
# $d > 3\,\mathrm{SE}$ 为**成立**，$d < -3\,\mathrm{SE}$ 为**不成立**，否则**这个大小上分不出**（`toyllm.estimators.verdict`）。
#
# **训练的效果（说法 2–6）。** 同样的设置换一个训练种子，训练出来的模型就不同。
# 所以每个设置训练几个种子，每个种子得到一个配对的差 $d_s$（例如同一个种子训练前后的 pass@1）。
# $\mathrm{SE} = \mathrm{std}(d_s)/\sqrt{\text{种子数}}$，$t = \bar d / \mathrm{SE}$。
# 种子少，$\mathrm{SE}$ 本身也估得不准，所以 $t$ 要和 $t$ 分布的两侧 1% 临界值比（5 个种子是 4.604），不是和 3 比
# （`toyllm.estimators.seed_verdict`）。
# 一次训练在 1,000 道题上的标准误只量了评估的采样误差，没有量"换一个种子会怎样"：它只作为附加信息列出。
#
# 下一格用几个例子看两条规则的结果。最后一个例子：五个种子的差都为正，但彼此差得多，$t$ 不够大。

# %%
for d, se in [(0.014, 0.0037), (-0.02, 0.005), (0.01, 0.005)]:
    print(f"verdict：差 {d:+.4f}，标准误 {se:.4f}（{d / se:+.1f} 个标准误）→ {verdict(d, se)}")
for ds in ([0.05, 0.04, 0.06, 0.05, 0.03], [0.09, 0.01, 0.02, 0.08, 0.005]):
    v = seed_verdict(ds)
    print(f"seed_verdict {ds}：平均 {v['diff']:+.4f} ± {v['se']:.4f}，t = {v['t']:.1f}"
          f"（临界值 {v['critical']}）→ {v['verdict']}")

# %% [markdown]
# ## 2. GRPO 提高 pass@1 吗？（现场重跑开头）
#
# 从 `tl.pretrained()`（base，约 10 万个参数）开始，按一个固定的配方做 GRPO。下一格打印这个配方：
# `tiny_config` 的参数（其余用默认值：Adam、每次 16 道 RL 训练题、每题 8 份样本）、迭代次数、RL 训练题和评估题。
# 脚本用第 1 节最后一行打印的每个种子各训练一次。
#
# 配方是 `tools/network_sweep.py` 挑的：它在**另一批**调参题、另几个种子上，试了迭代次数、学习率和训练题的组成。
# 评估题在搜索之前就定下了（2 步的新题），搜索时一次也没用过，所以这里量到的涨幅不是调出来的那个。

# %%
print("配方：",
      json.dumps({k: recipe[k] for k in ("preset", "overrides", "iterations")}, ensure_ascii=False))
full = tl.tiny_config(recipe["preset"], **recipe["overrides"])
print("tiny_config 展开后的学习率和每次的题数：",
      {k: getattr(full, k) for k in ("lr", "batch_problems", "group_size")})
print("RL 训练题：", recipe["rl_train"], f"，用了 {net['grpo']['train_count']} 道")
print("评估题：", {k: v for k, v in recipe["eval"].items() if k != "exclude"},
      f"，每题采样 {recipe['n']} 份")
print(f"  （另外去掉 {len(recipe['eval'].get('exclude', []))} 组搜索配方时候选过的训练题）")

# %% [markdown]
# 完整训练一次的用时在后面的表里（CPU 秒）。这里只现场重跑种子 0 的前几次迭代（下一格的 `prefix`），然后核对：每次迭代的奖励和熵，
# 和脚本记下的种子 0 那次训练的前几次迭代**逐位**一致（RL 的学习率不随迭代变，前几次迭代和完整训练的开头是同一个计算）。
# 打印的用时每台机器不同。
#
# 想换网络或配置（见文末的"试一试"），改下一格的 `name` 或 `config` 就行：设置和记录的不同时，不核对，照样画图。

# %%
# NBVAL_IGNORE_OUTPUT
name = "base"
prefix = recipe["prefix"]
config = tl.tiny_config(recipe["preset"], **recipe["overrides"], seed=setup["seeds"][0],
                        iterations=prefix)
s = recipe["rl_train"]
problems = make_problem_set(random.Random(s["seed"]), s["count"], s["min_steps"], s["max_steps"])
rl_train_set = [tl.problem_example(p) for p in problems]
if net["grpo"]["train_kept"] is not None:   # 配方只用基座"半会"的题：脚本筛过，记下了留下哪几道
    rl_train_set = [rl_train_set[i] for i in net["grpo"]["train_kept"]]
model = tl.pretrained(name)
start = time.perf_counter()
hist = tl.rl_train(model, rl_train_set, config)
print(f"{name}，GRPO 前 {config.iterations} 次迭代：这台机器上 {time.perf_counter() - start:.1f} s")

# %% [markdown]
# 下一格先打印核对的结果（记录的设置下不一致会报错），再画出奖励（这一批样本的采样 pass@1）和熵随迭代的变化：
# 灰线是脚本记下的种子 0 的完整训练，彩色的点是刚才现场重跑的部分。

# %%
recorded = net["grpo"]["history_seed0"]
same = (name == "base" and config == tl.tiny_config(recipe["preset"], **recipe["overrides"],
                                                    seed=setup["seeds"][0],
                                                     iterations=config.iterations))
done = len(hist["reward"])
if same:
    assert list(hist["reward"]) == recorded["reward"][:done], "奖励和 numbers.json 记下的不一致"
    assert list(hist["entropy"]) == recorded["entropy"][:done], "熵和 numbers.json 记下的不一致"
    print(f"和 numbers.json 逐位一致：前 {done} 次迭代的奖励和熵")
else:
    print(f"设置和记录的不同（{name}，{config.iterations} 次迭代）：不核对；灰线仍是记录的 base"
          " 那次训练")
fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
names = ("这一批的奖励（采样 pass@1）", "熵（nats / token）")
for ax, col, title in zip(axes, ("reward", "entropy"), names):
    ax.plot(np.arange(1, len(recorded[col]) + 1), recorded[col], color="0.6", lw=1,
            label="记录：base，种子 0")
    ax.plot(hist["iteration"], hist[col], "o", ms=3, label=f"现场：{name}")
    label(ax, "迭代次数", title)
fig.suptitle("GRPO，从预训练的网络开始")
fig.tight_layout()
plt.show()

# %% [markdown]
# 每一批只有 16 道题，奖励的曲线很抖，看不出 pass@1 有没有涨。要看涨没涨，得在**固定的一批评估题**上、每题多采样几份，
# 比较训练前后；再在几个种子上重复。
#
# 下表每行一个训练种子：训练前后的采样 pass@1（同一批评估题、同一串随机数）、它们的差、训练后的贪心准确率、训练用了多久。
# 表下打印两个判定：采样 pass@1 提高了吗，贪心准确率变了吗。最后一行是附加信息：种子 0 这一次训练，评估题之间的标准误。

# %%
g = net["grpo"]
Table(["种子", "训练前 pass@1", "训练后 pass@1", "差", "训练后贪心", "训练用时（CPU 秒）"],
      [[x["seed"], f"{x['base']:.4f}", f"{x['rl']:.4f}", f"{x['rl'] - x['base']:+.4f}",
        f"{x['greedy_rl']:.3f}",
        f"{x['seconds']:.1f}"] for x in g["runs"]])

# %%
print(seeds_line("采样 pass@1，训练后 − 训练前", g))
print(f"训练前的贪心准确率 {g['greedy_base']:.3f}（贪心解码没有随机性，每个种子都一样）")
print(seeds_line("贪心准确率，训练后 − 训练前", g["greedy"]))
print("  即：按种子判定，贪心准确率"
      + {"成立": "上升", "不成立": "下降"}.get(g["greedy"]["verdict"], "分不出升降"))
first = g["runs"][0]
print(f"附加信息：种子 {first['seed']} 这一次训练，评估题之间的配对标准误 {first['eval_se']:.4f}"
      "（只是评估的采样误差，不是训练的不确定性）")
assert seed_verdict([x["rl"] for x in g["runs"]],
                    [x["base"] for x in g["runs"]])["verdict"] == g["verdict"]

# %% [markdown]
# **贪心降了，采样却升了，为什么？** 贪心解码每一步取概率最大的字，只看分布的"最高点"；采样 pass@1 是"答对的概率"
# $q_i$ 的平均，看的是整个分布。RL 按采样的奖励调整分布，它提高的是平均的 $q_i$，不管最高点落在哪里。
#
# 下表按训练前的贪心结果把评估题分成两组，列出每组的 $\hat q_i$（64 份样本里答对的比例）在训练前后的平均（前 → 后），
# 以及贪心"由对变错"和"由错变对"的题数；"它们的 q̂"是由对变错的那几道题的 $\hat q_i$。
# 看"由对变错"那几道题：它们训练前的 $\hat q_i$ 比"贪心对的题"的平均低得多。
# 最高点是对的路，但对的路和错的路概率接近；训练把分布挪动一点，最高点就可能换到错的路上。

# %%
Table(["种子", "贪心对的题的 q̂", "贪心错的题的 q̂", "由对变错", "它们的 q̂", "由错变对"],
      [[x["seed"], f"{x['q_kept'][0]:.3f} → {x['q_kept'][1]:.3f}",
        f"{x['q_wrong'][0]:.3f} → {x['q_wrong'][1]:.3f}",
        x["lost"], "" if x["q_lost"] is None else f"{x['q_lost'][0]:.3f} → {x['q_lost'][1]:.3f}",
        x["gained"]]
       for x in g["runs"]])

# %% [markdown]
# ## 3. 越大越好吗？pass@1、pass@k 和参数个数
#
# 三个网络在同样的 1,000 道新题上，每题采样 64 份；pass@k 用无偏估计（`toyllm.estimators.pass_at_k`），标准误在题之间算。
# 这三个是固定的模型，用第一条规则（3 个标准误）。
# 下表每行一个网络；再下一张表是相邻两个网络 pass@1 的配对差和判定。

# %%
sc = net["scaling"]
ks = [k for k in (1, 8, 64) if f"pass{k}" in sc["rows"][0]]
Table(["网络", "参数个数", "学习率", "贪心准确率"] + [f"pass@{k}" for k in ks],
      [[r["name"], r["n_params"], f"{r['lr']:g}", r["greedy"]] + [pm(r[f"pass{k}"]) for k in ks]
       for r in sc["rows"]], digits=4)

# %%
Table(["从", "到", "pass@1 的差", "标准误", "判定"],
      [[s["from"], s["to"], s["diff"], s["se"], verdict(s["diff"], s["se"])] for s in sc["steps"]],
      digits=4)

# %% [markdown]
# 图：横轴是参数个数（对数），三个点就是 small、base、large；每条线一个 $k$。
# 看线是不是都往右上走，以及 $k$ 大时线是不是更平（大 $k$ 时小网络也常能采到对的）。

# %%
fig, ax = plt.subplots(figsize=(6.4, 3.8))
params = [r["n_params"] for r in sc["rows"]]
for k in [k for k in (1, 4, 16, 64) if f"pass{k}" in sc["rows"][0]]:
    ax.errorbar(params, [r[f"pass{k}"]["value"] for r in sc["rows"]],
                yerr=[r[f"pass{k}"]["se"] for r in sc["rows"]], marker="o", capsize=3,
                label=f"pass@{k}")
ax.set_xscale("log")
ax.xaxis.set_minor_locator(NullLocator())
ax.set_xticks(params, [f"{r['name']}\n{r['n_params']:,}" for r in sc["rows"]])
ax.set_xlim(params[0] / 1.6, params[-1] * 1.6)
label(ax, "参数个数", "新题上的 pass@k", "三个预训练网络：pass@k 随参数个数（误差线 ±1 个标准误）")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 4. 大 k 时基座会反超 RL 吗？（Yue et al. 2025）
#
# 同一批评估题、每题 64 份：基座和第 2 节每个种子训练后的模型，$k = 1 \dots 64$ 的 pass@k。
# 说法是"$k$ 大时基座追上、甚至超过 RL"：Yue et al. 在大模型上看到的现象（[S400](../lectures/sources.md#S400)）。
# 所以看的差是 **基座 − RL**，每个种子一个；事先定好在 $k = 64$ 上判定。
# 下表列出几个 $k$：几个种子平均的两条曲线、差 ± 种子之间的标准误、$t$ 和判定。
#
# 逐个 $k$ 去找"哪里判定成立"，是在 64 个（彼此相关的）比较里挑：这样找到的 $k$ 只能当作观察，不是事先定的检验。
#
# 这里的网络和 notebook 08 第 5 节的网络不同：那里是从头训练的加法模型，GRPO 之后小 $k$ 时 pass@k 涨、大 $k$ 时差距变小。
# 两个结论各自只对自己的模型成立。

# %%
pk = net["passk"]
by_k = {r["k"]: r for r in pk["rows"]}
Table(["k", "基座", "GRPO 之后", "基座 − GRPO", "种子之间的标准误", "t", "判定"],
      [[k, f"{by_k[k]['base']:.4f}", f"{by_k[k]['rl']:.4f}", f"{by_k[k]['diff']:+.4f}",
        f"{by_k[k]['se']:.4f}",
        f"{by_k[k]['t']:+.1f}", by_k[k]["verdict"]] for k in (1, 2, 4, 8, 16, 32, 64) if k in by_k])

# %% [markdown]
# 下一格打印 $k = 64$ 上每个种子的差和判定，以及两件观察：几个种子平均的差从哪个 $k$ 起为正，按种子判定从哪个 $k$ 起成立。
# 再画两条曲线，和差的 ±（临界值 × 标准误）的带子：带子整个在 0 之上的 $k$，就是判定成立的 $k$。

# %%
print(f"k = 64，每个种子的 基座 − GRPO：{', '.join(f'{x:+.4f}' for x in pk['by_seed'])}")
print(seeds_line("k = 64", pk))
print("几个种子平均，基座第一次领先（点估计）的 k：", pk["first_k_base_ahead"])
print("按种子判定，基座领先第一次成立的 k：", pk["first_k_base_ahead_seeds"])
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
k_all = [r["k"] for r in pk["rows"]]
axes[0].plot(k_all, [r["base"] for r in pk["rows"]], label="基座（预训练的 base）")
axes[0].plot(k_all, [r["rl"] for r in pk["rows"]], label=f"GRPO 之后（{n_seeds} 个种子平均）")
d = np.array([r["diff"] for r in pk["rows"]])
band = pk["critical"] * np.array([r["se"] for r in pk["rows"]])
axes[1].fill_between(k_all, d - band, d + band, alpha=0.3,
                     label=f"±{pk['critical']} 个种子之间的标准误")
axes[1].plot(k_all, d, label="基座 − GRPO")
axes[1].axhline(0, color="0.4", lw=1)
for ax, title in zip(axes, ("pass@k", "差")):
    ax.set_xscale("log", base=2)
    label(ax, "k", title)
fig.suptitle(f"基座与 GRPO 之后的 pass@k（{g['eval_count']:,} 道评估题，每题 {recipe['n']} 份）")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 5. clip-higher 能让熵保持得更高吗？
#
# 裁剪只在 $\mu > 1$ 时起作用（讲义 §7.2：$\mu = 1$ 时 $\rho \equiv 1$）。所以这里用 `tiny_config("grpo", mu=4, ...)`，
# 只改上界：对称的 $\varepsilon_{high} = 0.2$，和 DAPO 的 $\varepsilon_{high} = 0.28$。
# DAPO（Yu et al. 2025）的 "Clip-Higher" 一节说：训练中熵很快下降（熵塌缩），上界裁剪限制了低概率 token 的概率上升，
# 所以把上界放宽到 0.28（[S402](../lectures/sources.md#S402)）。
#
# 放宽上界只有在上界**真的裁到了 token** 时才有用（讲义 §8.2）：一个 token 的优势为正、$\rho$ 在 μ 次更新里超过
# $1 + \varepsilon_{high}$，它才被上界裁剪。所以下表除了熵，还列出"上界裁剪的 token 比例"（History 的 `clip_high`）。
# 熵取最后 20 次迭代的平均（History 的 `entropy`：采样的每个 token 上策略的熵）。

# %%
ch = net["clip_higher"]
Table(["设置", "熵（最后 20 次迭代）", "每个种子", "上界裁剪比例（平均）", "单次迭代最多"],
      [[f"μ = {setup['clip']['mu']}，ε_high = {r['eps_high']:g}", pm(r, "entropy_last"),
        " ".join(f"{x:.3f}" for x in r["by_seed"]), f"{r['clip_high']:.2%}",
        f"{r['clip_high_max']:.2%}"]
       for r in ch["rows"]])

# %% [markdown]
# 下一格先打印熵在训练中是升还是降（前 20 次和最后 20 次迭代比，几个种子平均），再打印两个设置的差和判定，最后画熵的曲线。

# %%
last = setup["clip"]["last"]
for r in ch["rows"]:
    way = "下降" if r["entropy_first"] > r["entropy_last"] else "上升"
    print(f"ε_high = {r['eps_high']:g}：前 {last} 次迭代的熵 {r['entropy_first']:.4f}，"
          f"最后 {last} 次 {r['entropy_last']:.4f}：训练中熵{way}")
print(seeds_line("熵的差（0.28 − 0.2，按种子配对）", ch))
fig, ax = plt.subplots(figsize=(6, 3.6))
for eh, curve in ch["curves"].items():
    ax.plot(np.arange(1, len(curve) + 1), curve,
            label=rf"$\epsilon_{{high}} = {float(eh):g}$（{n_seeds} 个种子平均）")
label(ax, "迭代次数", "熵（nats / token）", f"对称裁剪 vs clip-higher（μ = {setup['clip']['mu']}）")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 6. KL 惩罚能拉住模型吗？
#
# 同样的 GRPO，加上 KL 惩罚 $\beta$（k3 估计，参考策略 = 训练开始时的 base）。"漂移"用**精确**的逐 token KL 量：
# 网络给出每个位置上整个字表的分布，
# $\mathrm{KL}(\pi_\theta \,\|\, \pi_{base}) = \sum_v \pi_\theta(v)\log\frac{\pi_\theta(v)}{\pi_{base}(v)}$，
# 在训练后的模型自己采的解答（200 道新题 × 8 份）的每个 token 上算，再对 token 平均。说法是"$\beta$ 越大，漂移越小"。
# 下表每个 β 一行，"每个种子"一列是每次训练的 KL。

# %%
kl = net["kl"]
Table(["β", "到基座的 KL（nats / token）", "每个种子", "采样 pass@1（500 题 × 8 份）"],
      [[f"{r['beta']:g}", pm(r, "kl", "kl_se", 5), " ".join(f"{x:.4f}" for x in r["by_seed"]),
        pm(r, "pass1", "pass1_se")] for r in kl["rows"]])

# %%
b0, b1 = kl["rows"][0]["beta"], kl["rows"][-1]["beta"]
print(f"训练前的采样 pass@1（同样 500 题 × 8 份）：{kl['base_pass1']:.4f}")
print(seeds_line(f"KL(β = {b0:g}) − KL(β = {b1:g})", kl))

# %% [markdown]
# ## 7. 长度：按解答平均会让错的解答变长吗？（Dr. GRPO）
#
# Dr. GRPO（Liu et al. 2025）指出：GRPO 把每份解答的损失除以它的长度 $|o_i|$（`seq-mean-token-mean`）；
# 优势为负的（错的）解答越长，每个 token 受的惩罚越小，于是错的解答会越写越长（[S403](../lectures/sources.md#S403)）。
# 不除以长度（`seq-mean-token-sum`：每份解答的损失是 token 的和）就没有这个偏差。
# 这里两种聚合各训练几个种子，量新题上采样的解答有多长（token 数，含结束符）。
#
# 注意这个格式：正确的解答长度由题目定（1 步 5 个字、2 步 10 个字），只有错的解答可能长短不同，所以可能什么也分不出。

# %%
le = net["length"]
Table(["聚合", "全部解答的平均长度", "错的解答的平均长度", "采样 pass@1"],
      [["基座（训练前）", le["base_len_all"], le["base_len_wrong"], kl["base_pass1"]]]
      + [[r["loss_agg"], pm(r, "len_all", "len_all_se", 3), pm(r, "len_wrong", "len_wrong_se", 3),
          r["pass1"]] for r in le["rows"]], digits=4)

# %%
print("错的解答的长度变化之差（seq-mean-token-mean − seq-mean-token-sum）：")
print(seeds_line("  差", le))

# %% [markdown]
# ## 8. 玩具和网络，一张表
#
# 讲义 §10.4 把六个说法排成一张表：网络量到的差、网络的判定、玩具的判定。
# 玩具的判定读玩具自己的数：大多是精确值（路径 pass@1、精确的 KL），没有抽样误差，判定只看符号；
# clip-higher 一项是玩具在几个种子上训练的结果，和网络一样按种子判定。表下面列出每一行的依据。
#
# 下一格从讲义里读出这张表。看两列判定：哪里相同，哪里不同。

# %%
lecture = Path("../lectures/lecture06_scaling_rl.md").read_text(encoding="utf-8")
block = lecture.split("<!-- generated:network -->\n")[1].split("<!-- /generated:network -->")[0]
cells = [[re.sub(r"\[(S\d+)\]\([^)]*\)", r"\1", c.strip()) for c in line.strip("| ").split(" | ")]
         for line in block.splitlines() if line.startswith("| ") and not line.startswith("| 说法")]
display(Table(["说法", "网络：差 ± 标准误", "网络", "玩具"], cells))

# %% [markdown]
# ## 小结
#
# - 仓库带着三个预训练网络，RL 从它们开始，不用先预训练：一次 GRPO 训练的 CPU 秒数在第 2 节的表里。
# - 每个说法写成"预期方向上的差"。固定的模型用 3 个标准误判定；训练的效果在几个训练种子上判定，$t$ 和临界值比。
# - 一次训练在一批题上的标准误很小，但它没有量"换一个种子会怎样"：不能拿来判定训练的效果。
# - 贪心准确率和采样 pass@1 可以朝相反的方向走：一个看分布的最高点，一个看整个分布。
# - 分不出的说法，不等于不成立：这个大小、这么多题和种子还不够。
#
# ## 试一试
#
# 1. 第 2 节把 `name = "base"` 改成 `name = "small"`：先猜一猜，小网络上这一批的奖励涨得更快还是更慢？
#    设置和记录的不同，核对会跳过，图照样画出来，灰线是记录的 base。
# 2. 第 2 节的 `config` 里加上 `lr=1e-4`（或把 `iterations=prefix` 改大）：奖励和熵的曲线怎么变？
# 3. （选做，要很久）`make figures` 重跑讲义的全部数字，包括这个 notebook 读的那些。它先装开发用的依赖（`.[dev]`，约 600 MB），
#    再跑两个脚本；`tools/network_claims.py` 一项就要开头打印的那么多分钟。只想换 GRPO 的配方，可以改这个脚本里的 `RECIPE`，
#    只重算说法 2、3：`python tools/network_claims.py --part recipe`（第 2 节的表里有每次训练的秒数，再加上评估）。哪个判定变了？
