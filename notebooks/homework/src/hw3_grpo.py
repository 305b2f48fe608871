# %% [markdown] nbgrader={"grade": false, "grade_id": "hw3-intro", "locked": true, "schema_version": 3, "solution": false, "task": false}
# # 作业三 · GRPO
#
# **你将练习**
# - 实现 GRPO 的**组内标准化优势**：$A_i = \dfrac{r_i - \mathrm{mean}(r)}{\mathrm{std}(r) + \epsilon}$；
# - 实现**裁剪替代损失** $\ell = -\min\big(\rho A,\ \mathrm{clip}(\rho, 1-\epsilon_\text{low}, 1+\epsilon_\text{high})\, A\big)$，
#   上下界分开（DAPO 的 clip-higher [S119](../../../../lectures/sources.md#S119)；编号指向仓库里的 `lectures/sources.md`）；
# - 把你的两个函数换进包里的训练循环 `toyllm.rl.train`，和包里的实现比较；
# - 用控制面板探索学习率、组大小、$\epsilon$、$\mu$、$\beta$、动态采样……对训练的影响。
#
# 对应讲义：[第 6 讲 · 规模与强化学习](../../../../lectures/lecture06_scaling_rl.md)（仓库里的 `lectures/lecture06_scaling_rl.md`）第 6 节「REINFORCE、RLOO、GRPO、Dr. GRPO：优势与它们的偏差」
# 和第 7 节「PPO 的裁剪、旧策略与 μ；KL 与 k1/k2/k3」。
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
# | 任务 1（第一部分） | `group_advantages` | 3 |
# | 任务 2（第二部分） | `clipped_surrogate` | 4 |
# | 问答 1、2（第四部分之后） | 文字回答，老师手工评分 | 2 + 1 |
# | **合计** | | **10** |
#
# 最后两道问答题写文字回答，由老师手工评分。把「为什么」说清楚就好，两三句话足够。
#
# **怎么做这份作业**：把 `# YOUR CODE HERE` 下面的 `raise NotImplementedError()` 换成你的代码，运行紧跟着的「检查」单元格。
# 没做完也可以从头运行到尾：没通过检查的函数，后面会先用包里的版本代替。

# %% [markdown]
# 先导入要用的东西。`toyllm.rl` 是强化学习引擎：所有算法都是同一个循环，`preset("grpo")` 是 GRPO 的一组选项。

# %% nbgrader={"grade": false, "grade_id": "hw3-setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import matplotlib.pyplot as plt
import numpy as np

from toyllm import TrainableLLM
from toyllm import rl
from toyllm.homework.hw3 import check_clipped_surrogate, check_group_advantages
from toyllm.plotstyle import use_chinese_font
from toyllm.rl import default_problems, preset, train

use_chinese_font()
print(rl.presets_table(["grpo", "dapo"]))


# %% [markdown] nbgrader={"grade": false, "grade_id": "hw3-task1", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ## 第一部分：组内标准化的优势
#
# 每道题采样 $G$ 份解答（一"组"），奖励 $r_i$ 是 1（做对）或 0（做错）。同一组的 $G$ 份在数组里**连续排列**：
# 第 $0 \ldots G-1$ 个是第一道题的，依此类推。GRPO 的优势是
#
# $$A_i = \frac{r_i - \mathrm{mean}(r_{\text{同组}})}{\mathrm{std}(r_{\text{同组}}) + \epsilon}, \qquad \epsilon = 10^{-4},$$
#
# 标准差用**样本标准差**（除以 $G-1$）；TRL 的 GRPO 也是这样算，分母也是 std + 1e-4
# [S700](../../../../lectures/sources.md#S700) [S703](../../../../lectures/sources.md#S703)。奖励全相同的组（全对或全错）标准差是 0，优势全是 0：
# 这一组对梯度没有贡献。（方括号里的编号指向仓库里的 `lectures/sources.md`：出处和原文。）
#
# **任务 1**：实现 `group_advantages(rewards, group_size, eps=1e-4)`，返回和 `rewards` 形状相同的数组。
# 提示：`reshape(-1, group_size)` 把数组排成每行一组；`np.std(..., ddof=1)` 是样本标准差。
#
# **能用的**：numpy 和 Python 的标准库（这个任务不能用 `toyllm`）。

# %% nbgrader={"grade": false, "grade_id": "group_advantages", "locked": false, "schema_version": 3, "solution": true, "task": false}
def group_advantages(rewards, group_size, eps=1e-4):
    """GRPO 的组内标准化优势：(r − 组平均) / (组内样本标准差 + eps)。"""
    ### BEGIN SOLUTION
    r = np.asarray(rewards, dtype=float).reshape(-1, group_size)
    mean = r.mean(axis=1, keepdims=True)
    std = r.std(axis=1, ddof=1, keepdims=True)
    return ((r - mean) / (std + eps)).reshape(-1)
    ### END SOLUTION


# %% [markdown]
# **检查**：6 组奖励，包括全对、全错的组，$G$ = 2、3、4、8，还有不是 0 / 1 的奖励。

# %% nbgrader={"grade": true, "grade_id": "check_group_advantages", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
ok_adv = check_group_advantages(group_advantages)
### BEGIN HIDDEN TESTS
# 自动评分：这一部分的分数由老师的评分程序（仓库里的 tools/grader.py）在它自己的进程里算出，
# 同学的函数在另一个隔离的进程里、用新抽的输入运行；这个单元格的输出只给人看，评分程序会换掉它。
# 没有用课程的 nbgrader_config.py 评分时（评分程序没有运行、同学的代码也没有关在沙盒里），下面这一行让这一部分记 0 分。
assert "autograded" not in __import__("pathlib").Path.cwd().parts, "没有用课程的 nbgrader_config.py 评分，这一部分不给分"
### END HIDDEN TESTS

# %% [markdown]
# 和包里的几种优势比一比（`rl.group_advantages` 的 `method` 选项）。两组各 4 份：第一组只有一份做对，第二组全对。
# 注意留一法（RLOO）和"减组平均"正好差 $G/(G-1)$ 倍，而全对的那一组在每种带基线的方法里都是 0。

# %%
rewards = np.array([1, 0, 0, 0, 1, 1, 1, 1])
for method in ("none", "mean", "rloo", "grpo"):
    print(f"{method:>5}：", np.round(rl.group_advantages(rewards, 4, method), 4))
if ok_adv:
    print(" 你的：", np.round(group_advantages(rewards, 4), 4))


# %% [markdown] nbgrader={"grade": false, "grade_id": "hw3-task2", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ## 第二部分：裁剪替代损失
#
# 每批数据更新 $\mu$ 次时，后几次更新用的参数已经和采样时不同了。重要性比率 $\rho = \pi_\theta(a \mid c) / \pi_\text{old}(a \mid c)$
# 衡量这一步的概率变了多少。PPO / GRPO 的损失（每一步一个数）是
#
# $$\ell = -\min\Big(\rho A,\ \mathrm{clip}\big(\rho,\ 1-\epsilon_\text{low},\ 1+\epsilon_\text{high}\big) A\Big).$$
#
# 好动作（$A>0$）的 $\rho$ 超过 $1+\epsilon_\text{high}$ 以后损失不再下降，坏动作（$A<0$）的 $\rho$ 低于 $1-\epsilon_\text{low}$
# 以后同理 —— 这一批数据已经推得够远了。DAPO 的 clip-higher 让 $\epsilon_\text{high} = 0.28 > \epsilon_\text{low} = 0.2$ [S119](../../../../lectures/sources.md#S119)（出处见仓库里的 `lectures/sources.md`）。
#
# **任务 2**：实现 `clipped_surrogate(ratio, adv, eps_low=0.2, eps_high=0.2)`，返回每一步的损失（和 `ratio` 同形状）。
#
# **能用的**：numpy 和 Python 的标准库（这个任务不能用 `toyllm`）。

# %% nbgrader={"grade": false, "grade_id": "clipped_surrogate", "locked": false, "schema_version": 3, "solution": true, "task": false}
def clipped_surrogate(ratio, adv, eps_low=0.2, eps_high=0.2):
    """每一步的裁剪替代损失 −min(ρA, clip(ρ, 1 − eps_low, 1 + eps_high)·A)。"""
    ### BEGIN SOLUTION
    ratio = np.asarray(ratio, dtype=float)
    adv = np.asarray(adv, dtype=float)
    clipped = np.clip(ratio, 1.0 - eps_low, 1.0 + eps_high)
    return -np.minimum(ratio * adv, clipped * adv)
    ### END SOLUTION


# %% [markdown]
# **检查**：13 个重要性比率（包括裁剪边界两侧）× 正负两种优势 × 3 组 $(\epsilon_\text{low}, \epsilon_\text{high})$。

# %% nbgrader={"grade": true, "grade_id": "check_clipped_surrogate", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
ok_surr = check_clipped_surrogate(clipped_surrogate)
### BEGIN HIDDEN TESTS
# 自动评分：这一部分的分数由老师的评分程序（仓库里的 tools/grader.py）在它自己的进程里算出，
# 同学的函数在另一个隔离的进程里、用新抽的输入运行；这个单元格的输出只给人看，评分程序会换掉它。
# 没有用课程的 nbgrader_config.py 评分时（评分程序没有运行、同学的代码也没有关在沙盒里），下面这一行让这一部分记 0 分。
assert "autograded" not in __import__("pathlib").Path.cwd().parts, "没有用课程的 nbgrader_config.py 评分，这一部分不给分"
### END HIDDEN TESTS

# %% [markdown]
# 把损失画成 $\rho$ 的函数（$\epsilon_\text{low}=0.2$、$\epsilon_\text{high}=0.28$）。左边 $A=+1$：$\rho > 1.28$ 以后是平的；
# 右边 $A=-1$：$\rho < 0.8$ 以后是平的。平的地方梯度为 0 —— 这就是"裁剪"。
# （你的函数没通过检查时，这里画的是包里的 `rl.clipped_surrogate`。）

# %%
surrogate = (clipped_surrogate if ok_surr
             else (lambda r, a, lo, hi: rl.clipped_surrogate(r, a, lo, hi).loss))
rho = np.linspace(0.5, 1.6, 221)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
for ax, a in zip(axes, (1.0, -1.0)):
    ax.plot(rho, surrogate(rho, np.full_like(rho, a), 0.2, 0.28), color="C0", label="裁剪替代损失")
    ax.plot(rho, -rho * a, color="0.6", ls="--", label="不裁剪：−ρA")
    for x in (0.8, 1.28):
        ax.axvline(x, color="C3", lw=0.8, ls=":")
    ax.set_title(f"A = {a:+g}")
    ax.set_xlabel(r"重要性比率 $\rho$")
    ax.set_ylabel("每步损失")
    ax.legend()
    ax.grid(alpha=0.3)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 第三部分：换进训练循环
#
# `train(model, config, train_set, heldout, advantage_fn=..., surrogate_fn=...)` 用你的函数代替包里的
# 优势和替代损失（梯度由引擎从你的损失算出来）。下面用同一个随机种子训练两次：一次用包里的实现，一次用你的，
# 设置是 GRPO，但学习率 5、每批更新 $\mu=4$ 次、$\epsilon_\text{high}=0.28$，这样裁剪真的会发生（下一段的表里，学习率 5、$\mu = 4$ 那一行：被裁的是下界）。
# 下面打印一张表：每 10 次迭代一行，两列是两次训练在留出题上的路径 pass@1。你的函数写对了，两列的数应该一样；
# 最后一行检查两次训练的 pass@1 处处相差不到 $10^{-6}$。

# %% tags=["train"]
train_set, heldout = default_problems(0)
config = preset("grpo", iterations=40, batch_problems=16, lr=5.0, mu=4, eps_high=0.28)
mine = {"advantage_fn": group_advantages if ok_adv else None,
        "surrogate_fn": clipped_surrogate if ok_surr else None}
# 第二列用的是谁的函数：没通过检查的那个，用的是包里的版本
mine_label = {(True, True): "你的实现", (True, False): "你的优势 + 包里的替代损失",
              (False, True): "包里的优势 + 你的替代损失",
              (False, False): "包里的实现（你的还没通过）"}[(bool(ok_adv), bool(ok_surr))]
package_model, mine_model = TrainableLLM(1e9), TrainableLLM(1e9)
hist_package = train(package_model, config, train_set, heldout)
hist_mine = train(mine_model, config, train_set, heldout, **mine)
print(f"留出题上的路径 pass@1。第一列：包里的实现；第二列：{mine_label}")
print("迭代    包里的实现    第二列")
for i in range(0, config.iterations, 10):
    print(f"{hist_package['iteration'][i]:>4}{hist_package['pass1_exact'][i]:>14.4f}"
          f"{hist_mine['pass1_exact'][i]:>14.4f}")
gap = np.abs(np.array(hist_package["pass1_exact"]) - np.array(hist_mine["pass1_exact"])).max()
print(f"训练前 {hist_package.meta['start_pass1_exact']:.4f}，训练后"
      f" {hist_package.meta['final_pass1_exact']:.4f}")
print("两次训练的路径 pass@1 处处相差 < 1e-6：", bool(gap < 1e-6))

# %% [markdown]
# 裁剪什么时候发生？下面用包里的实现，只改每批更新的次数 $\mu$ 和学习率，看裁剪比例（被裁剪的步占多少，写成百分数）。
# "下界"是优势为负、$\rho < 1-\epsilon_\text{low}$ 被裁的，"上界"是优势为正、$\rho > 1+\epsilon_\text{high}$ 被裁的。
# 一步也没有裁剪时写"0（一次也没有）"。

# %% tags=["train"]
def share(x):
    """裁剪比例写成百分数；恰好是 0 时写明一次也没有。"""
    return "0（一次也没有）" if x == 0 else f"{x:.3%}"


for lr in (5.0, 30.0):
    for mu in (1, 4, 8):
        hist = train(TrainableLLM(1e9),
                     preset("grpo", iterations=20, batch_problems=16, lr=lr, mu=mu, eps_high=0.28),
                     train_set, heldout)
        print(f"学习率 {lr:>4g}，μ = {mu}：平均裁剪比例 下界 {share(np.mean(hist['clip_low']))}，"
              f"上界 {share(np.mean(hist['clip_high']))}")

# %% [markdown]
# 看这六行：$\mu = 1$ 的两行裁剪比例是多少？"下界"和"上界"一样多吗？上界什么时候才不是 0？
# 先记下你看到的，最后的问答会问为什么。
#
# ## 第四部分：控制面板
#
# 面板没有运行按钮：每次松开滑块、换一个下拉框的选项或者勾选复选框，面板都用新的设置**从头训练**一遍（要几秒钟），
# 画出：留出题上的路径 pass@1 和训练时采样的 pass@1；熵和到参考策略的精确 KL；训练前后每个情境选「正确」的概率。
# 下拉框「优势和替代损失用」可以在「包里的参考实现」和「你写的函数」之间切换（至少一个函数通过检查后才有这个下拉框；
# 没有它时，面板运行的是包里的参考实现）。
#
# 怎么知道切换了？看图的最上面一行：左边写明这张图是谁的函数训练出来的（你写的函数是红字，包里的参考实现是蓝字），
# 右边是这次训练的裁剪比例。你的函数写对了，两种实现算出的数就一样，曲线也一模一样 —— 这正说明你写对了，变的只有这行字。
#
# 图上面的说明有四行：实现和优势（这次训练用的是哪种优势）、设置、结果、裁剪比例。
# 你写的优势函数只算 GRPO 的优势，所以选「你写的函数」而你的优势函数通过了检查时，
# 「优势」下拉框会变灰，标成"优势（此项不用）"；想比较几种优势，要先选「包里的参考实现」。（运行这个单元格以后才会出现面板。）

# %%
# NBVAL_IGNORE_OUTPUT
from toyllm.dashboards import grpo_dashboard

grpo_dashboard(advantage_fn=mine["advantage_fn"], surrogate_fn=mine["surrogate_fn"])

# %% [markdown]
# ## 问答
#
# 在每道题下面的单元格里用自己的话回答（双击单元格编辑，写完按 Shift+Enter）。

# %% [markdown] nbgrader={"grade": false, "grade_id": "hw3-q1-question", "locked": true, "schema_version": 3, "solution": false, "task": false}
# **问答 1**（2 分，老师手工评分）$\mu = 1$ 时为什么从不裁剪？这时损失的值接近 0，梯度为什么不是 0？
#
# TRL 的用户也在 issue 里问过"为什么 GRPO 的损失从 0 开始"[S701](../../../../lectures/sources.md#S701)（出处见仓库里的 `lectures/sources.md`）。

# %% [markdown] nbgrader={"grade": true, "grade_id": "hw3-q1", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# **参考答案**：μ = 1 时算损失的参数就是采样时的参数，ρ = π_θ/π_old ≡ 1，永远在 [1 − ε_low, 1 + ε_high] 里。损失 −ρA 的值是 −A 的平均（组内标准化后接近 0），但它对参数的导数是 −A ρ ∇log π = −A ∇log π，正是策略梯度，不是 0。
#
# **评分要点**：说出 μ = 1 时计算损失的参数就是采样的参数，ρ ≡ 1，在区间内（1 分）；说出 ∂ρ/∂θ = ρ ∇log π ≠ 0，梯度就是 A·∇log π（策略梯度），和损失的值无关（1 分）。

# %% [markdown] nbgrader={"grade": false, "grade_id": "hw3-q2-question", "locked": true, "schema_version": 3, "solution": false, "task": false}
# **问答 2**（1 分，老师手工评分）为什么第三部分里上界的裁剪比例几乎一直是 0？clip-higher 放宽的是哪些动作？

# %% [markdown] nbgrader={"grade": true, "grade_id": "hw3-q2", "locked": false, "points": 1, "schema_version": 3, "solution": true, "task": false}
# **参考答案**：优势为正的步大多是做对的解答里的 correct 步，π_old 本来就高，ρ = π_θ/π_old ≤ 1/π_old 很难超过 1.28；上界只会裁到低概率的好动作，clip-higher 放宽的正是它们。
#
# **评分要点**：说出 ρ ≤ 1/π_old、优势为正的步大多是概率已经很高的 correct 步，并说出 clip-higher 管的是低概率的好动作（1 分）。

# %% [markdown]
# ## 小结
#
# - GRPO 的优势 = 组内减平均、除以组内样本标准差（加 $\epsilon$）；奖励全相同的组优势全为 0，对梯度没有贡献。
#   留一法（RLOO）比"减组平均"大 $G/(G-1)$ 倍。
# - 裁剪替代损失在 $\rho$ 离开 $[1-\epsilon_\text{low}, 1+\epsilon_\text{high}]$、又对目标有利时把梯度截成 0；
#   clip-higher 把上界单独放宽（$\epsilon_\text{high} > \epsilon_\text{low}$）。
# - 同一个循环，换掉优势和损失两个小函数，就能从 REINFORCE 走到 GRPO。DAPO 在 GRPO 上加了几个技巧 [S119](../../../../lectures/sources.md#S119)：
#   包里的 `dapo` 预设改了 $\epsilon_\text{high}$、动态采样、按步聚合和 $\mu$ 等选项（`rl.diff_presets("grpo", "dapo")` 列出全部；编号指向仓库里的 `lectures/sources.md`）。
#
# ## 试一试
#
# 1. 在面板里先把「优势和替代损失用」选成「包里的参考实现」（选「你写的函数」时「优势」下拉框不起作用），再把「优势」
#    从 GRPO 换成"无基线（REINFORCE）"，其他不变：pass@1 涨得更快还是更慢？熵呢？
# 2. clip-higher 什么时候起作用？先保持 $\mu = 1$，把「ε_high」从 0.2 调到 0.28（clip-higher）：图变了吗？看说明的最后一行。
#    再把「每批更新次数 μ」调到 4，在 0.2 和 0.28 之间来回切换：还是一样吗？最后把「学习率」调到 30（$\mu$ 仍是 4），
#    再切换一次：这次熵的曲线变了，上界的裁剪比例也不再是 0。$\epsilon_\text{high}$ 只改被上界裁剪的那些步，
#    这个比例是 0 时调它什么也不改变。熵是高了还是低了，只是"这一次训练"：换个「随机种子」可能就反过来，
#    讲义 8.2 节用多个种子配对比较才下判断。
# 3. 打开「动态采样」并把模型调大到 1e11（大部分组全对）：和不打开相比，每次迭代多采样了多少份？
