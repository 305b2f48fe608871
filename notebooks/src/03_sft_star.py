# %% [markdown]
# # 03 · SFT 与 STaR
#
# **你将学到**
# - SFT（监督微调）：用一个更大的模型写的示范解答训练小模型，对数似然怎样一个 epoch 一个 epoch 地上升，每个情境学到了什么；
# - 拒绝采样微调（RFT）：没有老师，就让模型自己做题，只留下做对的解答再做 SFT；去重成"不同的做法序列"是什么意思；
# - 专家迭代（expert iteration）：把"采样 → 过滤 → 微调"重复几轮，每一轮的留出题路径 pass@1；
# - STaR 和它的"合理化"（rationalisation）：做不出来的题，带着答案再做一遍；
# - "答案对、过程错"：一份做对的解答里可能有一步用了错误观念（bug），只是它恰好没咬人；模仿做对的解答时，这一步也被模仿了。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 5 节（模仿自己：SFT、STaR、拒绝采样微调、专家迭代）。

# %% [markdown]
# 先导入要用的东西。`%matplotlib inline` 让图显示在 notebook 里，`use_chinese_font()` 让图里的中文正常显示。
#
# 题目用 `toyllm.rl.default_problems` 的两批：256 道**训练题**和 200 道**留出题**（互不相同，3~8 步）。
# 所有训练都只看训练题；效果一律用留出题上的**精确** pass@1 衡量（`exact_pass_at_1`，不采样，没有噪声）。
#
# 看输出：两批题的数量，和 1B 学生模型训练前的路径 pass@1。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from toyllm import (CONTEXT_NAMES, CONTEXTS, OP_SYMBOLS, PROCEDURE_NAMES, PROCEDURES, ToyLLM,
                    TrainableLLM, apply_op,
                    bug_bites, log_likelihood, sft)
from toyllm.exact import exact_pass_at_1
from toyllm.imitation import (distinct_mask, expert_iteration, hinted_rollouts,
                              rejection_sampling_ft,
                              rollouts_to_data, sft_counts, sft_rollouts, star, step_counts)
from toyllm.plots import plot_context_bars
from toyllm.plotstyle import use_chinese_font
from toyllm.policy import prob_table
from toyllm.rl import default_problems, score_vectors
from toyllm.sampler import sample_rollouts
from toyllm.tables import Table

use_chinese_font()
np.set_printoptions(precision=4, suppress=True)

train_set, heldout = default_problems(seed=0)
base = TrainableLLM(1e9, name="1B")                   # 训练前的学生（Δ = 0），以后每次都从它复制
start_pass = exact_pass_at_1(base, heldout)
print(f"训练题 {len(train_set)} 道，留出题 {len(heldout)} 道")
print(f"1B 学生训练前，留出题上的路径 pass@1 = {start_pass:.4f}")

# %% [markdown]
# ## 1. SFT：模仿一个更大的模型
#
# 老师是 100B 的 `ToyLLM`。让它把每道训练题做 2 遍，得到 512 份**示范**（不管做对做错都留下：SFT 只管"像老师"）。
# `sample_rollouts` 一次做完所有题，结果是一堆 numpy 数组；`rollouts_to_data` 把它变回 `toyllm.sft` 吃的格式：一列 (题目, 解答)。
#
# 看输出：老师的示范有多少是做对的；第一份示范每一步的做法。

# %%
teacher = ToyLLM(1e11)
demos = sample_rollouts(teacher, train_set, 2, np.random.default_rng(0))
data = rollouts_to_data(train_set, demos)
print(f"老师 {teacher.name}：{len(data)} 份示范，其中做对的 {demos.correct.mean():.1%}，"
      f"一共 {int(demos.mask.sum())} 步")
problem, sample = data[0]
print("第一份示范：", problem, "=", problem.answer)
print("  写下的值：", sample.values)
print("  每一步的做法：", " / ".join(PROCEDURE_NAMES[p] for p in sample.procs))

# %% [markdown]
# SFT 最大化示范里每一步的平均对数似然（$N$ 是示范的总步数，$c$ 是情境，$a$ 是老师在这一步选的做法）：
#
# $$\mathcal{L}(\Delta) = \frac{1}{N}\sum_{(c,\,a)\in\text{示范}} \log \pi_\Delta(a \mid c).$$
#
# 由第 02 个 notebook，每一步的梯度是 $e_a - \pi(\cdot \mid c)$。同一情境的步共享同一个 $\pi_c$，所以可以按情境合并：
#
# $$\nabla_{\Delta_c}\mathcal{L} = \frac{1}{N}\Big(n_{c,\cdot} - n_c\,\pi_c\Big),$$
#
# $n_{c,a}$ 是示范里"在情境 $c$ 选了 $a$"的次数（`step_counts` 算出的 (12, 3) 数组），$n_c = \sum_a n_{c,a}$。
# `toyllm.sft` 逐步累加，`toyllm.imitation.sft_counts` 按情境合并，快得多。每个 epoch 做一步梯度上升：$\Delta \leftarrow \Delta + \text{lr}\cdot\nabla\mathcal{L}$，lr = 2。
#
# 看输出：两种写法各做一个 epoch，得到的参数是否相同。

# %%
counts = step_counts(demos.ctx, demos.actions, demos.mask)      # (12, 3)：n_{c,a}
slow, fast = base.copy(), base.copy()
sft(slow, data, epochs=1, lr=2.0)                                # 逐步的写法（参考模块）
sft_counts(fast, counts, epochs=1, lr=2.0)                       # 按情境合并的写法
print("一个 epoch 以后两者的参数相同：", np.allclose(slow.params, fast.params, rtol=0, atol=1e-12))


# %% [markdown]
# 现在用快的写法训练 200 个 epoch，每个 epoch 以后记下平均对数似然 $\mathcal{L}$。
#
# $\mathcal{L}$ 有一个上限：每个情境的参数各自独立，所以最好的情况是 $\pi_c$ 恰好等于示范里的频率 $n_{c,a}/n_c$，
# 此时 $\mathcal{L} = \frac1N\sum_{c,a} n_{c,a}\log(n_{c,a}/n_c)$。图里画出这个上限，和老师自己在这些示范上的 $\mathcal{L}$。
#
# 看图：曲线一直上升，越来越慢；它会超过老师自己的值，逼近上限。

# %%
def mean_log_lik(model, counts):
    """平均每步对数似然 (1/N) Σ n_{c,a} log π(a|c)：和 toyllm.log_likelihood 相同，但按情境合并。"""
    return float((counts * np.log(prob_table(model))).sum() / counts.sum())


freq = counts / counts.sum(axis=1, keepdims=True)
ceiling = float((counts * np.log(np.where(counts > 0, freq, 1.0))).sum() / counts.sum())
student = base.copy(name="1B + SFT")
curve = [mean_log_lik(student, counts)]
for epoch in range(200):
    sft_counts(student, counts, epochs=1, lr=2.0)
    curve.append(mean_log_lik(student, counts))

print(f"训练前 {curve[0]:.4f}；第 10 个 epoch {curve[10]:.4f}；第 50 个 {curve[50]:.4f}；第 200 个"
      f" {curve[200]:.4f}")
print(f"老师自己：{mean_log_lik(teacher, counts):.4f}；上限（示范里的频率）：{ceiling:.4f}")
print("和 toyllm.log_likelihood 逐步算的相同"
      f"：{abs(log_likelihood(student, data) - curve[-1]) < 1e-9}")

fig, ax = plt.subplots(figsize=(7, 4.5))
ax.plot(range(len(curve)), curve, label="1B 学生")
ax.axhline(mean_log_lik(teacher, counts), color="C1", linestyle="--",
           label=f"老师 {teacher.name} 自己")
ax.axhline(ceiling, color="C2", linestyle=":", label="上限：π 等于示范里的频率")
ax.set_xlabel("epoch")
ax.set_ylabel("示范上的平均每步对数似然")
ax.set_title("SFT：对数似然随 epoch 上升")
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# 学生为什么能比老师自己还"像"这些示范？因为它学的是**这 512 份示范里的频率**，包括偶然的波动，而不是老师真正的概率。
#
# 每个情境到底变了什么？`toyllm.plots.plot_context_bars` 画出训练前后每个情境选「正确」的概率。
# 下面的表再加两列：示范里选「正确」的频率，和老师真正的概率。
#
# 看图和表：学生在每个情境都向"示范频率"靠拢。示范频率和老师真正的概率之间有采样误差，学生跟着的是频率；
# 输出的最后一行指出两者差得最多的情境。

# %%
ax = plot_context_bars(base, student, labels=("SFT 前", "SFT 后（200 个 epoch）"),
                       title="SFT：每个情境选「正确」的概率")
ax.figure.tight_layout()
plt.show()

p_before, p_after = prob_table(base)[:, 0], prob_table(student)[:, 0]
p_teacher = prob_table(teacher)[:, 0]
display(Table(["情境", "示范步数", "SFT 前", "SFT 后", "示范频率", "老师"],
              [[CONTEXT_NAMES[key], int(counts[j].sum())]
               + [f"{x:.3f}" for x in (p_before[j], p_after[j], freq[j, 0], p_teacher[j])]
               for j, key in enumerate(CONTEXTS)]))
gap = int(np.argmax(np.abs(freq[:, 0] - p_teacher)))
print(f"\n示范频率和老师差得最多的情境：{CONTEXT_NAMES[CONTEXTS[gap]]}（{int(counts[gap].sum())}"
      " 步）："
      f"频率 {freq[gap, 0]:.3f}，老师 {p_teacher[gap]:.3f}，SFT 后的学生 {p_after[gap]:.3f}")

# %% [markdown]
# 最后看留出题：SFT 学的是情境的概率，情境在所有题之间共享，所以没见过的题也变好了。
#
# 看输出：学生 SFT 前后的路径 pass@1，和老师的路径 pass@1。

# %%
print(f"留出题上的路径 pass@1：学生 SFT 前 {start_pass:.4f} → SFT 后"
      f" {exact_pass_at_1(student, heldout):.4f}；"
      f"老师 {exact_pass_at_1(teacher, heldout):.4f}")

# %% [markdown]
# ## 2. 拒绝采样微调（RFT）：只模仿自己做对的
#
# 没有老师怎么办？让学生自己做题，**只留下做对的**解答，在这些解答上做 SFT。这就是拒绝采样微调（Yuan et al. 2023）[S549](../lectures/sources.md#S549)。
#
# 每道训练题做 $k = 8$ 遍。RFT 论文还会**去重**[S549](../lectures/sources.md#S549)：同一道题里做法序列完全相同的解答只留一份
# （`distinct_mask`；在玩具里，"推理路径"就是每一步选了 correct / bug / careless 的序列）。
#
# 看输出：一共多少份、做对多少份、去重以后剩多少份；有多少道题至少做对了一次。

# %%
k = 8
own = sample_rollouts(base, train_set, k, np.random.default_rng(1))
kept = own.correct
distinct = distinct_mask(own, own.correct)
solved = np.zeros(len(train_set), bool)
solved[own.problem[own.correct]] = True
print(f"{len(train_set)} 道题 × {k} 遍 = {len(own)} 份解答")
print(f"做对的：{kept.sum()} 份（{kept.mean():.1%}）；去重以后：{distinct.sum()} 份")
print(f"至少做对一次的题：{solved.sum()} / {len(train_set)}")

# %% [markdown]
# 在留下的解答上做 SFT（`sft_rollouts`，默认 30 个 epoch、lr = 2，和 `toyllm.sft` 相同）。不去重、去重各做一次。
# `rejection_sampling_ft` 把"采样 → 过滤 → SFT"打包成一个函数：同一个种子，它应当给出一模一样的模型。
#
# 看输出：两种做法的留出题路径 pass@1；打包的函数是否和手写的一致。

# %%
rft = base.copy(name="RFT")
sft_rollouts(rft, own, keep=kept)
rft_dedup = base.copy(name="RFT（去重）")
sft_rollouts(rft_dedup, own, keep=distinct)
print(f"留出题上的路径 pass@1：训练前 {start_pass:.4f}")
print(f"  RFT（不去重）：{exact_pass_at_1(rft, heldout):.4f}")
print(f"  RFT（去重）：  {exact_pass_at_1(rft_dedup, heldout):.4f}")

packed = base.copy()
hist = rejection_sampling_ft(packed, train_set, heldout, k=k, dedup=True, seed=1)
print("rejection_sampling_ft(dedup=True, seed=1) 和手写的结果相同：",
      np.array_equal(packed.params, rft_dedup.params))

# %% [markdown]
# **RFT 和强化学习的关系。** 奖励 $R(o) \in \{0, 1\}$（答案对不对）。$N$ 份解答都由当前模型采样，做对的那些一共 $T_{\text{对}}$ 步。
# SFT 按**步**平均，所以只在做对的解答上做 SFT 时，梯度是
#
# $$g_{\text{SFT}} = \frac{1}{T_{\text{对}}}\sum_{o:\,R(o)=1}\nabla \log \pi_\Delta(o)
# = \frac{N}{T_{\text{对}}}\cdot\frac{1}{N}\sum_{o} R(o)\,\nabla \log \pi_\Delta(o)
# = \frac{N}{T_{\text{对}}}\,\hat g_{\text{REINFORCE}} .$$
#
# 右边的 $\hat g_{\text{REINFORCE}}$ 是**不减基线**的 REINFORCE 估计（第 05 个 notebook）。所以确切的关系是：
# - 同一批样本上，第一步 SFT 的方向和不减基线的 REINFORCE 相同，长度乘了 $N/T_{\text{对}}$。这个因子随批次变（正确率越低越大），不是常数；
# - 只有第一步是这样：SFT 在同一批数据上做 30 步梯度上升，从第二步起模型已经不是采样它们的那个模型了；
# - 做错的解答完全不参与，没有"把错的推下去"的信号。
#
# 看输出：在上面的样本上，一个 epoch、学习率 1 的 SFT 更新，和 $\frac{N}{T_{\text{对}}}\hat g_{\text{REINFORCE}}$ 是否相同。

# %%
one_step = base.copy()
sft_rollouts(one_step, own, keep=kept, epochs=1, lr=1.0)
g_sft = one_step.params - base.params
g_reinforce = (own.correct[:, None, None] * score_vectors(own)).mean(axis=0)
n_total, t_correct = len(own), int(own.mask[own.correct].sum())
print(f"N = {n_total} 份，做对的共 T_对 = {t_correct} 步，N / T_对 = {n_total / t_correct:.4f}")
print("一步 SFT == (N / T_对) × 不减基线的 REINFORCE 估计：",
      np.allclose(g_sft, n_total / t_correct * g_reinforce, rtol=0, atol=1e-12))

# %% [markdown]
# ## 3. 专家迭代：重复几轮
#
# 一轮 RFT 以后，模型变强了，再用它采样，能做对更多的题，得到更多、更好的数据。重复几轮，就是**专家迭代**
# （`expert_iteration`）。每一轮有两种选择：
# - `restart=False`：在上一轮的模型上继续微调；
# - `restart=True`：每轮都从**原始模型**重新微调（只是数据来自最新的模型，STaR 论文的做法）[S548](../lectures/sources.md#S548)。
#
# 两种各跑 6 轮，每轮每道题采样 8 份。看表：每一轮以后留出题上的路径 pass@1。

# %%
rounds = 6
ei = {}
for restart in (False, True):
    model = base.copy()
    ei[restart] = expert_iteration(model, train_set, heldout, rounds=rounds, k=8, restart=restart,
                                   seed=2)

rows = [[0, 0, "", f"{start_pass:.4f}", "", f"{start_pass:.4f}"]]
rows += [[i + 1, ei[False]["samples"][i], ei[False]["kept"][i],
          f"{ei[False]['pass1_exact'][i]:.4f}",
          ei[True]["kept"][i], f"{ei[True]['pass1_exact'][i]:.4f}"] for i in range(rounds)]
Table(["轮次", "累计样本", "继续：保留", "继续：路径 pass@1", "从头：保留", "从头：路径 pass@1"],
      rows)

# %% [markdown]
# 看上表：继续训练时，pass@1 一轮比一轮高，留下的样本也越来越多；每轮从头开始时，第一轮以后几乎不再上升。
#
# 原因在这个玩具的 SFT：每轮固定做 30 个 epoch，梯度是数据上的**平均**，数据再多，从原始模型出发也只能走这么远；
# 新数据只比上一轮的"好一点"，所以每轮从头训练得到的模型也差不多。
# 继续训练则把每一轮的 30 步累加起来。（每轮从头训练时，训练量不随轮数累加；试一试里可以把 `epochs` 调大。）

# %% [markdown]
# ## 4. STaR：做不出来的题，带着答案再做一遍
#
# STaR（Zelikman et al. 2022）每一轮[S547](../lectures/sources.md#S547)：每道题做一遍（这里 $k = 1$）；做对的留下；**做错的题，把正确答案当作提示，再做一遍**（"合理化"），做对了也留下；
# 从原始模型开始 SFT；重复。
#
# 玩具没有提示词。`hinted_rollouts` 这样模拟"知道答案"：每一步检查"用这种做法算完，结果还在正确路径上吗"，
# 在路上的做法 logit 加一个常数 $b_{\text{hint}}$（参数 `hint_boost`）：
#
# $$z'_j = z_j + b_{\text{hint}}\cdot \mathbb{1}\big[\text{做法 } j \text{ 算出的值} = \text{这一步的正确中间值}\big].$$
#
# correct 总被加分；bug 只在它恰好不咬人时被加分；careless 永远不加分。
#
# 先看提示有多大用：取学生做错的题（每题做 1 遍），带着不同强度的提示各做 4 遍。看输出：提示越强，做对的比例越高；`hint_boost = 0` 就是不给提示。

# %%
first = sample_rollouts(base, train_set, 1, np.random.default_rng(3))
failed = [train_set[i] for i in np.flatnonzero(~first.correct)]
print(f"学生做 1 遍，做错了 {len(failed)} / {len(train_set)} 道题。在这些题上带着提示各做 4 遍：")


def hinted_share(boost):
    """加提示 hint_boost 以后，4 份重做里做对的比例。"""
    rollouts = hinted_rollouts(base, failed, 4, np.random.default_rng(4), hint_boost=boost)
    return rollouts.correct.mean()


Table(["hint_boost", "做对的比例"],
      [[str(boost), f"{hinted_share(boost):.3f}"] for boost in (0.0, 1.0, 3.0, 6.0)])

# %% [markdown]
# 现在跑 STaR（`star`，默认 `hint_boost = 3`、每轮从原始模型开始），合理化打开和关闭各一次，每次 6 轮。
# 表里的"提示后做对"是每一轮靠提示才做对、被加进训练数据的份数；"累计样本"把提示后的采样也算进去。
#
# 看表：合理化让每轮的训练数据多出一些原本做不出来的题；pass@1 有没有因此更高。

# %%
star_hist = {}
for rationalize in (True, False):
    model = base.copy()
    star_hist[rationalize] = star(model, train_set, heldout, rounds=rounds, rationalize=rationalize,
                                  seed=5)

for rationalize, name in ((True, "STaR（合理化）"), (False, "STaR（不合理化）")):
    print(name)
    display(star_hist[rationalize].table(columns=["iteration", "samples", "kept", "rationalized",
                                                  "pass1_exact"]))
last = {r: star_hist[r]["pass1_exact"][-1] for r in (True, False)}
print(f"第 {rounds} 轮以后的路径 pass@1：合理化 {last[True]:.4f}，不合理化 {last[False]:.4f}，差"
      f" {last[True] - last[False]:+.4f}")

# %% [markdown]
# 把这一节的四种做法画在一起，横轴是**累计采样的解答数**（这样不同方法花的采样才好比较；第 05 个 notebook 还会拿 GRPO 来比）。
#
# 看图：只有"继续训练"的专家迭代一路上升；每轮从头开始的两种（专家迭代 `restart=True` 和 STaR）都在第一轮附近停住了。
# STaR 每轮每题只采 1 份，所以同样的轮数花的样本少得多。

# %%
fig, ax = plt.subplots(figsize=(7.5, 4.5))
runs = [("专家迭代（继续）", ei[False]), ("专家迭代（每轮从头）", ei[True]),
        ("STaR（合理化）", star_hist[True]), ("STaR（不合理化）", star_hist[False])]
for name, h in runs:
    ax.plot([0] + list(h["samples"]), [start_pass] + list(h["pass1_exact"]), marker="o", label=name)
ax.set_xlabel("累计采样的解答数")
ax.set_ylabel("留出题上的路径 pass@1")
ax.set_title("模仿自己：每一轮以后的路径 pass@1")
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 5. 答案对，过程错
#
# 回到第 2 节的 2048 份解答。有些做对的解答里，某一步用的是**错误观念**（bug）：只是那一步 bug 恰好不咬人
# （加法没有进位、减法不用借位、乘法只乘一位数），写下的值碰巧是对的。
#
# 看输出：这样的解答有多少份；其中第一份的逐步表格。注意"做法"一列里的「错误观念」，和它那一行的"bug 咬人吗"（这一步如果用 bug，结果会不会错）。

# %%
bug_step = (own.actions == 1) & own.mask
lucky = own.correct & bug_step.any(axis=1)
print(f"做对的 {kept.sum()} 份里，有 {lucky.sum()} 份至少用了一次错误观念"
      f"（{lucky.sum() / kept.sum():.1%}）")
print(f"去重以后的 {distinct.sum()} 份里，有 {(lucky & distinct).sum()} 份"
      f"（{(lucky & distinct).sum() / distinct.sum():.1%}）")
print()

i = int(np.flatnonzero(lucky)[0])
problem = train_set[own.problem[i]]
print("题目：", problem, "=", problem.answer, "    学生的答案：", own.final[i], "（做对了）")
rows, x = [], problem.start
for t, step in enumerate(problem.steps):
    rows.append([t + 1, f"{x} {OP_SYMBOLS[step.op]} {step.operand}",
                 CONTEXT_NAMES[CONTEXTS[own.ctx[i, t]]],
                 PROCEDURE_NAMES[PROCEDURES[own.actions[i, t]]], int(own.values[i, t]),
                 apply_op(step.op, x, step.operand, "correct"),
                 "咬人" if bug_bites(step.op, x, step.operand) else "不咬人"])
    x = int(own.values[i, t])
Table(["步", "这一步", "情境", "做法", "写下的值", "正确值", "bug 咬人吗"], rows)

# %% [markdown]
# 只看答案的过滤器分不清这一步是"算对了"还是"碰巧对了"。SFT 把它和其他步一样当作示范：这一步的梯度是 $e_{\text{bug}} - \pi$，**把 bug 往上推**。
#
# 在 bug 从不咬人的情境里，过滤只去掉了粗心（粗心一定错），correct 和 bug 都留下。沿正确路径，留下的步里 bug 的比例的期望是
#
# $$\frac{\pi_{\text{bug}}}{\pi_{\text{correct}} + \pi_{\text{bug}}} \;\ge\; \pi_{\text{bug}},$$
#
# 比模型原来的 $\pi_{\text{bug}}$ 还大一点，所以模仿做对的解答**不会**在这些情境里改掉 bug。
# 在 bug 会咬人的情境里，用了 bug 的解答几乎都错了，被过滤掉，留下的步里 bug 的比例接近 0。
#
# 去重把这件事放大：每道题"全部用 correct"的那条路径只留一份，而 bug 每出现在一个不同的位置，就是一条**不同的**路径，都留下。
#
# 看表：前 4 行是 bug 不咬人的情境，后 8 行是会咬人的情境。对比"模型 π_bug"、期望值、不去重和去重的数据里 bug 的比例，
# 以及 SFT 以后的 π(bug)。

# %%
never_bites = [("add", 0.0), ("sub", 0.0), ("mul", 0.0), ("mul", 0.7)]
order = ([CONTEXTS.index(key) for key in never_bites]
         + [j for j, key in enumerate(CONTEXTS) if key not in never_bites])
pi0, pi_rft, pi_dedup = prob_table(base), prob_table(rft), prob_table(rft_dedup)


def bug_share(keep):
    """留下的解答里，每个情境的步有多少比例是 bug：(12,)。"""
    c = step_counts(own.ctx, own.actions, own.mask & keep[:, None])
    return c[:, 1] / np.maximum(c.sum(axis=1), 1)


share_kept, share_dedup = bug_share(kept), bug_share(distinct)
Table(["情境", "模型π_bug", "期望值", "数据:不去重", "数据:去重", "RFT后", "RFT去重后"],
      [[CONTEXT_NAMES[CONTEXTS[j]], f"{pi0[j, 1]:.3f}",
        f"{pi0[j, 1] / (pi0[j, 0] + pi0[j, 1]):.3f}" if n < len(never_bites) else "—"]
       + [f"{x:.3f}" for x in (share_kept[j], share_dedup[j], pi_rft[j, 1], pi_dedup[j, 1])]
       for n, j in enumerate(order)])

# %% [markdown]
# 把 π(bug) 的变化画出来（左边 4 个情境 bug 不咬人，右边 8 个会咬人）。
#
# 看图：在会咬人的情境里，两种 RFT 都把 π(bug) 压低了很多；在不咬人的情境里，不去重的 RFT 只让 π(bug) 变了一点，去重的 RFT 把它**抬高**了。
# 图下的输出把两组情境各自合在一起（按 2048 份解答里的步数加权），看 π(bug) 变成了原来的几倍。

# %%
fig, ax = plt.subplots(figsize=(11, 4.5))
xs = np.arange(len(order))
for shift, (name, table) in zip((-0.27, 0.0, 0.27),
                                (("训练前", pi0), ("RFT", pi_rft), ("RFT（去重）", pi_dedup))):
    ax.bar(xs + shift, table[order, 1], width=0.27, label=name)
ax.axvline(len(never_bites) - 0.5, color="0.4", linewidth=1, linestyle="--")
ax.set_xticks(xs)
ax.set_xticklabels([CONTEXT_NAMES[CONTEXTS[j]] for j in order], rotation=35, ha="right")
ax.set_ylabel("π(选「错误观念」)")
ax.set_title("模仿做对的解答：bug 不咬人的情境（虚线左边）里，bug 没有被改掉")
ax.legend()
fig.tight_layout()
plt.show()

visits = step_counts(own.ctx, own.actions,
                     own.mask).sum(axis=1)       # 每个情境在 2048 份解答里出现了几步
groups = (("bug 不咬人的 4 个情境", order[:len(never_bites)]),
          ("bug 会咬人的 8 个情境", order[len(never_bites):]))
for group, idx in groups:
    w = visits[idx] / visits[idx].sum()
    before = w @ pi0[idx, 1]
    changes = "；".join(f"{name} {w @ table[idx, 1]:.4f}（{w @ table[idx, 1] / before:.2f} 倍）"
                       for name, table in (("RFT", pi_rft), ("RFT（去重）", pi_dedup)))
    print(f"{group}，π(bug) 的加权平均：训练前 {before:.4f} → {changes}")

# %% [markdown]
# 不去重时 π(bug) 在不咬人的情境里略有下降，不是因为数据在"反对" bug（表里"数据:不去重"一列和"模型π_bug"只差采样噪声），
# 而是因为 30 步梯度上升先把粗心让出来的概率大多给了 correct。对比会咬人的情境，那里数据里的 bug 是 0，π(bug) 降得多得多。
#
# 在这个玩具里，被强化的"碰巧对的 bug"没有坏处：在这 4 个情境里 bug 永远算对，路径 pass@1 也把它算作做对。
# 真实的模型没有这么整齐的"情境"：被强化的坏习惯会泛化到它咬人的地方。第 05 个 notebook 会看到，结果奖励的强化学习也有同样的问题（"信用分配"，credit assignment），
# 只有按**做法**打分的过程奖励才能把它分出来。

# %% [markdown]
# ## 小结
#
# - SFT 最大化示范的平均对数似然，梯度按情境合并是 $\frac1N(n_{c,\cdot} - n_c\pi_c)$。对数似然一个 epoch 一个 epoch 地上升，逼近"π 等于示范频率"的上限：学生学的是**示范里的频率**（包括老师的错误和偶然的波动）。
# - 情境在题目之间共享，所以 SFT 也提高了留出题上的 pass@1。
# - 拒绝采样微调只模仿自己做对的解答，相当于不减基线的 REINFORCE；去重只留不同的做法序列。
# - 专家迭代在上一轮的模型上继续训练时，一轮比一轮好；每轮从原始模型重新训练（STaR 的做法）时，这个玩具里的固定 30 个 epoch 让提升停在第一轮附近。
# - STaR 的合理化让做不出来的题也提供数据；提示只看数值，分不清"做对"和"碰巧对"。
# - "答案对、过程错"：只看答案的过滤留下了碰巧没咬人的 bug 步；在 bug 不咬人的情境里，模仿做对的解答不会改掉 bug，去重还会把 π(bug) 抬高。
#
# ## 试一试
#
# 1. 第 1 节把老师换成 `ToyLLM(1e12)`，或者每道题只要 1 份示范：示范少的情境，学生和老师差得更多吗？
# 2. 第 3 节把 `expert_iteration(..., restart=True)` 的 `epochs` 改成 150：每轮从头训练还会停在第一轮附近吗？
# 3. 第 4 节把 `hint_boost` 改成 10，数一数提示后**做对**的解答里有多少步用了 bug（`hinted.actions == 1`）：提示越强，"碰巧对的 bug"多了还是少了？
