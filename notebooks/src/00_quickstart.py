# %% [markdown]
# # 00 · 快速上手
#
# **你将学到**
# - 怎样检查环境、导入 `toyllm`；
# - 一道多步算术题长什么样，玩具模型怎样一步一步地"做题"：每一步在三种做法（正确 / 错误观念 / 粗心）里随机选一种；
# - 什么是 pass@1，怎样用采样来估计它，以及这个玩具模型独有的"精确值"；
# - 接下来的 notebook 各讲什么。
#
# 对应讲义：[lectures/lecture06_scaling_rl.md](../lectures/lecture06_scaling_rl.md) 第 1 节（我们在哪里）

# %% [markdown]
# ## 1. 检查环境
#
# 下面的单元格检查 Python、numpy、matplotlib 和中文字体。
#
# 看输出里每一项是否都通过；有问题时，它会告诉你该怎么办。这个单元格的输出和你的电脑有关，自动测试不比较它。

# %%
# NBVAL_IGNORE_OUTPUT
from toyllm.doctor import run_doctor

report = run_doctor()

# %% [markdown]
# ## 2. 一道题
#
# `make_problem(rng, n_steps)` 随机出一道 `n_steps` 步的题。所有的随机性都来自 `random.Random(种子)`：同一个种子，同一道题。
#
# 看输出：题目、每一步之后的正确值、正确答案。

# %%
import random

from toyllm import (BUG_NAMES, CONTEXT_NAMES, PROCEDURE_NAMES, PROCEDURES, ToyLLM, TrainableLLM,
                    apply_op,
                    bar, context_key, evaluate, fmt_size, make_problem, make_problem_set, probs_for,
                    step_records)
from toyllm.exact import answer_probs, exact_pass_at_1
from toyllm.tables import Table

problem = make_problem(random.Random(7), 5)
print("题目：", problem, "= ?")
print("每一步之后的正确值：", problem.correct_values())
print("正确答案：", problem.answer)

# %% [markdown]
# ## 3. 模型
#
# `ToyLLM(size)` 是第 1 讲的玩具语言模型，`size` 是参数量：`1e9` 就是 1B（十亿）。
#
# 做每一步之前，模型先看这一步的**情境**：运算类型，加上这一步有多难（进位几次、借位几次、乘数有几位）。
# 然后按三种做法的概率随机选一种：
# - **正确**（correct）：算对；
# - **错误观念**（bug）：小学生常犯的一种系统性错误，每种运算一种，都有名字；
# - **粗心**（careless）：结果的某一位多写或少写 1，一定算错。
#
# 看输出：三种错误观念的名字；第 1 步的情境；模型在这个情境下选每种做法的概率。

# %%
model = ToyLLM(1e9)
print(model)
print()
for op, name in BUG_NAMES.items():
    print(f"{op} 的错误观念：{name}")
print()
step = problem.steps[0]
key = context_key(step.op, problem.start, step.operand)
print(f"第 1 步：{problem.start} {step}，情境：{CONTEXT_NAMES[key]}")
for proc, p in zip(PROCEDURES, model.step_probs(step.op, problem.start, step.operand, 0)):
    print(f"  P({PROCEDURE_NAMES[proc]}) = {p:.3f}")

# %% [markdown]
# ## 4. 一步一步地做题
#
# `model.generate(problem, rng)` 让模型把题做一遍，返回一份解答 `Sample`：每一步选的做法 `procs`、写下的值 `values`、最终对不对 `correct`。
#
# 注意：每一步的输入是模型**自己上一步写下的值**。一旦写错，后面就在错的数上继续算。
#
# 下面把一份解答逐步摊开：`step_records` 给出每一步的情境和选中的做法，`probs_for` 给出当时三种做法的概率。
# "应为"一列是对这一步自己的输入做正确运算的结果。看"选了"一列，找出是哪一步、哪种做法让答案错了。

# %%
sample = model.generate(problem, random.Random(1))

rows, x = [], problem.start
for i, (step, (key, action), probs, value) in enumerate(
        zip(problem.steps, step_records(problem, sample), probs_for(model, problem, sample),
            sample.values), start=1):
    should = apply_op(step.op, x, step.operand, "correct")
    rows.append([i, f"{x} {step}", CONTEXT_NAMES[key], " / ".join(f"{p:.2f}" for p in probs),
                 PROCEDURE_NAMES[PROCEDURES[action]], value, should,
                 "" if value == should else "✗"])
    x = value
Table(["步", "这一步", "情境", "P(正确/错误观念/粗心)", "选了", "写下", "应为", ""], rows,
      note=f"最终答案 {sample.values[-1]}，正确答案 {problem.answer}"
      f"：{'做对了' if sample.correct else '做错了'}")

# %% [markdown]
# ## 5. 同一道题做 8 遍
#
# 模型是随机的：同一道题，每一遍选的做法可能不同。下面用 8 个不同的种子各做一遍。
# 每一步用一个字表示选的做法：**对** = 正确，**错** = 错误观念，**粗** = 粗心。
#
# 看输出：8 遍里做对了几遍？有没有"用了错误观念，答案却是对的"？
# 错误观念不一定"咬人"：比如加法没有进位时，忘记进位也没关系。

# %%
LETTER = {"correct": "对", "bug": "错", "careless": "粗"}
solutions = [model.generate(problem, random.Random(seed)) for seed in range(8)]
Table(["种子", "每一步的做法", "最终答案", ""],
      [[seed, " ".join(LETTER[p] for p in s.procs), s.values[-1], "✓" if s.correct else "✗"]
       for seed, s in enumerate(solutions)],
      note=f"做对了 {sum(s.correct for s in solutions)} / 8 遍")

# %% [markdown]
# ## 6. pass@1：做一遍就做对的概率
#
# **pass@1** 是随机做一遍、做对的概率，再对一批题取平均。最直接的办法是采样：`evaluate(model, problems, rng, n=4)` 让每道题做 4 遍，数做对的比例。
#
# 这个玩具模型还可以不采样、**精确地**算出"走对路径"的概率，课程里叫它"路径 pass@1"。沿着正确的解题路径，第 $t$ 步的情境 $c_t$ 是固定的，这一步"做对"的概率是
# $\pi(\text{correct}\mid c_t) + \pi(\text{bug}\mid c_t)\cdot \mathbb{1}[\text{bug 在这一步不咬人}]$（粗心一定错）。各步独立，所以
#
# $$P(\text{全对}) = \prod_t \Big[\pi(\text{correct}\mid c_t) + \pi(\text{bug}\mid c_t)\,\mathbb{1}[\text{bug 在这一步不咬人}]\Big].$$
#
# `toyllm.exact.exact_pass_at_1` 就是这样算的。它比真正的 pass@1 略小："写错之后又被后面的错误碰巧改对"的路径不在里面。
# 答对的精确概率（所有路径都算）是 `toyllm.exact.answer_probs`；notebook 04 算出两者差多少，讲义 §2.3 说明梯度推导为什么用走对路径的概率。
#
# 看输出：采样的估计和精确值（答对的概率，采样估计的就是它）相差多少，和标准误差比是大还是小。差别来自采样的随机性。

# %%
problems = make_problem_set(random.Random(0), 100, 3, 8)
n = 4
sampled = evaluate(model, problems, random.Random(1), n=n)[1]
exact = float(answer_probs(model, problems).mean())
se = (sampled * (1 - sampled) / (len(problems) * n)) ** 0.5
print(f"{len(problems)} 道题（3~8 步），每道采样 {n} 次：pass@1 ≈ {sampled:.3f}（标准误差约"
      f" {se:.3f}）")
print(f"精确值（答对的概率）：{exact:.3f}；路径 pass@1：{exact_pass_at_1(model, problems):.3f}")
print(f"相差：{abs(sampled - exact):.3f}")
print(f"\n第 2 节那道题单独的路径 pass@1：{exact_pass_at_1(model, [problem]):.3f}")

# %% [markdown]
# ## 7. 模型越大，做得越好
#
# 模型越大，每个情境下选"正确"的 logit 越高。下面是 100M 到 1T 五种大小的 pass@1（同一批 100 道题）：答对的精确概率
# （`answer_probs`，所有路径都算，也就是采样的 pass@1 在估计的那个数），和它旁边的路径 pass@1。
#
# 看输出：pass@1 怎样随参数量变化。这就是第 6 讲的第一个主题：**规模**。

# %%
pass1 = {size: (float(answer_probs(ToyLLM(size), problems).mean()),
                exact_pass_at_1(ToyLLM(size), problems))
         for size in (1e8, 1e9, 1e10, 1e11, 1e12)}
Table(["参数量", "pass@1（答对的概率）", "路径 pass@1", ""],
      [[fmt_size(size), f"{q:.3f}", f"{p:.3f}", bar(q, 30)] for size, (q, p) in pass1.items()])

# %% [markdown]
# ## 8. TrainableLLM：同一个模型，但可以训练
#
# 第 6 讲的另一个主题是**训练**（SFT、强化学习）。`TrainableLLM(size)` 在每个情境的 3 个 logits 上各加一个可以学习的偏移量 $\Delta$，
# 全部参数放在数组 `params` 里，一行一个情境。
#
# 刚创建时 $\Delta = 0$，它和 `ToyLLM` 完全一样。看输出：`params` 的形状；两个模型的路径 pass@1 是否相同；同一个种子下它们做出的解答是否相同。

# %%
trainable = TrainableLLM(1e9)
print("params 的形状：", trainable.params.shape, "  最大的 |Δ|：", abs(trainable.params).max())
print("路径 pass@1 相同：",
      exact_pass_at_1(trainable, problems) == exact_pass_at_1(model, problems))
print("同一个种子，解答相同：",
      trainable.generate(problem, random.Random(1)) == model.generate(problem, random.Random(1)))

# %% [markdown]
# ## 小结
#
# - 一道题是一串运算；模型每一步按情境（运算 + 难度）下的概率，在**正确 / 错误观念 / 粗心**里选一种做法，输入是自己上一步写下的值。
# - 错误观念是系统性的，有时不咬人；粗心一定错。只要有一步真的错了，最终答案几乎一定错。
# - pass@1 可以采样估计（`evaluate`），也可以精确计算（`exact_pass_at_1`）；采样的估计围绕精确值波动。
# - 模型越大 pass@1 越高；`TrainableLLM` 在 $\Delta = 0$ 时就是同一个模型，训练就是改 $\Delta$。
#
# ## 试一试
#
# 1. 把第 2 节的种子 `7` 换成别的数、把步数 `5` 换成 10，再运行第 4、5 节：步数多了，做对的遍数有什么变化？
# 2. 在第 6 节把 `n = 4` 改成 `n = 16`：采样估计离精确值更近了吗？标准误差变成了原来的几分之几？
# 3. 用 `ToyLLM(1e9, cot=False)`（没有思维链）重做第 6 节，看路径 pass@1 变了多少。
#
# ## 接下来
#
# | notebook | 问题 |
# |---|---|
# | [01 · ToyLLM 回顾](01_toyllm_recap.ipynb) | 三种做法、logits 怎样随规模和难度变化、12 种情境、思维链、温度 |
# | [02 · 梯度推导](02_gradient.ipynb) | $\log$ softmax 的梯度；为什么情境共享参数；REINFORCE 估计与基线 |
# | [03 · SFT 与 STaR](03_sft_star.ipynb) | 模仿更大的模型；用自己做对的解答微调 |
# | [04 · 评估](04_evaluation.ipynb) | pass@k、maj@k、best-of-n，采样与精确 |
# | [05 · 策略梯度与 GRPO](05_policy_gradient_grpo.ipynb) | REINFORCE、RLOO、GRPO，结果奖励与过程奖励 |
# | [06 · PPO、KL 与 DAPO](06_ppo_kl_dapo.ipynb) | 比率与裁剪、KL、熵塌缩、DAPO 的各项改进 |
# | [07 · 规模](07_scaling.ipynb) | 大模型需要多少 RL；RL 计算量曲线；大 k 时基础模型能否追上 |
