# %% [markdown]
# # 02 · 梯度推导
#
# **你将学到**
# - 手推 $\log \operatorname{softmax}$ 的梯度：$\dfrac{\partial \log \pi_a}{\partial z_j} = \mathbb{1}[j=a] - \pi_j$，再用有限差分验证它；
# - 从一步到一整份解答：整份解答的对数概率是各步之和，梯度也是各步之和；
# - 为什么所有题目共享同一组情境参数：在一道题上学到的，会用到所有有同一情境的题上（泛化）；
# - 期望奖励的**精确**梯度和 REINFORCE 的**采样估计**；
# - 基线（baseline）为什么不改变估计的期望；它怎样影响方差，为什么它让估计不再依赖奖励的"零点"。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 4 节（log softmax 的梯度、策略梯度）；
# 情境与共享参数见第 3 节。

# %% [markdown]
# 先导入要用的东西。`%matplotlib inline` 让图显示在 notebook 里，`use_chinese_font()` 让图里的中文正常显示。

# %%
# %matplotlib inline
import math
import random

import matplotlib.pyplot as plt
import numpy as np

from toyllm import (CONTEXT_NAMES, CONTEXTS, PROCEDURE_NAMES, PROCEDURES, TrainableLLM, add_grad,
                    apply_grads,
                    context_key, log_likelihood, make_problem, make_problem_set, pad, probs_for,
                    step_records)
from toyllm.exact import correct_paths, exact_pass_at_1, expected_reward, grad_expected_reward
from toyllm.gradcheck import compare_grads, finite_difference_grad
from toyllm.plots import plot_context_bars
from toyllm.plotstyle import use_chinese_font
from toyllm.policy import base_logit_table, prob_table, softmax_rows
from toyllm.rl import group_advantages, policy_loss, preset
from toyllm.sampler import prepare_problems, sample_rollouts
from toyllm.tables import Table

use_chinese_font()
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. 一步：$\log \operatorname{softmax}$ 的梯度
#
# 在情境 $c$ 里，三种做法（correct、bug、careless）的 logits 是 $z = z^{\text{base}}_c + \Delta_c$，其中 $z^{\text{base}}_c$ 是第 1 讲的公式，
# $\Delta_c$ 是这个情境可以学习的 3 个偏移量。选做法 $a$ 的概率是
#
# $$\pi_a = \frac{e^{z_a}}{\sum_k e^{z_k}}, \qquad \log \pi_a = z_a - \log \sum_k e^{z_k}.$$
#
# 对 $z_j$ 求导，分两项：
# - 第一项 $z_a$ 对 $z_j$ 的导数：$j = a$ 时是 1，否则是 0，记作 $\mathbb{1}[j=a]$；
# - 第二项用链式法则：$\dfrac{\partial}{\partial z_j} \log \sum_k e^{z_k} = \dfrac{e^{z_j}}{\sum_k e^{z_k}} = \pi_j$。
#
# 所以
#
# $$\boxed{\frac{\partial \log \pi_a}{\partial z_j} = \mathbb{1}[j=a] - \pi_j}
# \qquad\text{写成向量：}\qquad \nabla_z \log \pi_a = e_a - \pi,$$
#
# $e_a$ 是第 $a$ 个位置为 1 的向量（one-hot）。$z^{\text{base}}_c$ 不依赖 $\Delta$，所以对 $\Delta_c$ 的梯度也是 $e_a - \pi$。
# 这正是 `add_grad(grads, key, action, probs, weight)` 累加的量（乘以权重 `weight`）。
#
# 两个以后要用的性质：
# 1. 三个分量加起来是 $1 - \sum_j \pi_j = 0$：把一个情境的三个 $\Delta$ 同时加同一个数，概率不变。
# 2. 按 $\pi$ 取期望是 0：$\sum_a \pi_a (e_a - \pi) = \pi - \pi = 0$。基线（第 6 节）靠的就是它。

# %% [markdown]
# 现在用数字检查。取一个 1B 模型，给它一组随机的 $\Delta$（免得恰好在 0 这个特殊点上），看"乘两位数"这个情境。
#
# 对每种做法 $a$，比较两种算法：`add_grad` 给出的 $e_a - \pi$，和中心差分 $\big[f(\Delta + h) - f(\Delta - h)\big] / 2h$（`toyllm.gradcheck.finite_difference_grad`），
# 其中 $f(\Delta) = \log \pi_a$。中心差分不用任何公式，只需要能算函数值。
#
# 看输出：每一行的两组数是否相同，"最大差异"有多小；最后两行是上面的两个性质。

# %%
model = TrainableLLM(1e9)
model.params[:] = np.random.default_rng(0).normal(0.0, 0.5, size=model.params.shape)
key = ("mul", 1.5)
row = CONTEXTS.index(key)
base = base_logit_table(model.size)                           # (12, 3)：Δ = 0 时的 logits
probs = prob_table(model)[row]                                # 这个情境的 π
print(f"情境：{CONTEXT_NAMES[key]}，π = {probs}")
print()

def log_pi(params, a):
    """f(Δ) = log π_a：用 Δ = params 算出这个情境的 softmax，取第 a 个的对数。"""
    return math.log(softmax_rows(base + params)[row, a])


grads_by_action = []
for a in range(3):
    grads = {}
    add_grad(grads, key, a, probs, 1.0)                                              # 公式：e_a − π
    fd = finite_difference_grad(lambda params: log_pi(params, a), model.params)[row]  # 有限差分
    grads_by_action.append(np.array(grads[key]))
    diff = np.abs(fd - grads[key]).max()
    print(f"a = {pad(PROCEDURE_NAMES[PROCEDURES[a]], 10)}公式 {np.array(grads[key])}   有限差分"
          f" {fd}   "
          f"最大差异 {'< 1e-9' if diff < 1e-9 else f'{diff:.1e}'}")

print()
print("性质 1，每个梯度三个分量之和：", np.round([g.sum() for g in grads_by_action], 12) + 0.0)
print("性质 2，按 π 取期望 Σ_a π_a (e_a − π)：",
      np.round(sum(p * g for p, g in zip(probs, grads_by_action)), 12) + 0.0)

# %% [markdown]
# 有限差分本身有很小的误差（来自 $h^2$ 和浮点舍入），所以两者不是逐位相同，只是差异很小。
# 具体差多少（$10^{-10}$ 左右）和机器的浮点运算细节有关，所以这里只打印它的量级。性质 1、2 的输出也只差浮点舍入（这里舍入到 12 位小数）。

# %% [markdown]
# ## 2. 从一步到一整份解答
#
# 一份解答有 $T$ 步，每一步在自己的情境 $c_t$ 里选了做法 $a_t$。各步的选择按顺序发生，所以这份解答的概率是各步概率的乘积，取对数就是和：
#
# $$\log \Pr(\text{解答}) = \sum_{t=1}^{T} \log \pi(a_t \mid c_t) \;+\; \text{（粗心时随机挑哪一位，和 } \Delta \text{ 无关）}.$$
#
# 对情境 $c$ 的 $\Delta_c$ 求导，只有 $c_t = c$ 的那些步有贡献：
#
# $$\nabla_{\Delta_c} \log \Pr(\text{解答}) = \sum_{t:\, c_t = c} \big(e_{a_t} - \pi(\cdot \mid c)\big).$$
#
# 同一个情境出现几次，就加几次。代码就是：用 `step_records` 拿到每一步的 (情境, 做法)，`probs_for` 拿到每一步的概率，逐步 `add_grad`。
#
# 看输出：这份解答每一步的情境和做法；有没有哪个情境出现了不止一次。

# %%
problem = make_problem(random.Random(4), 8)
sample = model.generate(problem, random.Random(0))
print("题目：", problem, "=", problem.answer)
print("解答：", sample.values, "做对了" if sample.correct else "做错了")
print()
grads = {}
for t, ((key, action),
        probs) in enumerate(zip(step_records(problem, sample), probs_for(model, problem, sample)),
                            1):
    add_grad(grads, key, action, probs, 1.0)
    print(f"第 {t} 步  {pad(CONTEXT_NAMES[key], 24)} 选了 {PROCEDURE_NAMES[PROCEDURES[action]]}")


# %% [markdown]
# 检查：把 $\log \Pr(\text{解答})$ 当作 $\Delta$ 的函数，对全部 36 个参数做有限差分，和上面逐步累加的梯度比较。
# `log_likelihood(model, data)` 给出每步的平均 $\log \pi$，乘以步数就是总和。
# `toyllm.gradcheck.compare_grads` 做这个比较（它自己也能打印一张表，`verbose=True`）；`show_check` 把结果每个情境打印一行。
#
# 看输出：每个情境都在容差内吗？这份解答没有经过的情境，两边的梯度都是 0（"完全相同"）。

# %%
def log_p_solution(params):
    """f(Δ) = 这份解答的 log P：换上参数 Δ = params，算每步平均的 log π，再乘以步数。"""
    m = model.copy()
    m.params[:] = params
    return log_likelihood(m, [(problem, sample)]) * len(problem.steps)


def show_check(result):
    """
    打印 compare_grads 的结果：每个情境一行。
    差异只按量级打印（具体数字随机器的浮点运算略有不同）。
    """
    print(f"梯度检查：{result.name}")
    for key, same, close, diff in result.rows:
        size = "0" if diff == 0 else "< 1e-9" if diff < 1e-9 else f"{diff:.1e}"
        print(f"  {pad(CONTEXT_NAMES[key], 24)}{pad('完全相同' if same else '', 10)}"
              f"{pad('✓ 在容差内' if close else '✗ 不一致', 12)}差异 {size}")
    print("结论：", "✓ 全部在容差内" if result else "✗ 有情境不一致")


show_check(compare_grads("一份解答的 log P 的梯度", grads, reference=log_p_solution, model=model,
                         verbose=False))

# %% [markdown]
# ## 3. 为什么情境共享参数：泛化
#
# 所有题目里，同一种情境用的是**同一组** $\Delta_c$。所以在一道题的一步上算出的梯度，改变的是这个情境在**所有**题里的概率。
#
# 下面从 $\Delta = 0$ 的 1B 模型出发，只用**一步**的梯度更新一次：一道题里"乘两位数、被乘数 ≥ 100"的一步，选了 correct，
# $\Delta \leftarrow \Delta + \text{lr} \cdot (e_{\text{correct}} - \pi)$（这就是一步 SFT）。
#
# 看图：12 个情境里，只有一个情境的 π(正确) 变了，其他情境完全不动。

# %%
base_model = TrainableLLM(1e9)
target = ("mul", 2.2)
for problem in make_problem_set(random.Random(1), 50, 3, 8):          # 找一道有这个情境的题
    inputs = [problem.start] + problem.correct_values()[:-1]            # 每一步的（正确的）输入
    keys = [context_key(s.op, x, s.operand) for s, x in zip(problem.steps, inputs)]
    if target in keys:
        break
t = keys.index(target)
step, x = problem.steps[t], inputs[t]
print(f"用来学习的一步：{problem} 的第 {t + 1} 步  {x} {step}（{CONTEXT_NAMES[target]}），选了"
      " correct")

grads = {}
add_grad(grads, target, 0, base_model.step_probs(step.op, x, step.operand, t), 1.0)
learned = base_model.copy(name="学了一步")
apply_grads(learned, grads, lr=1.0)
fig = plot_context_bars(base_model, learned, labels=("学习前", "学了一步以后"),
                        title="只学一步：只有这一步的情境变了")

# %% [markdown]
# 再看 200 道**别的**题（和上面那道题没有关系）。对每道题算学习前后的路径 pass@1：
# 正确路径上**有**这个情境的题，和**没有**这个情境的题，分开统计。
#
# 看输出和图：有这个情境的题，pass@1 全都上升了；没有的题，变化恰好是 0。
# 这就是泛化：只在一道题的一步上学习，所有含同一情境的题都变好了。（反过来，学坏了也会"泛化"到所有这些题上。）

# %%
others = make_problem_set(random.Random(2), 200, 3, 8)
paths = correct_paths(others)
has_target = ((paths.ctx == CONTEXTS.index(target)) & paths.mask).any(axis=1)
before = exact_pass_at_1(base_model, paths, per_problem=True)
after = exact_pass_at_1(learned, paths, per_problem=True)
change = after - before
print(f"有「{CONTEXT_NAMES[target]}」的题：{has_target.sum()} 道，pass@1 变化最小"
      f" {change[has_target].min():+.4f}，"
      f"平均 {change[has_target].mean():+.4f}")
print(f"没有这个情境的题：{(~has_target).sum()} 道，|变化| 最大"
      f" {np.abs(change[~has_target]).max():.4f}")

fig, ax = plt.subplots(figsize=(5.5, 5))
ax.scatter(before[has_target], after[has_target], s=14, label=f"有「{CONTEXT_NAMES[target]}」")
ax.scatter(before[~has_target], after[~has_target], s=14, marker="x", label="没有这个情境")
ax.plot([0, 1], [0, 1], color="0.5", linewidth=1)
ax.set_xlabel("学习前的路径 pass@1")
ax.set_ylabel("学习后的路径 pass@1")
ax.set_title("200 道别的题：学一步以后")
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 4. 期望奖励和它的精确梯度
#
# 强化学习要最大化的是**期望奖励**：题目 $q$ 从题库里均匀地挑，解答 $\tau$ 由模型采样，每一步都对得 $R(\tau) = 1$，否则得 0：
#
# $$J(\Delta) = \mathbb{E}_q\, \mathbb{E}_{\tau \sim \pi_\Delta(\cdot \mid q)}\big[R(\tau)\big] = \frac{1}{P}\sum_{q} \Pr_\Delta(\text{第 } q \text{ 道题每一步都对})\quad(P\ \text{是题目个数}).$$
#
# 它就是平均的"走对路径的概率"（路径 pass@1）。只看最终答案的 pass@1 比它略大一点：写错后又碰巧被修好的解答也算对（见 notebook 04）。
# 这个玩具可以精确地算出 $J$（`toyllm.exact.expected_reward`），也能精确地算出它对 36 个参数的梯度
# （`toyllm.exact.grad_expected_reward`，用乘积法则）。真实的 LLM 做不到：可能的解答多得数不清。
#
# 先检查这个精确梯度：和对 $J$ 做有限差分的结果比较（`compare_grads` 不给参考梯度时，自己对 $J$ 做有限差分）。看输出的最后一行。

# %%
model = TrainableLLM(1e9)
problems = make_problem_set(random.Random(0), 32, 3, 8)
exact_grad = grad_expected_reward(model, problems)
print(f"J = 平均 pass@1 = {expected_reward(model, problems):.4f}")
show_check(compare_grads("精确梯度 vs 有限差分", exact_grad, model=model, problems=problems,
                         verbose=False))

# %% [markdown]
# ## 5. REINFORCE：用采样估计梯度
#
# 真实系统只能采样。**对数导数技巧**（log-derivative trick）把梯度写成一个期望：因为 $\nabla \Pr(\tau) = \Pr(\tau)\,\nabla \log \Pr(\tau)$，
#
# $$\nabla J = \mathbb{E}_q \sum_\tau R(\tau)\, \nabla \Pr(\tau) = \mathbb{E}_q\, \mathbb{E}_{\tau}\Big[R(\tau) \sum_t \nabla \log \pi(a_t \mid c_t)\Big].$$
#
# 期望可以用样本平均来估计。采 $B$ 份解答 $\tau_1, \dots, \tau_B$，REINFORCE 估计是
#
# $$\hat g = \frac{1}{B} \sum_{i=1}^{B} R_i \sum_t \big(e_{a_{i,t}} - \pi(\cdot \mid c_{i,t})\big).$$
#
# 每一步用的正是第 1 节的公式，整份解答是第 2 节的求和，再乘上这份解答的奖励。
#
# 下面用向量化的采样器 `sample_rollouts` 一次采很多份解答（每一步的情境、做法、概率都在数组里）。
# 包里的 `toyllm.rl.score_vectors` 算出每一份解答的 $\sum_t (e_{a_t} - \pi)$，放进它经过的情境那一行。下面打印出它的代码：说明文字后面那几行就是上面公式的直接翻译。
#
# 奖励 $R_i$ 取"每一步都对"（`step_ok` 全为真），和精确值算的是同一件事。
# 只看最终答案的奖励几乎一样，只差"写错以后又被后面的错误碰巧改对"的极少数解答（输出的第一行数了有几份）。

# %%
import inspect
from toyllm.rl import score_vectors

print(inspect.getsource(score_vectors))


def all_steps_right(rollouts):
    """奖励：每一步都写对了得 1，否则得 0。"""
    return (rollouts.step_ok | ~rollouts.mask).all(axis=1).astype(float)


def reinforce_estimate(scores, weights):
    """(1/B) Σ_i weight_i × score_i：weights 是奖励 R_i（或者减去基线以后的 R_i − b_i）。"""
    return (weights[:, None, None] * scores).mean(axis=0)


batch = prepare_problems(problems)
rollouts = sample_rollouts(model, batch, 8, np.random.default_rng(0))
scores = score_vectors(rollouts)
R = all_steps_right(rollouts)
estimate = reinforce_estimate(scores, R)
print(f"{len(problems)} 道题 × 每道 8 份 = {len(rollouts)} 份解答，平均奖励 {R.mean():.3f}；"
      f"最终答案对、但不是每一步都对的：{int((rollouts.correct & (R == 0)).sum())} 份")
Table(["情境", "精确 ∂J/∂Δ_correct", "REINFORCE 估计"],
      [[CONTEXT_NAMES[key], f"{exact_grad[j, 0]:.4f}",
        f"{estimate[j, 0]:.4f}"] for j, key in enumerate(CONTEXTS)])

# %% [markdown]
# 看上表：大的分量估得还可以，接近 0 的分量误差相对很大，有的连符号都可能不对。这就是采样的噪声。
#
# 第 05 个 notebook 的 RL 引擎算的就是这个量：`toyllm.rl.policy_loss` 返回**损失**（要最小化的量）的梯度。
# 引擎把每一步的损失加权求和成一个数，这叫**聚合**（aggregation，第 06 个 notebook 第 1.1 节列出三种权重）。这里用的两个选项：
# - `loss_agg="constant"`：每一步的权重都是同一个常数 $\frac{1}{B \cdot L_{\max}}$（Dr. GRPO 的做法）；
# - `max_len=1`：把 $L_{\max}$ 取成 1。于是权重是 $\frac1B$：每份解答的各步直接**相加**，再对 $B$ 份平均，正是上面的 $\hat g$。
#
# `preset("reinforce")` 是"不减基线"的预设，奖励直接当权重。它默认按步**平均**（CS336 作业 5 的 `no_baseline`）[S501](../lectures/sources.md#S501)，
# 配上这两个选项才是 Williams（1992）按步**求和**的 REINFORCE。看输出：引擎梯度的负数和 $\hat g$ 是否相同（`True`）。

# %%
engine = policy_loss(model, rollouts, R, preset("reinforce", loss_agg="constant"), max_len=1)
print("和 RL 引擎的梯度相同：", np.allclose(-engine.grad, estimate, rtol=0, atol=1e-12))

# %% [markdown]
# 样本越多，估计越准。下面把每道题的样本数 $n$ 从 8 增加到 512，看估计和精确梯度的差距
# $\lVert \hat g - \nabla J \rVert$（36 个数之差的平方和再开根号）。每个 $n$ 用 5 个种子各估计一次，取均方根，免得一次的运气太好或太坏。
#
# 看输出：$n$ 每大 4 倍，误差大约减半；最后一列（误差 × $\sqrt{n}$）大致不变，也就是误差 $\propto 1/\sqrt{n}$。

# %%
rows = []
for n in (8, 32, 128, 512):
    errors = []
    for seed in range(5):
        r = sample_rollouts(model, batch, n, np.random.default_rng([n, seed]))
        errors.append(np.linalg.norm(reinforce_estimate(score_vectors(r),
                                                        all_steps_right(r)) - exact_grad))
    err = math.sqrt(np.mean(np.square(errors)))
    rows.append([n, len(r), f"{err:.4f}", f"{err * math.sqrt(n):.3f}"])
Table(["每道题的样本数 n", "份数 B", "误差 ‖ĝ − ∇J‖", "误差 × √n"], rows)

# %% [markdown]
# ## 6. 基线：不改变期望，能改变方差
#
# 把 $R_i$ 换成 $R_i - b$，只要 $b$ 不依赖于这份解答里选了什么做法（可以依赖题目 $q$），估计的**期望不变**：
#
# $$\mathbb{E}_\tau\Big[b \sum_t \nabla \log \pi(a_t \mid c_t)\Big] = b \sum_t \mathbb{E}\big[e_{a_t} - \pi(\cdot \mid c_t)\big] = 0,$$
#
# 因为每一步都有第 1 节的性质 2：给定前面的步，$\mathbb{E}_{a_t \sim \pi}[e_{a_t} - \pi] = 0$。
# 同样的道理，给奖励加一个常数 $c$（答对 $1 + c$、答错 $c$），$\nabla J$ 也不变。但是估计的**方差**会变。
#
# 真实系统的奖励，零点常常是随手定的：有的答对 +1、答错 −1；奖励模型给的分数可能都在某个数附近。
# 下面比较两种估计，奖励取四种零点：
# - **没有基线**：权重就是奖励 $R_i$（REINFORCE）；
# - **留一法基线**（RLOO）：同一道题的 $G = 8$ 份解答里，减去**其他** 7 份的平均奖励，`toyllm.rl.group_advantages(R, 8, "rloo")`。真实系统常用它。
#
# 一次采 $32 \times 8 \times 400$ 份解答，切成 400 批，每批 32 道题 × 8 份，就是 400 次互相独立的估计（和换 400 个种子一样）。
# 对每种做法算两个数："平均的偏差" $\lVert \overline{\hat g} - \nabla J \rVert$（400 次估计先平均，再和精确梯度比），
# 和"典型误差"（每一次估计和精确梯度的距离，取均方根）。

# %%
reps, G = 400, 8
P = len(problems)
big = sample_rollouts(model, batch, G * reps, np.random.default_rng(1))
big_scores = score_vectors(big)                                  # (P × G × reps, 12, 3)
R = all_steps_right(big)


def many_estimates(weights):
    """400 次独立的估计，形状 (400, 12, 3)：每道题的样本按顺序切成 400 批，每批 G 份。"""
    return (weights[:, None, None] * big_scores).reshape(P, reps, G, len(CONTEXTS),
                                                         3).mean(axis=(0, 2))


def bias_and_error(estimates):
    bias = np.linalg.norm(estimates.mean(axis=0) - exact_grad)
    typical = np.sqrt((np.linalg.norm(estimates - exact_grad, axis=(1, 2)) ** 2).mean())
    return bias, typical


results, rows = {}, []
for c in (-1, 0, 1, 2):
    reward = R + c
    results[c] = {"没有基线": many_estimates(reward),
                  "留一法基线": many_estimates(group_advantages(reward, G, "rloo"))}
    (b0, e0), (b1, e1) = (bias_and_error(results[c][k]) for k in ("没有基线", "留一法基线"))
    rows.append([f"{1 + c} / {c}"] + [f"{x:.4f}" for x in (b0, e0, b1, e1)])
Table(["奖励（答对 / 答错）", "没有基线：偏差", "典型误差", "留一法：偏差", "典型误差"], rows,
      note=f"参考：精确梯度的长度 ‖∇J‖ = {np.linalg.norm(exact_grad):.4f}；"
           "400 次平均以后，偏差只剩下典型误差 / √400 量级的噪声")

# %% [markdown]
# 基线什么时候让误差变小？看输出：对每种零点，比较两种估计的典型误差。

# %%
for c in (-1, 0, 1, 2):
    e_none, e_rloo = (bias_and_error(results[c][k])[1] for k in ("没有基线", "留一法基线"))
    verdict = "基线让误差变小" if e_rloo < e_none else "基线没有让误差变小"
    print(f"答对 {1 + c} / 答错 {c}：没有基线 {e_none:.4f}，留一法基线 {e_rloo:.4f} → {verdict}"
          f"（比值 {e_rloo / e_none:.2f}）")

# %% [markdown]
# 看输出：
# - 两种估计的"偏差"都远小于各自的"典型误差"：它们的期望都是精确梯度（无偏）。
# - 没有基线时，典型误差随奖励的零点变化很大；留一法基线的四行完全相同：减去同组的平均以后，奖励加多少常数都被消掉了。
# - 零点选得不好时（例如答对 3、答错 2），没有基线的估计差得很远；有了基线就不用担心这件事。
#
# 下面把"答对 2、答错 1"这一行的 400 次估计画成直方图，只看精确梯度最大的那一个分量。竖线是精确梯度。
# 看：两个分布的中心都在竖线上，留一法基线的窄得多。

# %%
j = int(np.argmax(exact_grad[:, 0]))
label = f"∂J/∂Δ[{CONTEXT_NAMES[CONTEXTS[j]]}, correct]"
none_j, rloo_j = results[1]["没有基线"][:, j, 0], results[1]["留一法基线"][:, j, 0]
print(f"{label}：精确值 {exact_grad[j, 0]:.4f}")
print(f"  没有基线：400 次的平均 {none_j.mean():.4f}，标准差 {none_j.std(ddof=1):.4f}")
print(f"  留一法：  400 次的平均 {rloo_j.mean():.4f}，标准差 {rloo_j.std(ddof=1):.4f}")

fig, ax = plt.subplots(figsize=(8, 4.5))
bins = np.linspace(min(none_j.min(), rloo_j.min()), max(none_j.max(), rloo_j.max()), 41)
ax.hist(none_j, bins=bins, alpha=0.6, label="没有基线")
ax.hist(rloo_j, bins=bins, alpha=0.6, label="留一法基线（RLOO）")
ax.axvline(exact_grad[j, 0], color="black", linewidth=2, label="精确梯度")
ax.set_xlabel(f"{label} 的估计")
ax.set_ylabel("次数（共 400 次）")
ax.set_title("奖励「答对 2、答错 1」：基线不改变中心，只让分布变窄")
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# 再看最普通的奖励"答对 1、答错 0"（上表 $c = 0$ 那一行）：这个玩具里，没有基线的典型误差反而比留一法**还小**。这不矛盾，基线并不总是越接近平均奖励越好。
#
# 用一个常数基线 $b$，估计是 $\hat g(b) = \hat g(0) - b \cdot \frac{1}{B}\sum_i \sum_t (e_{a_{i,t}} - \pi)$，
# 后一项的期望是 0：它可能抵消 $\hat g(0)$ 的一部分噪声，也可能添上新的噪声。典型误差的平方是 $b$ 的二次函数。
# 下图画出它：$b = 0$ 就是没有基线；虚线是留一法。
#
# 看图：最低点离 0 不远，远低于平均奖励。原因是：做对的解答每一步都选了最可能的做法，$\sum_t (e_{a_t} - \pi)$ 很小；
# 做错的解答里有一步选了不太可能的做法，$\sum_t (e_{a_t} - \pi)$ 很大。$b$ 越大，这些大向量乘上 $-b$ 带来的噪声越大。
# 所以"答对 1、答错 0"恰好把零点放在了好位置上；换一个零点就没有这个运气了，基线让我们不必碰运气。

# %%
g0 = many_estimates(R)                                           # ĝ(0)：没有基线
s1 = many_estimates(np.ones_like(R))                             # (1/B) Σ_i Σ_t (e − π)：期望是 0
baselines = np.linspace(-0.5, 1.25, 36)
typical = [bias_and_error(g0 - b * s1)[1] for b in baselines]
rloo_error = bias_and_error(results[0]["留一法基线"])[1]
best = baselines[int(np.argmin(typical))]
print(f"平均奖励 {R.mean():.3f}；典型误差最小的常数基线 b ≈ {best:.2f}")

fig, ax = plt.subplots(figsize=(7, 4.5))
ax.plot(baselines, typical, label="常数基线 b")
ax.axhline(rloo_error, color="C1", linestyle="--", label="留一法基线（RLOO）")
ax.axvline(0, color="0.6", linewidth=1)
ax.scatter([0], [typical[int(np.argmin(np.abs(baselines)))]], color="C0", zorder=3)
ax.annotate("b = 0：没有基线", (0, typical[int(np.argmin(np.abs(baselines)))]),
            textcoords="offset points",
            xytext=(8, 10))
ax.axvline(R.mean(), color="C2", linewidth=1, linestyle=":", label="平均奖励")
ax.set_xlabel("基线 b")
ax.set_ylabel("典型误差 ‖ĝ − ∇J‖")
ax.set_title("奖励「答对 1、答错 0」：典型误差随常数基线 b 的变化")
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 小结
#
# - $\dfrac{\partial \log \pi_a}{\partial z_j} = \mathbb{1}[j=a] - \pi_j$：每一步的梯度是 $e_a - \pi$，三个分量之和为 0，按 $\pi$ 取期望为 0。有限差分验证了它。
# - 一份解答的 $\log P$ 是各步之和，梯度也是各步之和；同一情境出现几次就加几次。
# - 所有题目共享情境参数：在一道题的一步上学习，所有含这个情境的题都变了，不含的题一点不变。
# - 期望奖励 $J$ 的梯度可以精确算（只有玩具能做到），也可以用 REINFORCE 采样估计 $\hat g = \frac1B \sum_i R_i \sum_t (e_{a_{i,t}} - \pi)$；误差按 $1/\sqrt{n}$ 减小。
# - 减去不依赖于动作的基线，期望不变；估计不再依赖奖励的零点。方差**不一定**减小：零点离平均奖励远时（答对 2、答错 1）基线让误差小得多，"答对 1、答错 0"时反而略大（第 6 节的比较）。留一法（RLOO）是真实系统常用的基线，也是第 05 个 notebook 里 RLOO、GRPO 的出发点。
# - 基线不是越接近平均奖励越好：这个玩具的"答对 1、答错 0"奖励不减基线也不差，原因见第 6 节最后一张图。
#
# ## 试一试
#
# 1. 在第 1 节把情境换成 `("sub", 2.4)`，或者把 $\Delta$ 的随机数放大到 `normal(0.0, 3.0)`，公式和有限差分还一致吗？
# 2. 在第 3 节把 `lr=1.0` 改成 `lr=5.0`，或者让那一步"选了 bug"（`add_grad` 的第三个参数改成 1）：哪些题的 pass@1 下降了？
# 3. 在第 6 节把 `TrainableLLM(1e9)`（第 4 节）换成 `TrainableLLM(1e12)`（平均奖励更高），或者把组大小 `G = 8` 改成 `G = 2`：
#    留一法和没有基线的典型误差怎样变化？
