# %% [markdown] nbgrader={"grade": false, "grade_id": "hw1-intro", "locked": true, "schema_version": 3, "solution": false, "task": false}
# # 作业一 · 梯度
#
# **你将练习**
# - 推导并实现一步的梯度：$\dfrac{\partial \log \mathrm{softmax}(z)_a}{\partial z_j} = \mathbb{1}[j=a] - \pi_j$；
# - 从一步到一整份解答：$\log P(\text{解答}) = \sum_t \log \pi(a_t \mid c_t)$ 的梯度是各步梯度之和，同一个情境的参数被共享；
# - 用**有限差分**检查自己的梯度，再用包里算出的**精确梯度**检查 REINFORCE 的采样估计；
# - 用控制面板看：基线（baseline）什么时候让梯度估计的方差变小，什么时候反而变大。
#
# 对应讲义：[第 6 讲 · 规模与强化学习](../../../../lectures/lecture06_scaling_rl.md)（仓库里的 `lectures/lecture06_scaling_rl.md`）第 4 节「梯度：从一步到一道题，再到策略梯度定理」。
#
# **分数**（共 10 分）：每个任务后面紧跟一个「检查」单元格，它打印 ✓ 就得到这个任务的全部分数，
# 打印 ✗ 或「还没有实现」得 0 分。老师用 nbgrader 自动评分时，分数由老师的评分程序给出：它在另一个进程里
# 运行你的函数，用**新抽的输入**和同样的规则检查，所以这里的 ✓ 预示着分数。问答题由老师手工评分。
#
# **评分的规则**：评分时只运行开头的导入单元格和你的答案单元格，函数要用到的东西（辅助函数、import）都写在答案单元格里。
# 每个任务能用什么写在任务下面：调用包里同一个任务的实现、或者任务没有列出的包里的函数，这个任务记 0 分。
#
# | 任务 | 要写的函数 | 分数 |
# | --- | --- | --- |
# | 任务 1（第一部分） | `grad_log_softmax` | 3 |
# | 任务 2（第二部分） | `solution_grad` | 4 |
# | 问答 1、2（第四部分之后） | 文字回答，老师手工评分 | 2 + 1 |
# | **合计** | | **10** |
#
# 任务 2 会调用你在任务 1 写的 `grad_log_softmax`，所以先把任务 1 做对。最后两道问答题写文字回答，由老师手工评分：把「为什么」说清楚就好，两三句话足够。
#
# **怎么做这份作业**：找到写着 `# YOUR CODE HERE` 的地方，把下面的 `raise NotImplementedError()` 换成你的代码，
# 然后运行紧跟着的「检查」单元格：✓ 表示通过，✗ 会告诉你哪里可能错了。
# 没做完也可以从头运行到尾（菜单 Run → Run All Cells），没实现的地方会显示「还没有实现」。

# %% [markdown]
# 先导入要用的东西。所有模型、题目和参考答案都来自 `toyllm` 包；`use_chinese_font()` 让图里的中文正常显示。

# %% nbgrader={"grade": false, "grade_id": "hw1-setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import random

import numpy as np

from toyllm import CONTEXTS, TrainableLLM, make_problem_set, probs_for, step_records
from toyllm.arithmetic import CONTEXT_INDEX, CONTEXT_NAMES
from toyllm.exact import grad_expected_reward
from toyllm.gradcheck import compare_grads, finite_difference_grad
from toyllm.homework.hw1 import check_estimate_vs_exact, check_grad_log_softmax, check_solution_grad
from toyllm.plotstyle import use_chinese_font
from toyllm.tables import pad

use_chinese_font()
model = TrainableLLM(1e9)
print(f"模型：{model.name}（{type(model).__name__}），情境一共 {len(CONTEXTS)} 种，参数"
      f" model.params 的形状 {model.params.shape}")


# %% [markdown] nbgrader={"grade": false, "grade_id": "hw1-task1", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ## 第一部分：一步的梯度
#
# 模型在情境 $c$ 下的三个 logits 是 $z = (z_\text{correct}, z_\text{bug}, z_\text{careless})$，选做法 $a$ 的概率是
# $\pi_a = \mathrm{softmax}(z)_a = e^{z_a} / \sum_k e^{z_k}$。于是
#
# $$\log \pi_a = z_a - \log \sum_k e^{z_k}, \qquad
# \frac{\partial \log \pi_a}{\partial z_j} = \mathbb{1}[j=a] - \frac{e^{z_j}}{\sum_k e^{z_k}} = \mathbb{1}[j=a] - \pi_j .$$
#
# **任务 1**：实现 `grad_log_softmax(logits, action)`，返回这个向量（长度和 `logits` 相同，不要把 3 写死）。
# 提示：算 softmax 时先减去最大的 logit，`exp` 才不会溢出。
#
# **能用的**：numpy 和 Python 的标准库（这个任务不能用 `toyllm`）。

# %% nbgrader={"grade": false, "grade_id": "grad_log_softmax", "locked": false, "schema_version": 3, "solution": true, "task": false}
def grad_log_softmax(logits, action):
    """log softmax(logits)[action] 对每个 logit 的导数：一个和 logits 一样长的 numpy 数组。"""
    ### BEGIN SOLUTION
    z = np.asarray(logits, dtype=float)
    p = np.exp(z - z.max())
    p = p / p.sum()
    onehot = np.zeros_like(p)
    onehot[action] = 1.0
    return onehot - p
    ### END SOLUTION


# %% [markdown]
# **检查**：下面的单元格用 8 组 logits 试你的函数（有 2 个、5 个做法的，也有大到 800 的 logits）。

# %% nbgrader={"grade": true, "grade_id": "check_grad_log_softmax", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ok_step = check_grad_log_softmax(grad_log_softmax)
### BEGIN HIDDEN TESTS
# 自动评分：这一部分的分数由老师的评分程序（仓库里的 tools/grader.py）在它自己的进程里算出，
# 同学的函数在另一个隔离的进程里、用新抽的输入运行；这个单元格的输出只给人看，评分程序会换掉它。
# 没有用课程的 nbgrader_config.py 评分时（评分程序没有运行、同学的代码也没有关在沙盒里），下面这一行让这一部分记 0 分。
assert "autograded" not in __import__("pathlib").Path.cwd().parts, "没有用课程的 nbgrader_config.py 评分，这一部分不给分"
### END HIDDEN TESTS

# %% [markdown]
# 公式对不对，最可靠的检查是**有限差分**：不用任何公式，把一个 logit 挪一点点 $h$，看 $\log \pi_a$ 变了多少，
# $\partial f / \partial z_j \approx [f(z + h e_j) - f(z - h e_j)] / 2h$。
# 这里用 1B 模型在「乘两位数」情境下的 logits，看 $a$ = correct 时两种算法是否一致（保留 6 位小数）。

# %%
logits = np.array(model.context_logits(("mul", 1.5)))


def log_pi(z, action=0):
    z = np.asarray(z, dtype=float)
    return z[action] - z.max() - np.log(np.exp(z - z.max()).sum())


print("logits        ", logits)
print("有限差分      ", np.round(finite_difference_grad(lambda z: log_pi(z, 0), logits), 6))
if ok_step:
    print("你的公式      ", np.round(grad_log_softmax(logits, 0), 6))
else:
    print("你的公式       （grad_log_softmax 还没有通过检查）")

# %% [markdown]
# ## 第二部分：一整份解答的梯度
#
# 一份解答的概率是每一步概率的乘积，取对数就是求和：$\log P(\text{解答}) = \sum_t \log \pi(a_t \mid c_t)$。
# 第 $t$ 步的 logits 是基础 logits 加上情境 $c_t$ 的参数 $\Delta_{c_t}$，所以
#
# $$\frac{\partial \log P(\text{解答})}{\partial \Delta_{c,j}} = \sum_{t:\, c_t = c} \big(\mathbb{1}[j=a_t] - \pi(j \mid c_t)\big).$$
#
# 两点要注意：
# 1. 情境 $c_t$ 由**模型自己上一步写下的值**决定。一步写错以后，后面的数都变了，情境也可能跟着变；
#    `step_records(problem, sample)` 已经替你按这个规则算好了每一步的 (情境, 做法下标)。
# 2. 同一个情境在一份解答里可能出现好几次 —— 它们共享同一组参数，梯度要**加起来**。
#
# 下面挑一份**中途写错**的解答看看：对比正确的中间值和模型写下的值。

# %%
problems = make_problem_set(random.Random(0), 20, 3, 8)
rng = random.Random(1)
problem = problems[2]
sample = model.generate(problem, rng)
while sample.correct:
    sample = model.generate(problem, rng)
print("题目          ", problem, "=", problem.answer)
print("正确的中间值  ", problem.correct_values())
print("模型写下的值  ", list(sample.values))
print("每一步的做法  ", list(sample.procs))
for key, action in step_records(problem, sample):
    print(f"  情境 {pad(CONTEXT_NAMES[key], 24)} 做法下标 {action}")


# %% [markdown] nbgrader={"grade": false, "grade_id": "hw1-task2", "locked": true, "schema_version": 3, "solution": false, "task": false}
# **任务 2**：实现 `solution_grad(model, problem, sample)`，返回形状 `(12, 3)` 的数组，第 `i` 行对应 `CONTEXTS[i]`。
# 可以用：`step_records(problem, sample)`、`model.context_logits(key)`（这个情境下的 3 个 logits）、
# `CONTEXT_INDEX[key]`（情境在第几行），以及你在任务 1 里写的 `grad_log_softmax`。
#
# **能用的**：numpy、标准库、你的 `grad_log_softmax`、模型的方法（如 `model.context_logits`），和 `toyllm` 的
# `step_records`、`probs_for`、`softmax`、`context_key`、`context_index`、`toyllm.policy.softmax_rows`；包里别的函数（例如 `score`、`add_grad`）不能用。

# %% nbgrader={"grade": false, "grade_id": "solution_grad", "locked": false, "schema_version": 3, "solution": true, "task": false}
def solution_grad(model, problem, sample):
    """一份解答的 log 概率对全部 Δ 的梯度，形状 (12, 3)。"""
    ### BEGIN SOLUTION
    grad = np.zeros((len(CONTEXTS), 3))
    for key, action in step_records(problem, sample):
        grad[CONTEXT_INDEX[key]] += grad_log_softmax(model.context_logits(key), action)
    return grad
    ### END SOLUTION


# %% [markdown]
# **检查**：用 14 份解答（有做对的，也有中途写错的）和逐步累加的参考答案比较。

# %% nbgrader={"grade": true, "grade_id": "check_solution_grad", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ok_solution = check_solution_grad(solution_grad)
### BEGIN HIDDEN TESTS
# 自动评分：这一部分的分数由老师的评分程序（仓库里的 tools/grader.py）在它自己的进程里算出，
# 同学的函数在另一个隔离的进程里、用新抽的输入运行；这个单元格的输出只给人看，评分程序会换掉它。
# 没有用课程的 nbgrader_config.py 评分时（评分程序没有运行、同学的代码也没有关在沙盒里），下面这一行让这一部分记 0 分。
assert "autograded" not in __import__("pathlib").Path.cwd().parts, "没有用课程的 nbgrader_config.py 评分，这一部分不给分"
### END HIDDEN TESTS

# %% [markdown]
# 再用有限差分检查一次，这次挪动的是模型的参数 $\Delta$ 本身：`log_prob_of_sample(params)` 把参数换成 `params`，
# 重新算这份解答的 $\log P$。`compare_grads` 对 36 个参数逐个做中心差分，再逐个情境比较。

# %%
def log_prob_of_sample(params):
    m = TrainableLLM(model.size)
    m.params[:] = params
    steps = zip(step_records(problem, sample), probs_for(m, problem, sample))
    return sum(np.log(probs[action]) for (_, action), probs in steps)


if ok_solution:
    check = compare_grads("一份解答的 ∇ log P", solution_grad(model, problem, sample),
                          reference=log_prob_of_sample,
                          model=model, verbose=False)
    print("12 个情境都在容差内：", bool(check))
    print("最大差异小于 1e-8：  ", check.max_abs_diff < 1e-8)
else:
    print("（solution_grad 还没有通过检查）")


# %% [markdown]
# ## 第三部分：和精确梯度比较
#
# 强化学习要让期望奖励 $J = \frac{1}{P}\sum_i \Pr(\text{第 } i \text{ 题做对})$ 变大（$P$ 是题目个数）。
# 对数导数技巧（log-derivative trick）说 $\nabla P(\text{做对}) = \mathbb{E}\big[R \, \nabla \log P(\text{解答})\big]$，
# $R$ 是做对得 1、做错得 0 的奖励。所以每道题采 $n$ 份解答，
#
# $$\hat g = \frac{1}{P}\sum_i \frac{1}{n}\sum_{k=1}^{n} R_{ik}\, \nabla \log \Pr(\text{解答}_{ik})$$
#
# 就是 $\nabla J$ 的一个**无偏估计**（REINFORCE）。真实的大模型只能这样估计；这个玩具还能把 $\nabla J$
# **精确地**算出来（`toyllm.exact.grad_expected_reward`）。下面用你的 `solution_grad` 做估计，
# 并算出每个数的标准误 $\text{SE} = \frac{1}{P}\sqrt{\sum_i s_i^2 / n}$（$s_i$ 是第 $i$ 题那 $n$ 项的样本标准差）。

# %%
def reinforce_estimate(grad_fn, model, problems, n, seed):
    """REINFORCE 估计 ∇J（每题 n 份），返回 (估计, 每个数的标准误)，形状都是 (12, 3)。"""
    rng = random.Random(seed)
    means, variances = [], []
    for p in problems:
        samples = [model.generate(p, rng) for _ in range(n)]
        terms = np.array([float(s.correct) * grad_fn(model, p, s) for s in samples])
        means.append(terms.mean(axis=0))
        variances.append(terms.var(axis=0, ddof=1) / n)
    return np.mean(means, axis=0), np.sqrt(np.sum(variances, axis=0)) / len(problems)


exact = grad_expected_reward(model, problems)
if ok_solution:
    estimate, stderr = reinforce_estimate(solution_grad, model, problems, n=40, seed=0)
    print(pad("情境", 24) + pad("精确 ∂J/∂Δ_correct", 20, "right") + pad("REINFORCE 估计", 16,
                                                                         "right")
          + pad("标准误", 10, "right"))
    for key in [("add", 0.7), ("sub", 0.8), ("mul", 1.5), ("mul", 2.2)]:
        i = CONTEXT_INDEX[key]
        print(pad(CONTEXT_NAMES[key],
                  24) + f"{exact[i, 0]:20.4f}{estimate[i, 0]:16.4f}{stderr[i, 0]:10.4f}")
else:
    print("（solution_grad 还没有通过检查）")

# %% [markdown]
# 估计永远不会和精确值完全相等。如果估计是无偏的，$(\text{估计} - \text{精确}) / \text{SE}$ 大致服从标准正态分布，
# 36 个数里超过 4 的几乎不会出现。下面的检查就看这个。
#
# 给了 `n_samples`（一共几份解答）时，检查还把每个标准误至少算作 $3/n_\text{samples}$。
# 为什么要这个下限？这是最后的问答 1。

# %%
if ok_solution:
    check_estimate_vs_exact(estimate, stderr, exact, name="REINFORCE 估计 vs 精确梯度",
                            n_samples=40 * len(problems))
else:
    print("（solution_grad 还没有通过检查）")

# %% [markdown]
# ## 第四部分：基线真的让方差变小吗？
#
# 因为 $\mathbb{E}[\nabla \log P] = 0$，把奖励换成 $R - b$（$b$ 不依赖于这份解答）不改变期望，只改变方差。
# 常用的 $b$ 是同一道题**其他** $n-1$ 份解答的平均奖励（留一法，RLOO）。
# 下面对几种大小的模型各重复估计 200 次，比较「乘两位数」情境 $\Delta_\text{correct}$ 那个数的标准差，
# 以及全部 36 个数的方差之和（每题 $n = 8$ 份）。

# %%
from toyllm.exact import exact_pass_at_1
from toyllm.dashboards import run_gradient_dashboard_logic

print("模型    路径 pass@1    标准差之比（这个数）    方差和之比（36 个数）")
for size in (1e7, 1e8, 1e9, 1e11):
    result, _ = run_gradient_dashboard_logic(size=size, n_samples=8, context=("mul", 1.5), seed=0)
    total_ratio = result.rloo.var(axis=0, ddof=1).sum() / result.none.var(axis=0, ddof=1).sum()
    p1 = exact_pass_at_1(TrainableLLM(size), problems)          # 面板用的就是这 20 道题（种子 0）
    sd_ratio = result.chosen[4] / result.chosen[2]
    print(f"{TrainableLLM(size).name:>5}{p1:>14.3f}{sd_ratio:>24.2f}{total_ratio:>24.2f}")

# %% [markdown]
# 比值小于 1 表示基线让估计更稳，大于 1 表示更不稳。看上面的表：哪些模型上比值小于 1，哪些大于 1？和路径 pass@1 对照着看。
# 为什么会这样，是最后的问答 2。
#
# 真实的语言模型里基线几乎总是有用的；这个玩具提醒我们"基线降低方差"不是定理，要量一量。
#
# 下面的控制面板可以自己拖着看：左图是每个情境的精确梯度（灰条）和两种估计的平均 ± 标准差，
# 右图是所选的那个数 200 次估计的直方图。（运行这个单元格以后才会出现面板。）

# %%
# NBVAL_IGNORE_OUTPUT
from toyllm.dashboards import gradient_dashboard

gradient_dashboard()

# %% [markdown]
# ## 问答
#
# 在每道题下面的单元格里用自己的话回答（双击单元格编辑，写完按 Shift+Enter）。

# %% [markdown] nbgrader={"grade": false, "grade_id": "hw1-q1-question", "locked": true, "schema_version": 3, "solution": false, "task": false}
# **问答 1**（2 分，老师手工评分）第三部分的检查给每个标准误加了下限 $3/n_\text{samples}$。如果不加，某个情境里 bug 一次也没被采到时会发生什么？用两三句话说明。

# %% [markdown] nbgrader={"grade": true, "grade_id": "hw1-q1", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# **参考答案**：没采到 bug 时，这个数在每份解答里的值都一样，样本标准误接近 0；可是精确梯度里包含 bug 那一项的贡献，估计和它差一个不大的数，除以接近 0 的标准误就成了几十、几百个标准误，检查会把无偏的估计误判为错。
#
# **评分要点**：说出没采到时这一项的样本标准误几乎是 0（1 分）；说出估计却和精确值差着「没采到的那几次」，于是 (估计 − 精确) / SE 会非常大、检查误判为有偏（1 分）。

# %% [markdown] nbgrader={"grade": false, "grade_id": "hw1-q2-question", "locked": true, "schema_version": 3, "solution": false, "task": false}
# **问答 2**（1 分，老师手工评分）看第四部分的表：留一法基线在哪些模型上让方差变小、在哪些上变大？用一句话说原因。

# %% [markdown] nbgrader={"grade": true, "grade_id": "hw1-q2", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# **参考答案**：成功率低的小模型上方差变小，成功率高时反而变大：做错的解答的 ∇log P 大得多（做错的那一步贡献 −π_correct，接近 −1），基线 b ≈ 平均奖励给了它们大小为 b 的权重。
#
# **评分要点**：说出成功率低的小模型上变小、成功率高的大模型上变大，并提到做错的解答的 ∇log P 更大（1 分）。

# %% [markdown]
# ## 小结
#
# - 一步的梯度：$\partial \log \pi_a / \partial z_j = \mathbb{1}[j=a] - \pi_j$，各分量之和为 0；算 softmax 先减最大值。
# - 一份解答的梯度是各步之和；情境由模型自己写下的值决定，同一个情境出现几次就加几次（参数共享）。
# - 有限差分是检查梯度的"标准答案"；REINFORCE 是 $\nabla J$ 的无偏估计，和精确梯度的差在几个标准误以内。
# - 基线不改变期望，但不一定让方差变小：要量一量。
#
# ## 试一试
#
# 1. 把 `reinforce_estimate` 改成带留一法基线的版本（`r - (r.sum() - r) / (n - 1)`），在 1e7 和 1e11 的模型上
#    比较标准误。注意：加了留一法基线以后，同一道题的 $n$ 项不再独立，上面的标准误公式只是近似。
# 2. 在控制面板里把每题样本数 $n$ 从 2 调到 32：两种估计的标准差各按什么规律变小？
# 3. 方差最小的常数基线是 $b^* = \mathbb{E}[R\,\lVert g\rVert^2] / \mathbb{E}[\lVert g\rVert^2]$。用样本估计它做基线，方差能比两种都小吗？
