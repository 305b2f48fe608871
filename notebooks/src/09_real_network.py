# %% [markdown]
# # 09 · 真网络上的第 6 讲
#
# **你将学到**
# - 仓库里带着三个预训练好的小 transformer（`toyllm.tinylm.pretrained`）：从它们出发，不用先训练几个小时；
# - 第 6 讲的每一个中心说法（越大越好、GRPO 提高 pass@1、大 k 时基座反超、clip-higher 保住熵、KL 拉住模型、长度偏差），
#   在真网络上量一遍：每个数带标准误，每个说法一个判定；
# - 同一个说法，玩具怎么说，网络怎么说，放在一张表里。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 10.4 节（真网络上的第 6 讲）。
#
# 大部分实验要十几分钟，由 `tools/network_claims.py`（`make figures`）算好，存在 `lectures/figures/numbers.json` 的
# `"network"` 里。这个 notebook 读出这些数、画图，并现场重跑其中一项（第 2 节的 GRPO，十几秒），核对它和存下的数逐位一致。
#
# 这里的数是在 x86-64 的 OpenBLAS Haswell 内核上算出来的（`make lab` 已经设好，见 `toyllm/blas.py`）。

# %%
# %matplotlib inline
import json
import random
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from toyllm import tinylm as tl
from toyllm.arithmetic import make_problem_set
from toyllm.estimators import verdict
from toyllm.plotstyle import use_chinese_font
from toyllm.tables import Table

use_chinese_font()
numbers = json.loads(Path("../lectures/figures/numbers.json").read_text(encoding="utf-8"))
net = numbers["network"]
setup = net["setup"]


def pm(d, key="value", se="se", nd=4):
    """{value, se} 写成 "0.1234 ± 0.0012"。"""
    return f"{d[key]:.{nd}f} ± {d[se]:.{nd}f}"


def label(ax, xlabel, ylabel, title=None):
    """坐标轴的名字、标题、网格和图例（有带名字的线时）。"""
    ax.set(xlabel=xlabel, ylabel=ylabel, **({"title": title} if title else {}))
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend()


# %% [markdown]
# ## 1. 三个预训练网络
#
# 三个网络形状相同（2 层、4 个头、上下文 25），只有宽度 $d$ 不同。它们用同一个配方训练：
# 60 万道 1~2 步的玩具题，解答是玩具 `ToyLLM(1e10)` **自己采样写下的**思维链，有对有错。
# 所以网络学到的是玩具的分布：贪心解码多半是对的，采样（$T = 1$）会犯玩具那样的错，RL 有东西可以磨尖。
#
# 下表读每个网络的清单（`tl.manifest`）：参数个数、留出题（1,000 道）上的贪心准确率、训练结束时的损失。

# %%
mans = {name: tl.manifest(name) for name in tl.PRETRAINED}
Table(["网络", "d", "参数个数", "留出题贪心准确率", "最后的训练损失"],
      [[name, m["config"]["d"], m["n_params"], m["heldout"]["greedy"], m["final_loss"]]
       for name, m in mans.items()], digits=4)

# %% [markdown]
# **新题。** 下面的评估都在新题上做：种子不同（不是训练题的 1，也不是留出题的 12345），
# 去掉和预训练的训练题、留出题、RL 训练题一样的算式。下一格打印它的设置、为了凑满抽了几道，
# 以及 1 步题占多少。1 步题的算式不多，几乎都已经在 60 万道训练题里；去掉它们以后，新题大多是 2 步题。
# 所以同一个网络在新题上的贪心准确率，比清单里留出题上的低一些（最后一行）。

# %%
print("新题：", setup["fresh"], f"（抽了 {net['fresh_drawn']} 道才凑满）")
share = net["one_step_share"]
print(f"1 步题的比例：新题 {share['fresh']:.1%}，清单的留出题 {share['heldout']:.1%}")
print(f"base 的贪心准确率：新题 {net['scaling']['rows'][1]['greedy']:.3f}，"
      f"留出题 {tl.manifest('base')['heldout']['greedy']:.3f}")
print("RL 训练题：", setup["rl_train"])
print(f"说法 1–3：每道新题采样 {setup['n']} 份；说法 4–6：{len(setup['seeds'])} 个种子，"
      f"每次训练后在前 {setup['small_eval']['problems']} 道新题上"
      f"各采样 {setup['small_eval']['n']} 份")

# %% [markdown]
# ## 判定的规则
#
# 每个说法都有一个预期的方向（例如"RL 之后的 pass@1 − 之前的 > 0"）。量出这个差 $d$ 和它的标准误 $\mathrm{SE}$：
#
# - $d > 3\,\mathrm{SE}$：**成立**；
# - $d < -3\,\mathrm{SE}$：**不成立**（量出来的是反方向）；
# - 否则：**这个大小上分不出**（这么多题、这么多种子还不够分辨）。
#
# 标准误怎么算：每道题采样 $n$ 份，答对的比例 $\hat q_i$；pass@1 $= \frac1N \sum_i \hat q_i$，
# $\mathrm{SE} = \mathrm{std}(\hat q_i)/\sqrt N$。两个模型在**同一批题**上比，用配对的标准误
# $\mathrm{std}(\hat q_{a,i} - \hat q_{b,i})/\sqrt N$：题目难易的波动两边一样，相减就去掉了。
# 训练本身的随机性（说法 4–6）用几个种子，标准误在种子之间算。
#
# 规则就是 `toyllm.estimators.verdict`。下一格用三个例子看它的三种结果。

# %%
for d, se in [(0.014, 0.0037), (-0.02, 0.005), (0.01, 0.005)]:
    print(f"差 {d:+.4f}，标准误 {se:.4f}（{d / se:+.1f} 个标准误）→ {verdict(d, se)}")

# %% [markdown]
# ## 2. GRPO 提高 pass@1 吗？（现场重跑）
#
# 设置就是 issue 里的那一个：从 `tl.pretrained()`（base，约 10 万个参数）开始，`tl.tiny_config("grpo")`，100 次迭代，
# 每次 16 道 RL 训练题、每题 8 份样本，Adam、lr = 3e-4。
#
# 下一格现场训练一遍（十几秒；打印的用时每台机器不同），然后核对：每次迭代的奖励和熵，
# 和 `tools/network_claims.py` 存下的逐项一致。

# %%
# NBVAL_IGNORE_OUTPUT
s = setup["rl_train"]
rl_problems = make_problem_set(random.Random(s["seed"]), s["count"], s["min_steps"], s["max_steps"])
rl_train_set = [tl.problem_example(p) for p in rl_problems]
model = tl.pretrained()
start = time.perf_counter()
hist = tl.rl_train(model, rl_train_set, tl.tiny_config("grpo", iterations=setup["iterations"]))
print(f"GRPO {setup['iterations']} 次迭代：这台机器上 {time.perf_counter() - start:.1f} s"
      f"（numbers.json 记下的是 {net['grpo']['seconds']} s）")

# %% [markdown]
# 下一格打印核对的结果（不一致会报错），再画出奖励（这一批样本的采样 pass@1）和熵随迭代的变化。

# %%
assert np.allclose(hist["reward"], net["grpo"]["reward"], rtol=0, atol=1e-6)
assert np.allclose(hist["entropy"], net["grpo"]["entropy"], rtol=0, atol=1e-6)
print(f"和 numbers.json 一致：{len(hist['reward'])} 次迭代的奖励和熵")
fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
names = ("这一批的奖励（采样 pass@1）", "熵（nats / token）")
for ax, col, name in zip(axes, ("reward", "entropy"), names):
    ax.plot(hist["iteration"], hist[col], lw=1)
    label(ax, "迭代次数", name)
fig.suptitle("GRPO，从预训练的 base 开始")
fig.tight_layout()
plt.show()

# %% [markdown]
# 每一批只有 16 道题，奖励的曲线很抖，看不出 pass@1 有没有涨。要看涨没涨，得在**固定的一批新题**上、每题多采样几份，
# 比较训练前后。下一格读出脚本量的结果：1,000 道新题、每题 64 份（同一个模型、同一个种子，所以就是上面这次训练）。

# %%
g = net["grpo"]
print(f"采样 pass@1：训练前 {pm(g['base'])}，训练后 {pm(g['rl'])}")
print(f"差 {g['diff']:+.4f} ± {g['se']:.4f}（配对，{g['diff'] / g['se']:+.1f} 个标准误）"
      f"→ {verdict(g['diff'], g['se'])}")
print(f"贪心准确率：训练前 {g['greedy_base']:.3f}，训练后 {g['greedy_rl']:.3f}")
assert verdict(g["diff"], g["se"]) == g["verdict"]

# %% [markdown]
# ## 3. 越大越好吗？pass@1、pass@k 和参数个数
#
# 三个网络在同样的 1,000 道新题上，每题采样 64 份；pass@k 用无偏估计（`toyllm.estimators.pass_at_k`），标准误在题之间算。
# 下表每行一个网络；再下一张表是相邻两个网络 pass@1 的配对差和判定。

# %%
sc = net["scaling"]
ks = [1, 8, 64]
Table(["网络", "参数个数", "贪心准确率"] + [f"pass@{k}" for k in ks],
      [[r["name"], r["n_params"], r["greedy"]] + [pm(r[f"pass{k}"]) for k in ks]
       for r in sc["rows"]], digits=4)

# %%
Table(["从", "到", "pass@1 的差", "标准误", "判定"],
      [[s["from"], s["to"], s["diff"], s["se"], verdict(s["diff"], s["se"])] for s in sc["steps"]],
      digits=4)

# %% [markdown]
# 图：横轴是参数个数（对数），每条线一个 $k$。看线是不是都往右上走，以及 $k$ 大时线是不是更平（大 $k$ 时小网络也常能采到对的）。

# %%
fig, ax = plt.subplots(figsize=(6, 3.8))
params = [r["n_params"] for r in sc["rows"]]
for k in (1, 4, 16, 64):
    ax.errorbar(params, [r[f"pass{k}"]["value"] for r in sc["rows"]],
                yerr=[r[f"pass{k}"]["se"] for r in sc["rows"]], marker="o", capsize=3,
                label=f"pass@{k}")
ax.set_xscale("log")
label(ax, "参数个数", "新题上的 pass@k", "三个预训练网络：pass@k 随参数个数（误差线 ±1 个标准误）")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 4. 大 k 时基座会反超 RL 吗？（Yue et al. 2025）
#
# 同样 1,000 道题、每题 64 份：基座和第 2 节训练后的模型，$k = 1 \dots 64$ 的 pass@k。
# 说法是"$k$ 大时基座追上、甚至超过 RL"：Yue et al. 在大模型上看到的现象（[S400](../lectures/sources.md#S400)）。
# 所以看的差是 **基座 − RL**，事先定好在 $k = 64$ 上判定。
# 下表列出几个 $k$，再画出两条曲线和它们的差。看差的曲线在哪里越过 0，以及 ±3 个标准误的带子在哪些 $k$ 上整个在 0 之上。
#
# 逐个 $k$ 去找"哪里超过了 3 个标准误"，是在 64 个（彼此相关的）比较里挑：这样找到的 $k$ 只能当作观察，不是事先定的检验。

# %%
pk = net["passk"]
by_k = {r["k"]: r for r in pk["rows"]}
Table(["k", "基座", "GRPO 之后", "基座 − GRPO", "标准误"],
      [[k, by_k[k]["base"], by_k[k]["rl"], by_k[k]["diff"], by_k[k]["se"]]
       for k in (1, 2, 4, 8, 16, 32, 64)], digits=4)

# %%
print(f"k = 64：基座 − GRPO = {pk['diff']:+.4f} ± {pk['se']:.4f} → {verdict(pk['diff'], pk['se'])}")
print("基座第一次领先（点估计）的 k：", pk["first_k_base_ahead"])
print("基座领先超过 3 个标准误的 k：", [r["k"] for r in pk["rows"] if r["diff"] > 3 * r["se"]])
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
k_all = [r["k"] for r in pk["rows"]]
axes[0].plot(k_all, [r["base"] for r in pk["rows"]], label="基座（预训练的 base）")
axes[0].plot(k_all, [r["rl"] for r in pk["rows"]], label="GRPO 之后")
d = np.array([r["diff"] for r in pk["rows"]])
se = np.array([r["se"] for r in pk["rows"]])
axes[1].fill_between(k_all, d - 3 * se, d + 3 * se, alpha=0.3, label="±3 个标准误")
axes[1].plot(k_all, d, label="基座 − GRPO")
axes[1].axhline(0, color="0.4", lw=1)
for ax, name in zip(axes, ("pass@k", "差")):
    ax.set_xscale("log", base=2)
    label(ax, "k", name)
fig.suptitle("基座与 GRPO 之后的 pass@k（1,000 道新题，每题 64 份）")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 5. clip-higher 能让熵保持得更高吗？
#
# 裁剪只在 $\mu > 1$ 时起作用（讲义 §7.2：$\mu = 1$ 时 $\rho \equiv 1$）。所以这里用 `tiny_config("grpo", mu=4, ...)`，
# 只改上界：对称的 $\varepsilon_{high} = 0.2$，和 DAPO 的 $\varepsilon_{high} = 0.28$。
# DAPO（Yu et al. 2025）的 "Clip-Higher" 一节说：训练中熵很快下降（熵塌缩），上界裁剪限制了低概率 token 的概率上升，
# 所以把上界放宽到 0.28（[S402](../lectures/sources.md#S402)）。
# 每种 3 个种子，熵取最后 20 次迭代的平均（History 的 `entropy` 列：采样的每个 token 上策略的熵）。
# 表下先打印熵在训练中是升还是降（前 20 次和最后 20 次迭代比），再打印两个设置的差。
# 下表还有完整的 DAPO 预设（`tiny_config("dapo")`：clip-higher、动态采样、按 token 平均）。

# %%
ch = net["clip_higher"]
Table(["设置", "熵（最后 20 次迭代）", "每个种子", "上界裁剪比例"],
      [[f"grpo，μ = {setup['clip']['mu']}，ε_high = {r['eps_high']:g}", pm(r, "entropy_last"),
        str(r["by_seed"]), r["clip_high"]] for r in ch["rows"]]
      + [["dapo 预设", pm(ch["dapo"], "entropy_last"), "", ""]], digits=4)

# %%
last = setup["clip"]["last"]
for eh, curve in ch["curves"].items():
    print(f"ε_high = {float(eh):g}：前 {last} 次迭代的熵 {np.mean(curve[:last]):.4f}，"
          f"最后 {last} 次 {np.mean(curve[-last:]):.4f}（3 个种子平均的曲线）")
print(f"熵的差（0.28 − 0.2，按种子配对）：{ch['diff']:+.4f} ± {ch['se']:.4f}"
      f" → {verdict(ch['diff'], ch['se'])}")
fig, ax = plt.subplots(figsize=(6, 3.6))
for eh, curve in ch["curves"].items():
    ax.plot(np.arange(1, len(curve) + 1), curve,
            label=rf"$\epsilon_{{high}} = {float(eh):g}$（3 个种子平均）")
label(ax, "迭代次数", "熵（nats / token）", "对称裁剪 vs clip-higher（μ = 4）")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 6. KL 惩罚能拉住模型吗？
#
# 同样的 GRPO，加上 KL 惩罚 $\beta$（k3 估计，参考策略 = 训练开始时的 base）。"漂移"用**精确**的逐 token KL 量：
# 网络给出每个位置上整个字表的分布，
# $\mathrm{KL}(\pi_\theta \,\|\, \pi_{base}) = \sum_v \pi_\theta(v)\log\frac{\pi_\theta(v)}{\pi_{base}(v)}$，
# 在训练后的模型自己采的解答（200 道新题 × 8 份）的每个 token 上算，再对 token 平均。说法是"$\beta$ 越大，漂移越小"。

# %%
kl = net["kl"]
Table(["β", "到基座的 KL（nats / token）", "采样 pass@1（500 题 × 8 份）"],
      [[f"{r['beta']:g}", pm(r, "kl", "kl_se", 5), pm(r, "pass1", "pass1_se")] for r in kl["rows"]],
      digits=4)

# %%
b0, b1 = kl["rows"][0]["beta"], kl["rows"][-1]["beta"]
print(f"训练前的采样 pass@1（同样 500 题 × 8 份）：{kl['base_pass1']:.4f}")
print(f"KL(β = {b0:g}) − KL(β = {b1:g})（按种子配对）：{kl['diff']:+.5f} ± {kl['se']:.5f}"
      f" → {verdict(kl['diff'], kl['se'])}")

# %% [markdown]
# ## 7. 长度：按解答平均会让错的解答变长吗？（Dr. GRPO）
#
# Dr. GRPO（Liu et al. 2025）指出：GRPO 把每份解答的损失除以它的长度 $|o_i|$（`seq-mean-token-mean`）；
# 优势为负的（错的）解答越长，每个 token 受的惩罚越小，于是错的解答会越写越长（[S403](../lectures/sources.md#S403)）。
# 不除以长度（`seq-mean-token-sum`：每份解答的损失是 token 的和）就没有这个偏差。
# 这里两种聚合各训练 3 个种子，量新题上采样的解答有多长（token 数，含结束符）。
#
# 注意这个格式：正确的解答长度由题目定（1 步 5 个字、2 步 10 个字），只有错的解答可能长短不同，所以可能什么也分不出。

# %%
le = net["length"]
Table(["聚合", "全部解答的平均长度", "错的解答的平均长度", "采样 pass@1"],
      [["基座（训练前）", le["base_len_all"], le["base_len_wrong"], kl["base_pass1"]]]
      + [[r["loss_agg"], pm(r, "len_all", "len_all_se", 3), pm(r, "len_wrong", "len_wrong_se", 3),
          r["pass1"]] for r in le["rows"]], digits=4)

# %%
print(f"错的解答的长度变化之差（seq-mean-token-mean − seq-mean-token-sum，按种子配对）："
      f"{le['diff']:+.4f} ± {le['se']:.4f} → {verdict(le['diff'], le['se'])}")

# %% [markdown]
# ## 8. 玩具和网络，一张表
#
# 讲义 §10.4 有一张完整的表（由 `tools/network_claims.py` 的 `render_network` 从 numbers.json 排出；
# `tests/notebooks/test_lectures.py` 检查讲义里的表和 numbers.json 一致）。玩具的判定读 numbers.json 里玩具的数，写明出处；
# 玩具的数多是精确值，标准误是 0。
#
# 下一格从讲义里读出那张表，排成一张短表：每个说法，网络的差 ± 标准误和判定，玩具的判定；表下面逐条打印玩具判定的依据。

# %%
lecture = Path("../lectures/lecture06_scaling_rl.md").read_text(encoding="utf-8")
block = lecture.split("<!-- generated:network -->\n")[1].split("<!-- /generated:network -->")[0]
cells = [line.split(" | ") for line in block.splitlines()
         if line.startswith("| ") and not line.startswith("| 说法")]
diffs = [" / ".join(f"{x['diff']:+.4f} ± {x['se']:.4f}" for x in sc["steps"])] + \
        [f"{c['diff']:+.4f} ± {c['se']:.4f}" for c in (g, pk, ch, kl, net["length"])]
names = ["1. 越大越好", "2. GRPO 提高 pass@1", "3. 大 k 时基座反超", "4. clip-higher 让熵更高",
         "5. β 减少漂移", "6. 按解答平均让错的更长"]
display(Table(["说法", "网络：差 ± 标准误", "网络的判定", "玩具的判定"],
              [[n, d, row[2], row[3]] for n, d, row in zip(names, diffs, cells)]))
for n, row in zip(names, cells):
    print(f"{n}　玩具的依据：{row[4].rstrip(' |')}")

# %% [markdown]
# ## 小结
#
# - 仓库带着三个预训练网络，RL 从它们开始：一次 GRPO 只要十几秒。
# - 每个说法都写成"预期方向上的差 ± 标准误"，再用同一条规则判定：超过 3 个标准误才算量出来了。
# - 同一个说法，玩具给精确的答案，网络给带误差的估计；两者的判定可以不同，上表并排列出，哪里相同、哪里不同，读表即可。
# - 分不出的说法，不等于不成立：这个大小、这么多题和种子还不够。
#
# ## 试一试
#
# 1. 第 2 节把 `tl.pretrained()` 换成 `tl.pretrained("small")`：先猜一猜，小网络上这一批的奖励涨得更快还是更慢？
# 2. 第 2 节把 `tiny_config("grpo", ...)` 换成 `tiny_config("grpo", lr=1e-4, ...)`：奖励和熵的曲线怎么变？（不会再和 numbers.json 一致，把核对的两行注释掉。）
# 3. （选做）在 `tools/network_claims.py` 的 `SETUP` 里把 `seeds` 改成 5 个，重跑 `make figures`：哪个"分不出"变成了"成立"或"不成立"？
