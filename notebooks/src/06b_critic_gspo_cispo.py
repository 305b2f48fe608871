# %% [markdown]
# # 06b · critic 与 GAE、GSPO、CISPO、dual-clip、异步采样
#
# **你将学到**
# - 经典 PPO 的 critic（价值表 $V(s)$）和 GAE($\gamma, \lambda$)；学到的 $V$ 离**精确**的 $V^*$ 有多远；
# - 同一批数据上，五种基线（无、组平均、RLOO、学到的 critic、精确 $V^*$）的梯度估计和**精确梯度**差多少：GRPO 为什么不要 critic；
# - 2025 年的几个变体：GSPO（序列级比率）、CISPO（裁剪权重、不裁剪更新）、dual-clip；verl / TRL 的聚合名字；REINFORCE++；
# - 动态采样凑不满时怎么办；用旧策略采样（异步 RL）带来的偏差和方差，以及截断的重要性比率（TIS）；
# - verl 和 TRL 的其他损失：SAPO、GMPO、GPG、Clip-Cov、KL-Cov、VESPO，序列级比率，以及名字相同、约定不同的地方。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 8.5–8.10 节。

# %% [markdown]
# ## 0. 准备
#
# 全部来自 `toyllm`。`toyllm.rl.critic` 是价值表和 GAE；新算法都是 `RLConfig` 的选项和预设。
#
# 看输出：每个新预设和 GRPO（或 PPO）差在哪几个选项。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from toyllm import TrainableLLM
from toyllm.display import Table
from toyllm.exact import correct_paths, grad_expected_reward
from toyllm.plotstyle import use_chinese_font
from toyllm.policy import prob_table
from toyllm.rl import (RLConfig, clipped_surrogate, critic, default_problems, diff_presets, group_advantages, losses,
                       policy_loss, preset, train)
from toyllm.sampler import prepare_problems, sample_rollouts

use_chinese_font()
train_set, heldout = default_problems(0)
paths = correct_paths(train_set)
L = prepare_problems(train_set).mask.shape[1]
for new, old in [("ppo_critic", "ppo"), ("ppo_dual_clip", "ppo"), ("gspo", "grpo"), ("cispo", "grpo"),
                 ("reinforce_pp", "grpo"), ("grpo_async", "grpo")]:
    print(f"{new} 和 {old} 的差别：{diff_presets(old, new)}")

# %% [markdown]
# ## 1. 背景：critic 与 GAE（讲义 8.5）
#
# 经典 PPO 学一个价值函数 $V(s)$：从状态 $s$ 出发，最后拿到的期望奖励。优势用 GAE：
#
# $$\delta_t = r_t + \gamma V(s_{t+1}) - V(s_t),\qquad A_t = \sum_{l \ge 0} (\gamma\lambda)^l \delta_{t+l}.$$
#
# $\lambda = 1$ 时 $A_t = R - V(s_t)$：蒙特卡洛回报减基线。GRPO 用同组 $G$ 份解答的平均代替 $V$，省掉一个和策略一样大的模型。
#
# 玩具里的状态很小：第几步 $t$、下一步的情境 $c$、到现在是否一直在正确路径上。所以 critic 是一张表 $V[t, c, ok]$，
# 一共 $L_{\max} \times 12 \times 2$ 个数。它看不到"是哪道题"。
#
# 精确的价值可以算：在正确路径上时 $V^*(s_t) = \prod_{s \ge t} P(\text{第 } s \text{ 步对})$，离开正确路径是 0。
#
# **伪代码**（`train(model, "ppo_critic")` 每次迭代做的）
# ```
# 采样 → 每步的状态 s_t → V = 表[s_t]
# A, 回报 = GAE(奖励, V, γ, λ)；A 整批白化（verl）
# μ 次：策略走一步（裁剪的替代损失），价值表走一步（½(V − 回报)² 的梯度，自己的 Adam）
# ```
#
# 看图：`ppo_critic` 训练时，价值表对精确 $V^*$ 的均方根误差（history 的 `value_err` 列）。

# %%
hist_critic = train(TrainableLLM(1e9), preset("ppo_critic", iterations=100), train_set, heldout)
fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(hist_critic["iteration"], hist_critic["value_err"], label="价值表 vs 精确 $V^*$（均方根误差）")
ax.plot(hist_critic["iteration"], hist_critic["pass1_exact"], label="留出题路径 pass@1")
ax.set_xlabel("迭代")
ax.legend()
ax.set_title("critic 在训练中学到 $V^*$ 的程度")
plt.show()
print(f"价值表 {np.prod(critic.table_shape(L))} 个数；误差：第 1 次 {hist_critic['value_err'][0]:.3f}，"
      f"最后 {hist_critic['value_err'][-1]:.3f}")

# %% [markdown]
# ## 2. 五种基线的梯度估计 vs 精确梯度（讲义 8.5）
#
# 同一批数据（32 道题 × 8 份），估计 $\hat g = \frac{1}{B}\sum_i \sum_t \nabla \log\pi(a_t|s_t)\,(R_i - b_t)$，
# 基线 $b_t$ 取：0、组平均、RLOO、学到的 critic、精确 $V^*$。重复 200 批，和精确梯度 $\nabla J$（`grad_expected_reward`）比：
# 偏差² = $\|E\hat g - \nabla J\|^2$，方差 = $E\|\hat g - E\hat g\|^2$，都除以 $\|\nabla J\|^2$。
#
# 在两个策略上算：训练前（1B，pass@1 约一半）和 GRPO 训练 50 次以后。critic 用 `lr=0` 的 `ppo_critic` 训练
# （策略不动，只学价值表）100 次得到。
#
# 看输出：方差表（每个策略一张），和成本（额外参数、每道题至少几份）。

# %%
BASELINES = ["无基线", "组平均（GRPO）", "RLOO", "学到的 critic", "精确 V*"]
COST = {"无基线": "0 参数，每题 ≥ 1 份", "组平均（GRPO）": "0 参数，每题 ≥ 2 份", "RLOO": "0 参数，每题 ≥ 2 份",
        "学到的 critic": f"{np.prod(critic.table_shape(L))} 个参数 + 价值表的训练", "精确 V*": "真实系统里拿不到"}


def variance_table(model, n_batches=200, seed=0):
    frozen = TrainableLLM(model.size)
    frozen.params[:] = model.params
    fit = train(frozen, preset("ppo_critic", lr=0.0, iterations=100), train_set, heldout)
    table = np.array(fit.meta["critic_table"]).ravel()
    g_true = grad_expected_reward(model, train_set)
    probs, cfg, rng = prob_table(model), RLConfig(loss_agg="seq-mean-token-sum"), np.random.default_rng(seed)
    est = {n: [] for n in BASELINES}
    for _ in range(n_batches):
        rows = np.sort(rng.choice(len(train_set), 32, replace=False))
        roll = sample_rollouts(model, [train_set[i] for i in rows], 8, rng)
        R, m = roll.correct.astype(float), roll.mask
        grp = R.reshape(-1, 8)
        advs = {"无基线": R[:, None], "组平均（GRPO）": (grp - grp.mean(1, keepdims=True)).reshape(-1, 1),
                "RLOO": group_advantages(R, 8, "rloo")[:, None],
                "学到的 critic": R[:, None] - table[critic.state_index(roll, L)],
                "精确 V*": R[:, None] - critic.exact_values(probs, paths, rows[roll.problem], roll)}
        for n, a in advs.items():
            est[n].append(-policy_loss(model, roll, np.where(m, a, 0.0), cfg).grad)
    norm = (g_true ** 2).sum()
    out = {}
    for n in BASELINES:
        e = np.array(est[n])
        out[n] = (((e.mean(0) - g_true) ** 2).sum() / norm, ((e - e.mean(0)) ** 2).sum(axis=(1, 2)).mean() / norm)
    return out


start = TrainableLLM(1e9)
trained = TrainableLLM(1e9)
train(trained, preset("grpo", iterations=50), train_set, heldout)
tables = {}
for label, model in [("训练前", start), ("GRPO 50 次以后", trained)]:
    tables[label] = variance_table(model)
    display(Table(["基线", "偏差²/|∇J|²", "方差/|∇J|²", "成本"],
                  [[n, f"{b2:.4f}", f"{var:.4f}", COST[n]] for n, (b2, var) in tables[label].items()], title=f"策略：{label}"))

# %% [markdown]
# 看图：两个策略上每种基线的方差（相对 $\|\nabla J\|^2$）。

# %%
fig, ax = plt.subplots(figsize=(7, 3.2))
x = np.arange(len(BASELINES))
for k, label in enumerate(tables):
    ax.bar(x + 0.4 * k - 0.2, [tables[label][n][1] for n in BASELINES], width=0.4, label=label)
ax.set_xticks(x, BASELINES)
ax.set_ylabel("方差 / $\\|\\nabla J\\|^2$")
ax.set_title("同一批数据上，五种基线的梯度方差")
ax.legend()
plt.show()

# %% [markdown]
# **这些数字说明什么**：组平均有偏差（期望是真梯度的 $\frac{G-1}{G}$ 倍），RLOO、critic、精确 $V^*$ 的偏差只是采样噪声。
# 0/1 奖励时，基线并不总是减小方差：表里哪一行最小，要看策略在哪里。
# 学到的 critic 和精确 $V^*$ 差不多，而组平均不用任何参数就做到了同一个量级：这就是 GRPO 不要 critic 的理由，这里是测出来的。

# %% [markdown]
# ## 3. dual-clip（讲义 8.6）
#
# PPO 的 $\min$ 对 $A<0$、$\rho$ 很大的步没有上限：损失 $-\rho A$ 随 $\rho$ 线性增长。
# dual-clip（verl `clip_ratio_c`，默认 3）再加一个界：$\ell = \min(\max(-\rho A, -\operatorname{clip}(\rho)A), -cA)$。
#
# 看图：$A = -1$ 时两种损失随 $\rho$ 的变化。

# %%
rho = np.linspace(0.5, 5, 200)
adv = -np.ones_like(rho)
fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(rho, clipped_surrogate(rho, adv).loss, label="PPO（TRL）")
ax.plot(rho, clipped_surrogate(rho, adv, clip_ratio_c=3.0).loss, "--", label="dual-clip，$c = 3$（verl 默认）")
ax.set_xlabel("重要性比率 $\\rho$")
ax.set_ylabel("每步损失（$A = -1$）")
ax.legend()
plt.show()

# %% [markdown]
# ## 4. GSPO 与 CISPO：同一批数据，谁的梯度被拿走（讲义 8.6）
#
# - GSPO：$s_i = \exp(\operatorname{mean}_t \log\rho_{i,t})$，整份解答一个比率，按序列裁剪（区间 $3\times10^{-4}$ / $4\times10^{-4}$）。
# - CISPO：$\ell = -\operatorname{sg}(\operatorname{clip}(\rho))\,A\,\log\pi$：权重被截住，梯度照样流过每一步。
#   `cispo_clip="verl"` 双边裁剪；`"trl"` 只从上面截在 $\varepsilon_{\text{high}}$。
#
# 一批数据做 3 次大步更新（lr = 30）以后，看输出：PPO 把多少步的梯度变成 0，CISPO 保留了多少，GSPO 裁掉多少份解答。

# %%
model = TrainableLLM(1e9)
rng = np.random.default_rng(1)
roll = sample_rollouts(model, train_set[:32], 8, rng)
adv = group_advantages(roll.correct.astype(float), 8)
for _ in range(3):
    model.params -= 30.0 * policy_loss(model, roll, adv, preset("grpo")).grad
probs = prob_table(model)[roll.ctx[roll.mask], roll.actions[roll.mask]]
ratio = probs / roll.probs[roll.mask][np.arange(roll.mask.sum()), roll.actions[roll.mask]]
a_steps = np.repeat(adv, roll.mask.sum(axis=1))
ppo = clipped_surrogate(ratio, a_steps)
cis = losses.cispo_surrogate(ratio, a_steps, np.log(probs), 0.2, 0.28)
log_ratio = np.zeros(roll.mask.shape)
log_ratio[roll.mask] = np.log(ratio)
gs = losses.gspo_surrogate(log_ratio, adv, roll.mask)
moving = a_steps != 0
print(f"有优势的步 {moving.sum()} 个")
print(f"PPO 裁剪（梯度为 0）：{((ppo.dloss_dratio == 0) & moving).sum()} 步")
print(f"CISPO 权重被截住、梯度仍在：{((cis.clipped_low | cis.clipped_high) & moving).sum()} 步，"
      f"梯度为 0 的步 {((cis.dloss_dlogp == 0) & moving).sum()} 个")
print(f"GSPO 裁掉的解答：{(gs.clipped_low | gs.clipped_high).any(axis=1).sum()} / {len(adv)} 份；"
      f"序列比率 s 的范围 [{gs.seq_ratio.min():.4f}, {gs.seq_ratio.max():.4f}]")
trl_cis = losses.cispo_surrogate(ratio, a_steps, np.log(probs), 0.2, 5.0, "trl")
print(f"CISPO 按 TRL 的裁剪（只截上面，ε_high = 5）：权重被截住的步 {(trl_cis.clipped_high & moving).sum()} 个")

# %% [markdown]
# 看图：每一步的 $\rho$ 和它在 PPO、CISPO 下对 $\log\pi$ 的梯度系数（优势为正的步）。

# %%
pos = a_steps > 0
fig, ax = plt.subplots(figsize=(6, 3.2))
ax.scatter(ratio[pos], -ppo.dloss_dratio[pos] * ratio[pos], s=8, label="PPO：$\\rho A$（被裁剪时是 0）")
ax.scatter(ratio[pos], -cis.dloss_dlogp[pos], s=8, marker="x", label="CISPO：$\\mathrm{clip}(\\rho) A$")
ax.set_xlabel("重要性比率 $\\rho$")
ax.set_ylabel("梯度系数")
ax.legend()
plt.show()

# %% [markdown]
# ## 5. 聚合：一张归一化表（讲义 8.7）
#
# 每个名字就是一个归一化。看输出：同一批数据、同样的每步损失（全是 1）在每个名字下的总损失。
# `dr_grpo`（= 本包的 `constant`）是 $\sum l/(B L_{\max})$；verl 的 `seq-mean-token-sum-norm` 不除以 $B$，恰好是它的 $B$ 倍。

# %%
ones = np.ones(roll.mask.shape)
display(Table(["名字", "归一化", "总损失", "出处"],
              [[name, row.formula, losses.aggregate_loss(ones, roll.mask, name, L), row.systems]
               for name, row in losses.AGGREGATION_TABLE.items()]))
verl_norm = losses.aggregate_loss(ones, roll.mask, "seq-mean-token-sum-norm")
dr_grpo = losses.aggregate_loss(ones, roll.mask, "dr_grpo", L)
print(f"seq-mean-token-sum-norm / dr_grpo = {verl_norm / dr_grpo:.1f}，B = {roll.mask.shape[0]}")

# %% [markdown]
# ## 6. REINFORCE++（verl）和 TRL 的 scale_rewards="batch"（讲义 8.7）
#
# verl：先减组平均，再在整批**所有步**上白化 $(a-\bar a)/\sqrt{\mathrm{var}+10^{-8}}$；
# TRL：组中心化的奖励除以整批**奖励**的标准差。用训练 50 次以后的策略采一批（全对的组更多）。
# verl 白化时减去的是按步加权的整批均值，所以奖励全相同的组一般不是 0；但玩具里同一道题的解答步数相同，
# 这个均值恰好是 0（到舍入误差），这些组仍是 0。真实 LLM 里同组解答长短不一，它们就会得到非零的优势。
# 看图：同一批数据上两者的优势。

# %%
roll = sample_rollouts(trained, train_set[:32], 8, np.random.default_rng(2))
R = roll.correct.astype(float)
verl = losses.reinforce_pp_advantages(R, 8, roll.mask)
trl = group_advantages(R, 8, "grpo", scale="batch")
same = np.repeat(losses.constant_groups(R, 8), 8)
print(f"最大差 {np.abs(verl - trl).max():.3f}；奖励全相同的组 {same.sum() // 8} 个：TRL 的优势是 "
      f"{np.unique(trl[same])}，verl 的是 {', '.join(f'{v:.2e}' for v in np.unique(verl[same]))}")
fig, ax = plt.subplots(figsize=(4.5, 3.5))
ax.scatter(trl, verl, s=8)
ax.plot([-2, 2], [-2, 2], "k:", lw=1)
ax.set_xlabel("TRL scale_rewards=\"batch\"")
ax.set_ylabel("verl REINFORCE++")
plt.show()

# %% [markdown]
# ## 7. 动态采样凑不满（讲义 8.8）
#
# `on_short="train"`（默认）用凑到的组训练，`"raise"` 像 verl 一样停下。凑不满的次数记在 `history.meta["short_batches"]`。
# 为了常常凑不满，这里每次只采一批（`max_draws=1`），一批只有 32 道题（`gen_batch_scale=1`；`dapo` 预设一批采 3 × 32 道）。
# 看输出：50 次迭代里有几次凑不满；以及 `"raise"` 的报错。

# %%
h = train(TrainableLLM(1e9), preset("dapo", iterations=50, max_draws=1, gen_batch_scale=1), train_set, heldout)
print(f"凑不满的迭代：{h.meta['short_batches']} / 50")
try:
    train(TrainableLLM(1e9), preset("dapo", iterations=5, max_draws=1, gen_batch_scale=1, on_short="raise"),
          train_set, heldout)
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# ## 8. 用旧策略采样：偏差和方差随 k 变化（讲义 8.9）
#
# 异步 RL 里采样的策略比正在训练的旧 $k$ 次更新。在一条 GRPO 轨迹（lr = 8）的第 20 次更新处，
# 用第 $20-k$ 次的参数采样，估计第 20 次的梯度：不修正、TIS（$\min(\rho, C)$，$C = 1.2$，让截断真的发生；
# verl 默认 $C = 2$）、完全的逐步的重要性比率。
# 看图：偏差²和方差（相对 $\|\nabla J\|^2$）随 $k$ 的变化。

# %%
snaps = []
train(TrainableLLM(1e9), preset("grpo", lr=8.0, iterations=20), train_set, heldout,
      callback=lambda hist, m: snaps.append(m.params.copy()))
target = TrainableLLM(1e9)
target.params[:] = snaps[-1]
g_true = grad_expected_reward(target, train_set)
cfg = RLConfig(loss_agg="seq-mean-token-sum", clip=False)
KS, MODES = [0, 2, 5, 10, 19], {"不修正": 0.0, "TIS（C = 1.2）": 1.2, "逐步的重要性比率": np.inf}
stale = {mode: [] for mode in MODES}
for k in KS:
    behaviour = TrainableLLM(1e9)
    behaviour.params[:] = snaps[-1 - k]
    rng = np.random.default_rng(k)
    est = {mode: [] for mode in MODES}
    for _ in range(60):
        rows = np.sort(rng.choice(len(train_set), 32, replace=False))
        roll = sample_rollouts(behaviour, [train_set[i] for i in rows], 8, rng)
        rho = np.ones(roll.mask.shape)
        pt = prob_table(target)[roll.ctx, roll.actions]
        rho[roll.mask] = pt[roll.mask] / np.exp(roll.logp[roll.mask])
        a = np.where(roll.mask, group_advantages(roll.correct.astype(float), 8, "rloo")[:, None], 0.0)
        for mode, cap in MODES.items():       # policy_loss 的梯度自带 ρ：乘 w/ρ 得到权重 w
            w = np.ones_like(rho) if cap == 0 else np.minimum(rho, cap)
            est[mode].append(-policy_loss(target, roll, a * w / rho, cfg).grad)
    for mode in MODES:
        e = np.array(est[mode])
        stale[mode].append((((e.mean(0) - g_true) ** 2).sum() / (g_true ** 2).sum(),
                            ((e - e.mean(0)) ** 2).sum(axis=(1, 2)).mean() / (g_true ** 2).sum()))
fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
for mode in MODES:
    axes[0].plot(KS, [b for b, _ in stale[mode]], "o-", label=mode)
    axes[1].plot(KS, [v for _, v in stale[mode]], "o-", label=mode)
axes[0].set_title("偏差² / $\\|\\nabla J\\|^2$")
axes[1].set_title("方差 / $\\|\\nabla J\\|^2$")
for ax in axes:
    ax.set_xlabel("陈旧的更新次数 $k$")
axes[0].legend()
plt.show()
Table(["修正"] + [f"k = {k}" for k in KS], [[mode] + [f"{b:.4f} / {v:.4f}" for b, v in stale[mode]] for mode in MODES],
      title="偏差² / 方差（都除以 ‖∇J‖²）")

# %% [markdown]
# ## 9. 每个新预设训练一次
#
# 同样的题、同样的种子，每个预设训练 100 次迭代。看输出：留出题上的路径 pass@1 和一共采样了多少份解答。
# 这只是一次运行（一个种子），不是算法的排名。最后一行检查 dual-clip 在默认学习率下有没有起作用。

# %%
runs = {}
for name in ["grpo", "ppo", "ppo_critic", "ppo_dual_clip", "gspo", "cispo", "reinforce_pp", "grpo_async"]:
    runs[name] = train(TrainableLLM(1e9), preset(name, iterations=100), train_set, heldout)
display(Table(["预设", "训练后路径 pass@1", "采样数"],
              [[name, run["pass1_exact"][-1], run["samples"][-1]] for name, run in runs.items()]))
print(f"ppo_dual_clip 的训练记录和 ppo 完全相同：{dict(runs['ppo_dual_clip']) == dict(runs['ppo'])}"
      f"（lr = 2 时 ρ 从不超过 c = 3）")

# %% [markdown]
# ## 10. verl 和 TRL 的其他损失（讲义 8.10）
#
# 六个新预设都是同一个循环的选项。新的策略损失是 `policy_loss` 的取值，公式在 `toyllm.rl.peer_losses`，
# 玩具和小 transformer 都经过同一个 `rl_objective`。看输出：每个新预设和 GRPO 差在哪几个选项。

# %%
from toyllm.rl import PRESET_NAMES, cs336
from toyllm.rl.objective import rl_objective

NEW = ["reinforce_pp_no_baseline", "sapo", "gmpo", "gpg", "clip_cov", "kl_cov"]
for name in NEW:
    print(f"{name}：{diff_presets('grpo', name)}")

# %% [markdown]
# ### 10.1 同一批数据上的损失和梯度
#
# 和第 4 节一样：一批数据（32 题 × 8 份），先用 lr = 30 更新 3 次，让比率 $\rho$ 离开 1。
# 然后在这批数据上，每个损失算一次 `rl_objective`（优势都用 GRPO 的）。
# 看表：损失的值、梯度 $\partial\text{loss}/\partial\log\pi$ 的范数、在下界 / 上界被裁剪的比例。
# Clip-Cov 和 KL-Cov 的比例调到 5%，这一小批上才看得见它们挑中的步（verl 的默认是 0.02%）。

# %%
fresh = TrainableLLM(1e9)
batch = sample_rollouts(fresh, train_set[:32], 8, np.random.default_rng(1))
adv = group_advantages(batch.correct.astype(float), 8)
for _ in range(3):
    fresh.params -= 30.0 * policy_loss(fresh, batch, adv, preset("grpo")).grad
m = batch.mask
old_logp = np.where(m, batch.logp, 0.0)
new_logp = np.where(m, np.log(prob_table(fresh)[batch.ctx, batch.actions]), 0.0)
cases = {"GRPO（PPO 裁剪）": preset("grpo"), "SAPO": preset("sapo"), "GMPO": preset("gmpo"), "GPG": preset("gpg"),
         "Clip-Cov（5%）": preset("clip_cov", clip_cov_ratio=0.05), "KL-Cov（5%）": preset("kl_cov", kl_cov_ratio=0.05),
         "VESPO": RLConfig(policy_loss="vespo", loss_agg="token-mean"),
         "CISPO 序列级（TRL）": RLConfig(policy_loss="cispo", cispo_clip="trl", eps_high=1.1, is_level="sequence",
                                       loss_agg="dapo")}
rows = []
for label, cfg in cases.items():
    obj = rl_objective(new_logp, old_logp, adv, m, cfg, rng=np.random.default_rng(0))
    rows.append([label, f"{obj.loss:.4f}", f"{np.linalg.norm(obj.dloss_dlogp):.4f}", f"{obj.clip_low:.3f}",
                 f"{obj.clip_high:.3f}"])
Table(["损失", "值", "‖∂loss/∂log π‖", "下界裁剪", "上界裁剪"], rows)

# %% [markdown]
# 看输出：Clip-Cov 截断了多少步的梯度，KL-Cov 给多少步加了 $|\log\rho|$ 的惩罚。
# Clip-Cov 只从协方差在 (1, 5) 之间、又没被 PPO 裁剪的步里挑，候选不够 5% 时就全挑上。
# 序列级 CISPO 的裁剪比例按 TRL 数的是**解答**（被截的解答 / B），不是步。

# %%
log_ratio = new_logp - old_logp
cc = losses.clip_cov_surrogate(log_ratio, adv, new_logp, m, ratio=0.05, rng=np.random.default_rng(0))
kc = losses.kl_cov_surrogate(log_ratio, adv, new_logp, m, ratio=0.05)
print(f"mask 内 {m.sum()} 步；Clip-Cov 截断梯度的步 {cc.selected.sum()} 个，KL-Cov 加惩罚的步 {kc.selected.sum()} 个")
print(f"verl 的默认比例 2e-4：只挑 max(⌊2e-4 × {m.sum()}⌋, 1) = {max(int(2e-4 * m.sum()), 1)} 步")

# %% [markdown]
# 看图：一个 $A = 1$ 的步，梯度系数 $-\partial\ell/\partial\log\pi$ 随 $\rho$ 怎样变。
# PPO 在 $1 + \varepsilon$ 处一刀切成 0；SAPO 的门是光滑的，离 1 越远越小。

# %%
rhos = np.linspace(0.5, 2.0, 301)
one = np.ones((1, len(rhos)), bool)
sapo = losses.sapo_surrogate(np.log(rhos)[None], np.ones(1), one)
ppo = clipped_surrogate(rhos, np.ones_like(rhos))
fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(rhos, -ppo.dloss_dlogp, label="PPO 裁剪（ε = 0.2）")
ax.plot(rhos, -sapo.dloss_dlogp[0], label="SAPO（τ = 1）")
ax.set_xlabel("重要性比率 $\\rho$")
ax.set_ylabel("梯度系数")
ax.legend()
plt.show()

# %% [markdown]
# ### 10.2 名字相同、约定不同
#
# 一批 3 份解答，第 2 份全空（mask 全是 False）。看输出：verl 的 `seq-mean-token-mean` 只对非空的 2 份平均，
# TRL 的 `grpo`（和本包的 `seq-mean`）除以 3。最后两行是 CS336 的 `masked_mean`：全空的行它给 NaN，本包默认给 0。

# %%
per_step = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [4.0, 0.0, 0.0]])
mask3 = np.array([[True, True, False], [False, False, False], [True, False, False]])
for name in ["seq-mean", "grpo", "seq-mean-token-mean", "seq-mean-token-sum"]:
    print(f"{name:22s}{losses.aggregate_loss(per_step, mask3, name):.4f}")
print("本包 masked_mean（empty=\"zero\"）：", cs336.masked_mean(per_step, mask3, axis=1))
print("CS336 masked_mean（empty=\"nan\"）：", cs336.masked_mean(per_step, mask3, axis=1, empty="nan"))

# %% [markdown]
# ### 10.3 每个新预设训练 50 次迭代
#
# 同样的题，5 个种子，每个预设训练 50 次迭代（32 题 × 8 份）。看表：留出题上的路径 pass@1 的平均和标准误差。
# SAPO、GMPO、Clip-Cov、KL-Cov 每批更新 μ = 4 次，所以表里加了一行 μ = 4 的 GRPO：和它比，才看得出损失本身的作用。
# 标准误差只量种子之间的差别；5 个种子看不出小的差距，这不是算法的排名。

# %%
runs = {PRESET_NAMES[name]: preset(name, iterations=50) for name in ["grpo", "reinforce_pp"] + NEW}
runs["GRPO（μ = 4）"] = preset("grpo", iterations=50, mu=4)
final = {label: np.array([train(TrainableLLM(1e9), cfg.replace(seed=s), train_set, heldout).meta["final_pass1_exact"]
                          for s in range(5)]) for label, cfg in runs.items()}
Table(["预设", "路径 pass@1（5 个种子的平均）", "标准误差"],
      [[label, f"{v.mean():.4f}", f"{v.std(ddof=1) / np.sqrt(len(v)):.4f}"] for label, v in final.items()])

# %% [markdown]
# ## 小结
#
# - critic 是一张 $L_{\max}\times 12\times 2$ 的价值表；它对精确 $V^*$ 的误差随训练下降，但看不到题目，降不到 0。
# - 五种基线的方差表是测出来的：组平均不要参数，和学到的 critic、甚至精确 $V^*$ 在同一个量级。
# - dual-clip 给 $A<0$ 的损失加上界；CISPO 保留被 PPO 裁掉的步的梯度；GSPO 整份解答一个比率。
# - 聚合的名字是一张归一化表；`dr_grpo` 和 verl 的 `seq-mean-token-sum-norm` 差 $B$ 倍。
# - 旧策略采样不修正时偏差随 $k$ 增大；重要性比率把偏差压下去，TIS 的上限 $C$ 再用一点偏差换更小的方差。
# - verl 和 TRL 的其他损失（SAPO、GMPO、GPG、Clip-Cov、KL-Cov、VESPO）都是 `policy_loss` 的取值；
#   名字相同的选项在两个系统里可能约定不同（全空的行、裁剪比例数步还是数解答），本包跟着名字所属的系统。
#
# ## 参考文献
#
# - Schulman et al. 2015，GAE，arXiv:1506.02438；Schulman et al. 2017，PPO，arXiv:1707.06347
# - Ye et al. 2019，dual-clip PPO，arXiv:1912.09729
# - Zheng et al. 2025，GSPO，arXiv:2507.18071；MiniMax 2025，MiniMax-M1（CISPO），arXiv:2506.13585
# - SAPO，arXiv:2511.20347；Zhao et al. 2025，GMPO，arXiv:2507.20673；Chu et al. 2025，GPG，arXiv:2504.02546
# - Cui et al. 2025，The Entropy Mechanism of RL for Reasoning LMs（Clip-Cov / KL-Cov），arXiv:2505.22617
#
# ## 试一试
#
# 1. 把 `preset("ppo_critic")` 的 `lam` 改成 0.5、0：价值表的误差和 pass@1 怎样变？
# 2. 在第 4 节用 `cispo_clip="trl"`、`eps_high=5.0`：被截住的步变多还是变少？
# 3. 在第 10.1 节把 SAPO 的 `tau_pos` 改成 5：梯度的范数变大还是变小？和图里的曲线对得上吗？
