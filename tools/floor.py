"""
基准的"地板"：同一个 GRPO 训练最精简的 numpy 写法（make bench 拿引擎和它比，tools/bench.py）。

【思路】和 toyllm.rl.train(model, "grpo") 做同样的工作、同样的采样规则：每次迭代不放回地挑 batch_problems 道题
    （rng.choice 再排序）、每题采样 G 份（每一步一个均匀随机数 u，按累积概率选做法；careless 再抽"哪一位""多还是少"
    两个随机数），优势 A = (r − 组平均) / (组样本标准差 + std_eps)（全相同的组为 0），seq-mean 聚合，μ = 1
    （ρ ≡ 1，所以不裁剪），SGD：Δ −= lr × 梯度。什么都不记：没有 History、没有熵和 KL、没有留出题。
    每道题沿正确路径的情境、bug 的结果、正确结果的位数只和题目有关，开始前算一次（每题 × 每步一张表）；
    采样时还在正确路径上的行直接查表，走偏了的行才用 arithmetic 的向量化函数现算。
    随机数的用法和引擎完全一样，所以同一个种子下它和引擎训练出**逐位相同**的 Δ（bench 检查这一点），
    另外在几个种子上比较两者训练后的精确 pass@1（平均值 ± 标准误）。
    维护者的工具，不在学生的包里。
【用法】from tools.floor import floor_grpo；floor_grpo(1e9, train_set) → Δ (12, 3)
"""

import numpy as np

from toyllm.arithmetic import apply_op_np, bug_np, context_ids_np, exact_np
from toyllm.policy import base_logit_table, softmax_rows
from toyllm.sampler import VALUE_LIMIT, prepare_problems

_POW10 = 10 ** np.arange(19, dtype=np.int64)


def path_tables(problems):
    """每题每步沿正确路径的表：(ops, operands, 长度, 正确值 (P, L + 1)：第 t 列是第 t 步之前的, 情境, bug 的结果)。"""
    batch = prepare_problems(problems)
    P, L = batch.ops.shape
    values = np.zeros((P, L + 1), dtype=np.int64)
    ctx, bug = np.zeros((P, L), dtype=np.int64), np.zeros((P, L), dtype=np.int64)
    values[:, 0] = batch.start
    for t in range(L):
        op, x, b = batch.ops[:, t], values[:, t], batch.operands[:, t]
        values[:, t + 1] = exact_np(op, x, b)
        ctx[:, t] = context_ids_np(op, x, b)
        bug[:, t] = apply_op_np(op, x, b, np.ones_like(op), None)
    return batch.ops, batch.operands, batch.lengths, values, ctx, bug


def floor_grpo(size, problems, iterations=50, batch_problems=32, group_size=8, lr=2.0, std_eps=1e-4, seed=0,
               tables=None):
    """GRPO 的最精简循环（见模块说明）；返回训练后的 Δ (12, 3)。tables：path_tables(problems)，可以先算好反复用。"""
    ops, operands, lengths, values, path_ctx, path_bug = tables or path_tables(problems)
    base, params = base_logit_table(size), np.zeros((12, 3))
    rng, G = np.random.default_rng(seed), group_size
    for _ in range(iterations):
        pi = softmax_rows(base + params)
        cum = np.cumsum(pi, axis=1)
        cum0, cum1 = cum[:, 0].copy(), cum[:, 1].copy()              # 两个累积概率各一列：逐列比较，不取二维块
        rows = np.repeat(np.sort(rng.choice(len(lengths), size=batch_problems, replace=False)), G)
        lens = lengths[rows]
        B, L = len(rows), int(lens.max())
        x = values[rows, 0]
        ctx, act = np.zeros((B, L), dtype=np.int64), np.zeros((B, L), dtype=np.int64)
        for t in range(L):
            live = np.nonzero(lens > t)[0] if t >= lens.min() else slice(None)
            p, xl = rows[live], x[live]
            c, ex, on = path_ctx[p, t], values[p, t + 1], xl == values[p, t]
            off = np.nonzero(~on)[0]
            if len(off):                                   # 走偏了的行：现算情境和正确结果
                o, xo, bo = ops[p[off], t], xl[off], operands[p[off], t]
                ex[off], c[off] = exact_np(o, xo, bo), context_ids_np(o, xo, bo)
            u = rng.random(len(c))
            a = (u >= cum0[c]).astype(np.int64) + (u >= cum1[c])
            v = ex.copy()
            bug = np.nonzero(a == 1)[0]
            if len(bug):                                   # bug：在正确路径上查表，走偏了的现算
                v[bug] = path_bug[p[bug], t]
                bo = bug[~on[bug]]
                if len(bo):
                    v[bo] = bug_np(ops[p[bo], t], xl[bo], operands[p[bo], t], ex[bo])
            slip = np.nonzero(a == 2)[0]
            if len(slip):                                  # careless：哪一位、多还是少（和 apply_op_np 同样的抽法）
                e = ex[slip]
                m = np.abs(e)
                i = np.floor(rng.random(len(slip)) * ((m[:, None] >= _POW10[1:]).sum(axis=1) + 1)).astype(np.int64)
                up = (rng.random(len(slip)) < 0.5) | (m == 0)
                m = np.where(up, m + _POW10[i], m - _POW10[i])
                v[slip] = np.where(e < 0, -m, m)
            ctx[live, t], act[live, t] = c, a
            x[live] = np.minimum(np.maximum(v, -VALUE_LIMIT), VALUE_LIMIT)
        r = (x == values[rows, lengths[rows]]).astype(float).reshape(-1, G)
        adv = r - r.sum(axis=1, keepdims=True) / G
        adv = adv / (r.std(axis=1, ddof=1, keepdims=True) + std_eps)
        adv[r.min(axis=1) == r.max(axis=1)] = 0.0
        mask = np.arange(L)[None, :] < lens[:, None]
        s = (1.0 / (B * lens))[:, None] * -adv.reshape(-1)[:, None]        # seq-mean 权重 × ∂l/∂log π（ρ = 1）
        s = np.broadcast_to(s, mask.shape)[mask]
        c, a = ctx[mask], act[mask]
        grad = np.bincount(c * 3 + a, weights=s, minlength=36).reshape(12, 3) \
            - np.bincount(c, weights=s, minlength=12)[:, None] * pi
        params -= lr * grad
    return params
