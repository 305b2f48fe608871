# %% [markdown]
# # 06 · PPO、KL 与 DAPO
#
# **你将学到**
# - 重要性比率 $\rho$ 和裁剪：为什么每批只更新一次（$\mu = 1$）时裁剪**永远不会**发生，损失是 0 而梯度不是 0；$\mu > 1$ 时裁剪怎样开始起作用；
# - 到参考策略的 KL：三个单样本估计 $k_1, k_2, k_3$ 和精确 KL 比，谁有偏、谁方差大；把估计量当损失时，梯度对应的是哪个 KL；
# - 熵塌缩：GRPO 训练中熵怎样下降；clip-higher（$\varepsilon_{\text{high}} = 0.28$）怎样让熵留得更高；
# - 动态采样：奖励全相同的组有多少、丢掉它们要多采多少样本；
# - 损失的聚合方式：按解答平均带来的**长度偏差**，除以标准差带来的**难度偏差**，以及 Dr. GRPO 怎样去掉它们。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 7 节「PPO 的裁剪、旧策略与 μ；KL 与 k1/k2/k3」和第 8 节「DAPO：clip-higher、动态采样、按步聚合；熵塌缩」。

# %% [markdown]
# ## 0. 准备
#
# 所有东西都来自 `toyllm`：`toyllm.rl` 是 RL 引擎（`train`、`preset` 和几个小的纯函数），`toyllm.sampler` 一次采很多份解答。
# 训练题和留出题用 `default_problems(0)`：256 道训练题、200 道留出题，每道 3~8 步。
#
# 看输出：两批题的数目，和 GRPO、DAPO 两个预设到底差在哪几个选项。

# %%
# %matplotlib inline
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from toyllm import CONTEXT_NAMES, CONTEXTS, TrainableLLM
from toyllm.exact import correct_paths
from toyllm.plotstyle import use_chinese_font
from toyllm.policy import prob_table
from toyllm.rl import (aggregation_weights, clipped_surrogate, default_problems, diff_presets,
                       group_advantages,
                       kl_estimates, policy_loss, preset, step_rewards, train)
from toyllm.sampler import prepare_problems, sample_rollouts
from toyllm.tables import Table

use_chinese_font()
train_set, heldout = default_problems(0)
print(f"训练题 {len(train_set)} 道，留出题 {len(heldout)} 道")
Table(["选项", "GRPO", "DAPO"],
      [[name, str(a), str(b)] for name, (a, b) in diff_presets("grpo", "dapo").items()],
      title="GRPO 和 DAPO 不同的选项：")

# %% [markdown]
# ## 1. 重要性比率与裁剪（讲义 7.1）
#
# 采样用的是 $\pi_{\text{old}}$，更新的是 $\pi_\theta$。每一步的重要性比率和裁剪的替代损失是
#
# $$\rho_{i,t} = \frac{\pi_\theta(a_{i,t}\mid c_{i,t})}{\pi_{\text{old}}(a_{i,t}\mid c_{i,t})}, \qquad
# \ell_{i,t} = -\min\Big(\rho_{i,t}A_i,\ \operatorname{clip}\big(\rho_{i,t},\,1-\varepsilon_{\text{low}},\,1+\varepsilon_{\text{high}}\big)A_i\Big).$$
#
# 代码里是 `clipped_surrogate(ratio, adv, eps_low, eps_high)`，它返回每一步的损失，以及哪些步在下界、上界被裁剪。
#
# 看图：横轴是 $\rho$，纵轴是 $\ell$。$A > 0$ 时，$\rho$ 超过 $1 + \varepsilon_{\text{high}}$ 以后曲线变平（梯度为 0）；
# $A < 0$ 时，$\rho$ 低于 $1 - \varepsilon_{\text{low}}$ 以后变平。虚线是 clip-higher（$\varepsilon_{\text{high}} = 0.28$）：只有上界往右移了。

# %%
rho = np.linspace(0.5, 1.6, 221)
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for ax, A in zip(axes, (1.0, -1.0)):
    for eh, style in ((0.2, "-"), (0.28, "--")):
        ax.plot(rho, clipped_surrogate(rho, np.full_like(rho, A), 0.2, eh).loss, style,
                label=rf"$\epsilon_{{low}} = 0.2$，$\epsilon_{{high}} = {eh}$")
    ax.plot(rho, -rho * A, color="0.6", linewidth=1, label="不裁剪：−ρA")
    ax.axvline(1.0, color="0.8", linewidth=1)
    ax.set_title(f"A = {A:+.0f}（{'好' if A > 0 else '坏'}的解答）")
    ax.set_xlabel(r"重要性比率 $\rho$")
    ax.legend()
axes[0].set_ylabel("每步损失 ℓ")
fig.suptitle("裁剪的替代损失")
fig.tight_layout()
plt.show()

# %% [markdown]
# ### 1.1 μ = 1：裁剪永远不会发生（讲义 7.2）
#
# 取 1 亿参数（1e8）的模型，从训练题里拿 32 道，每道采 $G = 8$ 份，算 GRPO 的优势，然后用 `policy_loss` 算损失和梯度 ——
# 这正是引擎每次更新做的事。参数还没动，所以 $\pi_\theta = \pi_{\text{old}}$，每一步 $\rho = 1$。
#
# **聚合**（aggregation）是把每一步的损失 $\ell_{i,t}$ 合成一个数的方式：损失 $= \sum_{i,t} w_{i,t}\,\ell_{i,t}$，权重 $w_{i,t}$ 有三种（`loss_agg`，第 6 节细讲）：
#
# | `loss_agg` | $w_{i,t}$ | 谁在用 |
# |---|---|---|
# | `seq-mean` | $\dfrac{1}{B\,\lvert o_i\rvert}$：先在每份解答内按步平均，再对 $B$ 份平均 | 原始 GRPO |
# | `token-mean` | $\dfrac{1}{\sum_j \lvert o_j\rvert}$：整批所有步一起平均 | DAPO |
# | `constant` | $\dfrac{1}{B\,L_{\max}}$：除以一个常数，$L_{\max}$ 是步数上限（参数 `max_len`，这里取 8） | Dr. GRPO |
#
# $\rho = 1$ 时，损失的值是 $-\sum_{i,t} w_{i,t} A_i$。同一组的优势加起来是 0；这个玩具里同一道题的 8 份解答步数相同，所以三种聚合下损失都是 0（只差浮点舍入；下面舍入到 12 位小数）。
# 真实 LLM 里同一组的解答长短不一，`token-mean`、`constant` 的损失只是接近 0（讲义 7.2）。
# 梯度却是 $\nabla \rho = \rho\, \nabla \log \pi_\theta = \nabla \log \pi_\theta$，正是策略梯度，不是 0。
#
# 看输出：三种聚合方式下，$\rho$ 的范围、损失、梯度的长度、两个裁剪比例。

# %%
model = TrainableLLM(1e8)
batch = prepare_problems(train_set[:32])
roll = sample_rollouts(model, batch, 8, np.random.default_rng(0))
adv = group_advantages(step_rewards(roll), 8)
m = roll.mask
old_p = roll.probs[m][np.arange(m.sum()), roll.actions[m]]      # π_old(a_t | c_t)


def ratios(current):
    """这一批每一步的 ρ = π_θ / π_old（π_θ 取 current 现在的参数）。"""
    return prob_table(current)[roll.ctx[m], roll.actions[m]] / old_p


r = ratios(model)
print(f"{len(roll)} 份解答、{m.sum()} 步；ρ 的范围 [{r.min()}, {r.max()}]")
rows = []
for agg in ("seq-mean", "token-mean", "constant"):
    res = policy_loss(model, roll, adv, preset("grpo", loss_agg=agg), max_len=8)
    rows.append([agg, f"{round(res.loss, 12) + 0.0:.6f}"]
                + [f"{x:.4f}" for x in (np.linalg.norm(res.grad), res.clip_low, res.clip_high)])
Table(["聚合方式", "损失", "‖梯度‖", "裁剪·低", "裁剪·高"], rows)

# %% [markdown]
# "训练日志里损失一直是 0，是不是没在训练？""裁剪比例为什么总是 0？"是初学者看训练日志时常问的两个问题。答案就是上面这张表：
# $\mu = 1$ 时两者本来就是 0，梯度照样有。
#
# ### 1.2 μ > 1：同一批数据更新好几次
#
# 现在在**同一批**数据上连续更新 6 次（学习率 lr = 30，大一点，让策略在一批之内就明显移动）。
# 第一次更新后 $\pi_\theta \ne \pi_{\text{old}}$，$\rho$ 离开 1；越过 $[0.8, 1.2]$ 的步开始被裁剪。
#
# 看输出：第 1 次 $\rho$ 全是 1、裁剪是 0；从第 2 次起 $\rho$ 散开，两个裁剪比例变成正数；梯度变小，因为被裁剪的步不再贡献梯度。

# %%
cfg = preset("grpo", lr=30.0)
trained = model.copy()
rows = []
for update in range(1, 7):
    r = ratios(trained)
    res = policy_loss(trained, roll, adv, cfg)
    rows.append([update, f"[{r.min():.3f}, {r.max():.3f}]"]
                + [f"{x:.4f}" for x in (round(res.loss, 12) + 0.0, np.linalg.norm(res.grad),
                                        res.clip_low, res.clip_high)])
    trained.params -= cfg.lr * res.grad
Table(["第几次更新", "ρ 的范围", "损失", "‖梯度‖", "裁剪·低", "裁剪·高"], rows)

# %% [markdown]
# ### 1.3 整个训练过程里的裁剪比例
#
# 同样的设置跑完整的训练：1e8 的模型，GRPO 预设改成 lr = 30，100 次迭代，种子 0。一次 $\mu = 1$，一次 $\mu = 4$（每批数据更新 4 次）；
# 第三次是 $\mu = 4$ 加上 clip-higher（$\varepsilon_{\text{high}} = 0.28$），第 4 节再用它。
# 训练记录里的 `clip_low`、`clip_high` 是每次迭代里被裁剪的步的比例（$\mu$ 次更新的平均），和 TRL 的 `clip_ratio/low_mean`、`clip_ratio/high_mean` 定义相同[S535](../lectures/sources.md#S535)。
#
# 看输出和图：$\mu = 1$ 的两个裁剪比例在每一次迭代都恰好是 0；$\mu = 4$ 的裁剪比例是正的，集中在训练前期策略变化最快的时候，后来几乎为 0。

# %%
runs = {}
for label, kw in (("μ = 1", dict(mu=1)), ("μ = 4", dict(mu=4)),
                  ("μ = 4，clip-higher", dict(mu=4, eps_high=0.28))):
    net = TrainableLLM(1e8)
    runs[label] = (net,
                   train(net, preset("grpo", lr=30.0, iterations=100, seed=0, **kw), train_set,
                         heldout))

display(Table(["设置", "裁剪·低：平均", "最大", "裁剪·高：平均", "最大"],
              [[label] + [f"{f(h[k]):.4f}" for k in ("clip_low", "clip_high") for f in (np.mean,
                                                                                        np.max)]
               for label, (net, h) in runs.items()]))

h4 = runs["μ = 4"][1]
fig, ax = plt.subplots(figsize=(8, 4))
ax.plot(h4["iteration"], h4["clip_low"], label=r"下界裁剪（$A<0$，$\rho<1-\epsilon_{low}$）")
ax.plot(h4["iteration"], h4["clip_high"], label=r"上界裁剪（$A>0$，$\rho>1+\epsilon_{high}$）")
ax.plot(runs["μ = 1"][1]["iteration"], runs["μ = 1"][1]["clip_low"], color="0.5", linestyle=":",
        label="μ = 1（两种都是 0）")
ax.set_xlabel("迭代次数")
ax.set_ylabel("被裁剪的步的比例")
ax.set_title("μ = 4：裁剪比例随训练变化（1e8，lr = 30）")
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ### 1.4 默认学习率下，PPO、DAPO 预设为什么比 GRPO 好？
#
# 默认的 lr = 2 时，策略在一批之内动得很少，裁剪几乎不发生。那 `ppo`、`dapo` 两个预设和 `grpo` 训练出来一样吗？**不一样。**
# 它们和 GRPO 差好几个选项（上面第 0 节打印了 GRPO 和 DAPO 的差别），其中两个即使不裁剪也改变训练：
# - $\mu = 4$：每批数据做 4 次梯度更新。不裁剪时，这差不多就是在同一批数据上多走了 3 步，等于更大的步子；
# - 动态采样：丢掉奖励全相同的组、再采新题补满。每次迭代都有 32 个有用的组，代价是多采很多样本。
#
# 下面用 1e9 的模型、默认设置（200 次迭代）训练三个预设，再从 GRPO 出发一次只改一个选项。
# 看输出：最终的路径 pass@1、整个训练里的平均和最大裁剪比例、梯度更新的总次数、累计采样数。

# %%
variants = {
    "grpo": preset("grpo"),
    "ppo": preset("ppo"),
    "dapo": preset("dapo"),
    "grpo + μ = 4": preset("grpo", mu=4),
    "grpo + 动态采样": preset("grpo", dynamic_sampling=True),
    "grpo + token-mean": preset("grpo", loss_agg="token-mean"),
}
rows = []
for label, cfg_v in variants.items():
    h = train(TrainableLLM(1e9), cfg_v, train_set, heldout)
    clip = np.maximum(h["clip_low"], h["clip_high"])
    rows.append([label, h["pass1_exact"][-1], float(np.mean(clip)), float(np.max(clip)),
                 cfg_v.mu * cfg_v.iterations, h["samples"][-1]])
Table(["设置", "最终路径 pass@1", "平均裁剪比例", "最大裁剪比例", "梯度更新次数", "累计采样数"],
      rows,
      title="1e9，lr = 2，200 次迭代，留出题 200 道")

# %% [markdown]
# 从表里读出：
# - 三个预设的最终 pass@1 明显不同，PPO、DAPO 都比 GRPO 高；
# - 裁剪比例几乎都是 0（DAPO 偶尔有一点），所以差别**不是**裁剪带来的；
# - 只把 GRPO 的 $\mu$ 改成 4，就补上了和 PPO 的大部分差距：梯度更新次数是 4 倍；
# - 只打开动态采样，也涨了不少，但累计采样数多了好几倍；DAPO 两样都有，所以最高；
# - 只改聚合（`token-mean`）几乎没有变化：这个玩具里长度偏差很小（第 6 节）。
#
# 所以比较算法时，要在**同样多的更新和样本**下比较；"DAPO 更好"在这里主要是"更新更多、样本更多"。

# %% [markdown]
# ## 2. 到参考策略的 KL（讲义 7.3）
#
# 参考策略 $\pi_{\text{ref}}$ 是训练开始时冻结的模型。玩具里每个情境只有 3 种做法，所以 KL 可以**精确**算：
#
# $$\mathrm{KL}_c = \sum_{a} \pi_\theta(a\mid c)\,\log\frac{\pi_\theta(a\mid c)}{\pi_{\text{ref}}(a\mid c)} .$$
#
# 真实 LLM 做不到（词表太大），只能用采样到的那一步 $a \sim \pi_\theta$ 来估计。记 $r = \pi_{\text{ref}}(a\mid c)/\pi_\theta(a\mid c)$：
#
# $$k_1 = -\log r, \qquad k_2 = \tfrac12 (\log r)^2, \qquad k_3 = (r - 1) - \log r .$$
#
# 代码是 `kl_estimates(logp, logp_ref)`。
#
# 先用默认的 GRPO 预设（lr = 2，$\mu = 1$，200 次迭代）训练 1B（1e9）的模型，在第 5、20、50、200 次迭代后各存一份模型（`callback` 每次迭代后被调用）。
# 训练记录里的 `kl_exact` 是精确 KL（按这一次迭代采样经过的情境加权），`kl_est` 是 $k_3$ 估计的平均。
#
# 看输出：KL 随训练增大。前几行里估计和精确值接近；最后一行差得多一些 —— 下面会看到原因：训练久了，$k_3$ 的方差变大了。

# %%
SNAPSHOTS = (5, 20, 50, 200)
snapshots = {}


def keep_snapshots(history, current):
    """每次迭代后调用：到了 SNAPSHOTS 里的迭代次数，就存一份模型。"""
    if history.n_rows in SNAPSHOTS:
        snapshots[history.n_rows] = current.copy()


grpo_model = TrainableLLM(1e9)
grpo = train(grpo_model, preset("grpo"), train_set, heldout, callback=keep_snapshots)
grpo.table(rows=[0] + [s - 1 for s in SNAPSHOTS],
           columns=["iteration", "pass1_exact", "entropy", "kl_exact", "kl_est", "zero_std"])

# %% [markdown]
# 现在仔细比较三个估计。对每一份存下的模型，在 200 道留出题上每道采 32 份解答（几万步），每一步算 $k_1, k_2, k_3$；
# 精确值是"每一步所在情境的 $\mathrm{KL}_c$"的平均 —— 这正是估计量想估的东西。
#
# 第一张表是每个估计的**偏差**（估计的平均 − 精确值，括号里是它的标准误，偏差在两三个标准误以内就是"看不出偏"）。
# 第二张表是每个估计的**每步标准差**（单个样本有多不稳），最后一列是采到的最大的 $r$。
#
# 看输出：
# - $k_1$、$k_3$ 的偏差都在标准误的范围内：它们无偏。$k_2$ 的偏差是负的，而且离开出发点越远，偏得越多。
# - 刚开始训练、两个策略很接近时，$k_3$ 的标准差比 $k_1$ 小得多（这是它受欢迎的原因）；
#   训练久了，$\pi_\theta$ 把某些做法的概率压得很低，偶尔采到它们时 $r$ 很大，$k_3$ 的标准差反而超过 $k_1$（看第二张表的最后一列）。

# %%
ref_model = TrainableLLM(1e9)
log_ref = np.log(prob_table(ref_model))


def kl_table_row(current, rng):
    """在留出题上采样，返回 (精确 KL, {估计名: 每步的值}, 最大的 r)。"""
    log_pi = np.log(prob_table(current))
    kl_c = (np.exp(log_pi) * (log_pi - log_ref)).sum(axis=1)          # 每个情境的精确 KL
    r = sample_rollouts(current, heldout, 32, rng)
    c, a = r.ctx[r.mask], r.actions[r.mask]
    est = kl_estimates(log_pi[c, a], log_ref[c, a])
    return kl_c[c].mean(), est._asdict(), float(np.exp(log_ref[c, a] - log_pi[c, a]).max())


bias_rows, std_rows = [], []
for it in SNAPSHOTS:
    exact, est, r_max = kl_table_row(snapshots[it], np.random.default_rng(it))
    se = {k: v.std(ddof=1) / np.sqrt(len(v)) for k, v in est.items()}
    bias_rows.append([it, f"{exact:.4f}"]
                     + [f"{v.mean() - exact:+.5f}（{se[k]:.5f}）" for k, v in est.items()])
    std_rows.append([it] + [f"{v.std(ddof=1):.4f}" for v in est.values()] + [f"{r_max:.1f}"])
display(Table(["迭代", "精确 KL"] + [f"{k} 偏差（标准误）" for k in est], bias_rows))
Table(["迭代"] + [f"{k} 标准差" for k in est] + ["最大 r"], std_rows)

# %% [markdown]
# 训练时的 KL 估计不是几万步的平均，而是一批数据（32 道题 × 8 份）的平均。
# 拿第 200 次迭代的模型，在 32 道留出题上采 400 批，每批算一次"估计 − 精确值"（精确值用这一批自己经过的情境）。
#
# 看图：三个直方图的宽度就是一批数据里估计的误差；$k_2$ 的整体偏在 0 的左边（有偏），$k_1$、$k_3$ 以 0 为中心。
# 这时 $k_3$ 的分布有一条长尾：少数批次里采到了 $r$ 很大的步。

# %%
final = snapshots[200]
log_pi = np.log(prob_table(final))
kl_c = (np.exp(log_pi) * (log_pi - log_ref)).sum(axis=1)
n_batches = 400
big = sample_rollouts(final, heldout[:32], 8 * n_batches, np.random.default_rng(7))
rows, _ = np.nonzero(big.mask)
batch_id = (rows % big.n) // 8                       # 每道题的第 8j … 8j+7 份属于第 j 批
c, a = big.ctx[big.mask], big.actions[big.mask]
steps = np.bincount(batch_id, minlength=n_batches)
exact_b = np.bincount(batch_id, weights=kl_c[c], minlength=n_batches) / steps
est = kl_estimates(log_pi[c, a], log_ref[c, a])._asdict()
errors = {k: np.bincount(batch_id, weights=v,
                         minlength=n_batches) / steps - exact_b for k, v in est.items()}
for k, e in errors.items():
    print(f"{k}：一批的误差  平均 {e.mean():+.4f}，标准差 {e.std(ddof=1):.4f}")

fig, ax = plt.subplots(figsize=(8, 4.5))
bins = np.linspace(min(e.min() for e in errors.values()), max(e.max() for e in errors.values()), 60)
for k, e in errors.items():
    ax.hist(e, bins=bins, alpha=0.5, label=k)
ax.axvline(0.0, color="black", linewidth=1)
ax.set_xlabel("一批数据的 KL 估计 − 精确 KL")
ax.set_ylabel(f"批数（共 {n_batches} 批）")
ax.set_title("第 200 次迭代：三个 KL 估计在一批数据上的误差")
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ### 2.1 把估计量当损失：梯度对应哪个 KL？
#
# 带 KL 惩罚时，损失里加的是 $\beta\, k$（TRL、GRPO 论文用 $k_3$）[S541](../lectures/sources.md#S541)。把采到的 $a$ 当作固定的，对 logits $z$ 求导：
# $\nabla_z k = k'(\log \pi_\theta(a))\,(e_a - \pi_\theta)$，其中 $k_1' = 1$，$k_2' = -\log r$，$k_3' = 1 - r$。
# 对 $a \sim \pi_\theta$ 取期望，可以精确算出来，和两个方向的 KL 的梯度比较：
#
# $$\nabla_z \mathrm{KL}(\pi_\theta \,\|\, \pi_{\text{ref}}) = \pi_\theta \odot \big(\log\tfrac{\pi_\theta}{\pi_{\text{ref}}} - \mathrm{KL}\big), \qquad
# \nabla_z \mathrm{KL}(\pi_{\text{ref}} \,\|\, \pi_\theta) = \pi_\theta - \pi_{\text{ref}} .$$
#
# 取第 200 次迭代的模型里 KL 最大的那个情境。看输出：$k_1$ 的期望梯度是 0；$k_2$ 的等于 $\mathrm{KL}(\pi_\theta\|\pi_{\text{ref}})$ 的梯度；
# $k_3$ 的等于**反方向**的 $\mathrm{KL}(\pi_{\text{ref}}\|\pi_\theta)$ 的梯度。

# %%
j = int(np.argmax(kl_c))
p, q = np.exp(log_pi[j]), np.exp(log_ref[j])                  # π_θ(·|c)、π_ref(·|c)
log_r = np.log(q) - np.log(p)
derivs = {"k1": np.ones(3), "k2": -log_r, "k3": 1 - np.exp(log_r)}
print(f"情境：{CONTEXT_NAMES[CONTEXTS[j]]}；π_θ = {np.round(p, 4)}，π_ref = {np.round(q, 4)}，KL ="
      f" {kl_c[j]:.4f}")
for k, d in derivs.items():
    expected = sum(p[x] * d[x] * (np.eye(3)[x] - p) for x in range(3))
    print(f"E[∇{k}] = {np.round(expected, 4) + 0.0}")
print(f"∇KL(π_θ‖π_ref) = {np.round(p * (np.log(p / q) - kl_c[j]), 4) + 0.0}")
print(f"∇KL(π_ref‖π_θ) = {np.round(p - q, 4) + 0.0}")

# %% [markdown]
# 两个分布接近时两个方向的 KL 差别很小，所以用 $k_3$ 当损失在实践中问题不大；但它的值估的是一个 KL，梯度推的是另一个。
#
# ## 3. 熵塌缩（讲义 8.1）
#
# 策略的熵 $H = -\sum_a \pi(a\mid c)\log\pi(a\mid c)$（按采样经过的情境平均）衡量它还有多不确定：三种做法等概率时是 $\log 3$，几乎确定时接近 0。
#
# 看图：上面那次默认的 GRPO 训练里，留出题上的 pass@1 上升，熵一路下降。模型越来越只走一条路。

# %%
fig, ax1 = plt.subplots(figsize=(8, 4))
ax1.plot(grpo["iteration"], grpo["entropy"], color="C0", label="熵（nats）")
ax1.set_xlabel("迭代次数")
ax1.set_ylabel("熵（nats）")
ax2 = ax1.twinx()
ax2.plot(grpo["iteration"], grpo["pass1_exact"], color="C1", label="留出题上的路径 pass@1")
ax2.set_ylabel("路径 pass@1")
fig.legend(loc="center right", bbox_to_anchor=(0.88, 0.5))
ax1.set_title("GRPO（1e9，默认预设）：熵下降，pass@1 上升")
fig.tight_layout()
plt.show()
print(f"熵：第 1 次迭代 {grpo['entropy'][0]:.4f} → 第 {grpo.n_rows} 次 {grpo['entropy'][-1]:.4f}；"
      f"路径 pass@1：{grpo.meta['start_pass1_exact']:.4f} → {grpo['pass1_exact'][-1]:.4f}")

# %% [markdown]
# ## 4. clip-higher（讲义 8.2）
#
# 一个概率很小的好做法（$\pi_{\text{old}}$ 小，$A > 0$），在一批数据之内最多涨到 $\pi_{\text{old}}(1 + \varepsilon_{\text{high}})$；
# 已经很大的做法几乎不受这个上界影响。所以对称裁剪偏向已经高概率的做法。DAPO 把上界放宽到 $\varepsilon_{\text{high}} = 0.28$。
#
# 裁剪只在 $\mu > 1$ 时起作用，所以这里比较第 1.3 节的两次 $\mu = 4$ 训练：除了 `eps_high` 以外完全相同（同一个种子、同样的题、同样的 lr）。
#
# 看图：两条熵曲线开始时重合，后来 clip-higher 的熵降得更慢、停在更高的地方。

# %%
fig, ax = plt.subplots(figsize=(8, 4))
for label in ("μ = 1", "μ = 4", "μ = 4，clip-higher"):
    h = runs[label][1]
    ax.plot(h["iteration"], h["entropy"],
            label=label + (r"（$\epsilon_{high} = 0.28$）" if "higher" in label
                           else r"（$\epsilon_{high} = 0.2$）" if "4" in label else ""))
ax.set_xlabel("迭代次数")
ax.set_ylabel("熵（nats）")
ax.set_yscale("log")
ax.set_title("1e8，GRPO 改 lr = 30，种子 0：对称裁剪与 clip-higher 的熵")
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# 多出来的熵在哪里？把情境分成两类：在正确路径上 bug **从不咬人**的情境（bug 在那里照样算对，例如"加法，无进位"），和其余的情境。
# 在前一类情境里，bug 是一个"概率小、优势却为正"的做法（用了它照样做对），正是 clip-higher 照顾的对象。
#
# 看输出（这一次训练，种子 0）：两次训练最终的 pass@1 几乎一样，最后 20 次迭代的平均熵却差了一截；多出来的熵在 bug 不咬人的情境里：clip-higher 在那里给 bug 留了更大的概率，其余情境里没有差别。

# %%
paths = correct_paths(heldout)
harmless = [i for i in range(len(CONTEXTS)) if paths.bug_ok[paths.mask & (paths.ctx == i)].all()]
others = [i for i in range(len(CONTEXTS)) if i not in harmless]
print("bug 不咬人的情境：", "、".join(CONTEXT_NAMES[CONTEXTS[i]] for i in harmless))
rows = []
for label in ("μ = 4", "μ = 4，clip-higher"):
    net, h = runs[label]
    pt = prob_table(net)
    rows.append([label] + [f"{x:.4f}" for x in (np.mean(h["entropy"][-20:]), h["pass1_exact"][-1],
                                                pt[harmless, 1].mean(), pt[others, 1].mean())])
Table(["设置", "熵（后 20 次）", "最终路径 pass@1", "π(bug)：不咬人的情境", "π(bug)：其余"], rows)

# %% [markdown]
# 这只是一个种子。换一个种子，差别可能小得多，甚至反过来。
# 讲义第 8.2 节用 10 个种子重复了这个实验，每个种子配对相减，再用 `seed_verdict` 判定（$t$ 和两侧 1% 的临界值比）。
# 下一格从 `lectures/figures/numbers.json` 读出它的结果：熵的差，和"不咬人的情境里 π(bug) 的差"。

# %%
clip_higher = json.loads(Path("../lectures/figures/numbers.json").read_text(encoding="utf-8"))["clip_higher"]
for name, key in [("熵（后 20 次）", "verdict"), ("π(bug)：不咬人的情境", "p_bug_harmless_verdict")]:
    v = clip_higher[key]
    print(f"{name}：clip-higher − 对称，{v['n']} 个种子 {v['diff']:+.4f} ± {v['se']:.4f}，"
          f"t = {v['t']:.2f}（临界值 {v['critical']}）→ {v['verdict']}")

# %% [markdown]
# **玩具和真实模型的不同**：玩具里最好的策略是"每一步都选 correct"，是一个确定性的策略，所以熵降到 0 在这里是终点，不是灾难。
# 真实 LLM 里，好的推理路径一开始可能很罕见，熵过早塌缩会让模型再也找不到它们。
#
# ## 5. 动态采样（讲义 8.3）
#
# 一组 $G$ 份解答的奖励全相同（全对或全错）时，组内优势全是 0，这一组对梯度没有贡献。
# 先看一批数据：10B（1e10）的模型，32 道训练题，每道 8 份。
#
# 看输出：有多少组奖励全相同；这些组的优势的最大绝对值（恰好是 0）。

# %%
strong = TrainableLLM(1e10)
roll10 = sample_rollouts(strong, batch, 8, np.random.default_rng(1))
rewards10 = step_rewards(roll10).reshape(-1, 8)
adv10 = group_advantages(rewards10.reshape(-1), 8).reshape(-1, 8)
constant = np.ptp(rewards10, axis=1) == 0
print(f"32 组里奖励全相同的：{constant.sum()} 组（全对 {int((rewards10[constant, 0] == 1).sum())}"
      " 组，"
      f"全错 {int((rewards10[constant, 0] == 0).sum())} 组）")
print(f"这些组的优势的最大绝对值：{np.abs(adv10[constant]).max()}")

# %% [markdown]
# DAPO 的动态采样丢掉这些组，再抽新题、再采样，直到凑满 32 个"有用的"组（每次迭代最多采 `max_draws` 批）。代价是要多采样。
#
# 下面用 1e10 的模型各训练 80 次迭代：GRPO 预设，和只多打开 `dynamic_sampling=True` 的 GRPO。
# 训练记录里的 `zero_std` 是采到的组里奖励全相同的比例，`samples` 是累计采样的解答数。
# 不开动态采样时，真正有用的组数是 $32 \times (1 - \text{zero\_std})$。
#
# 看输出和图：奖励全相同的组越来越多；动态采样让每次迭代都有 32 个有用的组，但累计采样数多出不少。
# 中间的图按迭代次数比较 pass@1，右图把横轴换成累计采样数。输出的最后一行在**同样多的样本**处比较两者。

# %%
ds_runs = {}
for label, ds in (("GRPO", False), ("GRPO + 动态采样", True)):
    net = TrainableLLM(1e10)
    ds_runs[label] = train(net, preset("grpo", iterations=80, dynamic_sampling=ds), train_set,
                           heldout)

rows = []
for label, h in ds_runs.items():
    useful = (np.mean(h["groups"]) if label != "GRPO"
              else np.mean(32 * (1 - np.array(h["zero_std"]))))
    rows.append([label, f"{h['zero_std'][0]:.3f}", f"{np.mean(h['zero_std'][-10:]):.3f}",
                 f"{useful:.1f}",
                 h["samples"][-1], f"{h['pass1_exact'][-1]:.4f}"])
display(Table(["设置", "全相同的组：首次", "最后 10 次平均", "有用的组/次（平均）", "累计采样",
               "最终 pass@1"], rows))

plain, dyn = ds_runs["GRPO"], ds_runs["GRPO + 动态采样"]
budget = plain["samples"][-1]
i = int(np.searchsorted(dyn["samples"], budget))             # 动态采样第一次用到这么多样本的迭代
print(f"\n同样用了约 {budget} 份样本：GRPO 的路径 pass@1 = {plain['pass1_exact'][-1]:.4f}；"
      f"动态采样（第 {i + 1} 次迭代，{dyn['samples'][i]} 份）= {dyn['pass1_exact'][i]:.4f}")

fig, axes = plt.subplots(1, 3, figsize=(11.5, 4))
for label, h in ds_runs.items():
    axes[0].plot(h["iteration"], h["zero_std"], label=label)
    axes[1].plot(h["iteration"], h["pass1_exact"], label=label)
    axes[2].plot(h["samples"], h["pass1_exact"], label=label)
axes[0].set_ylabel("奖励全相同的组的比例")
axes[0].set_title("零方差组越来越多")
axes[1].set_title("按迭代次数比较")
axes[2].set_title("按累计采样数比较")
for ax in axes[1:]:
    ax.set_ylabel("留出题上的路径 pass@1")
for ax, xlabel in zip(axes, ("迭代次数", "迭代次数", "累计采样的解答数")):
    ax.set_xlabel(xlabel)
for ax in axes:
    ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# 读图和表：动态采样在同样的**迭代次数**里学得更多（每次更新都用满 32 个有用的组），但它用掉的**样本**也多得多。
# 在这个玩具里按样本算，动态采样并不划算：更新几乎不花时间，贵的是采样。
# 真实系统里每次更新（一次反向传播）也很贵，而且一批里有用的组太少时梯度噪声大、训练不稳，所以 DAPO 宁可多采样。
#
# ## 6. 损失的聚合：长度偏差（讲义第 6 节、8.3）
#
# 每一步的损失 $\ell_{i,t}$ 要合成一个数 $\mathcal{L} = \sum_{i,t} w_{i,t}\,\ell_{i,t}$。$B$ 份解答、第 $i$ 份有 $|o_i|$ 步时，三种权重是
#
# $$w^{\text{seq-mean}}_{i,t} = \frac{1}{B\,|o_i|}, \qquad w^{\text{token-mean}}_{i,t} = \frac{1}{\sum_j |o_j|}, \qquad
# w^{\text{constant}}_{i,t} = \frac{1}{B\, L_{\max}} .$$
#
# 分别是原始 GRPO（先在每份解答内平均）、DAPO（所有步一起平均）、Dr. GRPO（常数归一化，$L_{\max}$ = 最长的步数 8）。代码是 `aggregation_weights(mask, how, max_len)`。
#
# 用第 1.1 节那一批真实数据（32 道题，3~8 步），按题目的步数分组，看**每一步**的权重（乘以总步数，这样 token-mean 恰好是 1）。
#
# 看输出：seq-mean 下，一份 8 步的错误解答每一步受的惩罚只有一份 3 步的错误解答的 3/8（最后一行）；token-mean 和 constant 对每一步一视同仁。

# %%
n_steps = m.sum()
weights = {how: aggregation_weights(m, how, max_len=8) * n_steps
           for how in ("seq-mean", "token-mean", "constant")}
rows = [[L, int((roll.lengths == L).sum())]
        + [f"{w[roll.lengths == L][:, 0].mean():.4f}" for w in weights.values()]
        for L in range(3, 9) if (roll.lengths == L).any()]
ratio = {h: w[roll.lengths == 8][:, 0].mean() / w[roll.lengths == 3][:, 0].mean()
         for h, w in weights.items()}
rows.append(["8 步 ÷ 3 步", ""] + [f"{v:.4f}" for v in ratio.values()])
Table(["步数 |o_i|", "解答份数"] + list(weights), rows,
      title=f"这一批：{len(roll)} 份解答，共 {n_steps} 步。下表是每一步的权重 × {n_steps}")

# %% [markdown]
# 按 seq-mean，每一份解答的**总**权重都是 $1/B$，不论长短，所以长解答的每一步被"稀释"了。
# 真实 LLM 可以自己决定写多长，于是错误的解答越写越长（Dr. GRPO 论文说的长度偏差）[S554](../lectures/sources.md#S554)。
#
# **玩具和真实模型的不同**：这里步数由题目决定，同一道题的 $G$ 份解答一样长，模型没法"写长一点"。
# 所以长度偏差在玩具里只表现为上表的样子：长题的每一步权重小，短题的每一步权重大。
#
# ## 7. 除以标准差：难度偏差
#
# GRPO 的优势是 $A_i = (r_i - \bar r)/(\operatorname{std}(r) + \epsilon)$；Dr. GRPO 不除以标准差：$A_i = r_i - \bar r$（`advantage="mean"`）。
# 一组 $G = 8$ 份里有 $k$ 份做对时，组内的优势完全由 $k$ 决定。用 $\sum_i |A_i|$ 衡量这一组对梯度的总推力。
#
# 看输出：不除以标准差时，$k = 4$（一半对）的组推力最大，几乎全对或全错（$k = 1$ 或 $7$）的组推力小；
# 除以标准差后，$k = 1$、$7$ 的组的推力相对 $k = 4$ 被放大了（最后一列）。这就是 Dr. GRPO 说的难度偏差：很容易和很难的题被加权。

# %%
G = 8
push, rows = {}, []
for k in range(0, G + 1):
    r = np.array([1.0] * k + [0.0] * (G - k))
    a_grpo, a_mean = group_advantages(r, G, "grpo"), group_advantages(r, G, "mean")
    push[k] = (np.abs(a_grpo).sum(), np.abs(a_mean).sum())
    a_right = f"{a_grpo[0]:.4f}" if k > 0 else "—"
    a_wrong = f"{a_grpo[-1]:.4f}" if k < G else "—"
    ratio_k = f"{push[k][0] / push[k][1]:.3f}" if push[k][1] > 0 else "—"
    rows.append([k, f"{r.std(ddof=1):.4f}", a_right, a_wrong, f"{push[k][0]:.4f}",
                 f"{push[k][1]:.4f}", ratio_k])
display(Table(["做对 k/8", "std", "GRPO：A(对)", "A(错)", "Σ|A|", "均值基线：Σ|A|", "两者之比"],
              rows))
for name, col in (("GRPO", 0), ("均值基线（Dr. GRPO）", 1)):
    print(f"{name}：k = 1 的组的推力是 k = 4 的 {push[1][col] / push[4][col]:.3f} 倍")

# %% [markdown]
# 所以 Dr. GRPO 的两处改动分别针对一个偏差：聚合用常数 $B \cdot L_{\max}$（`loss_agg="constant"`）去掉长度偏差，
# 优势不除以标准差（`advantage="mean"`）去掉难度偏差。`diff_presets("grpo", "dr_grpo")` 列出的恰好是这两个选项。
#
# 看输出。

# %%
print(diff_presets("grpo", "dr_grpo"))

# %% [markdown]
# ## 小结
#
# - 重要性比率 $\rho = \pi_\theta/\pi_{\text{old}}$。$\mu = 1$ 时 $\rho \equiv 1$：裁剪比例恰好是 0，损失的值是 0，梯度却是策略梯度。$\mu > 1$ 时 $\rho$ 离开 1，裁剪开始起作用。
# - KL 在玩具里可以精确算。$k_1$、$k_3$ 无偏，$k_2$ 有偏；策略离参考近时 $k_3$ 方差小，离得远时它会有长尾。把估计量当损失时，$k_2$ 的期望梯度是 $\mathrm{KL}(\pi_\theta\|\pi_{\text{ref}})$ 的梯度，$k_3$ 的是反方向 KL 的梯度，$k_1$ 的是 0。
# - GRPO 训练中熵一路下降（熵塌缩）；clip-higher 放宽上界，给"小概率、优势为正"的做法留出空间，熵停在更高的地方。
# - 奖励全相同的组没有梯度，模型越强越多；动态采样丢掉它们、补满一批，代价是多采样。
# - 按解答平均（seq-mean）让长解答的每一步权重变小（长度偏差）；除以标准差放大很容易、很难的组（难度偏差）。Dr. GRPO 用常数归一化和均值基线去掉它们。
#
# ## 试一试
#
# 1. 在第 1.2 节把 `lr=30.0` 改成 `lr=2.0`（默认值）：要更新几次，裁剪才开始出现？
# 2. 在第 1.3 节把 `seed=0` 改成 1、2、3：clip-higher 的熵是不是每次都更高？差多少？
# 3. 在第 2 节用 `preset("grpo", beta=0.04)`（带 $k_3$ 的 KL 惩罚）训练，比较训练记录里的 `kl_exact` 和 pass@1：KL 惩罚让模型离参考策略近了多少，代价是什么？
