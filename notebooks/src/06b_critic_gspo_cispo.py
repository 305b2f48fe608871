# %% [markdown]
# # 06b · critic 与 GAE、GSPO、CISPO、dual-clip、异步采样
#
# **你将学到**
# - 经典 PPO 的 critic（价值表 $V(s)$）和 GAE($\gamma, \lambda$)；学到的 $V$ 离**精确**的 $V^*$ 有多远；
# - 同一批数据上，五种基线（无、组平均、RLOO、学到的 critic、精确 $V^*$）的梯度估计和**精确梯度**差多少：GRPO 为什么不要 critic；
# - PPO 的 dual-clip（Ye et al. 2019）[S300](../lectures/sources.md#S300)；2025 年的两个变体 GSPO（序列级比率）[S301](../lectures/sources.md#S301)、CISPO（裁剪权重、不裁剪更新）[S302](../lectures/sources.md#S302)；
# - 两个开源训练框架里的名字：verl（字节跳动的 RL 训练框架）和 TRL（Hugging Face 的 RL 训练库）；聚合的名字；REINFORCE++ [S327](../lectures/sources.md#S327)；
# - 动态采样凑不满时怎么办；用旧策略采样（异步 RL）带来的偏差和方差，以及截断的重要性比率（TIS）；
# - verl 和 TRL 的其他损失：SAPO、GMPO、GPG、Clip-Cov、KL-Cov、VESPO，序列级比率，以及名字相同、约定不同的地方 [S319](../lectures/sources.md#S319)。
#
# 说到 verl、TRL 或论文"是这样做的"的句子，后面都有一个编号（例如 [S300](../lectures/sources.md#S300)），指向来源表里的出处和原文。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 8.5–8.10 节。

# %% [markdown]
# ## 0. 准备
#
# 全部来自 `toyllm`。`toyllm.rl.critic` 是价值表和 GAE；新算法都是 `RLConfig` 的选项和预设。
#
# 看输出的表：每个新预设和 GRPO（或 PPO）差在哪几个选项，一个选项一行。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from toyllm import TrainableLLM
from toyllm.estimators import seed_verdict
from toyllm.exact import correct_paths, grad_expected_reward
from toyllm.plotstyle import use_chinese_font
from toyllm.policy import prob_table
from toyllm.rl import (RLConfig, clipped_surrogate, critic, default_problems, diff_presets,
                       group_advantages, losses,
                       policy_loss, preset, train)
from toyllm.sampler import prepare_problems, sample_rollouts
from toyllm.tables import Table

use_chinese_font()
train_set, heldout = default_problems(0)
paths = correct_paths(train_set)
L = prepare_problems(train_set).mask.shape[1]


def diff_table(pairs):
    """每一对 (新预设, 对照) 差在哪些选项（diff_presets）：一个选项一行。"""
    return Table(["预设", "对照", "选项", "对照的值 → 新的值"],
                 [[new, old, key, f"{a!r} → {b!r}"]
                  for new, old in pairs for key, (a, b) in diff_presets(old, new).items()])


diff_table([("ppo_critic", "ppo"), ("ppo_dual_clip", "ppo"), ("gspo", "grpo"), ("cispo", "grpo"),
            ("reinforce_pp", "grpo"), ("grpo_async", "grpo")])

# %% [markdown]
# ## 1. 背景：critic 与 GAE（讲义 8.5）
#
# 经典 PPO 学一个价值函数 $V(x)$：从状态 $x$ 出发，最后拿到的期望奖励 [S303](../lectures/sources.md#S303)。
# 这里状态写成 $x_t$（做第 $t$ 步之前的状态），因为讲义里 $s_t$ 已经是"第 $t$ 步算对的概率"。
#
# 优势用 GAE（广义优势估计）[S304](../lectures/sources.md#S304)。先定义两个量：
# - **折扣** $\gamma$（0 到 1）：晚一步拿到的奖励打 $\gamma$ 折；玩具用 $\gamma = 1$，不打折。
# - **TD 误差** $\delta_t$：走一步以后"实际拿到的 + 对后面的估计"减去"走之前的估计"。
#
# $$\delta_t = r_t + \gamma V(x_{t+1}) - V(x_t),\qquad A_t = \sum_{l \ge 0} (\gamma\lambda)^l \delta_{t+l}.$$
#
# $\lambda = 1$ 时中间的 $V$ 两两抵消（终止状态的 $V$ 是 0）：
#
# $$A_t = \sum_l \gamma^l r_{t+l} + \sum_l \gamma^{l+1} V(x_{t+l+1}) - \sum_l \gamma^l V(x_{t+l})
#       = \sum_l \gamma^l r_{t+l} - V(x_t).$$
#
# 第一项是**蒙特卡洛回报**：这一次采样真正拿到的（折扣）奖励之和，不用任何估计。所以 $A_t$ = 回报减基线。
# GRPO 用同组 $G$ 份解答的平均代替 $V$，省掉一个和策略一样大的模型 [S305](../lectures/sources.md#S305)。
#
# 玩具里的状态很小：第几步 $t$、下一步的情境 $c$、到现在是否一直在正确路径上。所以 critic 是一张表 $V[t, c, ok]$，
# 一共 $L_{\max} \times 12 \times 2$ 个数（$L_{\max}$ 是训练题里最长的步数）。它看不到"是哪道题"。
#
# 精确的价值可以算：在正确路径上时 $V^*(x_t) = \prod_{u \ge t} s_u$（$s_u$ 是这道题第 $u$ 步算对的概率），
# 离开正确路径是 0。
#
# **白化**：一批数减去它们的平均、再除以标准差，得到平均 0、标准差 1 的数。
#
# **伪代码**（`train(model, "ppo_critic")` 每次迭代做的）
# ```
# 采样 → 每步的状态 x_t → V = 表[x_t]
# A, 回报 = GAE(奖励, V, γ, λ)；A 整批白化
# μ 次：策略走一步（裁剪的替代损失），价值表走一步（½(V − 回报)² 的梯度，自己的 Adam）
# ```
# 优势整批白化，和 verl 的 GAE 一样 [S306](../lectures/sources.md#S306)。
#
# 看图：`ppo_critic` 训练时，价值表对精确 $V^*$ 的均方根误差（history 的 `value_err` 列）。

# %%
critic_model = TrainableLLM(1e9)
hist_critic = train(critic_model, preset("ppo_critic", iterations=100), train_set, heldout)
fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(hist_critic["iteration"], hist_critic["value_err"],
        label="价值表 vs 精确 $V^*$（均方根误差）")
ax.plot(hist_critic["iteration"], hist_critic["pass1_exact"], label="留出题路径 pass@1")
ax.set_xlabel("迭代")
ax.legend()
ax.set_title("critic 在训练中学到 $V^*$ 的程度")
plt.show()
print(f"价值表 {np.prod(critic.table_shape(L))} 个数；误差：第 1 次"
      f" {hist_critic['value_err'][0]:.3f}，"
      f"最后 {hist_critic['value_err'][-1]:.3f}")

# %% [markdown]
# 误差降不到 0，有两个原因：
# - **混叠**：一个格子 $(t, c, ok)$ 里混着不同的题，它们的 $V^*$ 不同，一个数最多等于它们的平均；
# - **噪声**：价值表是从有限的样本学的，离这个平均还有距离。
#
# 在一批数据上，"每个格子里 $V^*$ 的平均"是这张表能做到的最好的值 $\bar V$。于是误差正好分成两块：
#
# $$\text{误差}^2 = \underbrace{\operatorname{mean}(V^* - \bar V)^2}_{\text{混叠}^2}
#     + \underbrace{\operatorname{mean}(V - \bar V)^2}_{\text{噪声}^2}.$$
#
# 交叉项是 0：同一个格子里 $V$ 和 $\bar V$ 都是常数，而 $V^* - \bar V$ 在格子里的和是 0。
# 看输出：用训练完的策略在全部训练题上各采 8 份，最后的价值表的误差、混叠、噪声，和"混叠² + 噪声²"是否等于误差²。

# %%
table = np.array(hist_critic.meta["critic_table"]).ravel()
roll = sample_rollouts(critic_model, train_set, 8, np.random.default_rng(3))
idx = critic.state_index(roll, L)[roll.mask]
v_table = table[idx]
v_star = critic.exact_values(prob_table(critic_model), paths, roll.problem, roll)[roll.mask]
count = np.bincount(idx, minlength=table.size)
v_best = (np.bincount(idx, weights=v_star, minlength=table.size) / np.maximum(count, 1))[idx]
rms = {"误差": np.sqrt(np.mean((v_table - v_star) ** 2)),
       "混叠": np.sqrt(np.mean((v_star - v_best) ** 2)),
       "噪声": np.sqrt(np.mean((v_table - v_best) ** 2))}
print("；".join(f"{k} {v:.4f}" for k, v in rms.items()) + f"（{idx.size} 步）")
print(f"混叠² + 噪声² = {rms['混叠'] ** 2 + rms['噪声'] ** 2:.6f}，误差² = {rms['误差'] ** 2:.6f}")

# %% [markdown]
# **读输出**：混叠只占很小一块，剩下的误差几乎全是噪声。对这张表来说，问题不在"看不全"，而在样本还不够多。

# %% [markdown]
# ## 2. 五种基线的梯度估计 vs 精确梯度（讲义 8.5）
#
# $J$ 是期望奖励（训练题上答对的概率的平均），$\nabla J$ 是它对参数 $\Delta$ 的梯度：策略梯度要估计的就是它。
# 玩具能精确算出 $\nabla J$（`grad_expected_reward`）。
#
# 同一批数据（32 道题 × 8 份，一共 $B = 256$ 份解答），估计
# $\hat g = \frac{1}{B}\sum_i \sum_t \nabla \log\pi(a_{i,t}\mid c_{i,t})\,(r_i - b_{i,t})$，基线 $b_{i,t}$ 取：
# - 0（无基线）；
# - 组平均 $\bar r$（包括自己；不除以标准差，就是 Dr. GRPO 的优势 $r_i - \bar r$）；
# - RLOO（leave-one-out）：同组**另外** $G-1$ 份的平均；
# - 学到的 critic $V(x_{i,t})$；精确 $V^*(x_{i,t})$。
#
# 重复 200 批，和 $\nabla J$ 比：偏差² = $\|E\hat g - \nabla J\|^2$，方差 = $E\|\hat g - E\hat g\|^2$，都除以 $\|\nabla J\|^2$。
# 偏差²是用 200 批的平均估的，自己带着大约 方差/200 的噪声。
#
# 在两个策略上算：训练前（1B，pass@1 约一半）和 GRPO 训练 50 次以后。critic 用 `lr=0` 的 `ppo_critic` 训练
# （策略不动，只学价值表）100 次得到。
#
# 看输出：方差表（每个策略一张），和成本（额外参数、每道题至少几份）。

# %%
BASELINES = ["无基线", "组平均（Dr. GRPO）", "RLOO", "学到的 critic", "精确 V*"]
COST = {"无基线": "0 参数，每题 ≥ 1 份", "组平均（Dr. GRPO）": "0 参数，每题 ≥ 2 份",
        "RLOO": "0 参数，每题 ≥ 2 份",
        "学到的 critic": f"{np.prod(critic.table_shape(L))} 个参数 + 价值表的训练",
        "精确 V*": "真实系统里拿不到"}


def variance_table(model, n_batches=200, seed=0):
    frozen = TrainableLLM(model.size)
    frozen.params[:] = model.params
    fit = train(frozen, preset("ppo_critic", lr=0.0, iterations=100), train_set, heldout)
    table = np.array(fit.meta["critic_table"]).ravel()
    g_true = grad_expected_reward(model, train_set)
    probs, cfg = prob_table(model), RLConfig(loss_agg="seq-mean-token-sum")
    rng = np.random.default_rng(seed)
    est = {n: [] for n in BASELINES}
    for _ in range(n_batches):
        rows = np.sort(rng.choice(len(train_set), 32, replace=False))
        roll = sample_rollouts(model, [train_set[i] for i in rows], 8, rng)
        R, m = roll.correct.astype(float), roll.mask
        grp = R.reshape(-1, 8)
        advs = {"无基线": R[:, None],
                "组平均（Dr. GRPO）": (grp - grp.mean(1, keepdims=True)).reshape(-1, 1),
                "RLOO": group_advantages(R, 8, "rloo")[:, None],
                "学到的 critic": R[:, None] - table[critic.state_index(roll, L)],
                "精确 V*": R[:, None] - critic.exact_values(probs, paths, rows[roll.problem], roll)}
        for n, a in advs.items():
            est[n].append(-policy_loss(model, roll, np.where(m, a, 0.0), cfg).grad)
    norm = (g_true ** 2).sum()
    out = {}
    for n in BASELINES:
        e = np.array(est[n])
        out[n] = (((e.mean(0) - g_true) ** 2).sum() / norm,
                  ((e - e.mean(0)) ** 2).sum(axis=(1, 2)).mean() / norm)
    return out


start = TrainableLLM(1e9)
trained = TrainableLLM(1e9)
train(trained, preset("grpo", iterations=50), train_set, heldout)
tables = {}
for label, model in [("训练前", start), ("GRPO 50 次以后", trained)]:
    tables[label] = variance_table(model)
    display(Table(["基线", "偏差²/|∇J|²", "方差/|∇J|²", "成本"],
                  [[n, f"{b2:.4f}", f"{var:.4f}", COST[n]] for n, (b2,
                                                                   var) in tables[label].items()],
                  title=f"策略：{label}"))

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
# **偏差**：组平均包括自己，期望是真梯度的 $\frac{G-1}{G}$ 倍，偏差² 约 $(1/G)^2 = 1/64$。
# RLOO、critic、精确 $V^*$ 的偏差²和 方差/200 一样大，只是估计自己的噪声。
#
# **方差**：训练以后，"无基线"的方差反而最小。先看一个量再解释。
#
# 方差最小的常数基线是 $b^* = E[r\,\|\nabla\log\pi\|^2] / E[\|\nabla\log\pi\|^2]$：按每份解答梯度的大小加权的平均奖励。
# 看输出：训练后的一批里，答对和答错的解答 $\|\nabla\log\pi\|^2$ 的平均，$b^*$，和普通的平均奖励 $\bar r$。

# %%
roll = sample_rollouts(trained, train_set[:32], 8, np.random.default_rng(4))
R, one = roll.correct.astype(float), RLConfig(loss_agg="seq-mean-token-sum")
score2 = np.empty(len(R))
for i in range(len(R)):                              # 第 i 份解答的 Σ_t ∇log π（优势只给第 i 份 1）
    a_i = np.where(np.arange(len(R))[:, None] == i, roll.mask, 0.0)
    score2[i] = ((len(R) * policy_loss(trained, roll, a_i, one).grad) ** 2).sum()
print(f"答对 {int(R.sum())} 份，‖∇log π‖² 平均 {score2[R == 1].mean():.3f}；"
      f"答错 {int((1 - R).sum())} 份，平均 {score2[R == 0].mean():.3f}")
print(f"b* = {(R * score2).sum() / score2.sum():.3f}，平均奖励 r̄ = {R.mean():.3f}")

# %% [markdown]
# 训练以后大多数解答答对了，它们每一步选的都是概率接近 1 的动作，$\nabla\log\pi$ 很小。
# 答错的解答里有一个罕见的动作，$\nabla\log\pi$ 大得多。$b^*$ 按梯度大小加权，主要看答错的那些（奖励 0），
# 所以它比 $\bar r$ 小得多。减去 $\bar r$ 这样大的基线，反而给每份答错的解答乘上一个大约 $-\bar r$ 的系数，把它们的大梯度放大进了估计里；
# 不减基线时它们的系数是 0。所以 0/1 奖励下，基线不一定减小方差，要看策略在哪里。
#
# **组平均和 RLOO**：$r_i - \bar r = \frac{G-1}{G}\,(r_i - \text{另外 } G-1 \text{ 份的平均})$，所以组平均的估计正好是 RLOO 的
# $\frac{G-1}{G}$ 倍，方差是它的 $(\frac{G-1}{G})^2 = 0.77$ 倍。表里组平均的方差比 RLOO 小，就是这个缩放，不是更好的基线。
#
# 两张表共同的结论：学到的 critic、精确 $V^*$ 和 RLOO 的方差几乎一样，而 RLOO 不用任何参数。
# 在这个玩具上，价值表（第 1 节印出了它有几个数）加上它的训练，并没有换来更小的方差：
# 这是 GRPO 不要 critic 的理由，在这里是量出来的。

# %% [markdown]
# ## 3. dual-clip（讲义 8.6）
#
# PPO 的 $\min$ 对 $A<0$、$\rho$ 很大的步没有上限：损失 $-\rho A$ 随 $\rho$ 线性增长。
# dual-clip 再加一个界：$\ell = \min(\max(-\rho A, -\operatorname{clip}(\rho)A), -cA)$。
# 它来自 Ye et al. 2019 的游戏 AI 论文，不是 2025 年的新东西 [S300](../lectures/sources.md#S300)。
# verl 的名字是 `clip_ratio_c`，默认 3，普通的 PPO 损失默认就带着它 [S307](../lectures/sources.md#S307)。
# TRL 的 `delta`（INTELLECT-2 的双边裁剪）在 $A<0$、$\delta > 1+\varepsilon_{\text{high}}$ 时是同一个界 $c = \delta$；它默认是 None，即不开 [S308](../lectures/sources.md#S308)。
#
# 看图：$A = -1$ 时两种损失随 $\rho$ 的变化。

# %%
rho = np.linspace(0.5, 5, 200)
adv = -np.ones_like(rho)
fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(rho, clipped_surrogate(rho, adv).loss, label="PPO（不带 dual-clip；TRL 默认 delta=None）")
ax.plot(rho, clipped_surrogate(rho, adv, clip_ratio_c=3.0).loss, "--",
        label="dual-clip，$c = 3$（verl 默认；TRL delta=3）")
ax.set_xlabel("重要性比率 $\\rho$")
ax.set_ylabel("每步损失（$A = -1$）")
ax.legend()
plt.show()

# %% [markdown]
# ## 4. GSPO 与 CISPO：同一批数据，谁的梯度被拿走（讲义 8.6）
#
# 记号：第 $i$ 份解答有 $|o_i|$ 步；$\operatorname{sg}(\cdot)$（stop-gradient）表示"这个数当常数，不对它求导"。
#
# - GSPO：整份解答一个比率 $\rho^{\text{seq}}_i = \exp(\frac{1}{|o_i|}\sum_t \log\rho_{i,t})$（每步比率的几何平均），
#   按序列裁剪，窗口是 $[1 - 3\times10^{-4},\ 1 + 4\times10^{-4}] = [0.9997,\ 1.0004]$ [S301](../lectures/sources.md#S301)。
# - CISPO：$\ell = -\operatorname{sg}(w)\,A\,\log\pi$，$w = \min(\rho,\ 1+\varepsilon_{\text{high}})$：权重被截住，梯度照样流过每一步。
#   论文不给权重设下界，只调 $\varepsilon_{\text{high}}$ [S302](../lectures/sources.md#S302)。`cispo` 预设用 `eps_low = 1`（下界 $1-1=0$，$\rho$ 总是正的，等于没有下界）。
#   我们能读到的论文文字里没有 $\varepsilon_{\text{high}}$ 的值；预设用 verl 的 CISPO 示例里的 0.2，
#   那个示例把下界参数设成 10，也等于不设下界 [S309](../lectures/sources.md#S309)。
#   verl 自己的默认是双边 0.2 / 0.2，用 CISPO 时要自己改 [S310](../lectures/sources.md#S310)。
#
# 一批数据做 3 次大步更新（lr = 30）以后，看输出：PPO 把多少步的梯度变成 0（在哪一边），
# `cispo` 预设截住了多少步的权重、有没有梯度为 0 的步，GSPO 的序列比率落在窗口外的有几份。

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
cfg = preset("cispo")
cis = losses.cispo_surrogate(ratio, a_steps, np.log(probs), cfg.eps_low, cfg.eps_high)
two_sided = losses.cispo_surrogate(ratio, a_steps, np.log(probs), 0.2, 0.2)
log_ratio = np.zeros(roll.mask.shape)
log_ratio[roll.mask] = np.log(ratio)
gs = losses.gspo_surrogate(log_ratio, adv, roll.mask)
moving = a_steps != 0
dead = (ppo.dloss_dratio == 0) & moving
print(f"有优势的步 {moving.sum()} 个；ρ 的范围 [{ratio.min():.3f}, {ratio.max():.3f}]")
print(f"PPO 梯度为 0：{dead.sum()} 步（A > 0 且 ρ > 1.2：{(dead & (a_steps > 0)).sum()}；"
      f"A < 0 且 ρ < 0.8：{(dead & (a_steps < 0)).sum()}）")
print(f"cispo 预设（eps_low = {cfg.eps_low:g}，eps_high = {cfg.eps_high:g}）：权重在上界被截住 "
      f"{(cis.clipped_high & moving).sum()} 步，在下界 {(cis.clipped_low & moving).sum()} 步；"
      f"梯度为 0 的步 {((cis.dloss_dlogp == 0) & moving).sum()} 个")
print(f"对比：双边 [0.8, 1.2]（verl 默认）会在下界截住 {(two_sided.clipped_low & moving).sum()} 步")
outside = (gs.seq_ratio < 1 - 3e-4) | (gs.seq_ratio > 1 + 4e-4)
print(f"GSPO：ρ_seq 的范围 [{gs.seq_ratio.min():.4f}, {gs.seq_ratio.max():.4f}]；窗口外"
      f" {outside.sum()} / {len(adv)} 份，"
      f"其中梯度为 0 的 {(gs.clipped_low | gs.clipped_high).any(axis=1).sum()} 份")

# %% [markdown]
# **读输出**：
# - PPO 拿走梯度的步大多在下面一边：$A<0$ 的步，新策略已经把它的概率压到 0.8 倍以下，PPO 就不再管它。
#   `cispo` 预设没有下界，这些步按原来的 $\rho$ 加权，梯度还在；上界截住的步，权重停在 $1+\varepsilon_{\text{high}}$，梯度也还在。
# - 旧的双边裁剪截住的几乎都是下界的步：它们的梯度虽然还在，权重却被抬高到 0.8，比真实的 $\rho$ 大。论文的设置里没有这件事 [S302](../lectures/sources.md#S302)。
# - GSPO 的窗口只有万分之几宽。三次 lr = 30 的大步让 $\rho^{\text{seq}}$ 离 1 远远超过这个宽度，几乎每份解答都出了窗口；
#   出窗口又在"推错方向"那一边（$A>0$ 且太大，或 $A<0$ 且太小）的，梯度为 0。
#   这说明窗口是为 $\rho^{\text{seq}}$ 只离 1 一点点的更新设计的；用这么大的步，GSPO 几乎什么也不学。
#
# 看图：每一步的有效权重（梯度系数除以 $A$）随 $\rho$ 的变化，左边 $A>0$、右边 $A<0$。PPO 被裁剪的步是 0。

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.2), sharey=True)
for ax, sign, title in [(axes[0], 1, "$A > 0$"), (axes[1], -1, "$A < 0$")]:
    pick = np.sign(a_steps) == sign
    ax.scatter(ratio[pick], -ppo.dloss_dlogp[pick] / a_steps[pick], s=8, label="PPO")
    ax.scatter(ratio[pick], -cis.dloss_dlogp[pick] / a_steps[pick], s=8, marker="x",
               label="CISPO（cispo 预设）")
    ax.set_xlabel("重要性比率 $\\rho$")
    ax.set_title(title)
axes[0].set_ylabel("有效权重")
axes[0].legend()
plt.show()

# %% [markdown]
# ## 5. 聚合：一张归一化表（讲义 8.7）
#
# 每个名字就是一个归一化。看第一张表：同一批数据、同样的每步损失（全是 1）在每个名字下的总损失。
# 第二张表是每个名字出自哪里、谁这样做。
# 表里的 $|o_i|$ 是第 $i$ 份解答的步数，$B$ 是解答的份数，$L_{\max}$ 是常数归一化用的最大步数。
# TRL 的 `dr_grpo`（= 本包的 `constant`）是 $\sum l/(B L_{\max})$ [S311](../lectures/sources.md#S311)；
# verl 的 `seq-mean-token-sum-norm` 在一个 micro-batch 里除以补齐后的长度、不除以份数。它和 `dr_grpo` 差一个倍数：
# 每张卡一个 micro-batch 的份数 × $L_{\max}$ / 补齐后的长度；只有一张卡、一个 micro-batch 时才正好是 $B$ 倍
# （讲义 8.7 节 [S312](../lectures/sources.md#S312) [S580](../lectures/sources.md#S580)）。

# %%
ones = np.ones(roll.mask.shape)
display(Table(["名字", "归一化", "总损失"],
              [[name, row.formula, losses.aggregate_loss(ones, roll.mask, name, L)]
               for name, row in losses.AGGREGATION_TABLE.items()]))
display(Table(["名字", "出处"],
              [[name, row.systems] for name, row in losses.AGGREGATION_TABLE.items()]))
verl_norm = losses.aggregate_loss(ones, roll.mask, "seq-mean-token-sum-norm")
dr_grpo = losses.aggregate_loss(ones, roll.mask, "dr_grpo", L)
print(f"seq-mean-token-sum-norm / dr_grpo = {verl_norm / dr_grpo:.1f}，B = {roll.mask.shape[0]}")

# %% [markdown]
# ## 6. 带基线的 REINFORCE++（verl）和 TRL 的 scale_rewards="batch"（讲义 8.7）
#
# `reinforce_pp` 预设是 verl 的 `reinforce_plus_plus_baseline`：先减组平均，再在整批**所有步**上白化
# $(a-\bar a)/\sqrt{\mathrm{var}+10^{-8}}$ [S313](../lectures/sources.md#S313)。
# verl 另有一个 `reinforce_plus_plus`：不减组平均，折扣回报直接白化，本包叫 `reinforce_pp_no_baseline`（第 10 节）[S314](../lectures/sources.md#S314)。
# TRL 的 `scale_rewards="batch"`：组中心化的奖励除以整批**奖励**的标准差 [S315](../lectures/sources.md#S315)。用训练 50 次以后的策略采一批（全对的组更多）。
# verl 白化时减去的是按步加权的整批均值，所以奖励全相同的组一般不是 0 [S313](../lectures/sources.md#S313)。
# 但玩具里同一道题的解答步数相同，这个均值恰好是 0（到舍入误差），这些组仍是 0。真实 LLM 里同组解答长短不一，它们就会得到非零的优势。
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
ax.set_ylabel("verl REINFORCE++（带基线）")
plt.show()

# %% [markdown]
# ## 7. 动态采样凑不满（讲义 8.8）
#
# `on_short="train"`（默认）用凑到的组训练，`"raise"` 像 verl 一样停下 [S316](../lectures/sources.md#S316)。凑不满的次数记在 `history.meta["short_batches"]`。
# 为了常常凑不满，这里每次只采一批（`max_draws=1`），一批只有 32 道题（`gen_batch_scale=1`；`dapo` 预设一批采 3 × 32 道）。
# 看输出：50 次迭代里有几次凑不满；以及 `"raise"` 的报错。

# %%
h = train(TrainableLLM(1e9), preset("dapo", iterations=50, max_draws=1, gen_batch_scale=1),
          train_set, heldout)
print(f"凑不满的迭代：{h.meta['short_batches']} / 50")
try:
    train(TrainableLLM(1e9),
          preset("dapo", iterations=5, max_draws=1, gen_batch_scale=1, on_short="raise"),
          train_set, heldout)
except RuntimeError as e:
    print("RuntimeError:", *str(e).split("。"), sep="\n  ")     # 一句一行，在输出区里不折断

# %% [markdown]
# ## 8. 用旧策略采样：偏差和方差随 k 变化（讲义 8.9）
#
# 异步 RL 里采样的策略 $\pi_{\text{beh}}$ 比正在训练的 $\pi$ 旧 $k$ 次更新。在一条 GRPO 轨迹（lr = 8）的第 20 次更新处，
# 用第 $20-k$ 次的参数采样，估计第 20 次的梯度。每步的比率 $\rho_t = \pi(a_t\mid c_t)/\pi_{\text{beh}}(a_t\mid c_t)$。四种做法：
# - 不修正：当成新数据用；
# - 逐步 TIS：第 $t$ 步乘 $\min(\rho_t, C)$（截断的重要性比率）；
# - 逐步比率：第 $t$ 步乘 $\rho_t$，不截断；
# - 序列比率：整份解答乘 $\prod_t \rho_t$，不截断。
#
# 这条轨迹上 $\rho_t$ 离 1 很近（下面印出每个 $k$ 的最大值），verl 默认的 $C = 2$ [S317](../lectures/sources.md#S317) 在这里一次也不会截断。
# 为了看见截断，这里取 $C = 1.05$，并印出被截断的步占多少。
# 看输出：每个 $k$ 的最大 $\rho_t$ 和被截断的比例；然后是偏差²和方差（相对 $\|\nabla J\|^2$）随 $k$ 的变化。

# %%
snaps = []
train(TrainableLLM(1e9), preset("grpo", lr=8.0, iterations=20), train_set, heldout,
      callback=lambda hist, m: snaps.append(m.params.copy()))
target = TrainableLLM(1e9)
target.params[:] = snaps[-1]
g_true = grad_expected_reward(target, train_set)
cfg, C, KS = RLConfig(loss_agg="seq-mean-token-sum", clip=False), 1.05, [0, 2, 5, 10, 19]
MODES = ["不修正", f"逐步 TIS（C = {C}）", "逐步比率", "序列比率"]
stale, cut = {mode: [] for mode in MODES}, []
for k in KS:
    behaviour = TrainableLLM(1e9)
    behaviour.params[:] = snaps[-1 - k]
    rng = np.random.default_rng(k)
    est, rhos = {mode: [] for mode in MODES}, []
    for _ in range(60):
        rows = np.sort(rng.choice(len(train_set), 32, replace=False))
        roll = sample_rollouts(behaviour, [train_set[i] for i in rows], 8, rng)
        rho = np.ones(roll.mask.shape)
        pt = prob_table(target)[roll.ctx, roll.actions]
        rho[roll.mask] = pt[roll.mask] / np.exp(roll.logp[roll.mask])
        rhos.append(rho[roll.mask])
        a = np.where(roll.mask, group_advantages(roll.correct.astype(float), 8, "rloo")[:, None],
                     0.0)
        weights = [np.ones_like(rho), np.minimum(rho, C), rho,
                   np.repeat(rho.prod(axis=1, keepdims=True),
                                                                         rho.shape[1], axis=1)]
        for mode, w in zip(MODES, weights):   # policy_loss 的梯度自带 ρ：乘 w/ρ 得到权重 w
            est[mode].append(-policy_loss(target, roll, a * w / rho, cfg).grad)
    rhos = np.concatenate(rhos)
    cut.append(f"k = {k}：最大 ρ_t {rhos.max():.3f}，被截断 {np.mean(rhos > C):.1%}")
    for mode in MODES:
        e = np.array(est[mode])
        stale[mode].append((((e.mean(0) - g_true) ** 2).sum() / (g_true ** 2).sum(),
                            ((e - e.mean(0)) ** 2).sum(axis=(1, 2)).mean() / (g_true ** 2).sum()))
print("\n".join(cut))
fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
for mode in MODES:
    axes[0].plot(KS, [b for b, _ in stale[mode]], "o-", label=mode)
    axes[1].plot(KS, [v for _, v in stale[mode]], "o-", label=mode)
axes[0].set_title("偏差² / $\\|\\nabla J\\|^2$（对数坐标）")
axes[0].set_yscale("log")
axes[1].set_title("方差 / $\\|\\nabla J\\|^2$")
for ax in axes:
    ax.set_xlabel("陈旧的更新次数 $k$")
axes[0].legend()
plt.show()
Table(["修正"] + [f"k = {k}" for k in KS],
      [[mode] + [f"{b:.4f} / {v:.4f}" for b, v in stale[mode]] for mode in MODES],
      title="偏差² / 方差（都除以 ‖∇J‖²；偏差²里含有大约 方差/60 的噪声）")

# %% [markdown]
# **读输出**：
# - 不修正：偏差随 $k$ 一路变大。
# - 逐步比率：把大部分偏差去掉了，但 $k$ 大时去不干净：它的偏差²比 方差/60 的噪声大得多。原因是奖励取决于整份解答的**每一步**。
#   第 $t$ 步只乘自己的 $\rho_t$，修正了"这一步选什么"，却没修正"前面和后面各步是按旧策略选的"：
#   解答整体的分布、以及经过哪些状态，还是旧策略的。要完全修正，得乘整份解答的 $\prod_t \rho_t$。
# - 序列比率：偏差²落到噪声的大小，但方差比逐步的大：许多个比率相乘，乘积的起伏大得多。
#   verl 的文档也这样说：逐步的修正方差低、有偏差，序列级的无偏、方差高 [S318](../lectures/sources.md#S318)。
# - 逐步 TIS：只在 $\rho_t > C$ 的步起作用。上面印出被截断的比例：$k$ 小时是 0，这一行和"逐步比率"完全相同；
#   $k$ 大时截断了不少步，表里它和"逐步比率"的差别很小（偏差略大、方差略小）。60 批看不出这点差别是否超过噪声。
#
# **为什么修正以后方差随 $k$ 下降？** 对一个量 $f$，重要性采样估计 $E_\pi[f]$ 的方差是 $E_\pi[\rho f^2] - (E_\pi f)^2$。
# 策略梯度里大的 $f$ 来自罕见的错误动作：它们的 $\nabla\log\pi$ 大。旧策略更常犯错，在这些动作上 $\rho < 1$，
# 所以 $E_\pi[\rho f^2]$ 比同策略的 $E_\pi[f^2]$ 小。旧 $k$ 次的策略更会"探索"错误动作，反而是一个更好的采样分布。

# %% [markdown]
# ## 9. 每个新预设训练一次
#
# 同样的题、同样的种子，每个预设训练 100 次迭代。看输出：留出题上的路径 pass@1 和一共采样了多少份解答。
# 这只是一次运行（一个种子），不是算法的排名。最后一行检查 dual-clip 在默认学习率下有没有起作用。

# %%
runs = {}
for name in ["grpo", "ppo", "ppo_critic", "ppo_dual_clip", "gspo", "cispo", "reinforce_pp",
             "grpo_async"]:
    runs[name] = train(TrainableLLM(1e9), preset(name, iterations=100), train_set, heldout)
display(Table(["预设", "训练后路径 pass@1", "采样数"],
              [[name, run["pass1_exact"][-1], run["samples"][-1]] for name, run in runs.items()]))
print(f"ppo_dual_clip 的训练记录和 ppo 完全相同：{dict(runs['ppo_dual_clip']) == dict(runs['ppo'])}"
      f"（lr = 2 时 ρ 从不超过 c = 3）")

# %% [markdown]
# ## 10. verl 和 TRL 的其他损失（讲义 8.10）
#
# 这些损失、优势、选项和预设在 `toyllm.peers` 里：`import toyllm.peers` 把它们登记进 `toyllm.rl`，之后六个新预设都是同一个循环的选项。
# 新的策略损失是 `policy_loss` 的取值，公式在 `toyllm.peers.losses`，
# 玩具和小 transformer 都经过同一个 `rl_objective`。看输出的表：每个新预设和 GRPO 差在哪几个选项。

# %%
import toyllm.peers  # noqa: F401  登记 verl / TRL 的损失、优势、选项和预设
from toyllm.peers import cs336, losses as peer_losses
from toyllm.rl import PRESET_NAMES
from toyllm.rl.objective import rl_objective

NEW = ["reinforce_pp_no_baseline", "sapo", "gmpo", "gpg", "clip_cov", "kl_cov"]
diff_table([(name, "grpo") for name in NEW])

# %% [markdown]
# ### 10.1 同一批数据上的损失和梯度
#
# 和第 4 节一样：一批数据（32 题 × 8 份），先用 lr = 30 更新 3 次，让比率 $\rho$ 离开 1。
# 然后在这批数据上，每个损失算一次 `rl_objective`（优势都用 GRPO 的）。
# 看表：损失的值、梯度 $\partial\text{loss}/\partial\log\pi$ 的范数、在下界 / 上界被裁剪的比例。
# Clip-Cov 和 KL-Cov 的比例调到 5%，这一小批上才看得见它们挑中的步（verl 的默认是 0.02%） [S326](../lectures/sources.md#S326)。

# %%
fresh = TrainableLLM(1e9)
batch = sample_rollouts(fresh, train_set[:32], 8, np.random.default_rng(1))
adv = group_advantages(batch.correct.astype(float), 8)
for _ in range(3):
    fresh.params -= 30.0 * policy_loss(fresh, batch, adv, preset("grpo")).grad
m = batch.mask
old_logp = np.where(m, batch.logp, 0.0)
new_logp = np.where(m, np.log(prob_table(fresh)[batch.ctx, batch.actions]), 0.0)
cases = {"GRPO（PPO 裁剪）": preset("grpo"), "SAPO": preset("sapo"), "GMPO": preset("gmpo"),
         "GPG": preset("gpg"),
         "Clip-Cov（5%）": preset("clip_cov", clip_cov_ratio=0.05),
         "KL-Cov（5%）": preset("kl_cov", kl_cov_ratio=0.05),
         "VESPO": RLConfig(policy_loss="vespo", loss_agg="token-mean"),
         "CISPO 序列级（TRL）": RLConfig(policy_loss="cispo", cispo_clip="trl", eps_high=1.1,
                                         is_level="sequence",
                                       loss_agg="dapo")}
rows = []
for label, cfg in cases.items():
    obj = rl_objective(new_logp, old_logp, adv, m, cfg, rng=np.random.default_rng(0))
    rows.append([label, f"{obj.loss:.4f}", f"{np.linalg.norm(obj.dloss_dlogp):.4f}",
                 f"{obj.clip_low:.3f}",
                 f"{obj.clip_high:.3f}"])
Table(["损失", "值", "‖∂loss/∂log π‖", "下界裁剪", "上界裁剪"], rows)

# %% [markdown]
# 看输出：Clip-Cov 截断了多少步的梯度，KL-Cov 给多少步加了 $|\log\rho|$ 的惩罚。
# Clip-Cov 只从协方差在 (1, 5) 之间、又没被 PPO 裁剪的步里挑，候选不够 5% 时就全挑上。
# 序列级 CISPO 的裁剪比例按 TRL 数的是**解答**（被截的解答 / B），不是步 [S329](../lectures/sources.md#S329)。

# %%
log_ratio = new_logp - old_logp
cc = peer_losses.clip_cov_surrogate(log_ratio, adv, new_logp, m, ratio=0.05,
                                    rng=np.random.default_rng(0))
kc = peer_losses.kl_cov_surrogate(log_ratio, adv, new_logp, m, ratio=0.05)
print(f"mask 内 {m.sum()} 步；Clip-Cov 截断梯度的步 {cc.selected.sum()} 个，KL-Cov 加惩罚的步"
      f" {kc.selected.sum()} 个")
print(f"verl 的默认比例 2e-4：只挑 max(⌊2e-4 × {m.sum()}⌋, 1) = {max(int(2e-4 * m.sum()), 1)} 步")

# %% [markdown]
# SAPO 的损失是 $\ell = -f(\rho)\,A$，门 $f(\rho) = \sigma\big(\tau(\rho-1)\big)\cdot 4/\tau$（verl 和 TRL 都这样写） [S323](../lectures/sources.md#S323)。
# 对 $\log\pi$ 求导要乘 $\partial\rho/\partial\log\pi = \rho$，所以梯度系数是 $-\partial\ell/\partial\log\pi = \rho\, f'(\rho)\, A$，
# 其中 $f'(\rho) = 4\sigma(1-\sigma)$ 是门的斜率。
#
# 看图：一个 $A = 1$ 的步，两条实线是梯度系数 $-\partial\ell/\partial\log\pi$ 随 $\rho$ 怎样变，虚线是 SAPO 的门的斜率 $f'(\rho)$。
# PPO 在 $1 + \varepsilon$ 处一刀切成 0。SAPO 不切：离 1 越远越小的是虚线 $f'(\rho)$，不是梯度系数。
# 梯度系数 $\rho f'(\rho)$ 还乘着 $\rho$：$\tau = 1$ 时它先随 $\rho$ 变大，过了最高点才变小。图下打印最高点在哪里。

# %%
rhos = np.linspace(0.5, 4.0, 351)
one = np.ones((1, len(rhos)), bool)
sapo = peer_losses.sapo_surrogate(np.log(rhos)[None], np.ones(1), one)
ppo = clipped_surrogate(rhos, np.ones_like(rhos))
coef = -sapo.dloss_dlogp[0]
slope = coef / rhos                                   # f'(ρ) = 4σ(1 − σ)
fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(rhos, -ppo.dloss_dlogp, label="PPO 裁剪（ε = 0.2）的梯度系数")
ax.plot(rhos, coef, label="SAPO（τ = 1）的梯度系数 ρ·f′(ρ)")
ax.plot(rhos, slope, "--", label="SAPO 的门的斜率 f′(ρ)")
ax.set_xlabel("重要性比率 $\\rho$")
ax.set_ylabel("系数")
ax.set_ylim(0, 2.4)                                   # 上面留出图例的地方
ax.legend(loc="upper right")
plt.show()
top = coef.argmax()
at = {r: float(np.interp(r, rhos, coef)) for r in (0.5, 1.0, 2.0, 4.0)}
print(f"SAPO 的梯度系数：最高点在 ρ = {rhos[top]:.2f}（{coef[top]:.2f}）；"
      + "，".join(f"ρ = {r:g} 时 {v:.2f}" for r, v in at.items()))
print("门的斜率 f′(ρ)："
      + "，".join(f"ρ = {r:g} 时 {np.interp(r, rhos, slope):.2f}" for r in (1.0, 2.0, 4.0)))

# %% [markdown]
# ### 10.2 名字相同、约定不同
#
# 一批 3 份解答，第 2 份全空（mask 全是 False）。看输出：verl 的 `seq-mean-token-mean` 只对非空的 2 份平均，
# TRL 的 `grpo`（和本包的 `seq-mean`）除以 3 [S330](../lectures/sources.md#S330) [S336](../lectures/sources.md#S336)。最后两行是 CS336 的 `masked_mean`：全空的行它给 NaN，本包默认给 0 [S331](../lectures/sources.md#S331)。

# %%
per_step = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [4.0, 0.0, 0.0]])
mask3 = np.array([[True, True, False], [False, False, False], [True, False, False]])
for name in ["seq-mean", "grpo", "seq-mean-token-mean", "seq-mean-token-sum"]:
    print(f"{name:22s}{losses.aggregate_loss(per_step, mask3, name):.4f}")
print("本包 masked_mean（empty=\"zero\"）：", cs336.masked_mean(per_step, mask3, axis=1))
print("CS336 masked_mean（empty=\"nan\"）：",
      cs336.masked_mean(per_step, mask3, axis=1, empty="nan"))

# %% [markdown]
# ### 10.3 每个新预设训练 50 次迭代
#
# 同样的题，5 个种子，每个预设训练 50 次迭代（32 题 × 8 份）。看表：留出题上的路径 pass@1 的平均和标准误差。
# SAPO、GMPO、Clip-Cov、KL-Cov 每批更新 μ = 4 次，所以表里加了一行 μ = 4 的 GRPO：和它比，才看得出损失本身的作用。
# 后三列就是这样比：同一个种子的两次训练配成一对，`seed_verdict` 看平均差有几个标准误（t），和 5 个种子的临界值 4.604 比。
# "成立"是这个预设在这些种子上确实比 GRPO（μ = 4）高，"不成立"是确实更低；5 个种子看不出小的差距，这不是算法的排名。

# %%
runs = {PRESET_NAMES[name]: preset(name, iterations=50) for name in ["grpo", "reinforce_pp"] + NEW}
runs["GRPO（μ = 4）"] = preset("grpo", iterations=50, mu=4)
final = {label: np.array([train(TrainableLLM(1e9), cfg.replace(seed=s), train_set,
                                heldout).meta["final_pass1_exact"]
                          for s in range(5)]) for label, cfg in runs.items()}
ref = final["GRPO（μ = 4）"]
cmp = {label: seed_verdict(v, ref) for label, v in final.items() if label != "GRPO（μ = 4）"}
Table(["预设", "路径 pass@1（5 个种子的平均）", "标准误差", "减 GRPO（μ = 4）", "t", "判定"],
      [[label, f"{v.mean():.4f}", f"{v.std(ddof=1) / np.sqrt(len(v)):.4f}"]
       + ([f"{cmp[label]['diff']:+.4f}", f"{cmp[label]['t']:+.1f}", cmp[label]["verdict"]]
          if label in cmp else ["—", "—", "—"]) for label, v in final.items()])

# %% [markdown]
# ## 小结
#
# - critic 是一张 $L_{\max}\times 12\times 2$ 的价值表；它对精确 $V^*$ 的误差随训练下降，但看不到题目，降不到 0：
#   剩下的误差正好分成混叠和噪声两块。
# - 五种基线的方差表是测出来的：critic、精确 $V^*$ 和不要参数的 RLOO 几乎一样；组平均是 RLOO 的 $\frac{G-1}{G}$ 倍。
#   0/1 奖励时基线不一定减小方差：训练后的策略上，不减基线的方差最小。
# - dual-clip 给 $A<0$ 的损失加上界；CISPO 保留被 PPO 裁掉的步的梯度（论文的设置没有下界）；GSPO 整份解答一个比率，窗口很窄 [S302](../lectures/sources.md#S302)。
# - 聚合的名字是一张归一化表；`dr_grpo` 和 verl 的 `seq-mean-token-sum-norm` 差一个倍数，它取决于 micro-batch 的大小和卡数（讲义 8.7 节 [S580](../lectures/sources.md#S580)）。
# - 旧策略采样不修正时偏差随 $k$ 增大；逐步的比率去掉大部分偏差，去不干净；整份解答的比率无偏，方差更大。
#   截断只在比率超过 $C$ 时起作用。
# - verl 和 TRL 的其他损失（SAPO、GMPO、GPG、Clip-Cov、KL-Cov、VESPO）都是 `policy_loss` 的取值；
#   名字相同的选项在两个系统里可能约定不同（全空的行、裁剪比例数步还是数解答），本包跟着名字所属的系统 [S319](../lectures/sources.md#S319)。
#
# ## 参考文献
#
# - Schulman et al. 2015，GAE，arXiv:1506.02438 [S304](../lectures/sources.md#S304)；Schulman et al. 2017，PPO，arXiv:1707.06347 [S303](../lectures/sources.md#S303)
# - Ye et al. 2019，dual-clip PPO，arXiv:1912.09729 [S300](../lectures/sources.md#S300)
# - Zheng et al. 2025，GSPO，arXiv:2507.18071 [S301](../lectures/sources.md#S301)；MiniMax 2025，MiniMax-M1（CISPO），arXiv:2506.13585 [S302](../lectures/sources.md#S302)
# - Liu et al. 2025，Dr. GRPO，arXiv:2503.20783 [S320](../lectures/sources.md#S320)；Hu 2025，REINFORCE++，arXiv:2501.03262 [S321](../lectures/sources.md#S321)
# - Yao et al. 2025，TIS（推理引擎和训练框架的概率不一致）[S322](../lectures/sources.md#S322)
# - SAPO，arXiv:2511.20347 [S323](../lectures/sources.md#S323)；Zhao et al. 2025，GMPO，arXiv:2507.20673 [S324](../lectures/sources.md#S324)；Chu et al. 2025，GPG，arXiv:2504.02546 [S325](../lectures/sources.md#S325)
# - Cui et al. 2025，The Entropy Mechanism of RL for Reasoning LMs（Clip-Cov / KL-Cov），arXiv:2505.22617 [S326](../lectures/sources.md#S326)
#
# ## 试一试
#
# 1. 把 `preset("ppo_critic")` 的 `lam` 改成 0.5、0：价值表的误差和 pass@1 怎样变？混叠和噪声哪一块变了？
# 2. 在第 4 节把 lr 从 30 改成 10：PPO 在下界拿走梯度的步、`cispo` 预设在上界截住的步，各变多还是变少？GSPO 呢？
# 3. 在第 10.1 节把 SAPO 的 `tau_pos` 改成 5：梯度的范数变大还是变小？和图里的曲线对得上吗？
