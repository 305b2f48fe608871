# %% [markdown]
# # 07 · 规模
#
# **你将学到**
# - 基座越大，RL 要做的事越少：从 1e8 到 1e11 四种大小出发做 GRPO，到同一个目标 pass@1 要采多少样本；
# - RL 的"计算曲线"：pass@1 对累计采样数画出来是一条 S 形曲线，拟合出渐近线 $A$、效率 $B$、半程计算量 $C_{\text{mid}}$；
# - 用前一半的训练外推后一半：什么时候可信；
# - $k$ 很大时，基座模型会不会追上甚至超过 RL 之后的模型（Yue et al. 2025 的问题）[S552](../lectures/sources.md#S552)：玩具里精确地算出来，并说明为什么是这样。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 10 节（RL 的规模：计算曲线；RL 是"教新本事"还是"磨旧本事"），
# 以及第 2 节（规模与测试时计算）。

# %% [markdown]
# ## 0. 准备
#
# 训练题和留出题用 `default_problems(0)`：256 道训练题、200 道留出题，每道 3~8 步。四种基座大小：1e8（1 亿参数）到 1e11（1000 亿参数）。
# 目标：留出题上的路径 pass@1 达到 0.9。
#
# 先看起点（讲义第 2 节）：训练前，每种大小在留出题上的 pass@1 —— 答对的精确概率（`answer_probs`），和训练记录用的路径 pass@1
# （走对路径的概率，每次迭代都要算，所以用快的那个；它略小，差的是"写错后又被修好"的路径）。看输出：模型每大 10 倍，起点高一截。

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from toyllm import CONTEXT_NAMES, CONTEXTS, TrainableLLM, fmt_size
from toyllm.exact import (answer_pass_at_k, answer_probs, correct_paths, exact_pass_at_1,
                          step_right_probs)
from toyllm.plotstyle import use_chinese_font
from toyllm.rl import default_problems, preset, train
from toyllm.scaling import fit_sigmoid, reach_target, sigmoid_curve
from toyllm.tables import Table

use_chinese_font()
train_set, heldout = default_problems(0)
SIZES = (1e8, 1e9, 1e10, 1e11)
TARGET = 0.9
Table(["大小", "训练前的 pass@1（答对的概率）", "训练前的路径 pass@1"],
      [[fmt_size(size), answer_probs(TrainableLLM(size), heldout).mean(),
        exact_pass_at_1(TrainableLLM(size), heldout)]
       for size in SIZES])

# %% [markdown]
# ## 1. 基座越大，RL 要做的越少
#
# 每种大小都用默认的 `grpo` 预设训练 200 次迭代（每次 32 道题 × 8 份，lr = 2，种子 0）。
# 训练记录里的 `samples` 是累计采样的解答数，我们把它当作 RL 用掉的计算量 $C$；`pass1_exact` 是每次更新后在留出题上的路径 pass@1。
# `reach_target(h, TARGET)` 找训练记录里第一次 pass@1 ≥ 目标的那一行，返回（迭代次数, 累计样本数），没到就返回 `None`。
#
# 最后一列是训练后答对的精确概率（`answer_probs`，只在结束时算一次）。
#
# 看输出：起点越高，到 pass@1 ≥ 0.9 需要的迭代次数和样本数越少；RL 带来的提升（最终 − 起点）也越小。

# %%
runs = {}
for size in SIZES:
    model = TrainableLLM(size)
    runs[size] = (model, train(model, preset("grpo"), train_set, heldout))

rows = []
for size, (model, h) in runs.items():
    R0, final = h.meta["start_pass1_exact"], h["pass1_exact"][-1]
    it, n = reach_target(h, TARGET) or ("没到", "—")
    rows.append([fmt_size(size), R0, final, final - R0, it, n, answer_probs(model, heldout).mean()])
Table(["基座", "起点 R0", "最终", "提升", f"到 {TARGET} 的迭代", f"到 {TARGET} 的样本数",
       "最终（答对的概率）"], rows)

# %% [markdown]
# 画出来：横轴是累计采样数（对数刻度），纵轴是留出题上的路径 pass@1，虚线是目标 0.9。
#
# 看图：四条曲线都在上升，大的基座一开始就在高处，更早越过虚线。

# %%
fig, ax = plt.subplots(figsize=(8, 4.5))
for i, (size, (model, h)) in enumerate(runs.items()):
    ax.plot(h["samples"], h["pass1_exact"], color=f"C{i}", label=f"基座 {fmt_size(size)}")
ax.axhline(TARGET, color="0.5", linestyle="--", linewidth=1, label=f"目标 {TARGET}")
ax.set_xscale("log")
ax.set_xlabel("RL 计算量 C：累计采样的解答数")
ax.set_ylabel("留出题上的路径 pass@1")
ax.set_title("GRPO：不同大小的基座")
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 2. S 形的计算曲线（讲义 10.1）
#
# ScaleRL（Khatri et al. 2025）[S553](../lectures/sources.md#S553)把表现 $R$ 对 RL 计算量 $C$ 拟合成
#
# $$R(C) - R_0 = \frac{A - R_0}{1 + (C_{\text{mid}}/C)^{B}} .$$
#
# $R_0$ 是训练开始时的值（这里直接用训练前的路径 pass@1），$A$ 是渐近线，$B$ 是效率（曲线多陡），$C_{\text{mid}}$ 是拿到一半提升需要的计算量。
#
# 包里的 `toyllm.scaling.fit_sigmoid(C, R, R0)` 做这个拟合（确定性的，不用随机数）：记 $x = \log C$、$\ell = \log C_{\text{mid}}$，
# 先在 $(B, \ell)$ 的网格上找起点（$A$ 对固定的 $B, \ell$ 是线性最小二乘），再做 Levenberg-Marquardt（带阻尼的 Gauss-Newton），直到误差不能再变小。
# 给了 `A` 时把渐近线固定住，只拟合 $B$ 和 $C_{\text{mid}}$。它返回一个 `SigmoidFit`：`.A`、`.B`、`.C_mid`、`.rmse`，
# 以及 `.predict(C)`（这条曲线在 $C$ 处的值，可以外推）。`sigmoid_curve(C, R0, A, B, C_mid)` 按参数算曲线。
#
# 看输出：这个函数在一条**已知参数**的曲线上能不能把参数找回来。

# %%
C_test = np.arange(256, 51201, 256, dtype=float)
test_fit = fit_sigmoid(C_test, sigmoid_curve(C_test, 0.3, 0.95, 1.5, 8000.0), 0.3)
print(f"真值 A = 0.95，B = 1.5，C_mid = 8000；拟合 A = {test_fit.A:.4f}，B = {test_fit.B:.4f}，"
      f"C_mid = {test_fit.C_mid:.1f}，"
      f"误差 {'< 1e-9' if test_fit.rmse < 1e-9 else f'{test_fit.rmse:.1e}'}")

# %% [markdown]
# 现在拟合四次训练。先让 $A$ 自由；再把 $A$ 固定为 1 —— pass@1 不可能超过 1，而玩具里不加 KL 时"每一步都选 correct"这个最优策略总能学到，所以 1 就是真正的上限。
#
# 看输出：
# - 两种拟合的误差（RMSE）都很小：曲线确实是 S 形的。
# - 自由拟合的 $A$ 略大于 1：训练结束时曲线还在爬，数据里看不到渐近线，$A$ 定得不准。
# - 基座越大，$B$ 越小（曲线越平缓）；$C_{\text{mid}}$ 在四种大小之间差别不大：大基座省下的 RL 计算量，主要来自起点更高、要补的差距更小。

# %%
fits, rows = {}, []
for size, (model, h) in runs.items():
    C, R, R0 = np.array(h["samples"],
                        dtype=float), np.array(h["pass1_exact"]), h.meta["start_pass1_exact"]
    free, fixed = fit_sigmoid(C, R, R0), fit_sigmoid(C, R, R0, A=1.0)
    fits[size] = (C, R, R0, free, fixed)
    rows.append([fmt_size(size), R0, free.A, f"{free.B:.3f}", f"{free.C_mid:.0f}", free.rmse,
                 f"{fixed.B:.3f}", f"{fixed.C_mid:.0f}", fixed.rmse])
Table(["基座", "R0", "A（自由）", "B", "C_mid", "RMSE", "A = 1 时：B", "C_mid", "RMSE"], rows)

# %% [markdown]
# 画出来：点是训练记录（每 10 次迭代画一个），实线是 $A = 1$ 的拟合，虚线是自由拟合。
#
# 看图：两条拟合线在数据范围内几乎重合，在数据右边（更多计算量）才分开 —— 渐近线只能靠外推。

# %%
fig, ax = plt.subplots(figsize=(8, 4.5))
grid = np.logspace(np.log10(256), np.log10(2e6), 200)
for i, (size, (C, R, R0, free, fixed)) in enumerate(fits.items()):
    ax.plot(C[::10], R[::10], "o", color=f"C{i}", markersize=3)
    ax.plot(grid, fixed.predict(grid), color=f"C{i}",
            label=f"{fmt_size(size)}：B = {fixed.B:.2f}，C_mid = {fixed.C_mid:.0f}")
    ax.plot(grid, free.predict(grid), color=f"C{i}", linestyle="--", linewidth=1)
ax.axvline(C[-1], color="0.7", linewidth=1)
ax.set_xscale("log")
ax.set_xlabel("RL 计算量 C：累计采样的解答数")
ax.set_ylabel("留出题上的路径 pass@1")
ax.set_title("S 形拟合（实线 A = 1，虚线 A 自由；竖线是训练的终点）")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()

# %% [markdown]
# ### 2.1 用前一半外推后一半
#
# ScaleRL 的用处是**预测**：用小规模的运行拟合曲线，外推到大规模。这里只用前 100 次迭代（一半的计算量）拟合，预测第 200 次迭代的 pass@1，再和真正的值比较。
#
# 看输出：固定 $A = 1$ 时预测得很准；$A$ 自由时，早期数据里渐近线几乎没有约束，拟合出的 $A$ 偏高，预测也偏高。知道上限在哪里，外推就可靠得多。

# %%
rows = []
for size, (C, R, R0, _, _) in fits.items():
    half = len(C) // 2
    early_free, early_fixed = fit_sigmoid(C[:half], R[:half], R0), fit_sigmoid(C[:half], R[:half],
                                                                               R0, A=1.0)
    rows.append([fmt_size(size), R[-1], early_free.predict(C[-1]), early_free.A,
                 early_fixed.predict(C[-1])])
Table(["基座", "真正的最终值", "预测（A 自由）", "拟合的 A", "预测（A = 1）"], rows)

# %% [markdown]
# ## 3. k 很大时，基座能不能追上 RL 之后的模型？（讲义 10.2）
#
# Yue et al.（2025）发现[S552](../lectures/sources.md#S552)：$k$ 小时 RL 模型的 pass@k 更高；$k$ 很大（例如 256）时，基座追上来，甚至超过 RL 模型。
# 玩具里不用采样，可以**精确**地算：第 $i$ 道题答对的概率是 $q_i$（`answer_probs`），$k$ 次独立采样至少对一次的概率是 $1 - (1 - q_i)^k$，
#
# $$\text{pass@}k = \frac{1}{P}\sum_{i=1}^{P} \Big[1 - (1 - q_i)^k\Big] ,$$
#
# $P$ 是题目的个数（讲义开头的记号表：$P$ 只表示个数，概率写成 $p_i$、$q_i$ 或 $\Pr$）。
#
# `answer_pass_at_k(model, heldout, ks)` 就是这个式子。$k$ 从 1 到 1024，比较每种大小的基座和它 GRPO 之后的模型。
#
# 看输出：每一格是"基座 − GRPO"。差距在 $k = 1$ 时最大，随 $k$ 迅速缩小；在算过的每一个 $k$ 上，这个差都**不是正的**：基座没有超过。

# %%
KS = tuple(2 ** i for i in range(11))
curves = {}
for size, (model, h) in runs.items():
    curves[size] = (answer_pass_at_k(TrainableLLM(size), heldout, KS),
                    answer_pass_at_k(model, heldout, KS))

display(Table(["k"] + [fmt_size(s) for s in SIZES],
              [[k] + [round(curves[s][0][k] - curves[s][1][k],
                            4) + 0.0 for s in SIZES] for k in KS],
              title="基座 − GRPO 的 pass@k（精确）"))
rows = []
for s in SIZES:
    worst = max(curves[s][0][k] - curves[s][1][k] for k in KS)
    rows.append([fmt_size(s), "≤ 0" if worst <= 0 else f"{worst:.2e}", curves[s][0][1024],
                 curves[s][1][1024]])
display(Table(["大小", "所有 k 里「基座 − GRPO」的最大值", "k = 1024 时基座", "k = 1024 时 GRPO"],
              rows))

# %% [markdown]
# 画出 1e8 和 1e9 两种大小的 pass@k 曲线（横轴是对数刻度）。
#
# 看图：两条曲线都趋向 1，RL 的曲线始终在上面；$k$ 越大，两条越靠近。

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, size in zip(axes, (1e8, 1e9)):
    base, rl = curves[size]
    ax.plot(KS, [base[k] for k in KS], "o-", label=f"基座 {fmt_size(size)}")
    ax.plot(KS, [rl[k] for k in KS], "s-", label="GRPO 之后")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("k")
    ax.set_title(f"{fmt_size(size)}：pass@k（精确）")
    ax.legend()
axes[0].set_ylabel("留出题上的 pass@k")
fig.tight_layout()
plt.show()

# %% [markdown]
# ### 3.1 这几次训练里基座为什么没有反超：看每一道题
#
# 对**一道**题，$1 - (1 - q)^k$ 随 $q$ 单调增加，对每个 $k$ 都是。所以只要 RL 没有让任何一道题的 $q_i$ 变小，
# RL 模型的 pass@k 就在**每一个** $k$ 上都不低于基座；而两者都 → 1，因为每道题的 $q_i > 0$。
#
# 看输出（1e9）：有几道题 RL 让 $q_i$ 变小了；最难的那道题基座的 $q_i$ 是多少，基座要采多少次才有 99% 的把握做对它。
# 看图：每个点是一道题，全部在对角线上方。

# %%
size = 1e9
base_q, rl_q = answer_probs(TrainableLLM(size), heldout), answer_probs(runs[size][0], heldout)
hardest = int(np.argmin(base_q))
k99 = int(np.ceil(np.log(0.01) / np.log1p(-base_q[hardest])))
print(f"{len(heldout)} 道留出题里，GRPO 让 q_i 变小的题：{int((rl_q < base_q).sum())} 道；"
      f"q_i 的最小增幅 {np.min(rl_q - base_q):+.4f}")
print(f"基座最难的一道题：q = {base_q[hardest]:.4f}（GRPO 之后 {rl_q[hardest]:.4f}），"
      f"基座要采 k = {k99} 次，这道题的 pass@k 才到 0.99")

fig, ax = plt.subplots(figsize=(5.5, 5))
ax.scatter(base_q, rl_q, s=12)
ax.plot([0, 1], [0, 1], color="0.5", linewidth=1)
ax.set_xlabel(r"基座的 $q_i$")
ax.set_ylabel(r"GRPO 之后的 $q_i$")
ax.set_title(f"{fmt_size(size)}：每道留出题答对的概率")
fig.tight_layout()
plt.show()

# %% [markdown]
# 为什么没有一道题变差？沿正确路径，第 $t$ 步"算对"的概率 $s_t = \pi(\text{correct}\mid c_t) + \pi(\text{bug}\mid c_t)\,\mathbb{1}[\text{bug 不咬人}]$
# 只取决于这一步的**情境**（`toyllm.exact.step_right_probs`；这里写 $s_t$，不写 $r_t$，因为 $r$ 留给奖励），一道题走对路径的概率
# $p_i = \prod_t s_t$ 由它经过的那些 $s_t$ 决定。参数按情境共享，不按题目。所以只要每个情境的 $s_t$ 都上升了，每道题的 $p_i$ 就都变大了；
# 答对的概率 $q_i$ 是 $p_i$ 再加上"写错后又被修好"的一小部分，它跟着 $p_i$ 走（上面的图：没有一道题变差）。
#
# 看输出：12 个情境里，这一步做对的概率训练前后各是多少；变小的情境有几个。

# %%
paths = correct_paths(heldout)
r_base = step_right_probs(TrainableLLM(size), paths)
r_rl = step_right_probs(runs[size][0], paths)
rows = []
for i, key in enumerate(CONTEXTS):
    sel = paths.mask & (paths.ctx == i)
    if sel.any():
        rows.append([CONTEXT_NAMES[key], r_base[sel][0], r_rl[sel][0]])
display(Table(["情境", "训练前", "GRPO 之后"], rows))
print(f"这一步做对的概率变小的情境：{sum(after < before for _, before, after in rows)} 个")

# %% [markdown]
# ### 3.2 曲线什么时候会交叉？
#
# 平均的 pass@k 曲线会不会交叉，完全取决于每道题的 $q_i$ 怎样变化。Yue et al. 看到的反超[S552](../lectures/sources.md#S552)，来自 RL 让**某些**题的 $q_i$ 变小（覆盖面变窄）：
# $k$ 小时，平均值由变好的题主导；$k$ 大时，变好的题两边都已接近 1，剩下的差别全来自变差的那些题。
#
# 用两道**假想**的题演示（这些 $p$ 是手选的，不是玩具算出来的）：RL 把第 1 题从 0.3 提到 0.9，却把第 2 题从 0.02 压到 0.001。
#
# 看输出：$k$ 小时 RL 领先，从某个 $k$ 起基座反超。

# %%
p_base_demo, p_rl_demo = np.array([0.3, 0.02]), np.array([0.9, 0.001])
rows = []
for k in KS:
    b, r = np.mean(1 - (1 - p_base_demo) ** k), np.mean(1 - (1 - p_rl_demo) ** k)
    rows.append([k, b, r, "← 基座领先" if b > r else ""])
Table(["k", "基座", "RL", ""], rows)

# %% [markdown]
# 上面几次 GRPO 训练里没有发生这种事，但这是**观察**，不是玩具的定理。我们量的是：1e8 到 1e11 四种大小，
# 默认的 `grpo` 预设训练 200 次，200 道留出题，$k = 1, 2, 4, \dots, 1024$；1e9 那次的 12 个情境 $s_t$ 全都上升了。
# 只要训练让某些情境的 $s_t$ 下降，经过这些情境的题 $p_i$（和 $q_i$）就变小，$k$ 够大时基座就能反超。
#
# 下面造一个这样的训练：KL 惩罚（$\beta = 0.5$，估计用 $k_2$）把模型拉向一个参考策略，这个参考策略在四个**减法**情境里
# correct 的 logit 低 3。奖励仍然是"答案对"，所以加法、乘法的题照样变好；减法的题被 KL 拉着变差。
#
# 看输出：训练后 $q_i$ 变小的题有几道；"基座 − RL"在每个 $k$ 上的值（都用答对的概率算）：$k = 1$ 时 RL 领先，从某个 $k$ 起基座领先。

# %%
pulled_ref = TrainableLLM(1e9)
subtraction = [i for i, key in enumerate(CONTEXTS) if key[0] == "sub"]
pulled_ref.params[subtraction, 0] -= 3.0
pulled = TrainableLLM(1e9)
train(pulled, preset("grpo", beta=0.5, kl_estimator="k2"), train_set, heldout, reference=pulled_ref)
pulled_q = answer_probs(pulled, heldout)
pulled_k = answer_pass_at_k(pulled, heldout, KS)
print(f"减法情境：{'、'.join(CONTEXT_NAMES[CONTEXTS[i]] for i in subtraction)}")
print(f"训练后 q_i 变小的题：{int((pulled_q < base_q).sum())} / {len(heldout)} 道")
rows = []
for k in KS:
    b, r = curves[1e9][0][k], pulled_k[k]
    rows.append([k, b, r, round(b - r, 4) + 0.0, "← 基座领先" if b > r else ""])
Table(["k", "基座", "RL", "基座 − RL", ""], rows)

# %% [markdown]
# 所以"基座不会反超"要靠两件事同时成立：softmax 给每种做法正的概率（没有一道题"变得不可能"），**而且**训练让每个情境的 $s_t$ 都上升。
# 第二件事在默认的 GRPO 训练里成立，但换一个目标（这里是 KL 拉向一个更差的参考策略）就不成立了。
#
# 而"RL 有没有教会新本事"在玩具里是**按构造**回答了的：correct 从一开始就在基座的分布里，RL 只能调整三种做法的比例，不能发明第四种。
#
# ## 小结
#
# - 基座越大，起点越高，到同一个目标 pass@1 需要的 RL 样本越少，RL 带来的提升也越小。
# - pass@1 对 RL 计算量是一条 S 形曲线。玩具的上限是 1；自由拟合的渐近线 $A$ 会略高于 1，因为训练结束时还看不到渐近线。固定 $A = 1$ 后，用一半的计算量就能把最终值外推得很准。
# - 大基座的优势主要在起点：四种大小的 $C_{\text{mid}}$ 差别不大，$B$ 随大小变小。
# - pass@k 里，RL 的提升集中在小 $k$，$k$ 越大差距越小；在这几次默认的 GRPO 训练里，基座在算过的每个 $k$ 上都**没有**反超，因为 RL 让每一道题答对的概率 $q_i$ 都变大了。
# - 平均曲线会不会交叉取决于每道题的 $q_i$：只有 RL 让某些题变差时才会交叉。玩具的结构不排除这一点：KL 把模型拉向更差的参考策略时，基座就反超了。Yue et al. 的反超[S552](../lectures/sources.md#S552)是真实 LLM 里"覆盖面变窄"的结果。
#
# ## 试一试
#
# 1. 把 `TARGET` 改成 0.95：哪些基座在 200 次迭代内到不了？把 `preset("grpo")` 换成 `preset("grpo", mu=4)` 呢？
# 2. 在第 2.1 节只用前 50 次迭代（`half = len(C) // 4`）拟合：$A = 1$ 的外推还准吗？
# 3. 在第 3.2 节改假想的 $p$：让 RL 只把第 2 题从 0.02 压到 0.015。基座还会反超吗？从哪个 $k$ 开始？
