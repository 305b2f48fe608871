# %% [markdown]
# # 05 · 策略梯度与 GRPO
#
# **你将学到**
# - REINFORCE、组平均基线、RLOO、GRPO 的优势 $A_i$ 怎么算：在一个手写的小组上把每个数打印出来；
# - 基线对 REINFORCE 估计的方差有什么影响：在这个玩具里，用 0/1 奖励时，基线**不一定**让方差变小，以及为什么；
# - 奖励全相同的组（全对或全错）对梯度的贡献是 0，训练中这样的组越来越多；
# - 同样多的样本下，REINFORCE、RLOO、GRPO 的训练曲线（留出题上的路径 pass@1、熵），以及 GRPO 领先的原因；
# - 训练前后每个情境的变化；
# - 结果奖励和过程奖励：信用分配（credit assignment）；结果奖励也会奖励一个"碰巧没咬人的 bug 步"；
# - 同样多的样本下，GRPO 和拒绝采样微调、STaR、专家迭代比较。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 6 节「REINFORCE、RLOO、GRPO、Dr. GRPO：优势与它们的偏差」和第 9 节「结果奖励与过程奖励：信用分配」。

# %% [markdown]
# 先导入要用的东西，准备题目。`toyllm.rl.default_problems` 给出 256 道**训练题**和 200 道**留出题**。
# 留出题先用 `correct_paths` 拆成数组，训练时每次迭代都要在上面算一次路径 pass@1，拆一次就够了。
#
# 所有算法都是 `toyllm.rl.train` 里的**同一个循环**，只是选项不同。`presets_table` 列出三个预设有哪些选项不同。
# 看输出：REINFORCE、RLOO、GRPO 只差"优势怎么算"这一个选项。最后一行的 $\mu$ 是每批样本做几次梯度更新（`mu`）：
# 这个 notebook 里都是 $\mu = 1$，每批样本只用一次；$\mu > 1$ 是第 06 个 notebook 的内容。
#
# 这里的 REINFORCE（`reinforce` 预设）是"不减基线"：奖励直接当权重，每份解答按步平均（CS336 作业 5 的 `no_baseline`）[S501](../lectures/sources.md#S501)；
# Williams（1992）原来的 REINFORCE 按步求和，见第 02 个 notebook 第 5 节。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from toyllm import CONTEXT_NAMES, CONTEXTS, PROCEDURE_NAMES, PROCEDURES, TrainableLLM
from toyllm.exact import correct_paths, exact_pass_at_1, grad_expected_reward
from toyllm.imitation import expert_iteration, star
from toyllm.plots import plot_context_bars
from toyllm.plotstyle import use_chinese_font
from toyllm.policy import prob_table
from toyllm.rl import (PRESETS, default_problems, group_advantages, policy_loss, preset,
                       presets_table, step_rewards,
                       train)
from toyllm.sampler import prepare_problems, sample_rollouts
from toyllm.tables import Table

use_chinese_font()
np.set_printoptions(precision=4, suppress=True)

train_set, heldout = default_problems(seed=0)
paths = correct_paths(heldout)
base = TrainableLLM(1e9, name="1B")
start_pass = exact_pass_at_1(base, paths)
print(f"训练题 {len(train_set)} 道，留出题 {len(heldout)} 道；1B 训练前的路径 pass@1 ="
      f" {start_pass:.4f}")
print()
print(presets_table(["reinforce", "rloo", "grpo"]))
print()
cfg = PRESETS["grpo"]
print(f"共同的默认值：每次迭代 {cfg.batch_problems} 道题 × 每题 G = {cfg.group_size} 份，lr ="
      f" {cfg.lr}，"
      f"μ = {cfg.mu}，温度 {cfg.temperature}")

# %% [markdown]
# ## 1. 策略梯度和优势
#
# 期望奖励 $J(\Delta) = \mathbb{E}[R]$ 的梯度（第 02 个 notebook）：
#
# $$\nabla J = \mathbb{E}\Big[\sum_t \nabla \log \pi(a_t \mid c_t)\; A\Big], \qquad \nabla_{z}\log\pi(a \mid c) = e_a - \pi(\cdot \mid c).$$
#
# $A$ 可以是奖励 $R$ 本身，也可以是 $R - b$，只要基线 $b$ 不依赖于这份解答选了什么做法（$\mathbb{E}[\nabla\log\pi] = 0$）。
# 同一道题采 $G$ 份解答（一组），奖励 $r_1,\dots,r_G$，组平均 $\bar r$。`group_advantages(rewards, G, method)` 的四种优势：
#
# | `method` | $A_i$ | 谁在用 |
# |---|---|---|
# | `"none"` | $r_i$ | REINFORCE，没有基线 |
# | `"mean"` | $r_i - \bar r$ | 组平均基线（Dr. GRPO，见下） |
# | `"rloo"` | $r_i - \frac{1}{G-1}\sum_{j\ne i} r_j = \frac{G}{G-1}(r_i - \bar r)$ | RLOO（留一法） |
# | `"grpo"` | $\dfrac{r_i - \bar r}{\operatorname{std}(r) + \epsilon}$ | GRPO（std 是样本标准差，除以 $G-1$；$\epsilon$ = `std_eps`） |
#
# **Dr. GRPO**（Liu et al. 2025，"GRPO Done Right"）[S554](../lectures/sources.md#S554)指出 GRPO 的两处偏差并去掉它们：优势不除以标准差（就是 `"mean"`），
# 损失不按每份解答的步数平均，而除以一个常数（讲义第 6 节「REINFORCE、RLOO、GRPO、Dr. GRPO：优势与它们的偏差」；预设 `dr_grpo`）。
#
# 结果奖励时，一份解答的**每一步**都用同一个 $A_i$。引擎每一步的损失是 $-\rho_{i,t} A_i$（$\rho$ 是重要性比率，$\mu = 1$ 时恰好是 1），
# 它对 logits 的梯度是 $-A_i (e_{a_{i,t}} - \pi)$：正的优势把选中的做法推上去，负的推下去。

# %% [markdown]
# 手写三组，每组 $G = 4$ 份：一组只有一份做对，一组只有一份做错，一组全对。
#
# 看输出：每一行的四种优势。注意三件事：
# - 除 `none` 以外，每组的优势加起来是 0；
# - RLOO 恰好是组平均基线的 $G/(G-1)$ 倍；
# - 全对的那一组，除 `none` 以外优势全是 0。

# %%
G_demo = 4
rewards = np.array([1, 0, 0, 0,
                    1, 1, 1, 0,
                    1, 1, 1, 1], dtype=float)
methods = ("none", "mean", "rloo", "grpo")
adv = {m: group_advantages(rewards, G_demo, m) for m in methods}
display(Table(["组", "r"] + list(methods),
              [[i // G_demo + 1,
                int(r)] + [f"{adv[m][i]:.4f}" for m in methods] for i, r in enumerate(rewards)]))
for g in range(3):
    grp = rewards[g * G_demo:(g + 1) * G_demo]
    sums = "，".join(f"{m} {adv[m][g * G_demo:(g + 1) * G_demo].sum():+.4f}" for m in methods)
    print(f"第 {g + 1} 组：平均 {grp.mean():.2f}，标准差 {grp.std(ddof=1):.4f}；优势之和：{sums}")
ratio = adv["rloo"][:8] / adv["mean"][:8]
print(f"RLOO / 组平均基线 = {ratio.min():.4f} … {ratio.max():.4f}，G/(G−1) ="
      f" {G_demo / (G_demo - 1):.4f}")
print(f"GRPO 第 1 份：(1 − 0.25) / 0.5 = {0.75 / 0.5:.4f}；分母加上 ε = 1e-4 以后是"
      f" {0.75 / (0.5 + 1e-4):.4f}")

# %% [markdown]
# GRPO 的数比 $(r_i - \bar r)/\operatorname{std}$ 略小一点，是因为分母里加了 $\epsilon$（输出最后一行）。
#
# 前两组都只有"一份和别人不同"。GRPO 的优势是组平均基线的 $1/\operatorname{std}$ 倍：除以标准差等于给每道题一个权重 $1/\operatorname{std}$。
# 几乎全对或几乎全错的题，std 小，权重反而大（Dr. GRPO 论文说的"难度偏差"）[S554](../lectures/sources.md#S554)。

# %% [markdown]
# ## 2. 基线和方差：这个玩具里的实际情况
#
# 基线不改变梯度估计的期望。它能不能减小方差？数一数。
#
# 取 32 道训练题，用训练前的 1B 模型一次采 300 批，每批每道题 $G = 8$ 份。每一批给出一个 REINFORCE 估计
#
# $$\hat g = \frac1B\sum_{i=1}^{B} A_i\, S_i, \qquad S_i = \sum_t \big(e_{a_{i,t}} - \pi(\cdot \mid c_{i,t})\big),$$
#
# $S_i$ 是第 $i$ 份解答的"得分向量"（第 02 个 notebook 第 5 节）。`score_vectors` 把每份解答的 $S_i$ 按情境放进一个 (12, 3) 的数组。
# 它和引擎算的是同一个东西。引擎把每一步的损失加权求和（**聚合**，第 06 个 notebook 第 1.1 节）；`loss_agg="constant"` 让每一步的权重都是
# $\frac{1}{B\,L_{\max}}$，`max_len=1` 把 $L_{\max}$ 取成 1，于是权重是 $\frac1B$，损失的 $-$梯度恰好是 $\hat g$。
#
# 看输出：四种优势下，两种算法给出的梯度是否相同。

# %%
from toyllm.rl import score_vectors

G, reps = 8, 300
batch32 = prepare_problems(train_set[:32])
P = len(batch32)
exact_grad = grad_expected_reward(base, train_set[:32])
big = sample_rollouts(base, batch32, G * reps,
                      np.random.default_rng(0))   # 每道题 2400 份，按 8 份一组连续排列
S = score_vectors(big)
R = step_rewards(big)                                                    # 结果奖励：0 或 1
weights = {m: group_advantages(R, G, m) for m in methods}
weights["none ±1"] = 2 * R - 1                                   # 答对 +1、答错 −1，不减基线
weights["none 2/1"] = R + 1                                              # 答对 2、答错 1，不减基线
estimator = preset("reinforce",
                   loss_agg="constant")                     # 只用它的聚合方式；优势直接给出
same = all(np.allclose(-policy_loss(base, big, weights[m], estimator, max_len=1).grad,
                       (weights[m][:, None, None] * S).mean(axis=0), rtol=0,
                       atol=1e-12) for m in methods)
print(f"{len(big)} 份解答；四种优势下 (1/B) Σ A_i S_i 和引擎的 −梯度相同：{same}")

# %% [markdown]
# 把这些解答切成 300 批（每批 32 道题 × 8 份），每批一个 $\hat g$。300 个 $\hat g$ 的平均 $\bar g$ 和精确梯度 $\nabla J$（`grad_expected_reward`）
# 比较方向和长度；它们围绕 $\bar g$ 的散布就是方差。
#
# 不同的优势，$\bar g$ 的长度不同（组平均基线短 $\frac{G-1}{G}$，GRPO 除以 std 以后更长），所以比较**相对方差**：
# $\operatorname{tr}\operatorname{Cov}(\hat g) / \lVert \bar g \rVert^2$（噪声和信号之比，和整体缩放无关）。
# 最后两行换一个奖励的零点："答对 +1、答错 −1"和"答对 2、答错 1"，再看没有基线的 REINFORCE（带基线的几种不受零点影响）。
#
# 看表：0/1 奖励时，哪一种的相对方差最小。

# %%
stats, rows = {}, []
for m, w in weights.items():
    gs = (w[:, None, None] * S).reshape(P, reps, G, len(CONTEXTS), 3).mean(axis=(0, 2))   # 300 个 ĝ
    mean = gs.mean(axis=0)
    total_var = ((gs - mean) ** 2).sum(axis=(1, 2)).mean()
    cos = (mean * exact_grad).sum() / np.linalg.norm(mean) / np.linalg.norm(exact_grad)
    stats[m] = (np.linalg.norm(mean), total_var / np.linalg.norm(mean) ** 2)
    rows.append([m, f"{np.linalg.norm(mean) / np.linalg.norm(exact_grad):.3f}", cos,
                 f"{total_var:.5f}", stats[m][1]])
display(Table(["优势", "‖ḡ‖/‖∇J‖", "cos(ḡ, ∇J)", "tr Cov", "相对方差"], rows))
best = min(methods, key=lambda m: stats[m][1])
print(f"0/1 奖励时相对方差最小的是：{best}")

# %% [markdown]
# 看上表：
# - 四种 0/1 奖励的 $\bar g$ 都和 $\nabla J$ 几乎同方向（cos 接近 1）；`none` 和 `rloo` 的长度也和 $\nabla J$ 一致（无偏），`mean` 短了 $\frac{G-1}{G}$。
# - 0/1 奖励时，**不减基线**的 REINFORCE 相对方差最小，RLOO、GRPO 反而更大。
# - 换一个零点，不减基线的相对方差就变了：±1 时和带基线的差不多，"答对 2、答错 1"时大得多。带基线的几种减掉了组平均，不依赖零点。
#
# 为什么 0/1 奖励时基线反而添了噪声？看得分向量 $S_i$ 有多长：做对的解答和做错的解答分开统计。

# %%
score_norm, correct = np.linalg.norm(S, axis=(1, 2)), big.correct
print(f"做对的解答：‖S_i‖ 平均 {score_norm[correct].mean():.3f}（{correct.sum()} 份）")
print(f"做错的解答：‖S_i‖ 平均 {score_norm[~correct].mean():.3f}（{(~correct).sum()} 份）")
print(f"‖S_i‖ 和奖励的相关系数：{np.corrcoef(score_norm, correct)[0, 1]:+.3f}")

# %% [markdown]
# 做对的解答每一步都选了最可能的做法，$e_a - \pi$ 很小；做错的解答里至少有一步选了不太可能的做法，得分向量长得多。
#
# 0/1 奖励、没有基线时，做错的解答权重是 0，只有短的得分向量进入估计。减去基线 $b$ 以后，做错的解答拿到权重 $-b$，
# 长的得分向量也进来了，所以方差变大。这是这个玩具（以及"多数步骤都很确定"的任务）的特点：
# 基线的真正好处是让估计不依赖奖励的零点（上表最后两行），而不是在每一种奖励下都减小方差。

# %% [markdown]
# ## 3. 同样多的样本：REINFORCE、RLOO、GRPO 的训练曲线
#
# 三个预设各训练 100 次迭代，每次迭代采样 $32 \times 8 = 256$ 份解答，三者花的样本完全相同。
# `train` 返回的训练记录（`History`）里每次迭代有：留出题上的路径 pass@1、熵、奖励全相同的组的比例、累计样本数……
#
# 看输出和图：GRPO 上升得最快；REINFORCE 和 RLOO 几乎重合；熵（模型的不确定程度）随 pass@1 上升而下降。

# %%
iters = 100
runs, models = {}, {}
for name in ("reinforce", "rloo", "grpo"):
    models[name] = base.copy(name=name)
    runs[name] = train(models[name], preset(name, iterations=iters), train_set, paths)

display(Table(["预设", "样本数", "路径 pass@1：开始", "第 50 次", "第 100 次", "熵：第 1 次",
               "第 100 次"],
              [[name,
                h["samples"][-1]] + [f"{x:.4f}" for x in (start_pass, h["pass1_exact"][49],
                                                          h["pass1_exact"][-1],
                                                               h["entropy"][0], h["entropy"][-1])]
               for name, h in runs.items()]))

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
labels = {"reinforce": "REINFORCE（无基线）", "rloo": "RLOO", "grpo": "GRPO"}
for name, h in runs.items():
    ax1.plot([0] + h["samples"], [start_pass] + h["pass1_exact"], label=labels[name])
    ax2.plot(h["samples"], h["entropy"], label=labels[name])
ax1.set_title("留出题上的路径 pass@1")
ax2.set_title("策略的平均熵（nats）")
for ax in (ax1, ax2):
    ax.set_xlabel("累计采样的解答数")
    ax.grid(alpha=0.3)
    ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# GRPO 领先，是因为除以标准差以后方向更好，还是只是**步子更大**？第 2 节的表里，GRPO 的 $\lVert\bar g\rVert$ 比 RLOO 长，
# 而优化器是朴素的梯度下降：参数 $-=$ lr × 梯度，梯度长一倍，步子就大一倍。
#
# 把 REINFORCE 和 RLOO 的学习率乘上这个比例（由第 2 节算出），再训练一次。看输出：三条曲线在几个时刻的 pass@1 是否接近。

# %%
scale = stats["grpo"][0] / stats["rloo"][0]
lr = PRESETS["rloo"].lr * scale
print(f"‖ḡ_GRPO‖ / ‖ḡ_RLOO‖ = {scale:.3f}，于是 REINFORCE 和 RLOO 用 lr = {lr:.3f}")
scaled = {}
for name in ("reinforce", "rloo"):
    scaled[name] = train(base.copy(), preset(name, iterations=iters, lr=lr), train_set, paths)
checkpoints = (10, 25, 50, 100)
Table([""] + [f"第 {c} 次" for c in checkpoints],
      [[name] + [f"{h['pass1_exact'][c - 1]:.4f}" for c in checkpoints]
       for name, h in (("GRPO（lr = 2）", runs["grpo"]),
                       (f"REINFORCE（lr = {lr:.2f}）", scaled["reinforce"]),
                       (f"RLOO（lr = {lr:.2f}）", scaled["rloo"]))])

# %% [markdown]
# 看上表：学习率对齐以后，三者几乎一样快。在这个玩具里，用 0/1 奖励和朴素梯度下降时，GRPO 的领先主要来自"除以 std 放大了步子"，
# 不是来自更低的方差（第 2 节）。真实系统用 Adam，它对梯度的整体缩放不敏感；换成 Adam 以后 GRPO 还领先吗？见"试一试"第 2 题。

# %% [markdown]
# ## 4. 奖励全相同的组：零梯度
#
# 一组 $G$ 份解答的奖励全都相同（全对或全错）时，$r_i - \bar r = 0$：除 `none` 以外，优势全是 0，这一组对梯度**没有任何贡献**。
#
# 用训练好的 GRPO 模型采一批（32 道题 × 8 份），只保留奖励全相同的那些组的优势（其余组的优势置 0），用 `policy_loss` 算梯度。
# 看输出：GRPO 的梯度恰好是 0；不减基线的 REINFORCE 不是 0，因为全对的组里每份的 $A_i = r_i = 1$（全错的组 $A_i = 0$，REINFORCE 也不学）。

# %%
trained = models["grpo"]
r = sample_rollouts(trained, batch32, G, np.random.default_rng(1))
R = step_rewards(r)
by_group = R.reshape(-1, G)
constant = np.ptp(by_group, axis=1) == 0
only_constant = np.repeat(constant, G)                        # 每份解答：它所在的组是不是奖励全相同
print(f"32 组里奖励全相同的：{constant.sum()} 组（全对 {(constant & (by_group[:, 0] == 1)).sum()}"
      " 组，"
      f"全错 {(constant & (by_group[:, 0] == 0)).sum()} 组）")
for m in ("grpo", "none"):
    A = group_advantages(R, G, m) * only_constant
    grad = policy_loss(trained, r, A, cfg).grad                # 优势直接给出；cfg 只决定聚合方式
    print(f"只看这些组，{m} 的梯度范数：{np.linalg.norm(grad):.4g}")

# %% [markdown]
# 模型越强，一组 8 份全对的题越多，这样的组就越多。训练记录里的 `zero_std` 列（TRL 叫 `frac_reward_zero_std`）[S533](../lectures/sources.md#S533)就是每次迭代里它们的比例。
#
# 看图和输出：这个比例随训练上升；对 GRPO 来说，这些组里的样本白采了（第 06 个 notebook 的"动态采样"就是为它设计的）。

# %%
fig, ax = plt.subplots(figsize=(7.5, 4.5))
for name, h in runs.items():
    smooth = np.convolve(h["zero_std"], np.ones(10) / 10, mode="valid")   # 10 次迭代的滑动平均
    ax.plot(h["samples"][9:], smooth, label=labels[name])
ax.set_xlabel("累计采样的解答数")
ax.set_ylabel("奖励全相同的组的比例（10 次迭代平均）")
ax.set_title("训练中，奖励全相同的组越来越多")
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()
plt.show()

h = runs["grpo"]
wasted = sum(z * cfg.batch_problems * cfg.group_size for z in h["zero_std"])
print(f"GRPO：前 10 次迭代平均 {np.mean(h['zero_std'][:10]):.3f}，最后 10 次平均"
      f" {np.mean(h['zero_std'][-10:]):.3f}；"
      f"{iters} 次迭代一共 {h['samples'][-1]} 份样本，其中 {wasted:.0f} 份"
      f"（{wasted / h['samples'][-1]:.1%}）"
      f"所在的组没有梯度")

# %% [markdown]
# ## 5. 训练前后：每个情境学到了什么
#
# 参数就是每个情境的 3 个 $\Delta$，所以"训练改了什么"可以直接画出来：每个情境选「正确」的概率，训练前和 GRPO 训练 100 次迭代以后。
#
# 看图：原来 π(正确) 越低的情境，提高得越多（输出第二行是两者的相关系数）。

# %%
ax = plot_context_bars(base, trained, labels=("训练前（1B）", f"GRPO {iters} 次迭代以后"),
                       title="GRPO：每个情境选「正确」的概率")
ax.figure.tight_layout()
plt.show()
gain = prob_table(trained)[:, 0] - prob_table(base)[:, 0]
print(f"提高最多的情境：{CONTEXT_NAMES[CONTEXTS[int(np.argmax(gain))]]}（+{gain.max():.3f}）；"
      f"最少的：{CONTEXT_NAMES[CONTEXTS[int(np.argmin(gain))]]}（+{gain.min():.3f}）")
corr = np.corrcoef(prob_table(base)[:, 0], gain)[0, 1]
print(f"训练前的 π(正确) 和提高量的相关系数：{corr:+.3f}")
print(f"留出题上的路径 pass@1：{start_pass:.4f} → {exact_pass_at_1(trained, paths):.4f}")

# %% [markdown]
# ## 6. 结果奖励和过程奖励：信用分配
#
# 结果奖励 $r_i = \mathbb{1}[\text{答案对}]$ 给一份解答的每一步同一个 $A_i$。于是：
# - 一份做错的解答，可能只有一步粗心，其余步骤都对，它们一起被往下推；
# - 一份做对的解答，可能有一步用了 bug，只是 bug 恰好没咬人，这一步也被往上推。
#
# `step_rewards(rollouts, kind)` 给出三种奖励：
# - `"outcome"`：结果奖励，每份解答一个 0/1；
# - `"process"`：每一步一个 0/1，这一步写下的值对不对（对它自己的输入做正确运算）。碰巧没咬人的 bug 步，值是对的，也得 1；
# - `"procedure"`：每一步用的是不是正确**做法**，像一个能看懂推理过程的完美过程奖励模型；碰巧对的 bug 步得 0。
#
# 每步奖励的 GRPO 优势（DeepSeekMath 的做法）：先把每步奖励用同组所有步的平均和标准差标准化，得到 $\tilde r_{i,t}$，再从后往前累加：
# $A_{i,t} = \sum_{t' \ge t} \tilde r_{i,t'}$。
#
# 下面在训练前的模型采的一批里，找一组既有"用了 bug 却做对"的解答、又有"只有一步粗心而做错"的解答，把这两份每一步的三种优势打印出来。
# 看输出：
# - 用了 bug 的那一步：结果奖励和 `process` 都给正的优势，只有 `procedure` 给负的；
# - 粗心的那份：结果奖励把它**每一步**都一样地往下推；每步奖励的优势是"从这一步往后"的累加，
#   所以粗心和它之前的步骤是负的（它们后面出了错），粗心之后做对的步骤是正的。

# %%
r = sample_rollouts(base, prepare_problems(train_set), G, np.random.default_rng(2))
all_ok = (r.step_ok | ~r.mask).all(axis=1)                          # 每一步写下的值都对
lucky = all_ok & ((r.actions == 1) & r.mask).any(axis=1)            # 用了 bug，但每一步的值都对
one_slip = (~r.correct & (((r.actions != 0) & r.mask).sum(axis=1) == 1)
            & ((r.actions == 2) & r.mask).any(axis=1))
groups = np.arange(len(r)) // G
g = next(int(x) for x in np.unique(groups[lucky]) if one_slip[groups == x].any())
rows_g = np.arange(g * G, (g + 1) * G)
sub = {kind: step_rewards(r, kind)[rows_g] for kind in ("outcome", "process", "procedure")}
A = {"outcome": group_advantages(sub["outcome"], G, "grpo")[:, None] * r.mask[rows_g]}
for kind in ("process", "procedure"):
    A[kind] = group_advantages(sub[kind], G, "grpo", mask=r.mask[rows_g])
problem = train_set[r.problem[rows_g[0]]]
print("题目：", problem, "=", problem.answer, "；这一组 8 份里做对的：", int(sub["outcome"].sum()),
      "份")
for label, i in (("用了 bug 却做对", int(rows_g[lucky[rows_g]][0])),
                 ("只有一步粗心而做错", int(rows_g[one_slip[rows_g]][0]))):
    k = i - g * G
    display(Table(["步", "情境", "做法", "值对吗", "A 结果", "A process", "A procedure"],
                  [[t + 1, CONTEXT_NAMES[CONTEXTS[r.ctx[i, t]]],
                    PROCEDURE_NAMES[PROCEDURES[r.actions[i, t]]],
                    "对" if r.step_ok[i, t] else "错"] + [f"{A[kind][k, t]:.3f}" for kind in A]
                   for t in range(int(r.lengths[i]))],
                  title=f"{label}（组里第 {k + 1} 份，最终答案 {r.final[i]}）"))

# %% [markdown]
# **为什么粗心之前那些做对的步骤，过程优势是负的？** 每步的优势是从这一步往后的累加 $A_{i,t} = \sum_{t' \ge t} \tilde r_{i,t'}$
# （reward-to-go），所以相邻两步之差就是这一步自己的标准化奖励：$\tilde r_{i,t} = A_{i,t} - A_{i,t+1}$。
# 同组几乎每一步都做对，平均值接近 1：做对的一步 $\tilde r$ 是一个小的正数，做错的一步是一个大的负数。
# 粗心之前的每一步，往后累加时都要加上那个大负数，所以 $A$ 是负的；粗心之后的步骤只累加小正数，$A$ 是正的。
#
# 这是 reward-to-go 的设计：一步的好坏用"从它往后发生了什么"来衡量。这些对的步骤并没有被单独判错，它们被后面的错误**牵连**了：
# 这一份样本里它们被往下推；但后面那一步粗心和这一步选了什么关系不大，在很多份样本上平均，这种牵连大体抵消，做对的步骤平均仍被往上推。
# 过程奖励减轻了信用分配的问题（粗心之后的步骤不再受牵连），但没有完全消除它。
#
# 看输出：粗心的那份解答每一步的 $\tilde r$（`process` 奖励），和它们从后往前的累加 $A$。

# %%
i = int(rows_g[one_slip[rows_g]][0])
k, n_steps = i - g * G, int(r.lengths[i])
a_row = A["process"][k, :n_steps]
r_tilde = a_row - np.append(a_row[1:], 0.0)                 # 这一步自己的标准化奖励
Table(["步", "值对吗", "r̃（这一步）", "A（往后累加）"],
      [[t + 1, "对" if r.step_ok[i, t] else "错", f"{r_tilde[t]:.3f}",
        f"{a_row[t]:.3f}"] for t in range(n_steps)])

# %% [markdown]
# 这不只是一份样本的偶然。期望奖励 $J$ 的**精确**梯度说明了平均会发生什么。沿正确路径，第 $t$ 步算对的概率是
# $s_t = \pi_{\text{correct}} + \pi_{\text{bug}}\,b_t$（$b_t = 1$ 表示这一步 bug 不咬人；写 $s_t$ 是因为 $r$ 留给奖励），它对 bug 的 logit 的导数是
#
# $$\frac{\partial s_t}{\partial z_{\text{bug}}} = \pi_{\text{bug}}\,b_t - s_t\,\pi_{\text{bug}} =
# \begin{cases} \pi_{\text{bug}}\,\pi_{\text{careless}} > 0, & b_t = 1 \text{（不咬人）}\\ -s_t\,\pi_{\text{bug}} < 0, & b_t = 0 \text{（咬人）}\end{cases}$$
#
# 所以结果奖励的真梯度在 bug 不咬人的情境里把 bug 的 logit **往上推**。看输出：`grad_expected_reward` 在留出题上算出的 $\partial J / \partial \Delta_{\text{bug}}$，每个情境的符号。

# %%
g_exact = grad_expected_reward(base, paths)
never_bites = [("add", 0.0), ("sub", 0.0), ("mul", 0.0), ("mul", 0.7)]
Table(["情境", "bug 咬人吗", "∂J/∂Δ_bug", "∂J/∂Δ_correct"],
      [[CONTEXT_NAMES[key], "不咬人" if key in never_bites else "咬人", f"{g_exact[j, 1]:+.5f}",
        f"{g_exact[j, 0]:+.5f}"]
       for j, key in enumerate(CONTEXTS)])

# %% [markdown]
# 往上推，但比 correct 推得少（$\pi_{\text{bug}}$ 比 $\pi_{\text{correct}}$ 小得多），所以 π(bug) 在这些情境里仍可能慢慢下降，只是没有人**专门**把它压下去。
#
# 现在用三种奖励各训练 GRPO 100 次迭代（结果奖励的那次就是第 3 节的）。看输出：留出题上的 pass@1，
# 以及两组情境里 π(bug) 的平均（按正确路径上的步数加权）。

# %%
reward_runs = {"outcome": (runs["grpo"], trained)}
for kind in ("process", "procedure"):
    m = base.copy(name=kind)
    reward_runs[kind] = (train(m, preset("grpo", iterations=iters, reward=kind), train_set, paths),
                         m)

visits = np.bincount(paths.ctx[paths.mask],
                     minlength=len(CONTEXTS))   # 每个情境在留出题的正确路径上出现几次
nb = np.array([CONTEXTS.index(key) for key in never_bites])
bt = np.array([j for j in range(len(CONTEXTS)) if j not in nb])


def mean_p_bug(model, idx):
    return visits[idx] @ prob_table(model)[idx, 1] / visits[idx].sum()


rows = [["训练前", start_pass, mean_p_bug(base, nb), mean_p_bug(base, bt)]]
rows += [[kind, h["pass1_exact"][-1], mean_p_bug(m, nb), mean_p_bug(m, bt)]
         for kind, (h, m) in reward_runs.items()]
Table(["奖励", "路径 pass@1", "π(bug)：不咬人的情境", "π(bug)：咬人的情境"], rows)

# %% [markdown]
# 看上表：
# - 三种奖励在 bug 会咬人的情境里都把 π(bug) 压得很低。
# - 在 bug 不咬人的情境里，`outcome` 和 `process` 留下的 π(bug) 比 `procedure` 高得多：它们分不清"做对"和"碰巧对"，只有按做法打分的 `procedure` 把 bug 压下去。
# - 每步打分的两种学得更快（pass@1 更高）：出错之后做对的步骤不再被牵连，信用分配得更准。
#
# 在这个玩具里，留下的"碰巧对的 bug"没有坏处（在这些情境里 bug 永远算对，所以 `process` 和 `procedure` 的 pass@1 差不多）。
# 真实模型没有这么整齐的情境划分，被强化的坏习惯可能泛化到它咬人的地方；而真实的过程奖励模型也远没有这里的完美。

# %% [markdown]
# ## 7. 同样多的样本：GRPO 和模仿自己
#
# 第 03 个 notebook 的专家迭代、STaR 也只用模型自己的样本。训练记录都有累计样本数 `samples`，可以放在同一根横轴上比较。
# 专家迭代每轮每道题采 8 份，跑 12 轮，总样本数和 GRPO 的 100 次迭代差不多（输出第一行）。STaR 每轮每题只采 1 份（加上提示后的重采）。
#
# 看图和表：同样的样本数下，谁的留出题 pass@1 更高。

# %%
ei = expert_iteration(base.copy(), train_set, paths, rounds=12, k=8, seed=3)
st = star(base.copy(), train_set, paths, rounds=12, seed=3)
print(f"样本数：专家迭代 12 轮 {ei['samples'][-1]} 份，STaR 12 轮 {st['samples'][-1]} 份，GRPO"
      f" {iters} 次迭代 {runs['grpo']['samples'][-1]} 份")

fig, ax = plt.subplots(figsize=(8, 4.5))
for name, h in (("GRPO", runs["grpo"]), ("REINFORCE", runs["reinforce"])):
    ax.plot([0] + h["samples"], [start_pass] + h["pass1_exact"], label=name)
for name, h in (("专家迭代（每轮 30 个 epoch）", ei), ("STaR（每轮从头）", st)):
    ax.plot([0] + h["samples"], [start_pass] + h["pass1_exact"], marker="o", label=name)
ax.set_xlabel("累计采样的解答数")
ax.set_ylabel("留出题上的路径 pass@1")
ax.set_title("同样多的样本：策略梯度和模仿自己")
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()
plt.show()

rows = []
for rnd in (1, 3, 6, 12):
    n = ei["samples"][rnd - 1]
    it = n // (cfg.batch_problems * cfg.group_size)
    rows.append([n, f"{runs['grpo']['pass1_exact'][it - 1]:.4f}",
                 f"{ei['pass1_exact'][rnd - 1]:.4f}",
                 it, rnd * ei.meta["config"]["epochs"]])
Table(["样本数", "GRPO", "专家迭代", "GRPO 的更新次数", "专家迭代的更新次数"], rows)

# %% [markdown]
# 看上表：在这个玩具的默认设置下，同样多的样本，专家迭代比 GRPO 高。最后两列说明了一部分原因：专家迭代每轮在同一批样本上做 30 步梯度上升，
# GRPO（$\mu = 1$）每批样本只用一次。GRPO 也可以在一批样本上多走几步（$\mu > 1$，PPO 式的更新，需要裁剪），那是第 06 个 notebook 的内容。
#
# 专家迭代只从做对的样本学，相当于不减基线的 REINFORCE（第 03 个 notebook 第 2 节），
# 所以它也有第 6 节的问题：分不清碰巧对的 bug 步。STaR 每轮从原始模型重新微调，在这个玩具里停在第一轮附近（第 03 个 notebook 第 3 节）。

# %% [markdown]
# ## 小结
#
# - REINFORCE、RLOO、GRPO 是同一个循环，只差优势：$r_i$、$r_i - \frac{1}{G-1}\sum_{j\ne i} r_j$、$(r_i - \bar r)/(\operatorname{std}+\epsilon)$。带基线的优势每组加起来是 0。
# - 基线不改变期望。它是否减小方差要看任务：这个玩具的 0/1 奖励下，做错的解答得分向量更长，不减基线的相对方差反而最小；奖励的零点一变，不减基线的方差就跟着变，带基线的不受影响。
# - 同样多的样本、同样的学习率，GRPO 比 REINFORCE、RLOO 快；把学习率按梯度长度对齐以后，三者几乎一样。
# - 奖励全相同的组没有梯度；模型越强，这样的组越多，白采的样本越多。
# - 结果奖励和只看数值的过程奖励都分不清"碰巧对的 bug"：在 bug 不咬人的情境里，真梯度还把它往上推；只有按做法打分才能把它压下去。
# - 同样多的样本，在这个玩具的默认设置下，专家迭代比 GRPO（$\mu = 1$）高，因为它在每批样本上做多步更新。
#
# ## 试一试
#
# 1. 第 2 节把 `G, reps = 8, 300` 改成 `G, reps = 2, 1200`（样本总数不变，组更小）；或者把那一节的 `base` 都换成 `TrainableLLM(1e11)`（做对的更多）：哪一种优势的相对方差最小？
# 2. 第 3 节给三个预设都加上 `optimizer="adam", lr=0.05`：GRPO 还领先吗？
# 3. 第 6 节把 `preset("grpo", ..., reward=kind)` 换成 `preset("reinforce", ..., reward=kind)`：不减基线时，过程奖励还有优势吗？
