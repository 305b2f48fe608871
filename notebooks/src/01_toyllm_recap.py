# %% [markdown]
# # 01 · ToyLLM 回顾
#
# **你将学到**
# - 模型每一步可选的三种做法：正确、错误观念（bug）、粗心，以及错误观念什么时候"不咬人"；
# - 一步有多难（hardness）怎样只由数字决定，全部情境（运算 × 难度）有哪些；
# - 三种做法的 logits 怎样随**模型大小**和**难度**变化（公式和 `toy_llm.py` 完全一致）；
# - 每个情境下做对一步的概率，在不同大小的模型之间怎样变化；
# - 思维链（chain of thought）为什么让长题好做得多；
# - 温度（temperature）怎样改变概率，temperature = 0 时的贪心解码。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 1 节（我们在哪里）；
# 模型的完整定义见第 1 讲的讲义 [lectures/lecture01_toy_llm.md](../lectures/lecture01_toy_llm.md)。

# %% [markdown]
# 先导入要用的东西。图里的中文用 `toyllm` 自带的字体显示，所以先调用一次 `use_chinese_font()`。

# %%
# %matplotlib inline
import random

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from toyllm import (ALPHA, BETA, BUG_NAMES, CONTEXT_NAMES, CONTEXTS, LOGIT_BUG, LOGIT_CARELESS,
                    NO_COT_PENALTY,
                    OP_NAMES, OP_SYMBOLS, OPS, PROCEDURE_NAMES, PROCEDURES, REF_SIZE, ToyLLM,
                    apply_op, bar,
                    bug_bites, fmt_size, make_problem_set, pad, step_hardness)
from toyllm.exact import answer_probs, exact_pass_at_1
from toyllm.plotstyle import use_chinese_font
from toyllm.policy import prob_table
from toyllm.tables import Table

use_chinese_font()
SIZES = (1e8, 1e9, 1e10, 1e11, 1e12)

# %% [markdown]
# ## 1. 三种做法
#
# 模型每一步在三种做法（procedure）里选一种，`apply_op(op, a, b, procedure, rng)` 按选中的做法算出这一步的结果：
# - **正确**（correct）：算对；
# - **错误观念**（bug）：确定性的、有名字的错误，每种运算一种，见下面输出的 `BUG_NAMES`；
# - **粗心**（careless）：随机挑结果的某一位，多写或少写 1，所以**一定是错的**。
#
# 看输出：每一行的"错误观念"一列和"正确"一列是否相同，和 `bug_bites`（错误观念咬不咬人）是否一致；"粗心"一列是用 4 个随机数各算一次，没有一个等于正确值。

# %%
for op in OPS:
    print(f"{OP_NAMES[op]}的错误观念：{BUG_NAMES[op]}")
print()
rows = []
for op, a, b in [("add", 47, 38), ("add", 12, 34), ("sub", 52, 17), ("sub", 58, 17),
                 ("mul", 47, 12),
                 ("mul", 47, 3)]:
    rng = random.Random(0)
    careless = [apply_op(op, a, b, "careless", rng) for _ in range(4)]
    rows.append([f"{a} {OP_SYMBOLS[op]} {b}", apply_op(op, a, b, "correct"),
                 apply_op(op, a, b, "bug"),
                 "咬人" if bug_bites(op, a, b) else "不咬人", ", ".join(str(v) for v in careless)])
Table(["这一步", "正确", "错误观念", "咬人吗", "粗心（4 次）"], rows)

# %% [markdown]
# 错误观念"不咬人"的情况有规律：加法没有进位、减法不用借位、乘法只乘一位数时，错误的做法恰好给出正确的结果。
# 这件事以后很重要：一份解答即使用了错误观念，答案也可能是对的（"答案对，推理错"，第 03 个 notebook 会专门讲）。

# %% [markdown]
# ## 2. 难度和情境
#
# 一步有多难，只看数字本身（`step_hardness(op, a, b)`）：加法看进位几次，减法看借位几次，乘法看乘数有几位、被乘数是不是三位数以上。
# 每种运算有 4 档难度，(运算, 难度) 叫做这一步的**情境**（context）。
#
# 看输出：几个例子的难度；全部情境的列表和个数。

# %%
for op, a, b in [("add", 12, 34), ("add", 47, 38), ("add", 999, 1), ("sub", 52, 17), ("mul", 47, 3),
                 ("mul", 472, 3), ("mul", 47, 12), ("mul", 472, 12)]:
    print(f"{pad(f'{a} {OP_SYMBOLS[op]} {b}', 12)} 难度 {step_hardness(op, a, b):.1f}")
print(f"\n全部情境（一共 {len(CONTEXTS)} 种）：")
for key in CONTEXTS:
    print(f"  {str(key):16} {CONTEXT_NAMES[key]}")

# %% [markdown]
# ## 3. logits：模型大小和难度
#
# 在第 $i$ 步（从 0 数）算 $a \mathbin{\text{op}} b$ 时，三种做法的 logits 是
#
# $$z_{\text{correct}} = \alpha_{\text{op}} + \beta \log_{10}\frac{N}{N_0} - h(\text{op}, a, b) \;\big[\,-\,\gamma\, i\ \text{（没有思维链时）}\big],
# \qquad z_{\text{bug}} = \ell_{\text{bug}}, \qquad z_{\text{careless}} = \ell_{\text{careless}},$$
#
# 选每种做法的概率是 $\pi = \operatorname{softmax}(z / T)$。式中各个符号对应 `toyllm` 里的名字：
#
# | 符号 | 含义 | `toyllm` 里的名字 |
# |---|---|---|
# | $N$ | 参数量（模型大小） | `ToyLLM(size)` 的 `size` |
# | $N_0$ | 参考大小 | `REF_SIZE` |
# | $\alpha_{\text{op}}$ | 每种运算的基础能力 | `ALPHA[op]` |
# | $\beta$ | 模型每大 10 倍，correct 的 logit 增加多少 | `BETA` |
# | $h$ | 这一步的难度 | `step_hardness(op, a, b)` |
# | $\ell_{\text{bug}},\ \ell_{\text{careless}}$ | 错误观念、粗心的 logit（常数） | `LOGIT_BUG`、`LOGIT_CARELESS` |
# | $\gamma$ | 没有思维链时，每往后一步多扣的分 | `NO_COT_PENALTY` |
# | $T$ | 温度 | `temperature` |
#
# 下面打印这些常数，再按公式手算一步的 logits，和模型自己的 `step_logits` 比较。看最后一行是不是 `True`。

# %%
print("N_0 =", REF_SIZE, "  alpha =", ALPHA, "  beta =", BETA)
print("l_bug =", LOGIT_BUG, "  l_careless =", LOGIT_CARELESS, "  gamma =", NO_COT_PENALTY)

op, a, b, i = "mul", 47, 12, 3
ok = True
for size in SIZES:
    for cot in (True, False):
        model = ToyLLM(size, cot=cot)
        z_correct = ALPHA[op] + BETA * np.log10(size / REF_SIZE) - step_hardness(op, a, b)
        if not cot:
            z_correct -= NO_COT_PENALTY * i
        by_hand = [z_correct, LOGIT_BUG, LOGIT_CARELESS]
        ok = ok and np.allclose(by_hand, model.step_logits(op, a, b, i), rtol=0, atol=1e-12)
print(f"\n{a} × {b}，第 {i} 步，1B 有思维链：step_logits =",
      [round(z, 3) for z in ToyLLM(1e9).step_logits(op, a, b, i)])
print("五种大小 × 有无思维链，手算的 logits 都和 step_logits 一致：", ok)

# %% [markdown]
# 公式的意思很直接：模型每大 10 倍，correct 的 logit 增加 $\beta$；难度每增加 1，correct 的 logit 减少 1。
# 错误观念和粗心的 logit 是常数，所以 correct 的 logit 越高，选 correct 的概率越接近 1。
#
# 下面两张图都来自 `toyllm.policy.prob_table(model)`，它把模型写成一张表：每个情境一行，三种做法的概率。
# 左图：乘法的 4 个情境里，π(correct) 随模型大小怎样变化。右图：1B 模型里，π(correct) 随难度怎样变化，每种运算一条线。
# 看：左图的每条线都在上升，难的情境在下面；右图的线都在下降。

# %%
sizes = np.logspace(8, 12, 41)
tables = np.array([prob_table(ToyLLM(s)) for s in sizes])          # (大小, 情境, 做法)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
for j, key in enumerate(CONTEXTS):
    if key[0] == "mul":
        ax1.plot(sizes, tables[:, j, 0], label=CONTEXT_NAMES[key])
ax1.set_xscale("log")
ax1.set_xlabel("模型参数量")
ax1.set_ylabel("π(正确)")
ax1.set_title("乘法的 4 个情境：π(正确) 随模型大小上升")
ax1.set_ylim(0, 1)
ax1.legend()

table_1b = prob_table(ToyLLM(1e9))
for op in OPS:
    rows = [j for j, key in enumerate(CONTEXTS) if key[0] == op]
    ax2.plot([CONTEXTS[j][1] for j in rows], table_1b[rows, 0], marker="o", label=OP_NAMES[op])
ax2.set_xlabel("难度 h")
ax2.set_ylabel("π(正确)")
ax2.set_title("1B 模型：π(正确) 随难度下降")
ax2.set_ylim(0, 1)
ax2.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 4. 情境表：每个情境、每种大小，做对一步的概率
#
# 把上面的表对所有情境、五种大小打印出来。每一格是 π(correct)，即选"正确"做法的概率。
#
# 看输出：同一行从左到右（模型变大）都在上升；同一列里，最难的几个情境最低。最后一列的进度条是 1B 模型的值。

# %%
tables = {size: prob_table(ToyLLM(size)) for size in SIZES}
Table(["情境"] + [fmt_size(s) for s in SIZES] + ["1B"],
      [[CONTEXT_NAMES[key]] + [f"{tables[s][j, 0]:.3f}" for s in SIZES] + [bar(tables[1e9][j, 0],
                                                                               15)]
       for j, key in enumerate(CONTEXTS)])

# %% [markdown]
# 注意"做对一步"不只是选了 correct：如果这一步的错误观念不咬人，选 bug 也会写下正确的值。
# 所以沿正确路径算，一步做对的概率是 $\pi(\text{correct}\mid c) + \pi(\text{bug}\mid c)\cdot\mathbb{1}[\text{不咬人}]$；
# 各步相乘，就是 `exact_pass_at_1` 算的"全对"的概率（"路径 pass@1"）。它比答对的概率略小：写错以后又被后面的错误碰巧改对的路径
# 不在里面。答对的精确概率是 `answer_probs`（所有路径都算），也就是采样的 pass@1 估计的那个数。

# %% [markdown]
# ## 5. 思维链：有没有"草稿纸"
#
# 有思维链（`cot=True`）时，模型把每一步的结果写下来，下一步接着算。
# 没有思维链（`cot=False`）时，中间结果要"记在脑子里"：第 $i$ 步的 correct logit 再减去 $\gamma i$，越往后越容易错。
#
# 先看同一个情境（乘两位数）在不同步号上的 π(correct)。看输出：有思维链的一行不随步号变化，没有思维链的一行越来越低。

# %%
key = ("mul", 1.5)
row = CONTEXTS.index(key)
Table(["第几步（从 0 数）"] + [str(i) for i in range(8)],
      [["有思维链" if cot else "没有思维链"]
       + [f"{prob_table(ToyLLM(1e9, cot=cot), step_index=i)[row, 0]:.3f}" for i in range(8)]
       for cot in (True, False)],
      title=f"情境：{CONTEXT_NAMES[key]}，1B 模型")

# %% [markdown]
# 再看整道题：对 1 到 10 步的题，各出 300 道，分别算有、没有思维链时的路径 pass@1（每步做对的概率的乘积，正好显出
# 每一步的损失怎样累积；答对的概率只比它略高，而长题上 `answer_probs` 要慢得多）。
#
# 看输出和图：步数少时两条线几乎重合，步数一多，没有思维链的线掉得快得多。

# %%
steps = range(1, 11)
by_steps = {True: [], False: []}
for n_steps in steps:
    problems = make_problem_set(random.Random(n_steps), 300, n_steps, n_steps)
    for cot in (True, False):
        by_steps[cot].append(exact_pass_at_1(ToyLLM(1e9, cot=cot), problems))

display(Table(["步数"] + [str(n) for n in steps],
              [["有思维链" if cot else "没有思维链"] + [f"{p:.3f}" for p in by_steps[cot]]
               for cot in (True, False)]))

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(list(steps), by_steps[True], marker="o", label="有思维链")
ax.plot(list(steps), by_steps[False], marker="s", label="没有思维链")
ax.set_xlabel("题目的步数")
ax.set_ylabel("路径 pass@1")
ax.set_title("1B 模型：思维链让长题好做得多")
ax.set_ylim(0, 1)
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 6. 温度
#
# 概率是 $\pi = \operatorname{softmax}(z / T)$。温度 $T$ 越高，三种做法的概率越接近均匀；$T$ 越低，越集中到 logit 最大的做法上。
# $T = 0$ 定义为**贪心**：总是选 logit 最大的做法，概率是 1。
#
# 看输出：47 × 12 这一步，在几种温度下三种做法的概率。

# %%
model = ToyLLM(1e9)
Table(["温度 T"] + [PROCEDURE_NAMES[p] for p in PROCEDURES],
      [[str(T)] + [f"{p:.3f}" for p in model.step_probs("mul", 47, 12, 0, temperature=T)]
       for T in (0, 0.25, 0.5, 1, 2, 5)],
      title="47 × 12，1B 模型")

# %% [markdown]
# 温度也改变整批题的 pass@1。下面是三种大小的模型在 100 道 3~8 步的题上、不同温度下的 pass@1（答对的精确概率）。
#
# 看输出：温度越低，pass@1 越高。$T = 0$ 时 1B 和 10B 模型的 pass@1 是多少？
# 原因在输出的最后几行：对它们来说，每个情境里 correct 都是最可能的做法，贪心每一步都选 correct。
# 100M 模型有情境里 correct 不是最可能的做法，贪心在那里总是选错（对照第 4 节的情境表）。

# %%
problems = make_problem_set(random.Random(0), 100, 3, 8)
temps = (0, 0.25, 0.5, 1, 1.5, 2)
display(Table(["模型"] + [f"T={T}" for T in temps],
              [[fmt_size(size)]
               + [f"{answer_probs(ToyLLM(size), problems, temperature=T).mean():.3f}"
                  for T in temps]
               for size in (1e8, 1e9, 1e10)]))
print("correct 不是最可能的做法的情境（贪心在这些情境里不选 correct）：")
for size in (1e8, 1e9, 1e10):
    table = prob_table(ToyLLM(size))
    not_best = [CONTEXT_NAMES[key] for j, key in enumerate(CONTEXTS)
                if table[j, 0] < table[j, 1:].max()]
    print(f"  {pad(fmt_size(size), 6)} {'、'.join(not_best) if not_best else '没有'}")

# %% [markdown]
# 既然贪心的 pass@1 更高，为什么本讲训练和评估都用 $T = 1$（`toyllm.TEMPERATURE`）？因为贪心**没有多样性**：同一道题做多少遍都是同一份解答。
# 多做几遍、挑一个对的（pass@k）没有用；强化学习要从模型自己的不同尝试里学习，也就无从学起。
#
# 看输出：同一道题各做 20 遍，$T = 0$ 和 $T = 1$ 时分别出现了几种不同的解答（不同的做法序列或不同的答案）。

# %%
model = ToyLLM(1e9)
problem = problems[0]
print("题目：", problem, "=", problem.answer)
for T in (0, 1):
    samples = [model.generate(problem, random.Random(seed), temperature=T) for seed in range(20)]
    distinct = {(s.procs, s.values) for s in samples}
    print(f"T = {T}：20 遍里有 {len(distinct)} 种不同的解答，做对了"
          f" {sum(s.correct for s in samples)} 遍")

# %% [markdown]
# ## 小结
#
# - 三种做法：正确、错误观念（确定性的、有名字的，有时不咬人）、粗心（一定错）。
# - 一步的情境是 (运算, 难度)，难度只由数字决定；一共只有 12 种情境，所以整个模型就是一张"情境 × 做法"的小表。
# - $z_{\text{correct}} = \alpha_{\text{op}} + \beta \log_{10}(N/N_0) - h$：模型越大越容易选对，越难越容易选错；错误观念和粗心的 logit 是常数。
# - 没有思维链时后面的步骤越来越难，长题的 pass@1 掉得很快。
# - 温度越低越集中；贪心没有多样性，所以第 6 讲用 $T = 1$ 采样、训练和评估。
#
# ## 试一试
#
# 1. 在第 3 节把 `op, a, b, i` 换成别的一步（例如 `"sub", 1000, 1, 0`），先自己按公式算 logits，再运行核对。
# 2. 在第 5 节把 `ToyLLM(1e9, cot=cot)` 换成 `1e12`：大模型没有思维链时，10 步的题还能做对多少？
# 3. 在第 6 节最后一个单元格里把 `ToyLLM(1e9)` 换成 `ToyLLM(1e8)`，贪心时还能做对这道题吗？
