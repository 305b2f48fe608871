"""
在模型自己的解答上做模仿学习：向量化的 SFT、拒绝采样微调（RFT）、专家迭代、STaR（带"合理化"）（第 6 讲 SFT / STaR 一节）。

【思路】这些方法都是同一个循环：
        1. 采样：每道训练题让模型做 k 遍；
        2. 过滤：只留下**做对了**的解答（可以去重，只留不同的做法序列）；
        3. （STaR）合理化：一道题 k 遍都没做对，就把答案当提示告诉模型，再做一遍，做对了也留下；
        4. 微调：在留下的解答上做 SFT（最大化 Σ log π(做法 | 情境)）；
        5. 重复几轮：每轮从**原始模型**重新微调（STaR 的做法），或者在上一轮的模型上继续（专家迭代）。
    它们和 RL 的关系：只保留奖励为 1 的样本再做 SFT，就是"奖励只取 0 / 1、不减基线"的策略梯度
    （REINFORCE），只是每一轮多走几步梯度。所以它们也会提高 pass@1，可以和 GRPO 在**同样的采样数**下比较
    （history 里的 samples 列）。

【提示（hint）在玩具里是什么】真正的 STaR 把正确答案写进提示词，模型"倒推"出一个能得到这个答案的推理过程。
    玩具模型没有提示词，我们这样建模：知道答案的模型在每一步都能检查"这一步算完以后，还在通往答案的路上吗"，
    也就是这一步的结果是否等于正确路径上的中间值。于是：
        logits(做法) += hint_boost × 1[用这个做法算出的值 = 正确的中间值]
    · correct 在正确路径上总是被加分；
    · bug 只有在"碰巧不出错"（这一步 bug 不咬人）时才被加分 —— 提示分不清"正确的方法"和"碰巧对的方法"，
      所以合理化的数据里也会有"答案对、方法错"的步（课上的 lucky bug）；
    · careless 是随机的失误，不会被加分；
    · 一旦走错（hint_boost 有限，仍可能走错），后面就不会再有做法等于正确中间值，提示也就不起作用了。
    hint_boost = 0 就是不给提示；hint_boost 很大时几乎一定沿正确路径走。
    微调时，合理化得到的步和普通的步一样，训练的是**没有提示**的策略（STaR 论文也是这样：训练数据里不带提示）。

【用法】
    from toyllm import TrainableLLM
    from toyllm.problems import default_problems
    from toyllm.imitation import star, rejection_sampling_ft, expert_iteration

    train_set, heldout = default_problems(0)
    hist = star(TrainableLLM(1e9), train_set, heldout, rounds=5)
    print(hist.to_table())
"""

import math

import numpy as np

from ._checks import as_array, as_bool, as_callable, as_int, as_real
from .arithmetic import CONTEXTS, PROCEDURES
from .arithmetic_np import apply_op_np, exact_np
from .exact import CorrectPaths, correct_paths, exact_pass_at_1
from .history import History, stop_on_interrupt
from .policy import check_table_model, log_softmax_rows, logit_table, softmax_rows
from .rl.losses import entropy
from .sampler import check_rollouts, prepare_problems, sample_rollouts
from .toy_llm import Sample
from .trainable import check_trainable

_N_CTX = len(CONTEXTS)

IMITATION_COLUMNS = ("iteration", "pass1_exact", "pass1_sampled", "kept", "rationalized", "samples", "entropy", "loss")
"""模仿学习的 history 列：轮次、本轮之后的路径 pass@1、本轮采样的正确率、留下几份解答、其中几份来自提示、
累计采样数（含提示后的采样）、本轮采样经过的情境上的平均熵、微调后训练数据上的平均每步负对数似然。"""


# =============================================================================
# 向量化的 SFT
# =============================================================================
def step_counts(ctx, actions, mask):
    """
    每个 (情境, 做法) 在数据里出现了几次：(12, 3) 的数组。SFT 的梯度只需要它。

    【参数】ctx、actions：(B, L) 整数数组；mask：(B, L) bool
    【返回】(12, 3) float 数组
    """
    ctx, actions, mask = np.asarray(ctx), np.asarray(actions), np.asarray(mask, dtype=bool)
    if not (ctx.shape == actions.shape == mask.shape):
        raise ValueError(f"ctx、actions、mask 的形状必须相同，收到 {ctx.shape}、{actions.shape}、{mask.shape}")
    flat = ctx[mask] * 3 + actions[mask]
    return np.bincount(flat, minlength=3 * _N_CTX).reshape(_N_CTX, 3).astype(float)


def sft_loss_grad(model, counts):
    """
    SFT 的损失（训练数据上平均每步的负对数似然）和它对 Δ 的梯度，数据是"每个 (情境, 做法) 出现几次"。

    【思路】loss = −Σ_{c,a} counts[c, a] · log π(a | c) / N。同一情境的步共享 π，所以梯度可以按情境合并：
            ∂loss/∂Δ[c] = (n_c · π_c − counts[c]) / N，   n_c = 情境 c 的步数，N = 总步数
        这正是 trainable.sft 对每一步求的平均梯度 (1/N) Σ (π(· | 情境) − onehot(做法))，只是一次算完。
    【参数】model：TrainableLLM（或 ToyLLM）；counts：(12, 3) 次数（step_counts 的结果）
    【返回】(loss, grad)：float 和 (12, 3) 数组；数据为空（counts 全 0）时是 (nan, 全 0)
    【例子】loss, grad = sft_loss_grad(model, step_counts(r.ctx, r.actions, r.mask & r.correct[:, None]))
    """
    counts = _as_counts(counts)
    total = counts.sum()
    if total == 0:
        return math.nan, np.zeros_like(counts)
    logits = logit_table(model)
    grad = (counts.sum(axis=1, keepdims=True) * softmax_rows(logits) - counts) / total
    return float(-(counts * log_softmax_rows(logits)).sum() / total), grad


def _as_counts(counts):
    """counts 必须是 (12, 3) 的有限非负数组（step_counts 的结果，每个 (情境, 做法) 出现的次数）；返回 float 数组。"""
    return as_array("counts", counts, (_N_CTX, 3), nonneg=True)


def sft_counts(model, counts, epochs=30, lr=2.0):
    """
    在"每个 (情境, 做法) 出现几次"的数据上做 SFT（原地修改 model.params），和 trainable.sft 的数学完全相同。

    【思路】每个 epoch 用 sft_loss_grad 的梯度走一步：参数 −= lr × 梯度。
        每个 epoch 只要一次 softmax 和几次数组运算，和数据有多少步无关。
    【参数】model：TrainableLLM；counts：(12, 3) 次数（step_counts 的结果）；epochs：≥ 0；lr：学习率
    【返回】model（同一个对象）
    【边界】数据为空（counts 全 0）时什么也不做，和 trainable.sft 一样。
    【例子】sft_counts(model, step_counts(r.ctx, r.actions, r.mask & r.correct[:, None]))
    【Python 小知识】counts.sum(axis=1, keepdims=True) 的形状是 (12, 1)，可以直接和 (12, 3) 的 π 相乘（广播）。
    """
    check_trainable(model)
    epochs = as_int("epochs", epochs, low=0)
    lr = as_real("lr", lr)
    counts = _as_counts(counts)
    for _ in range(epochs if counts.sum() else 0):                 # 数据为空时什么也不做
        model.params -= lr * sft_loss_grad(model, counts)[1]
    return model


def sft_rollouts(model, rollouts, keep=None, epochs=30, lr=2.0):
    """
    在一批解答（可以只取其中一部分）上做 SFT。

    【参数】model：TrainableLLM；rollouts：sampler.Rollouts；keep：(B,) bool，要用哪些解答（默认全部）；
        epochs、lr：同 trainable.sft
    【返回】model
    【例子】sft_rollouts(model, r, keep=r.correct)      # 拒绝采样微调的一步
    """
    check_rollouts(rollouts)
    mask = rollouts.mask if keep is None else rollouts.mask & _as_keep(keep, len(rollouts))[:, None]
    return sft_counts(model, step_counts(rollouts.ctx, rollouts.actions, mask), epochs, lr)


def _as_keep(keep, B):
    keep = np.asarray(keep)
    if keep.shape != (B,) or keep.dtype != bool:
        raise ValueError(f"keep 必须是长度 {B} 的 bool 数组，收到形状 {keep.shape}、类型 {keep.dtype}")
    return keep


def rollouts_to_data(problems, rollouts, keep=None):
    """
    把 Rollouts 变回参考模块的数据格式 list of (Problem, Sample)，可以交给 trainable.sft / log_likelihood。

    【参数】problems：采样时用的题目（list of Problem 或 ProblemBatch）；rollouts：Rollouts；keep：(B,) bool
    【返回】list of (Problem, Sample)
    """
    check_rollouts(rollouts)
    batch = prepare_problems(problems)
    keep = np.ones(len(rollouts), bool) if keep is None else _as_keep(keep, len(rollouts))
    out = []
    for i in np.flatnonzero(keep):
        L = int(rollouts.lengths[i])
        sample = Sample(tuple(int(v) for v in rollouts.values[i, :L]),
                        tuple(PROCEDURES[a] for a in rollouts.actions[i, :L]), bool(rollouts.correct[i]))
        out.append((batch.problems[rollouts.problem[i]], sample))
    return out


def distinct_mask(rollouts, keep=None):
    """
    去重：同一道题里，做法序列完全相同的解答只留第一份（RFT 论文的 "distinct reasoning paths"）。

    【参数】rollouts：Rollouts；keep：(B,) bool，先做的过滤（例如只看做对的）
    【返回】(B,) bool：留下的解答
    【例子】distinct_mask(r, r.correct).sum() → 不同的正确做法序列一共有几种（按题累加）
    【Python 小知识】把一串 0/1/2 看成三进制数，就得到一个整数"指纹"；np.unique(..., return_index=True)
        返回每个不同的值第一次出现的位置。
    """
    check_rollouts(rollouts)
    B = len(rollouts)
    keep = np.ones(B, bool) if keep is None else _as_keep(keep, B)
    L = rollouts.actions.shape[1]
    code = (np.where(rollouts.mask, rollouts.actions + 1, 0) * (4 ** np.arange(L, dtype=np.int64))).sum(axis=1)
    rows = np.flatnonzero(keep)
    pairs = np.stack([rollouts.problem[rows], code[rows]], axis=1)
    _, first = np.unique(pairs, axis=0, return_index=True)
    out = np.zeros(B, bool)
    out[rows[first]] = True
    return out


# =============================================================================
# 带提示的采样（STaR 的合理化）
# =============================================================================
def _correct_values(batch):
    P, L = batch.ops.shape
    vals = np.zeros((P, L), dtype=np.int64)
    x = batch.start.copy()
    for t in range(L):
        op, b = batch.ops[:, t], batch.operands[:, t]
        x = np.where(batch.mask[:, t], exact_np(op, x, b), x)
        vals[:, t] = x
    return vals


def hinted_rollouts(model, problems, n, rng, hint_boost=3.0, temperature=1.0):
    """
    "知道答案"的采样：每一步，结果会等于正确中间值的做法 logit 加 hint_boost（见模块说明）。

    【思路】采样的循环就是 sample_rollouts（它的 logit_bonus 参数）；这里只提供每一步的"加分"：
        correct 的结果、bug 的结果（bug 是确定的）分别和正确路径上这一步的值比较，相等就加 hint_boost；
        careless 是随机的失误，不加分。
    【参数】model：TrainableLLM 或 ToyLLM（有思维链）；problems：list of Problem 或 ProblemBatch；n：每题几份；
        rng：numpy.random.Generator；hint_boost：≥ 0；temperature：> 0
    【返回】sampler.Rollouts；其中 probs / logp 是**带提示**的采样概率
    【边界】hint_boost = 0 时和 sample_rollouts 的分布相同（随机数的用法也相同）。
    【例子】hinted_rollouts(TrainableLLM(1e9), failed, 1, np.random.default_rng(0)).correct.mean() → 接近 1
    【Python 小知识】bonus 是一个闭包：它在 hinted_rollouts 里面定义，记得外面的 target 和 hint_boost。
    """
    batch = prepare_problems(problems)
    n = as_int("n", n, low=1)
    hint_boost = as_real("hint_boost", hint_boost, low=0.0)
    temperature = as_real("temperature", temperature, 0.0, low_open=True)
    check_table_model(model)
    if not model.cot:
        raise ValueError("hinted_rollouts 只支持有思维链的模型（cot=True）")
    target = np.repeat(_correct_values(batch), n, axis=0)          # 每份解答那道题的正确中间值 (B, L)

    def bonus(t, live, op, x, b, exact):
        tg = target[live, t]
        bug = apply_op_np(op, x, b, np.ones(len(op), np.int64), None, exact=exact)   # bug 是确定的，不用随机数（rng 传 None）
        return hint_boost * np.stack([exact == tg, bug == tg, np.zeros(len(op), bool)], axis=1)

    return sample_rollouts(model, batch, n, rng, temperature, logit_bonus=bonus)


# =============================================================================
# 几轮"采样 → 过滤 → 微调"
# =============================================================================
def _imitate(model, train_problems, heldout_problems, *, algorithm, rounds, k, dedup, rationalize, hint_boost, restart,
             epochs, lr, seed, callback):
    check_trainable(model)
    rounds = as_int("rounds", rounds, low=0)
    k = as_int("k（每道题采样几份）", k, low=1)
    epochs = as_int("epochs", epochs, low=0)
    lr = as_real("lr", lr)
    hint_boost = as_real("hint_boost", hint_boost, low=0.0)
    seed = as_int("seed", seed, low=0)
    dedup, rationalize, restart = (as_bool(n, v) for n, v in (("dedup", dedup), ("rationalize", rationalize),
                                                               ("restart", restart)))
    as_callable("callback", callback, allow_none=True)
    batch = prepare_problems(train_problems, "train_problems")
    paths = heldout_problems if isinstance(heldout_problems, CorrectPaths) else \
        correct_paths(prepare_problems(heldout_problems, "heldout_problems"))
    rng = np.random.default_rng(seed)
    start = model.params.copy()
    options = {"rounds": rounds, "k": k, "dedup": dedup, "rationalize": rationalize, "hint_boost": hint_boost,
               "restart": restart, "epochs": epochs, "lr": lr}
    hist = History(IMITATION_COLUMNS, {"algorithm": algorithm, "config": options, "seed": seed,
                                       "model_size": model.size, "n_train": len(batch),
                                       "start_pass1_exact": exact_pass_at_1(model, paths)},
                   headers={"iteration": "轮次"})
    samples = 0
    with stop_on_interrupt(hist, rounds, "轮", "参数"):
        for r_i in range(1, rounds + 1):
            roll = sample_rollouts(model, batch, k, rng)
            samples += len(roll)
            logpi = log_softmax_rows(logit_table(model))
            mean_entropy = float(entropy(np.exp(logpi), logpi).value[roll.ctx[roll.mask]].mean())
            keep = distinct_mask(roll, roll.correct) if dedup else roll.correct
            counts = step_counts(roll.ctx, roll.actions, roll.mask & keep[:, None])
            n_kept, n_rat = int(keep.sum()), 0
            if rationalize:
                failed = np.setdiff1d(np.arange(len(batch)), roll.problem[roll.correct])    # k 遍都没做对的题
                if len(failed):
                    hinted = hinted_rollouts(model, batch.subset(failed), 1, rng, hint_boost)
                    samples += len(hinted)
                    counts += step_counts(hinted.ctx, hinted.actions, hinted.mask & hinted.correct[:, None])
                    n_rat = int(hinted.correct.sum())
            if restart:
                model.params[...] = start
            sft_counts(model, counts, epochs, lr)
            hist.append({"iteration": r_i, "pass1_exact": exact_pass_at_1(model, paths),
                         "pass1_sampled": float(roll.correct.mean()), "kept": n_kept + n_rat, "rationalized": n_rat,
                         "samples": samples, "entropy": mean_entropy, "loss": sft_loss_grad(model, counts)[0]})
            if callback is not None:
                callback(hist, model)
    hist.meta["final_pass1_exact"] = exact_pass_at_1(model, paths)
    hist.meta["interrupted"] = hist.interrupted
    return hist


def rejection_sampling_ft(model, train_problems, heldout_problems, k=4, dedup=True, rounds=1, epochs=30, lr=2.0, seed=0,
                          callback=None):
    """
    拒绝采样微调（RFT，Yuan et al. 2023）：每道题采样 k 份，只留做对的（默认去重），做 SFT。

    【思路】做对的解答就是"模型自己写的示范"。RFT 论文发现：不同的推理路径越多，提升越大；
        弱的模型提升更多。这里的"推理路径"就是做法序列（correct / bug / careless 的序列）。
    【参数】model：TrainableLLM（原地训练）；train_problems、heldout_problems：list of Problem；
        k：每道题采样几份；dedup：是否只留不同的做法序列；rounds：做几轮（默认 1，多轮就是专家迭代）；
        epochs、lr：SFT 的参数（同 trainable.sft）；seed：随机种子；callback：每轮后调用 callback(history, model)
    【返回】History（列见 IMITATION_COLUMNS）
    【边界】按 Ctrl+C 会停下并返回已完成的轮次（history.interrupted = True）。
    【例子】hist = rejection_sampling_ft(TrainableLLM(1e9), train_set, heldout, k=4)
    """
    return _imitate(model, train_problems, heldout_problems, algorithm="rft", rounds=rounds, k=k, dedup=dedup,
                    rationalize=False, hint_boost=0.0, restart=False, epochs=epochs, lr=lr, seed=seed,
                    callback=callback)


def expert_iteration(model, train_problems, heldout_problems, rounds=5, k=8, restart=False, dedup=False, epochs=30,
                     lr=2.0, seed=0, callback=None):
    """
    专家迭代（expert iteration）：每轮每道题采样 k 份，留下奖励为 1 的，SFT；重复 rounds 轮。

    【思路】每一轮的模型比上一轮好，于是下一轮能做对更多的题、产生更多的训练数据。
        restart=False（默认）：在上一轮的模型上继续微调；restart=True：每轮都从原始模型重新微调
        （用的是最新模型采的数据，STaR 的做法，可以避免在自己的错误上越练越偏）。
    【参数】model：TrainableLLM（原地训练）；rounds：轮数；k：每道题每轮采样几份；restart、dedup：见上；
        epochs、lr、seed、callback：同 rejection_sampling_ft
    【返回】History
    【例子】hist = expert_iteration(TrainableLLM(1e9), train_set, heldout, rounds=5, k=8)
    """
    return _imitate(model, train_problems, heldout_problems, algorithm="expert_iteration", rounds=rounds, k=k,
                    dedup=dedup, rationalize=False, hint_boost=0.0, restart=restart, epochs=epochs, lr=lr, seed=seed,
                    callback=callback)


def star(model, train_problems, heldout_problems, rounds=5, k=1, rationalize=True, hint_boost=3.0, restart=True,
         dedup=False, epochs=30, lr=2.0, seed=0, callback=None):
    """
    STaR（Zelikman et al. 2022）：自己生成推理过程，做对的留下；做错的题给提示"合理化"；微调；重复。

    【思路】每一轮：
        1. 用当前模型对每道训练题采样 k 份（默认 k = 1）；
        2. 做对的留下；一份都没做对的题，用 hinted_rollouts 带着答案再做一遍（合理化），做对了也留下；
        3. 从**原始模型**开始（restart=True，论文的做法）在留下的数据上 SFT；
        4. 下一轮用新模型采样。
        合理化让模型也能从"本来做不对的题"里学到东西；但提示只看数值，碰巧不出错的 bug 步也会被当成对的
        （见模块说明）。
    【参数】model：TrainableLLM（原地训练）；rounds：轮数；k：每道题每轮采样几份；rationalize：是否合理化；
        hint_boost：提示的强度（≥ 0）；restart：每轮是否从原始模型重新微调；dedup：是否只留不同的做法序列；
        epochs、lr、seed、callback：同 rejection_sampling_ft
    【返回】History；rationalized 列是每轮靠提示做对的份数
    【例子】hist = star(TrainableLLM(1e9), train_set, heldout, rounds=5)
    """
    return _imitate(model, train_problems, heldout_problems, algorithm="star", rounds=rounds, k=k, dedup=dedup,
                    rationalize=rationalize, hint_boost=hint_boost, restart=restart, epochs=epochs, lr=lr, seed=seed,
                    callback=callback)


__all__ = ["IMITATION_COLUMNS", "distinct_mask", "expert_iteration", "hinted_rollouts", "rejection_sampling_ft",
           "rollouts_to_data", "sft_counts", "sft_loss_grad", "sft_rollouts", "star", "step_counts"]
