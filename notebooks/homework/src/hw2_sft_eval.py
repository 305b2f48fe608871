# %% [markdown] nbgrader={"grade": false, "grade_id": "hw2-intro", "locked": true, "schema_version": 3, "solution": false, "task": false}
# # 作业二 · SFT 与评估
#
# **你将练习**
# - 实现 pass@k 的**无偏估计** $1 - \binom{n-c}{k} / \binom{n}{k}$（Chen et al. 2021）[S546](../../../../lectures/sources.md#S546)，看清楚"直接把 $c/n$ 代进
#   $1-(1-p)^k$"为什么偏低；
# - 实现一轮**拒绝采样微调**（STaR 不带"合理化"的一轮）：让模型自己做题，只留做对的解答，在上面做 SFT；
# - 和包里的实现（`toyllm.estimators.pass_at_k`、`toyllm.imitation`）逐个比较，再连做几轮，看 pass@1 怎么涨。
#
# 对应讲义：[第 6 讲 · 规模与强化学习](../../../../lectures/lecture06_scaling_rl.md)（仓库里的 `lectures/lecture06_scaling_rl.md`）第 2 节「规模与测试时计算」和
# 第 5 节「模仿自己：SFT、STaR、拒绝采样微调、专家迭代」。像 S546 这样的编号指向来源表（仓库里的 `lectures/sources.md`）：
# 每一句说法的出处和原文。
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
# | 任务 1（第一部分） | `pass_at_k_unbiased` | 3 |
# | 任务 2（第二部分） | `rejection_sampling_round` | 4 |
# | 问答 1、2（第三部分之后） | 文字回答，老师手工评分 | 2 + 1 |
# | **合计** | | **10** |
#
# 最后两道问答题写文字回答，由老师手工评分。把「为什么」说清楚就好，两三句话足够。
#
# **怎么做这份作业**：把 `# YOUR CODE HERE` 下面的 `raise NotImplementedError()` 换成你的代码，运行紧跟着的「检查」单元格。
# 没做完也可以从头运行到尾，没实现的地方会显示「还没有实现」。

# %% [markdown]
# 先导入要用的东西。

# %% nbgrader={"grade": false, "grade_id": "hw2-setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import math
import random

import numpy as np

from toyllm import TrainableLLM, log_likelihood, make_problem_set, sft
from toyllm.estimators import pass_at_k
from toyllm.exact import answer_pass_at_k, exact_pass_at_1
from toyllm.homework.hw2 import check_pass_at_k, check_rejection_sampling_round
from toyllm.imitation import rejection_sampling_ft, rollouts_to_data, star
from toyllm.plotstyle import use_chinese_font
from toyllm.rl import default_problems
from toyllm.sampler import sample_rollouts

print("画图用的中文字体：", use_chinese_font())


# %% [markdown] nbgrader={"grade": false, "grade_id": "hw2-task1", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ## 第一部分：pass@k 的无偏估计
#
# 对一道题采样 $n$ 份解答，其中 $c$ 份做对。pass@k 问的是：**随便挑 $k$ 份，至少有一份做对**的概率。
# 从 $n$ 份里不放回地挑 $k$ 份，全挑到错的那 $n-c$ 份里的挑法有 $\binom{n-c}{k}$ 种，所以
#
# $$\widehat{\text{pass@}k} = 1 - \frac{\binom{n-c}{k}}{\binom{n}{k}}, \qquad
# \mathbb{E}\big[\widehat{\text{pass@}k}\big] = 1 - (1-p)^k \quad (p = \text{这道题做对的概率}).$$
#
# 当 $n - c < k$ 时（错的不到 $k$ 份），随便挑 $k$ 份一定有对的，估计就是 1。这不是要另算的特例：
# 这时 $\binom{n-c}{k} = 0$（`math.comb(n - c, k)` 也返回 0），上面的公式本身就给出 1。单独写一个 `if` 只是读起来更清楚。
# 公式要求 $0 \le c \le n$、$1 \le k \le n$。
#
# **任务 1**：实现 `pass_at_k_unbiased(n, c, k)`。可以用 `math.comb`；$n$ 很大时不要算阶乘（会溢出）。
#
# **能用的**：numpy 和 Python 的标准库（这个任务不能用 `toyllm`）。

# %% nbgrader={"grade": false, "grade_id": "pass_at_k_unbiased", "locked": false, "schema_version": 3, "solution": true, "task": false}
def pass_at_k_unbiased(n, c, k):
    """n 份里 c 份做对，随便挑 k 份至少一份对的概率（pass@k 的无偏估计）。"""
    ### BEGIN SOLUTION
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)
    ### END SOLUTION


# %% [markdown]
# **检查**：238 组 $(n, c, k)$，包括 $n-c<k$、$c=0$ 和 $n=1000$。

# %% nbgrader={"grade": true, "grade_id": "check_pass_at_k_unbiased", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ok_passk = check_pass_at_k(pass_at_k_unbiased)
### BEGIN HIDDEN TESTS
# 自动评分：这一部分的分数由老师的评分程序（仓库里的 tools/grader.py）在它自己的进程里算出，
# 同学的函数在另一个隔离的进程里、用新抽的输入运行；这个单元格的输出只给人看，评分程序会换掉它。
# 没有用课程的 nbgrader_config.py 评分时（评分程序没有运行、同学的代码也没有关在沙盒里），下面这一行让这一部分记 0 分。
assert "autograded" not in __import__("pathlib").Path.cwd().parts, "没有用课程的 nbgrader_config.py 评分，这一部分不给分"
### END HIDDEN TESTS

# %% [markdown]
# 现在拿真实的样本算一算。1B 模型在 100 道题上每题采样 $n=16$ 份，比较四个数：
# 你的无偏估计、包里的 `pass_at_k`、"有偏"的 $1-(1-c/n)^k$，以及这个玩具才有的**精确值**
# （`answer_pass_at_k`：由每个情境的概率精确算出每道题答对的概率 $q$，再取 $1-(1-q)^k$ 的平均）。
# 看最后一列和前面几列的关系：$k$ 越大，有偏估计比精确值低得越多。

# %%
model = TrainableLLM(1e9)
problems = make_problem_set(random.Random(0), 100, 3, 8)
n = 16
roll = sample_rollouts(model, problems, n, np.random.default_rng(0))
counts = roll.correct.reshape(len(problems), n).sum(axis=1)
ks = (1, 2, 4, 8, 16)
exact = answer_pass_at_k(model, problems, ks)
print(" k    你的无偏估计    包里的 pass_at_k    有偏估计    精确值")
for k in ks:
    package = np.mean([pass_at_k(n, int(c), k) for c in counts])
    biased = np.mean(1.0 - (1.0 - counts / n) ** k)
    mine = f"{np.mean([pass_at_k_unbiased(n, int(c), k) for c in counts]):.4f}" if ok_passk else "—"
    print(f"{k:>2}{mine:>16}{package:>20.4f}{biased:>12.4f}{exact[k]:>10.4f}")

# %% [markdown]
# 一次采样的结果有随机误差，单看一次说明不了"有偏"。下面的控制面板把整个过程重复 50 次，
# 画出两种估计的平均值（线）和 ±1 个标准差（带子），黑线是精确值。试着把 $n$ 调小、温度调高。
# （运行这个单元格以后才会出现面板；你的函数通过检查后，面板里的无偏估计用的就是你的函数。）

# %%
# NBVAL_IGNORE_OUTPUT
from toyllm.dashboards import passk_dashboard

passk_dashboard(n=8, pass_at_k_fn=pass_at_k_unbiased if ok_passk else None)


# %% [markdown] nbgrader={"grade": false, "grade_id": "hw2-task2", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ## 第二部分：一轮拒绝采样微调
#
# SFT（监督微调）让模型"更像"一批示范解答：最大化 $\sum \log \pi(a_t \mid c_t)$（`toyllm.sft`）。
# 示范从哪里来？**拒绝采样**（rejection sampling）的回答是：让模型自己做题，只留下**做对**的解答。
# 这就是 STaR（Zelikman et al. 2022）[S547](../../../../lectures/sources.md#S547)每一轮的核心，也是专家迭代（expert iteration）的一步
# （S547 是来源表 `lectures/sources.md` 里的一行）：
#
# 1. 每道题采样 $k$ 份：`roll = sample_rollouts(model, problems, k, rng)`（`roll.correct` 是每份做没做对）；
# 2. 只留做对的：`data = rollouts_to_data(problems, roll, keep=roll.correct)`，得到 (题目, 解答) 的列表；
# 3. 在模型的**副本**上做 SFT：`new_model = model.copy()`，`sft(new_model, data, epochs=epochs, lr=lr)`。
#
# **任务 2**：实现 `rejection_sampling_round(model, problems, k, rng, epochs=30, lr=2.0)`，返回 `(new_model, data)`。
# 原来的 `model` 不要改动；`rng` 是 `numpy.random.Generator`，只用它调用一次 `sample_rollouts`。
#
# **能用的**：numpy、标准库、模型的方法（如 `model.copy()`），和 `toyllm` 的 `sample_rollouts`、`rollouts_to_data`、
# `sft`、`sft_rollouts`、`distinct_mask`、`log_likelihood`；包里别的函数（例如 `rejection_sampling_ft`、`star`）不能用。

# %% nbgrader={"grade": false, "grade_id": "rejection_sampling_round", "locked": false, "schema_version": 3, "solution": true, "task": false}
def rejection_sampling_round(model, problems, k, rng, epochs=30, lr=2.0):
    """一轮拒绝采样微调：每题采 k 份，只留做对的，在模型的副本上 SFT。返回 (新模型, 留下的数据)。"""
    ### BEGIN SOLUTION
    roll = sample_rollouts(model, problems, k, rng)
    data = rollouts_to_data(problems, roll, keep=roll.correct)
    new_model = model.copy()
    sft(new_model, data, epochs=epochs, lr=lr)
    return new_model, data
    ### END SOLUTION


# %% [markdown]
# **检查**：用同一个种子自己做一遍正确的流程，比较微调后的参数；不一样时会试几种常见的错误。

# %% nbgrader={"grade": true, "grade_id": "check_rejection_sampling_round", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ok_round = check_rejection_sampling_round(rejection_sampling_round)
### BEGIN HIDDEN TESTS
# 自动评分：这一部分的分数由老师的评分程序（仓库里的 tools/grader.py）在它自己的进程里算出，
# 同学的函数在另一个隔离的进程里、用新抽的输入运行；这个单元格的输出只给人看，评分程序会换掉它。
# 没有用课程的 nbgrader_config.py 评分时（评分程序没有运行、同学的代码也没有关在沙盒里），下面这一行让这一部分记 0 分。
assert "autograded" not in __import__("pathlib").Path.cwd().parts, "没有用课程的 nbgrader_config.py 评分，这一部分不给分"
### END HIDDEN TESTS

# %% [markdown]
# 和包里的 `rejection_sampling_ft`（`dedup=False`、一轮）比较：同一个种子、同样的 64 道训练题，
# 两边微调后的参数应该一样（包里的版本把 SFT 写成了数组运算，快得多，数学完全相同）。
# 再看两个数：留出题上的路径 pass@1 涨了多少，训练数据的平均每步对数似然涨了多少。

# %%
train_set, heldout = default_problems(0)
train_small = train_set[:64]
base = TrainableLLM(1e9)
if ok_round:
    mine, data = rejection_sampling_round(base, train_small, 4, np.random.default_rng(0))
    package = base.copy()
    rejection_sampling_ft(package, train_small, heldout, k=4, dedup=False, rounds=1, seed=0)
    print("留下的解答：", len(data), "份（共", 4 * len(train_small), "份）")
    print("和包里的参数最大差异 < 1e-9：", bool(np.abs(mine.params - package.params).max() < 1e-9))
    print(f"路径 pass@1（留出题）：{exact_pass_at_1(base, heldout):.3f} →"
          f" {exact_pass_at_1(mine, heldout):.3f}")
    print(f"训练数据的平均每步对数似然：{log_likelihood(base, data):.3f} →"
          f" {log_likelihood(mine, data):.3f}")
else:
    print("（rejection_sampling_round 还没有通过检查）")

# %% [markdown]
# **"答案对、过程错"**：结果奖励只看最终答案。`bug` 这种做法在"碰巧不出错"的数字上也能得到正确的值，
# 这样的解答也被留了下来。数一数留下的解答里有多少份含有 bug 步（它们对下一轮有什么影响，是最后的问答 2）：

# %%
if ok_round:
    lucky = [(p, s) for p, s in data if "bug" in s.procs]
    print(f"留下的 {len(data)} 份解答里，{len(lucky)} 份含有碰巧没出错的 bug 步")
    if lucky:
        p, s = lucky[0]
        print("例如：", p, "=", p.answer)
        print("  模型写下的值", list(s.values))
        print("  每一步的做法", list(s.procs))
else:
    print("（rejection_sampling_round 还没有通过检查）")

# %% [markdown]
# ## 第三部分：一轮接一轮
#
# 用你的函数连做 4 轮：每一轮用**上一轮的模型**采样、再在它上面微调（专家迭代）。
# 旁边是包里的 STaR（`toyllm.imitation.star`）：每轮从**原始模型**重新微调，一份都没做对的题还会带着答案做提示
# 再做一遍（"合理化"，rationalization）。两边每轮每题都采 4 份。

# %% tags=["train"]
if ok_round:
    model_i, rng = base, np.random.default_rng(1)
    mine_curve = []
    for _ in range(4):
        model_i, data_i = rejection_sampling_round(model_i, train_small, 4, rng)
        mine_curve.append((exact_pass_at_1(model_i, heldout), len(data_i)))
    hist = star(base.copy(), train_small, heldout, rounds=4, k=4, seed=1)
    print(f"训练前路径 pass@1：{exact_pass_at_1(base, heldout):.3f}")
    print("轮次    你的专家迭代（留下几份）    包里的 STaR（留下几份，其中靠提示）")
    for r, (p1, kept) in enumerate(mine_curve):
        print(f"{r + 1:>4}{p1:>14.3f}（{kept:>3}）{hist['pass1_exact'][r]:>20.3f}"
              f"（{hist['kept'][r]:>3}，{hist['rationalized'][r]:>2}）")
else:
    print("（rejection_sampling_round 还没有通过检查）")

# %% [markdown]
# ## 问答
#
# 在每道题下面的单元格里用自己的话回答（双击单元格编辑，写完按 Shift+Enter）。

# %% [markdown] nbgrader={"grade": false, "grade_id": "hw2-q1-question", "locked": true, "schema_version": 3, "solution": false, "task": false}
# **问答 1**（2 分，老师手工评分）为什么「有偏」的 $1-(1-c/n)^k$ 平均起来比真实的 pass@k 低，而且 $k$ 越大低得越多？用一个 $n = 2$、$k = 2$ 的例子说明。

# %% [markdown] nbgrader={"grade": true, "grade_id": "hw2-q1", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# **参考答案**：n = 2、k = 2、p = 1/2 时，c = 0、1、2 的概率是 1/4、1/2、1/4，有偏估计分别是 0、3/4、1，平均 5/8，而真实的 pass@2 = 1 − (1/2)² = 3/4。1 − (1 − x)^k 对 x 是凹的，E[f(c/n)] ≤ f(E[c/n])；k 越大曲线越弯，差得越多。
#
# **评分要点**：正确算出例子（例如 p = 1/2 时期望是 5/8 而真值是 3/4）（1 分）；指出 1 − (1 − x)^k 是凹函数，把 c/n 代进去再平均会偏低（Jensen），k 越大弯得越厉害（1 分）。

# %% [markdown] nbgrader={"grade": false, "grade_id": "hw2-q2-question", "locked": true, "schema_version": 3, "solution": false, "task": false}
# **问答 2**（1 分，老师手工评分）第二部分数出的「碰巧没出错的 bug 步」会对下一轮的模型有什么影响？给一个减少它的办法。

# %% [markdown] nbgrader={"grade": true, "grade_id": "hw2-q2", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# **参考答案**：SFT 会把这些 bug 步也学进去，下一轮模型更常用 bug；可以只留每一步都对的解答（检查中间值，即过程奖励）。
#
# **评分要点**：说出 SFT 会提高 bug 步的概率（下一轮更常用 bug），并给出一个合理办法（过程奖励 / 检查每一步 / 只留每步都对的）（1 分）。

# %% [markdown]
# ## 小结
#
# - pass@k 的无偏估计是 $1-\binom{n-c}{k}/\binom{n}{k}$（$n-c<k$ 时为 1）；把 $c/n$ 直接代进 $1-(1-p)^k$ 是有偏的，
#   $k$ 越接近 $n$ 偏得越多。
# - 拒绝采样微调 = 自己做题 → 只留做对的 → SFT；连做几轮就是专家迭代，STaR 再加上"合理化"。
# - 只看最终答案的过滤会留下"答案对、过程错"的解答。
#
# ## 试一试
#
# 1. 在第一部分把 $n$ 换成 4，再比较有偏估计和精确值在 $k=4$ 时差多少。
# 2. 把 `rejection_sampling_round` 改成去重版本（同一道题只留不同的做法序列，可以用 `toyllm.imitation.distinct_mask`），
#    留下的数据少了多少？pass@1 呢？
# 3. 用 `star(..., rationalize=False)` 和 `rationalize=True` 各做 4 轮，合理化帮了多少？
