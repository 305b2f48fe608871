# %% [markdown]
# # 04 · 评估
#
# **你将学到**
# - pass@1、pass@k 的**精确值**怎么算（真实的 LLM 做不到，玩具可以），以及采样估计的误差棒有多宽；
# - 为什么 pass@k 要用 Chen et al. 的无偏估计[S546](../lectures/sources.md#S546)，而不是把 $\hat p = c/n$ 代进 $1-(1-\hat p)^k$；
# - maj@k（多数投票）和 best-of-n（验证器挑一个）怎么算，平票怎么处理，验证器出错时会怎样；
# - 测试时计算（test-time compute）：同样多的样本，三种用法差多少；小模型多采样能不能追上大模型；
# - pass@1 随模型规模（1e8 … 1e12 参数）的变化，整体的和每个情境的。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 2 节（规模与测试时计算，2.1 – 2.4）

# %% [markdown]
# ## 1. 准备
#
# 所有函数都来自 `toyllm`：`toyllm.exact` 精确计算，`toyllm.evaluation` 采样评估，`toyllm.experiments` 一次做完的评估实验，
# `toyllm.scaling` 规模曲线，`toyllm.plots` 画图。
# 题目是课上常用的 100 道 3~8 步的题；每一个随机数都来自固定种子的 `numpy.random.default_rng`，所以每次运行结果完全相同。
#
# 看输出：两个模型的名字和题目数。

# %%
# %matplotlib inline
import math
import random

import numpy as np

from IPython.display import display

from toyllm import ToyLLM, make_problem_set, pass_at_k
from toyllm.evaluation import (SampleSet, best_of_k, best_of_n, draw_samples, maj_at_k, maj_vote,
                               pass_at_k_sampled,
                               verify)
from toyllm.exact import answer_pass_at_k, answer_probs, exact_pass_at_1
from toyllm.experiments import compare_exact_sampled, evaluate_sampled, inference_curves
from toyllm.plots import plot_exact_vs_sampled, plot_pass_at_k, plot_scaling, plot_test_time_compute
from toyllm.plotstyle import use_chinese_font
from toyllm.scaling import scaling_curve
from toyllm.tables import Table

use_chinese_font()
problems = make_problem_set(random.Random(0), 100, 3, 8)
small, large = ToyLLM(1e9), ToyLLM(1e10)
print(f"{len(problems)} 道题；模型：{small.name} 和 {large.name}")

# %% [markdown]
# ## 2. 精确值：pass@1 和 pass@k
#
# 沿着正确的解题路径，第 $t$ 步的情境 $c_t$ 是固定的，这一步做对的概率是
# $s_t = \pi(\text{correct}\mid c_t) + \pi(\text{bug}\mid c_t)\,\mathbb{1}[\text{bug 不咬人}]$。各步独立，所以一道题走对路径（每一步都对）的概率
#
# $$p = \prod_t s_t, \qquad \text{pass@}k = 1-(1-p)^k .$$
#
# （$k$ 次独立采样全错的概率是 $(1-p)^k$。）对题目取平均就是模型的路径 pass@k（`exact_pass_at_k`）。$p$ 没有算"写错后又被修好"的路径，
# 所以真正**答对**的概率 $q$ 比 $p$ 略大（第 3 节算出差多少）；同一个公式用 $q$，$1-(1-q)^k$ 的平均就是精确的 pass@k：`answer_pass_at_k`，下表用它，一次算出多个 $k$。
#
# 看输出：pass@k 随 $k$ 上升得多快；1B 在 $k$ 多大时超过 10B 的 pass@1。

# %%
ks = (1, 2, 4, 8, 16, 32, 64)
exact_small = answer_pass_at_k(small, problems, ks)
exact_large = answer_pass_at_k(large, problems, ks)
display(Table(["k", small.name, large.name], [[k, exact_small[k], exact_large[k]] for k in ks]))
first = next(k for k in ks if exact_small[k] > exact_large[1])
print(f"\n{small.name} 的 pass@{first} = {exact_small[first]:.4f}，已经超过 {large.name} 的 pass@1"
      f" = {exact_large[1]:.4f}")

# %% [markdown]
# ## 3. 采样估计和它的误差棒
#
# **标准误**（standard error，SE）：把同一个实验重做很多次，估计值的标准差。这个 notebook 里每个"估计 ± 数"，± 后面都是标准误；
# 区别只在"重做"时什么跟着变，每张表的表头写明是哪一种：
# - **采样标准误**（题目固定）：同一批题，只重新采样。和同一批题上的**精确值**比较时用它（`compare_exact_sampled`、`scaling_curve`）。
# - **题目层面的标准误**：每道题一个分数，标准误 = 这些分数的样本标准差 / $\sqrt{P}$（$P$ 是题数）。它同时包含"重新采样"和"换一批题"两种波动，
#   所以通常更大；回答的是"换一批同样难的题，分数会差多少"（`pass_at_k_sampled`、`evaluate_sampled`、`maj_at_k` 默认给它）。
#
# 同一批样本，两种标准误可以差不少：下面第 3 节 $n = 16$ 那一行的采样标准误，和第 4 节 $k = 1$ 那一行的题目层面标准误，估计的是同一个 pass@1。

# %% [markdown]
# 真实系统只能采样：每道题做 $n$ 遍，数做对的比例 $\hat p_i$，再对题目取平均。它有多准？
# 题目固定时，平均值的**采样标准误**是
#
# $$\mathrm{SE} = \frac{1}{P}\sqrt{\sum_{i=1}^{P} \frac{\hat p_i(1-\hat p_i)}{n-1}},$$
#
# 95% 置信区间约为 估计值 $\pm 1.96\,\mathrm{SE}$。`compare_exact_sampled` 把估计、区间和精确值放在一起。
#
# 看输出：$n$ 每大 4 倍，标准误大约减半（$\propto 1/\sqrt{n}$）。z 是"估计 − 精确"有几个标准误，$|z|$ 超过 2 左右才值得怀疑。
#
# 还有一个细节：精确值是**答对**的概率（`answer_probs`，所有路径都算），它比"**走对路径**"（每一步都对，`exact_pass_at_1`）
# 的概率多出"中间写错了一步、后来又被别的错误碰巧修好"的样本（"被修好"一列）。它们不到 1%，$n$ 小时淹没在误差里；
# $n$ 大时误差棒窄到能看出来：拿采样的 pass@1 和走对路径的概率比会偏高，和答对的概率比才一致（z 一列）。
# 只数"每一步都对"的比例（"每步都对"一列），它和走对路径的概率是同一个量（后一个 z）。

# %%
rows = []
for n in (4, 16, 64, 256):
    r = compare_exact_sampled(small, problems, n, np.random.default_rng(n))
    s, a = r.sampled, r.steps_right
    z_steps = (a.value - r.path) / a.stderr
    rows.append([n, r.exact, f"{s:.4f}", f"[{s.ci_low:.4f}, {s.ci_high:.4f}]", f"{r.z:+.2f}",
                 r.path, f"{a:.4f}",
                 f"{z_steps:+.2f}", f"{r.repaired:.4f}"])
Table(["n", "精确（答对）", "采样 pass@1 ± 标准误", "95% 区间", "z", "走对路径",
       "每步都对 ± 标准误", "z", "被修好"],
      rows)

# %% [markdown]
# "被修好"的部分也能精确算。`answer_probs` 不只走正确路径，而是带着中间值的概率分布一步步往下走，
# 所有路径都算，得到**答对**的精确概率（从两头往中间算，很快）。
#
# 看输出："差"一列就是"被修好"的精确概率。模型越小、不用思维链，写错越多，被修好的也越多；1T 几乎是 0。

# %%
rows = []
for size, cot in ((1e8, True), (1e8, False), (1e9, True), (1e9, False), (1e10, True), (1e12, True)):
    model = ToyLLM(size, cot=cot)
    path, answer = exact_pass_at_1(model, problems), float(answer_probs(model, problems).mean())
    rows.append([model.name, f"{path:.4f}", f"{answer:.4f}", f"{answer - path:.4f}"])
Table(["模型", "走对路径", "答对（所有路径）", "差（被修好）"], rows)

# %% [markdown]
# 换成不同大小的模型，每道题只采 16 次。图里横线是精确值，点和误差棒是采样估计（95% 置信区间）。
#
# 看图：误差棒大多盖住了横线 —— 95% 的区间本来就有 5% 的机会不盖住真值，5 个模型里有一个擦边并不奇怪。pass@1 接近 0.5 的模型误差棒最长：$p(1-p)$ 在 $p=0.5$ 时最大。

# %%
results = [compare_exact_sampled(ToyLLM(size), problems, 16, np.random.default_rng(1))
           for size in (1e8, 1e9, 1e10, 1e11, 1e12)]
for r in results:
    print(r)
fig = plot_exact_vs_sampled(results)

# %% [markdown]
# ## 4. pass@k 的无偏估计
#
# 每道题采样 $n$ 次、$c$ 次做对。把 $\hat p = c/n$ 代进去，得到"朴素估计" $1-(1-\hat p)^k$。
# 但 $f(p) = 1-(1-p)^k$ 是凹函数，由 Jensen 不等式 $\mathbb{E}[f(\hat p)] \le f(p)$：它**系统性地偏低**。
# Chen et al.（2021）的估计[S546](../lectures/sources.md#S546)从 $n$ 个样本里不放回地挑 $k$ 个，对所有挑法取平均：
#
# $$\widehat{\text{pass@}k} = 1-\frac{\binom{n-c}{k}}{\binom{n}{k}} = 1-\prod_{i=n-c+1}^{n}\Big(1-\frac{k}{i}\Big).$$
#
# 先看一道题：它的精确 $p$ 已知，$c$ 服从二项分布 $\mathrm{Bin}(n, p)$，所以两个估计的**期望**可以对 $c = 0,\dots,n$ 精确求和，不需要采样。
#
# 看输出：无偏估计的期望和真值相同（到小数点后 10 位）；朴素估计的期望偏低（$k = 1$ 时两者相同）。

# %%
n = 16
p = float(exact_pass_at_1(small, problems[:1]))
print(f"第 1 道题：{problems[0]}，精确 p = {p:.4f}，n = {n}")
rows = []
for k in (1, 2, 4, 8, 16):
    weights = [math.comb(n, c) * p ** c * (1 - p) ** (n - c) for c in range(n + 1)]
    unbiased = math.fsum(w * pass_at_k(n, c, k) for c, w in enumerate(weights))
    naive = math.fsum(w * (1 - (1 - c / n) ** k) for c, w in enumerate(weights))
    rows.append([k, 1 - (1 - p) ** k, unbiased, naive])
Table(["k", "真值 1-(1-p)^k", "无偏估计的期望", "朴素估计的期望"], rows, digits=10)

# %% [markdown]
# 再在 100 道题上真的采样一次（$n = 16$），三种数放在一起：精确值、无偏估计（± 题目层面的标准误）、朴素估计。
#
# 看输出：无偏估计在误差范围内贴着精确值；朴素估计在 $k$ 大时明显偏低。$k = 16$ 那一行是"1.0000 ± 0.0000"，下面解释。

# %%
samples = draw_samples(small, problems, 16, np.random.default_rng(2))
unbiased = pass_at_k_sampled(samples, (1, 2, 4, 8, 16))
c = samples.correct.sum(axis=1)
Table(["k", "精确", "无偏估计 ± 题目层面标准误", "朴素估计"],
      [[k, exact_small[k], f"{est:.4f}",
        float(np.mean(1 - (1 - c / 16) ** k))] for k, est in unbiased.items()])

# %% [markdown]
# **为什么 $k = 16$ 是"1.0000 ± 0.0000"，而精确值小于 1？** $k = n = 16$ 时，一道题的无偏估计只有两个值：16 个样本里至少有一个对就是 1，一个都没对就是 0。
# 这 100 道题恰好每道都至少对了一次，所以每道题的分数都是 1：平均是 1，分数之间没有差别，标准误（由样本算出来的）就是 0。
# 标准误是 0 不等于估计没有误差。"每道题都至少对一次"本身是运气：按答对的精确概率 $q_i$，预期有 $\sum_i (1-q_i)^{16}$ 道题 16 次全错，
# 一道都没有的概率是 $\prod_i \big[1-(1-q_i)^{16}\big]$。$k$ 接近 $n$ 时，由样本算出的标准误靠不住；要估计大 $k$ 的 pass@k，得让 $n$ 比 $k$ 大得多。
#
# 看输出：预期全错的题数，和一道都没有的概率。

# %%
q_each = answer_probs(small, problems)
print(f"预期 16 次全错的题：{np.sum((1 - q_each) ** 16):.2f} 道；一道都没有的概率"
      f"：{np.prod(1 - (1 - q_each) ** 16):.2f}")

# %% [markdown]
# 画成 pass@k 曲线：实线是精确值，带误差棒的是无偏估计。
#
# 看图：横轴是对数刻度；两个模型的差距随 $k$ 变小。

# %%
fig = plot_pass_at_k({
    f"{small.name} 精确": {k: exact_small[k] for k in (1, 2, 4, 8, 16)},
    f"{small.name} 采样估计（n = 16）": unbiased,
    f"{large.name} 精确": {k: exact_large[k] for k in (1, 2, 4, 8, 16)},
})

# %% [markdown]
# ## 5. maj@k 和 best-of-n
#
# 先用手写的答案看规则。
# - **maj@k**（多数投票）：出现最多的最终答案；**平票时取在这 k 个里最先出现的那个**（固定的规则，不用随机数）。
# - **best-of-n**：验证器给每个答案打分，选分最高的；平票同样取最先出现的。精确的验证器就是"等于正确答案"，
#   有噪声的验证器每个判断以一定概率判反。
#
# 看输出：两个平票的例子选了谁；验证器判反时选错了。

# %%
print("maj_vote([5, 7, 7, 5, 3]) =", maj_vote([5, 7, 7, 5, 3]), "（5 和 7 各 2 票，5 先出现）")
print("maj_vote([902, 881, 881]) =", maj_vote([902, 881, 881]))
answers, truth = [881, 902, 875, 902], 902
print("精确验证器的判断：", verify(answers, truth), "→ best-of-n 选",
      best_of_n(answers, verify(answers, truth)))
noisy = verify(answers, truth, error_rate=0.5, rng=np.random.default_rng(3))
print("有噪声的验证器（错 50%）的判断：", noisy, "→ best-of-n 选", best_of_n(answers, noisy))

# %% [markdown]
# 从 $n$ 个样本估计 $k < n$ 个样本的指标：
# - maj@k：随机抽很多个大小为 $k$ 的子集（固定种子）投票，取平均；
# - best-of-k：和 pass@k 一样有**精确的组合公式**（对全部子集平均），见 `best_of_k` 的说明。精确验证器的 best-of-k 就等于 pass@k。
#
# 下面用手写的 3 道题 × 4 个样本检查：第 1 题 5 和 7 平票（5 先出现，对），第 2 题 3 和 4 平票（3 先出现，错），第 3 题 2 得 3 票（错）。
#
# 看输出：maj@4 = 1/3；maj@1 就是做对的比例；best-of-4 在有一个对的时候总是 1。

# %%
hand = SampleSet.from_lists([[5, 7, 7, 5], [3, 3, 4, 4], [1, 2, 2, 2]], [5, 4, 1])
print("每道题 maj@4：", maj_at_k(hand, 4, per_problem=True)[4])
print("每道题 maj@1：", maj_at_k(hand, 1, per_problem=True)[1])
print("每道题 best-of-4（精确验证器）：", best_of_k(hand, 4, per_problem=True)[4])
print(f"maj@4 = {maj_at_k(hand, 4)[4]:.3f}")

# %% [markdown]
# 现在在 100 道题上，每道题采样 32 次，一次算出所有指标（同一批样本，所以指标之间的差别不是采样噪声）。
# 有噪声的验证器每个判断有 10% 的机会判反。
#
# 表里每个 ± 后面是题目层面的标准误。verl 验证时还报三个数[S530](../lectures/sources.md#S530)，每道题 $n = 32$ 个样本、奖励 0/1 时：
# - **mean@32**：32 个样本的平均分，再对题目平均。它的期望就是 pass@1；
# - **best@32**：32 个里最好的那个的分数，也就是"至少一个对"，等于 pass@32；
# - **worst@32**：32 个里最差的那个的分数，也就是"32 个全对"的题占多少。
#
# 看输出：pass@k ≥ best-of-k（有噪声）和 maj@k；maj@2 ≈ maj@1（两票不同就平票，平票取第一份，等于只看第一份）；
# 最后一行是 mean@32 / best@32 / worst@32。

# %%
report = evaluate_sampled(small, problems, 32, np.random.default_rng(4), verifier_error=0.1)
print(report)

# %% [markdown]
# ## 6. 测试时计算：每道题花 $k$ 个样本
#
# `inference_curves` 对几个模型各采样一次，返回可以直接画图的数据：每个 $k$ 的 pass@k、maj@k、best-of-k 和它们的标准误。
# 这里比较 1B、10B 和没有思维链的 1B。
#
# 看图：三张小图分别是三种用法，每条线一个模型；虚线是精确的 pass@k $= 1-(1-q)^k$（$q$ 是每道题答对的概率，再对题目取平均）。
# 1B 采 8 次，不论哪种用法都超过 10B 采 1 次；没有思维链的 1B 差得多，投票也救不回来。

# %%
curves = inference_curves([small, large, ToyLLM(1e9, cot=False)], problems, 32,
                          np.random.default_rng(5))
fig = plot_test_time_compute(curves, by="metric")

# %% [markdown]
# 同样的数据，换一种排法：每个模型一张图，看同样多的样本，"有完美验证器"（pass@k）、"只能投票"（maj@k）、
# "验证器会出错"（best-of-k，错 10%）差多少。
#
# 看图：验证器出错时，best-of-k 随 $k$ 很快饱和 —— 样本越多，错答案被误判为对的机会也越多。

# %%
fig = plot_test_time_compute(curves, by="model")

# %% [markdown]
# 推理一次的计算量大约和参数量成正比，所以"1B 采 $k$ 次"的推理计算量约是 $k \times$ 1B。把数字列出来对照。
#
# 看输出：计算量相近的两行（1B 采 8 次 ≈ 8B，10B 采 1 次 = 10B），谁更好。

# %%
by_name = {m["name"]: m for m in curves["models"]}
rows = [[name, k, f"{k * size / 1e9:.0f}B", m["pass_at_k"][i], m["maj_at_k"][i],
         m["best_of_k_noisy"][i]]
        for name, size in ((small.name, 1e9), (large.name, 1e10))
        for m in [by_name[name]] for i, k in enumerate(curves["ks"]) if k in (1, 8)]
Table(["模型", "k", "推理计算量", "pass@k", "maj@k", "best-of-k（错 10%）"], rows, digits=3)

# %% [markdown]
# ## 7. 规模：pass@1 随参数量的变化
#
# 模型每大 10 倍，correct 的 logit 加 $\beta = 0.9$，所以每个情境选 correct 的概率是 $\log_{10}(\text{参数量})$ 的一条 sigmoid；
# 一道题差不多要每一步都对，pass@1 近似是这些概率的乘积，随规模上升得很快。`scaling_curve` 给出 1e8 … 1e12（每半个数量级一个点）的精确值（答对的概率，`answer_probs`，即真正的 pass@1）和采样估计（每道题 16 次）。
#
# 看图：左边线（精确）和点（采样）在误差棒里一致 —— 两者是同一个量（"被修好"的样本也算答对）；右边 12 个情境里，最难的（减法 ≥3 次借位、乘两位数且被乘数 ≥ 100）在小模型上最差，也是规模提升最多的。

# %%
scaling = scaling_curve(problems, np.random.default_rng(6), n=16)
display(Table(["参数量", "答对的概率（精确 pass@1）", "采样估计 ± 采样标准误"],
              [[name, e, f"{s:.4f} ± {se:.4f}"]
               for name, e, s, se in zip(scaling["names"], scaling["exact"], scaling["sampled"],
                                         scaling["sampled_se"])]))
fig = plot_scaling(scaling)

# %% [markdown]
# ## 小结
#
# - 玩具模型可以**精确**算出走对路径的概率 $p = \prod_t s_t$（路径 pass@1）和答对的概率 $q$（真正的 pass@1，`answer_probs`），pass@k 是 $1-(1-q)^k$ 的平均；所以每个采样估计都能和它要估计的真值对照；
#   标准误 $\propto 1/\sqrt{n}$，95% 区间大约是 $\pm 1.96$ 个标准误。
# - pass@k 要用无偏估计 $1-\binom{n-c}{k}/\binom{n}{k}$；把 $\hat p$ 代进 $1-(1-\hat p)^k$ 会系统性偏低（Jensen 不等式）。
# - 同样 $k$ 个样本：pass@k（完美验证器）≥ maj@k（投票）；有噪声的验证器让 best-of-k 早早饱和。平票规则要固定（这里取最先出现的）。
# - 在玩具里，1B 采 8 次胜过 10B 采 1 次；没有思维链的模型差得多。真实模型上这只在"小模型成功率不太低"的题上成立（Snell et al. 2024）[S551](../lectures/sources.md#S551)。
# - pass@1 随 $\log(\text{参数量})$ 平滑上升，最难的情境提升最多。
#
# **试一试**
# 1. 把第 3 节的 $n$ 改成 1024：标准误还会减半吗？精确值和估计的差（z）和"被修好的比例"比起来如何？
# 2. 把 `evaluate_sampled` 的 `verifier_error` 改成 0.3 或 0.5：best-of-k 变成什么样？错误率 0.5 的验证器还有用吗？
# 3. 用 `scaling_curve(problems, np.random.default_rng(6), cot=False)` 画没有思维链的规模曲线：它和有思维链的差距在哪种规模最大？
