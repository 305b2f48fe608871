# %% [markdown]
# # 08 · 从玩具到真网络
#
# **你将学到**
# - 一个真正的语言模型（很小的 transformer，约 10 万个参数）长什么样：嵌入、因果自注意力、MLP、层归一化、输出头；
# - 它先用 SFT 学两位数加法，再用 GRPO 继续训练 —— RL 的每一块公式都来自 `toyllm.rl.losses`，和玩具用的是**同一批函数**；
# - 再把玩具的多步题写成一条思维链交给它：网络在玩具的哪些情境里会错？错的样子像玩具的 bug，还是像粗心？
# - 一次 RL 训练前后的 pass@1 和 pass@k：这一次 RL 提高了 pass@1 吗？让大 k 时的 pass@k 变窄了吗？
#   Yue et al. 2025 在真实的大模型上报告了后一件事（[S400](../lectures/sources.md#S400)）；
#   这里是在小网络上的一次训练里量出来的（notebook 09 在另一个网络上结论不同，第 5 节末尾说为什么）；
# - 裁剪比例和熵；学习率太大时会发生什么；
# - 同一批题、同一个 GRPO 预设，玩具和小网络并排：哪些东西能带过来，哪些带不过来。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 10.3 节（从玩具到真网络）。
#
# 网络、训练和保存都在 `toyllm.tinylm` 里（只用 numpy，float32）。每个导数就写在它的前向旁边，可以打开源码对照着读。
#
# 这里的数是在 x86-64 的 OpenBLAS Haswell 内核上算出来的（`make lab` 已经设好，见 `toyllm/blas.py`）。
# 别的 CPU 上（例如 Apple 芯片），矩阵乘法最后一位的舍入不同，训练几百步以后，数会略有不同。

# %%
# %matplotlib inline
import random

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from toyllm import ToyLLM, TrainableLLM
from toyllm import tinylm as tl
from toyllm.arithmetic import CONTEXT_NAMES, make_problem_set
from toyllm.estimators import estimate_mean, verdict
from toyllm.exact import correct_paths
from toyllm.plots import plot_training_curves
from toyllm.plotstyle import use_chinese_font
from toyllm.rl import preset, train
from toyllm.saving import load_history
from toyllm.tables import Table
from toyllm.toy_llm import softmax

use_chinese_font()

model = tl.TinyLM(seed=0)
print(model)
print(f"字表（{len(tl.VOCAB)} 个字符，$ 是结束符）：{tl.VOCAB}")
shown = ("tok", "pos", "l0.attn.wqkv", "l0.attn.wo", "l0.mlp.w1", "l0.mlp.w2", "head")
Table(["参数", "形状", "类型"],
      [[name, str(model.params[name].shape), model.params[name].dtype.name] for name in shown])

# %% [markdown]
# ## 1. 网络的一张图
#
# 每个位置 $t$ 读一个字 $o_t$，输出下一个字的分布 $\pi(\cdot \mid o_{\le t})$。
# 残差流 $x$ 从下往上走：每一块都是"先归一化，再计算，再加回 $x$"（pre-LayerNorm）。
# 注意力只看自己和前面的位置（因果掩码），所以训练时一条序列的每个位置可以一起算。
#
# 图里的两个缩写：
# - **LN** 是层归一化（LayerNorm）：把一个位置上的 $d$ 个数减去它们的均值、除以标准差，再乘、加两组可学的数；
# - **$T$** 是温度：输出头的分数 $z$（logit）先除以 $T$ 再做 softmax。$T = 1$ 是原样，$T$ 越小分布越尖。

# %%
blocks = [("字 $o_t$ 和位置 $t$", "#ddd"), ("嵌入 $x = E[o_t] + P[t]$", "#cde"),
          ("LN → 因果自注意力（4 个头）→ 加回 $x$", "#fdb"),
          ("LN → MLP（ReLU，宽 4d）→ 加回 $x$", "#dfd"),
          ("（再来一层）", "#eee"), ("LN → 输出头 $z = x W_{out}$", "#cde"),
          ("softmax$(z / T)$ → $\\pi(o_{t+1} \\mid o_{\\leq t})$", "#ddd")]
fig, ax = plt.subplots(figsize=(6, 4.2))
for i, (text, color) in enumerate(blocks):
    y = i * 1.0
    ax.add_patch(plt.Rectangle((0, y), 6, 0.7, color=color))
    ax.text(3, y + 0.35, text, ha="center", va="center", fontsize=10)
    if i:
        ax.annotate("", (3, y), (3, y - 0.3), arrowprops={"arrowstyle": "->"})
ax.set_xlim(-0.2, 6.2)
ax.set_ylim(-0.2, len(blocks))
ax.axis("off")
ax.set_title(f"小 transformer：2 层、d = 64、4 个头，{model.n_params:,} 个参数")
plt.show()

# %% [markdown]
# ## 2. 题目写成文字
#
# 先从两位数加法开始：题面 `12+35=`，标准解答 `47$`。
#
# 玩具的多步题也写成文字，解答是一条**思维链**：每一步之后的值，用分号隔开，网络必须一步一步写出来。
# 同一批题在两个世界里都有：玩具在每一步选一种做法，网络一个字一个字地写。
#
# 多步题里的数换了一种写法：补零到 4 位，再倒过来，**个位在前**。
# 网络从左往右写；平常的写法先写最高位，可最高位要等所有进位算完才知道。
# 个位在前时，写每一位的时候，它要的进位刚刚写过。补零让第 $i$ 位总在同一个位置上。
# 看输出：每道玩具的题先是人读的写法，再是网络读写的样子。

# %%
train_set = tl.addition_examples(2000, seed=0)
test_set = tl.addition_examples(500, seed=100, exclude=train_set)
for e in train_set[:3]:
    print(f"{e.prompt:<10} → {e.target}")
rows = []
for p in make_problem_set(random.Random(0), 3, 1, 2):
    human, net = tl.problem_example(p, reversed_digits=False), tl.problem_example(p)
    rows.append([str(p), human.prompt + human.target, net.prompt + net.target])
Table(["玩具的题", "人读的写法", "网络读写的样子"], rows)

# %% [markdown]
# ## 3. SFT：teacher forcing
#
# **teacher forcing**：训练时，每个位置的输入都是标准解答里的前一个字，而不是网络自己写出来的字。
# 所以整条解答的每个位置可以一起算，一次前向就够了。
#
# 损失是解答里每个字的交叉熵 $-\log \pi(o_t \mid o_{<t})$ 的平均。设这一批解答一共有 $n_{\text{tok}}$ 个字，
# 损失对每个字的 log 概率的导数就是 $\psi = -1/n_{\text{tok}}$。网络的反向从这里开始：
# $\partial \text{loss}/\partial z = \psi\,(\text{onehot}(o_t) - \pi)/T$，
# 其中 $\psi = \partial\text{loss}/\partial \log\pi(o_t)$，onehot$(o_t)$ 是第 $o_t$ 个位置为 1、其余为 0 的向量。
# 后面的 RL 只是换了 $\psi$。参数用 **Adam** 更新：它给每个参数记下梯度的滑动平均和梯度平方的滑动平均，
# 用两者的比值定步长（`toyllm.optim.Adam`）。
#
# 下面训练 450 步（一步 = 一批 64 道题、一次更新），每 50 步在 200 道留出题上量一次**贪心解码**的准确率：
# 贪心解码是每个位置都写概率最大的那个字；准确率是整个答案完全写对的题占多少。
# 运行时每走完约十分之一打印一次走到了第几步（`progress=True`）：是一行字，notebook 保存以后照样在。
# 看曲线：横轴是步。损失总的趋势是下降，但不是一直下降；准确率前几百步在 0 附近。

# %%
heldout = test_set[:200]
sft_hist = tl.sft(model, train_set, steps=450, batch_size=64, lr=3e-3, seed=0, heldout=heldout,
                  eval_every=50, progress=True)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
plot_training_curves(sft_hist, columns=["loss", "greedy"],
                     labels={"greedy": "贪心准确率", "iteration": "步"}, axes=axes)
fig.suptitle("SFT：两位数加法")
plt.tight_layout()
plt.show()
sft_model = model.copy()
print(f"SFT 以后（200 道留出题，每题 1 份）：贪心准确率 {tl.accuracy(model, heldout):.3f}，"
      f"采样（T = 1）准确率 {tl.accuracy(model, heldout, 1.0, np.random.default_rng(0)):.3f}")

# %% [markdown]
# 曲线上有两处要解释：损失在后面回升了一次，准确率在最后几次评估里跳上跳下。
# 下一格打印每次评估的准确率（做对的题数 / 200），和 200 步以后损失回升最多的一段。

# %%
loss = np.array(sft_hist["loss"])
evals = [(it, g) for it, g in zip(sft_hist["iteration"], sft_hist["greedy"]) if g == g]
print("步：贪心准确率（做对 / 200）")
for i in range(0, len(evals), 5):                                  # 一行 5 个，窄屏也放得下
    print("  " + "，".join(f"{it}：{g:.3f}（{round(g * 200)}）" for it, g in evals[i:i + 5]))
rise = [loss[t] - loss[t - 20:t].min() for t in range(200, len(loss))]
peak = 200 + int(np.argmax(rise))
low = peak - 20 + int(np.argmin(loss[peak - 20:peak]))
print(f"损失回升最多的一段：第 {low + 1} 步 {loss[low]:.3f} → 第 {peak + 1} 步 {loss[peak]:.3f}")

# %% [markdown]
# 怎么读这两行：
# - 学习率 3e-3 对 Adam 来说偏大：某一步走过了头，损失一下子升高，几十步以后才降回来。
#   第 400 步的评估正赶上这段回升，所以准确率掉了下去；50 步以后又升上来。
# - 一道题要两三个字**全对**才算对。每个字对的概率从 0.9 涨到 0.95，三个字全对的概率就从 0.73 涨到 0.86。
#   所以每个字只好了一点，整道题的准确率却会跳一大截；反过来也一样。

# %% [markdown]
# ## 4. GRPO：同一批公式
#
# 每次迭代选 16 道题，每题采样 $G = 8$ 份解答（温度 1），奖励是最终答案对不对。然后：
# - 优势：`losses.group_advantages`（组内标准化）；
# - 每个 token 的比率 $\rho = \exp(\log\pi_\theta - \log\pi_{old})$，填充的位置 $\rho = 1$；
# - 裁剪的替代损失和它对 $\log\pi$ 的导数：`losses.clipped_surrogate(...).dloss_dlogp`（$= \partial l/\partial\rho \cdot \rho$）；
# - 聚合权重 $w$（`losses.aggregation_weights`，这里是 seq-mean）。
#
# `toyllm.rl.objective.rl_objective` 把它们拼成 $\psi = w \cdot \partial l/\partial\log\pi$，交给网络的反向；玩具用的也是这个函数。
# 没有一个公式重写过（测试把这些函数换掉，训练就跟着变）。选项名和玩具的 `RLConfig` 一样：
# 每个选项都起作用，只有两个例外会报错并说出选项名——`reward` 只能是 outcome（网络只有最终答案能判对错），
# `optimizer` 只能是 adam（测试逐个选项检查这一点）。
#
# `tiny_config` 在预设上换掉 4 个选项（`TINY_DEFAULTS`）：优化器、学习率、每次的题数、迭代次数。
# 下一格先打印这 4 个选项在玩具的预设和网络的配置里各是多少，再训练 40 次迭代。
# 看下面两张图：左边是每次迭代采样的做对比例，右边是留出题的贪心准确率（横轴 0 是 SFT 以后、RL 之前）。
# 右图的纵轴从 0 画到 1：留出题只有 200 道，一道题就是 0.005，几道题的变化在放大的纵轴上会显得很大。

# %%
cfg = tl.tiny_config("grpo", iterations=40, seed=0)
print("tiny_config 换掉的选项（玩具的预设 → 网络）：")
for k, v in tl.TINY_DEFAULTS.items():
    print(f"  {k}：{preset('grpo').to_dict()[k]} → {v}")
print("网络上这次用的设置：")
for k in ("advantage", "loss_agg", "mu", "group_size", "batch_problems", "lr", "optimizer"):
    print(f"  {k}：{cfg.to_dict()[k]}")
grpo_hist = tl.rl_train(model, train_set, cfg, heldout=heldout, eval_every=10)
evals = [i for i, g in enumerate(grpo_hist["greedy"]) if g == g]
fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
plot_training_curves(grpo_hist, columns=["pass1_sampled"], axes=axes[:1])
sft_greedy = tl.accuracy(sft_model, heldout)
plot_training_curves({"iteration": [0] + [grpo_hist["iteration"][i] for i in evals],
                      "greedy": [sft_greedy] + [grpo_hist["greedy"][i] for i in evals]},
                     labels={"greedy": "留出题贪心准确率"}, axes=axes[1:])
axes[1].set_ylim(0, 1)
fig.suptitle("GRPO：小 transformer")
plt.tight_layout()
plt.show()
print("留出题贪心准确率（做对 / 200）：" + "，".join(
    f"{g:.3f}（{round(g * 200)}）" for g in [sft_greedy] + [grpo_hist["greedy"][i] for i in evals]))

# %% [markdown]
# ## 5. RL 前后的 pass@1 和 pass@k
#
# 前 100 道留出题，每道采样 $n = 16$ 份（温度 1），用包里的无偏估计 `toyllm.estimators.pass_at_k` 算 pass@k。
# 所以这里 RL 前的 pass@1 和第 3 节的"采样准确率"不是同一个数：第 3 节是 200 道题各采 1 份，这里是 100 道题各采 16 份。
# 两者估的是同一个量，题和样本不同，数就差一点。
#
# Yue et al. (2025) 在真实模型上看到：RL 提高了 pass@1，但 $k$ 很大时，基座（RL 前）的 pass@k 反而更高；
# 他们的结论是 RL 把基座已经会的东西变得更容易采到，没有带来新的推理方式（[S400](../lectures/sources.md#S400)）。
# 看下表：这个小网络上 pass@1 涨了多少，k = 16 时差多少。

# %%
ks = [1, 2, 4, 8, 16]
before = tl.pass_at_k_curve(sft_model, heldout[:100], 16, ks, seed=1)
after = tl.pass_at_k_curve(model, heldout[:100], 16, ks, seed=1)
display(Table(["k", "RL 前", "RL 后", "差"],
              [[k, before[k], after[k], f"{after[k] - before[k]:+.3f}"] for k in ks], digits=3))
big_k = ks[-1]
narrower = after[big_k] < before[big_k]
print(f"k = {big_k} 时 RL 后的 pass@k {'低于' if narrower else '不低于'} RL 前："
      f"{'和 Yue et al. 报告的收窄一致' if narrower else '这次没有看到 Yue et al. 报告的收窄'}")
fig, ax = plt.subplots(figsize=(5, 3.2))
ax.plot(ks, [before[k] for k in ks], "o-", label="RL 前（SFT 以后）")
ax.plot(ks, [after[k] for k in ks], "s-", label="RL 后（GRPO）")
ax.set_xscale("log", base=2)
ax.set_xlabel("k")
ax.set_ylabel("pass@k")
ax.set_title("小 transformer：pass@k")
ax.grid(alpha=0.3)
ax.legend()
plt.show()

# %% [markdown]
# notebook 09 第 4 节问的是同一个问题，结论和这里不同。两处不矛盾：
# - **模型不同。** 这里是从头只学了两位数加法的网络，RL 前采样还常常写错（上表 k = 1）：
#   RL 把一道题上正确答案的概率推高；这一次，小 $k$ 和大 $k$ 的 pass@k 点估计都涨了。
#   09 是仓库带的预训练网络，学的是玩具那样有对有错的分布，采样本来就能写出很多种答案；
#   RL 磨尖了分布，原来偶尔能采到的答案可能更难采到——这就是 Yue et al. 说的收窄（[S400](../lectures/sources.md#S400)）。
# - **证据不同。** 这里是**这一次训练**在 100 道题上的点估计，没有做判定，换一个种子可能不同。
#   09 和讲义 §10.4 的判定跨多个训练种子做：一次训练在一批题上的标准误，只量了评估的抽样误差，
#   量不出换一个种子会差多少。
#
# 所以"RL 以后大 $k$ 的 pass@k 会不会变低"没有一个对所有模型都成立的答案：要看基座原来会什么。

# %% [markdown]
# ## 6. 裁剪和熵：μ > 1、clip-higher
#
# $\mu = 1$ 时 $\rho \equiv 1$，裁剪从不发生（第 06 个 notebook）。DAPO 的预设每批更新 $\mu = 4$ 次、
# 按 token 平均（token-mean）、上界 $\varepsilon_{high} = 0.28$；动态采样丢掉奖励全相同的组、再采新题补满（和玩具一样）。
# 熵是每个 token 上分布的平均熵，用自然对数算，单位叫 **nats**（分布越集中，熵越小）。
# 看曲线：被裁剪的 token 比例不再是 0，两条线哪条高？熵在这么短的训练里有没有下降？图下打印的三行回答这两个问题。
#
# 熵的变化只是**这一次训练**里的数。前 5 次和最后 5 次迭代各当作 5 个数，算出的标准误量的是迭代之间的跳动，
# 不是换一个种子会差多少，所以这里不做判定。15 次迭代太短，这一次的变化淹没在每次迭代的跳动里。
# 训练让熵变了没有，要跨至少 5 个训练种子判定（`toyllm.estimators.seed_verdict`；notebook 09、讲义 §10.4）。

# %%
dapo_hist = tl.rl_train(sft_model.copy(), train_set,
                        tl.tiny_config("dapo", iterations=15, batch_problems=8, seed=0))
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
plot_training_curves(dapo_hist, columns=[("clip_low", "clip_high"), "entropy", "zero_std"],
                     axes=axes)
axes[0].set_ylim(top=axes[0].get_ylim()[1] * 1.5)       # 给图例留出上面的空白，不挡住曲线
axes[0].legend(loc="upper left")
fig.suptitle("DAPO：裁剪、熵、零方差组")
plt.tight_layout()
plt.show()
ent = np.array(dapo_hist["entropy"])
print(f"被裁剪的比例（{dapo_hist.n_rows} 次迭代平均）：下界 {np.mean(dapo_hist['clip_low']):.4f}，"
      f"上界 {np.mean(dapo_hist['clip_high']):.4f}")
drop = ent[:5].mean() - ent[-5:].mean()
drop_se = np.sqrt(ent[:5].var(ddof=1) / 5 + ent[-5:].var(ddof=1) / 5)
print(f"熵（这一次训练）：前 5 次迭代平均 {ent[:5].mean():.4f}，"
      f"最后 5 次平均 {ent[-5:].mean():.4f}；下降 {drop:+.4f}，迭代之间跳动的标准误 {drop_se:.4f}")
print(f"一次迭代的熵在 {ent.min():.4f} 和 {ent.max():.4f} 之间跳：每次只有几十份样本")

# %% [markdown]
# ## 7. 学习率太大
#
# 同样从 SFT 以后的模型出发，学习率放大 10 倍（3e-3）。
# **KL 散度** $\mathrm{KL}(\pi_\theta \,\|\, \pi_{\text{ref}})$ 量两个分布差多远：一样时是 0，差得越远越大（单位 nats）。
# 这里的参考分布 $\pi_{\text{ref}}$ 是 SFT 以后的模型；曲线是在采到的 token 上用 k3 估计出来的（讲义 §7.3）。
# 看曲线：到 SFT 模型的 KL 估计往上跳，留出题准确率往下掉。
# 玩具里学习率大一点只是走得快；真网络上一步走太远，就把 SFT 学到的东西弄坏了。

# %%
big_hist = tl.rl_train(sft_model.copy(), train_set,
                       tl.tiny_config("grpo", iterations=15, lr=3e-3, seed=0),
                       heldout=heldout, eval_every=5)
evals = [i for i, g in enumerate(big_hist["greedy"]) if g == g]
fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
plot_training_curves(big_hist, columns=["kl_est"], axes=axes[:1])
plot_training_curves({"iteration": [0] + [big_hist["iteration"][i] for i in evals],
                      "greedy": [sft_greedy] + [big_hist["greedy"][i] for i in evals]},
                     labels={"greedy": "留出题贪心准确率"}, axes=axes[1:])
fig.suptitle("lr = 3e-3：太大")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 8. 玩具的多步题：一条思维链
#
# 现在把玩具的 1~2 步题（`make_problem_set`，和前面的 notebook 同一个出题函数）写成文字，换一个新网络从头 SFT。
# 题更长（最多 25 个字），步子也更多：700 步，每 100 步量一次前 200 道留出题的贪心准确率。
#
# 700 步在笔记本电脑上要二十多秒。所以这一格只现算前 100 步，后面读一份记录：
# `data/08_cot_sft.safetensors` 是维护者用 `tools/notebook_records.py` 按同一个配方训练 700 步存下的权重，
# 旁边的 `.history.json` 记着每一步的损失。现算的 100 步和记录逐步对照，对不上就报错。
# 想看它从头训练，把 `RERUN = 100` 改成 700（这时不读权重，只打印和记录比一比的结果）。
#
# 看曲线：和加法一样，准确率先在 0 附近待一阵，然后才升起来。曲线下打印的是全部 400 道留出题上的准确率。

# %%
toy_problems = make_problem_set(random.Random(0), 10000, 1, 2)
toy_examples = [tl.problem_example(p) for p in toy_problems]
cot_train, cot_heldout = toy_examples[:-400], toy_examples[-400:]
cot_heldout_problems = toy_problems[-400:]
RECORD = "data/08_cot_sft.safetensors"   # 700 步以后的权重和训练记录（见上面的说明）
RERUN = 100                              # 现算几步；改成 700 就从头训练，不读权重
cot_model = tl.TinyLM(seed=0, context=25)
fresh = tl.sft(cot_model, cot_train, steps=700, seed=0, heldout=cot_heldout[:200], eval_every=100,
               progress=True, callback=lambda it, net: it == RERUN)
recorded = load_history(RECORD)["history"]
n = fresh.n_rows
close = np.allclose(fresh["loss"], recorded["loss"][:n], rtol=1e-2)
if n < 700 and not close:                # 要读记录的权重，前面的步就必须对得上
    raise RuntimeError(f"现算的 {n} 步和记录 {RECORD} 对不上：配方改了？"
                       "维护者请重新运行 python tools/notebook_records.py")
same = fresh["loss"] == recorded["loss"][:n]
print(f"现算的 {n} 步，每一步的损失和记录" + ("逐位相同" if same else
      "相差不到 1%（CPU 不同，舍入不同）" if close else "不同（配方改了）"))
if n < 700:
    cot_model = tl.load_weights(RECORD)
    cot_sft_hist = {c: [np.nan if v is None else v for v in recorded[c]]
                    for c in ("iteration", "loss", "greedy")}
else:
    cot_sft_hist = fresh
fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
plot_training_curves(cot_sft_hist, columns=["loss", "greedy"],
                     labels={"greedy": "贪心准确率", "iteration": "步"}, axes=axes)
fig.suptitle("SFT：玩具的 1~2 步题")
plt.tight_layout()
plt.show()
cot_sft_acc = (tl.accuracy(cot_model, cot_heldout),
               tl.accuracy(cot_model, cot_heldout, 1.0, np.random.default_rng(0)))
print(f"SFT 以后（400 道留出题）：贪心准确率 {cot_sft_acc[0]:.3f}，"
      f"采样（T = 1）准确率 {cot_sft_acc[1]:.3f}")

# %% [markdown]
# 网络在哪里会错？玩具说：每一步的情境（运算 × 难度）决定三种做法的概率。
# `tl.step_errors` 沿着网络写的思维链一步一步看：前面都对时，这一步落在哪个情境，写对了没有；
# 写错了，就看错的样子：等于"忘记进位"之类的错误观念的结果，算**像 bug**；和正确结果只差某一位上的 ±1，算**像粗心**；其余算别的。
# 表头短一点：像 bug、像粗心、别的，是**做错的步**里各占多少；右边三列是玩具 1B 在同一个情境里三种做法的概率。
#
# 看表和表下的三行：网络觉得难的情境，和玩具觉得难的是同一些吗？做错的步里，像粗心的多，还是像 bug 的多？

# %%
toy_1b = ToyLLM(1e9)
counts = tl.step_errors(cot_model, cot_heldout_problems)
display(tl.step_error_table(counts, toy=toy_1b))
common = [key for key, c in counts.items() if c["steps"] >= 20]
by_net = sorted(common, key=lambda key: counts[key]["correct"] / counts[key]["steps"])
by_toy = sorted(common, key=lambda key: softmax(toy_1b.context_logits(key))[0])
print("至少 20 步的情境，从难到易：")
print("  网络：" + " < ".join(CONTEXT_NAMES[key] for key in by_net))
print("  玩具：" + " < ".join(CONTEXT_NAMES[key] for key in by_toy))
wrong = {kind: sum(c[kind] for c in counts.values()) for kind in ("bug", "careless", "other")}
total = sum(wrong.values())
print(f"做错的 {total} 步里：像 bug {wrong['bug'] / total:.0%}，"
      f"像粗心 {wrong['careless'] / total:.0%}，别的 {wrong['other'] / total:.0%}")

# %% [markdown]
# 两个难度顺序很不一样。最显眼的是乘一位数：玩具里它是**最容易**的情境（π(correct) 最大），
# 网络却几乎不会，和乘两位数一样排在最难的一头；被乘数 ≥ 100 时，网络一步也没做对。
#
# 为什么？玩具的难度是事先写好的一个数（`arithmetic.step_hardness`：乘一位数是 0，和无进位的加法一样），照着人的直觉定的。
# 网络的难度来自它要学的规则。加法每一位只是两个数字相加，进位只有 0 或 1；
# 乘一位数时，积的每一位要查 10 × 10 的乘法表，再加上 0 到 8 的进位。这是一个可能的原因，下面的表排除了另一个：
# 是不是训练题里乘法见得少？下一格数训练题里每个情境有多少步。

# %%
from toyllm.arithmetic import apply_op, step_hardness

train_steps = dict.fromkeys(counts, 0)
for p in toy_problems[:-400]:
    value = p.start
    for s in p.steps:
        key = (s.op, step_hardness(s.op, value, s.operand))
        train_steps[key] = train_steps.get(key, 0) + 1
        value = apply_op(s.op, value, s.operand, "correct")
n_train = sum(train_steps.values())
Table(["情境", "训练题里的步数", "占比", "网络做对（留出题）"],
      [[CONTEXT_NAMES[key], train_steps[key], train_steps[key] / n_train, c["correct"] / c["steps"]]
       for key, c in counts.items()], digits=3)

# %% [markdown]
# 乘一位数在训练题里的步数，和加法、减法的常见情境差不多多：不是见得少。

# %% [markdown]
# ## 9. 同一批题、同一个 GRPO：玩具 vs 小 transformer
#
# 同一个预设 "grpo"、同一批训练题、都是 30 次迭代：左边是玩具（1B，`toyllm.rl.train`，题是 `Problem`），
# 右边是小网络（题是文字）。预设相同，配置并不完全相同：网络用 `tiny_config`，换了优化器、学习率和每次的题数。
# 下一格先打印两边不同的选项，所以这里比的是"同一个预设在各自合适的设置下"，不是一模一样的训练。
#
# 看两张图：玩具有路径 pass@1（精确值）和采样估计两条线；小网络有采样估计和留出题上的贪心准确率（橙色）。
# 小网络的曲线噪声大得多：每次迭代只有 16 × 8 = 128 份样本。
# 右图的贪心准确率是在前 200 道留出题上量的，所以它最后一个点和下一张表下面的数（全部 400 道）不一样。

# %%
toy_cfg, net_cfg = preset("grpo", iterations=30), tl.tiny_config("grpo", iterations=30, seed=0)
net_options = net_cfg.to_dict()
print("两边不同的选项（玩具 → 网络）：",
      {k: (v, net_options[k]) for k, v in toy_cfg.to_dict().items() if v != net_options[k]})
toy_hist = train(TrainableLLM(1e9), toy_cfg, toy_problems[:-400],
                 correct_paths(cot_heldout_problems))
cot_sft_model = cot_model.copy()                                    # RL 前的网络，第 9 节的表要用
cot_grpo_hist = tl.rl_train(cot_model, cot_train, net_cfg, heldout=cot_heldout[:200], eval_every=10)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
plot_training_curves(toy_hist, columns=[("pass1_exact", "pass1_sampled")], axes=axes[:1])
axes[0].set_title("玩具（Δ 表，12 × 3 个参数）")
plot_training_curves(cot_grpo_hist, columns=["pass1_sampled"], axes=axes[1:])
evals = [i for i, g in enumerate(cot_grpo_hist["greedy"]) if g == g]
axes[1].plot([0] + [cot_grpo_hist["iteration"][i] for i in evals],
             [cot_sft_hist["greedy"][-1]] + [cot_grpo_hist["greedy"][i] for i in evals], "o-",
             color="C1", label="留出题贪心准确率（前 200 道）")   # 第 0 点：SFT 最后一次评估
axes[1].legend()
axes[1].set_title(f"小 transformer（{cot_model.n_params:,} 个参数）")
fig.suptitle("同一个 GRPO 预设、同一批 1~2 步题")
plt.tight_layout()
plt.show()

# %% [markdown]
# GRPO 在哪些情境里帮了忙？先想一想：一道题的 8 份样本全错时，组内优势全是 0，这道题不产生梯度。
# 网络几乎不会的情境，RL 能教会吗？
#
# 下表是同一批 400 道留出题上、每个情境做对的步数。分母是"走到这个情境的步数"：前面的步都对，才数这一步
# （`tl.step_errors`）。RL 前后前面的步对错不同，所以两列的分母也不同，都写出来了。
# 比的是**这一次训练**（一个种子）前后的两个模型。
# "差"的 ± 是**评估的抽样误差**：每一列当作独立的二项比例，$\mathrm{SE} = \sqrt{p_1(1-p_1)/n_1 + p_2(1-p_2)/n_2}$。
# 最后一列用 `toyllm.estimators.verdict` 回答一个窄的问题：这两个模型在这批题上的差，比抽题的运气大吗（超过 3 个标准误）？
# 它不回答"GRPO 会让这个情境变好吗"：换一个训练种子，这张表可能不同。
# 训练的效果要跨至少 5 个种子判定（`toyllm.estimators.seed_verdict`；notebook 09、讲义 §10.4）。

# %%
after_counts = tl.step_errors(cot_model, cot_heldout_problems)     # RL 前的是第 8 节的 counts
rows, verdicts = [], {}
for key, c in counts.items():
    a = after_counts.get(key, {"steps": 0, "correct": 0})
    n1, n2 = c["steps"], a["steps"]
    p1, p2 = c["correct"] / n1, a["correct"] / max(n2, 1)
    se = np.sqrt(p1 * (1 - p1) / n1 + (p2 * (1 - p2) / n2 if n2 else 0))
    verdicts[CONTEXT_NAMES[key]] = verdict(p2 - p1, se) if n2 else "—"
    rows.append([CONTEXT_NAMES[key], f"{c['correct']}/{n1} = {p1:.3f}",
                 f"{a['correct']}/{n2} = {p2:.3f}" if n2 else "—",
                 f"{p2 - p1:+.3f} ± {se:.3f}" if n2 else "—", verdicts[CONTEXT_NAMES[key]]])
display(Table(["情境", "RL 前做对", "RL 后做对", "差 ± 评估的标准误", "两个模型的差"], rows))
print("两个模型的差，各种判定的个数：")
for v in sorted(set(verdicts.values())):
    print(f"  {v}：{list(verdicts.values()).count(v)} 个情境")


def right(net, examples, temperature=0.0, seed=0):
    """每道题做对没有（0 / 1）：和 tl.accuracy 同样的解码。"""
    rng = np.random.default_rng(seed) if temperature else None
    outs = tl.generate(net, [e.prompt for e in examples], temperature, rng)
    return np.array([e.is_correct(o) for o, e in zip(outs, examples)], float)


for name, temp in (("贪心准确率", 0.0), ("采样准确率", 1.0)):
    before_ok = right(cot_sft_model, cot_heldout, temp)
    after_ok = right(cot_model, cot_heldout, temp)
    d = estimate_mean(after_ok - before_ok, bounds=None)     # 同一批题：配对的标准误
    print(f"这一次训练前后，留出题（400 道）{name}：",
          f"{before_ok.mean():.3f} → {after_ok.mean():.3f}，", sep="")
    print(f"  差 {d.value:+.3f} ± {d.stderr:.3f}（评估的标准误）"
          f"→ 两个模型的差：{verdict(d.value, d.stderr)}")

# %% [markdown]
# ## 10. 什么能带过来，什么带不过来
#
# | | 玩具 | 小 transformer |
# |---|---|---|
# | 参数 | 12 × 3 的 Δ 表 | 约 10 万个数（嵌入、注意力、MLP、输出头） |
# | 一步的"动作" | 选一种做法（correct / bug / careless） | 写一个字 |
# | 错误从哪里来 | 事先定好的三种做法 | 学出来的；一部分像 bug、像粗心，还有很多别的样子（第 8 节的表） |
# | 难的情境 | 事先定好的一个数；乘一位数最容易 | 学出来的：乘法几乎不会，连玩具最容易的乘一位数也是（第 8 节的表） |
# | 优势、裁剪、KL、聚合、熵 | `toyllm.rl.losses` | **同一批函数** |
# | ∂loss/∂log π 怎么变成参数的梯度 | 按情境加进表（`np.bincount`） | 网络的反向传播 |
# | pass@1 | 精确值 + 采样估计 | 只有估计 |
# | 梯度 | 精确的期望梯度可以算出来 | 只有一批样本上的估计 |
# | 优化器 | SGD，lr = 2，每次 32 道题 | Adam，lr = 3e-4，每次 16 道题；lr 大 10 倍时（第 7 节的一次训练）坏了 |
# | 泛化 | 共享情境（12 个） | 学到的规则要推广到没见过的算式 |
#
# 能带过来的是**损失的写法**：同样的函数、同样的选项名。带不过来的是**精确**：真网络上只剩估计。

# %% [markdown]
# ## 小结
#
# - 一个 10 万参数的 transformer 用 numpy 就能训练：前向、反向、Adam 一共两百来行。
# - SFT 和 RL 只差"每个 token 的 log 概率的导数 $\psi$"：SFT 是 $-1/n_{\text{tok}}$，RL 是 $w \cdot \partial l/\partial\rho \cdot \rho$（+ KL、熵）。
# - RL 的公式一个都没有重写：玩具和小网络调用同一批 `toyllm.rl.losses` 函数。
# - 玩具的多步题写成思维链，网络也能学：加法、减法学会了一些，乘法几乎不会——连玩具里最容易的乘一位数也不会。
#   它错的样子有的像玩具的 bug、有的像粗心，也有很多玩具里没有的样子。
# - 8 份样本全错的题没有梯度：SFT 以后几乎不会的情境，RL 很难教会。
#   这一次训练（一个种子、30 次迭代）前后的两个模型，在第 9 节的表里没有一个情境的差超过评估的 3 个标准误，
#   总的贪心准确率也没有。换一个种子可能不同：训练的效果要跨种子判定（notebook 09、讲义 §10.4）。
# - pass@1、pass@k 前后的变化，裁剪比例、熵、学习率太大时的 KL、每个情境的对错，都是上面量出来的数。
#
# ## 试一试
#
# 1. 第 4 节把 `iterations=40` 改成 `iterations=80`：大 k 时的 pass@k 还会涨吗？
# 2. 第 7 节把 `lr=3e-3` 换成 `lr=1e-3`：KL 还会跳吗？
# 3. （选做，先写下预测再运行）第 6 节把 DAPO 的 `loss_agg` 换成 `"seq-mean"`，或把 `eps_high` 从 0.28 改回 0.2：
#    被裁剪的 token 比例和熵会怎么变？为什么？（提示：加法题的解答长短只差一两个字；clip-higher 放宽的是优势为正的 token。）
# 4. 第 8 节把 `tl.problem_example(p)` 换成 `tl.problem_example(p, reversed_digits=False)`（平常的写法，最高位在前）：
#    同时把 `RERUN = 100` 改成 700（记录是按个位在前训练的，换了写法就对不上）。
#    先猜 700 步以后的准确率是高了还是低了，再运行。（`tools/bench_tinylm.py --cot` 量了两种写法。）
