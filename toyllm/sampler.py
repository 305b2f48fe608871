"""
向量化的采样器：一次让模型把一批题各做 n 遍，所有结果放在 numpy 数组里（第 6 讲：RL 的"采样"一步）。

【思路】ToyLLM.generate 一步一步地做一道题，清楚但慢。RL 一轮要做几百份解答，评估要做几万份，
    所以这里把"题目 × 第几遍"排成 B 行，每一步对 B 行同时做：
        1. 由每行自己上一步写下的值算出这一步的情境（context_ids_np；还在正确路径上的行直接查 ProblemBatch 的表）；
        2. 查概率表 π(· | 情境)，用一个均匀随机数 u 按累积概率选做法（和 generate 的规则相同）；
        3. 按选中的做法算出这一步的值（apply_op_np）。
    得到的解答和 generate 的**分布**相同（有统计检验），只是随机数的用法不同，所以同一个种子给出的具体样本不同。
【扩展点】这个循环只写一次。别的采样方式（例如 imitation.hinted_rollouts：STaR 带着答案做题）不必再抄一遍，
    而是调用 sample_rollouts(..., logit_bonus=函数)：每一步先把函数给出的"加分"加到 logits 上，再按同样的规则
    选做法、算值、记录、截断失控的错值（VALUE_LIMIT）。不给 logit_bonus 时走查表的快路径。
【Python 小知识】numpy 的"花式索引"table[ctx]：ctx 是整数数组时，结果的每一行是 table 的第 ctx[i] 行。
"""

import operator
from dataclasses import dataclass, fields

import numpy as np

from ._checks import as_callable, as_generator, as_instance, as_int, as_real
from .arithmetic import CONTEXTS, OP_INDEX
from .arithmetic_np import apply_op_np, bug_np, context_ids_np, exact_np
from .policy import check_table_model, logit_table, softmax_rows
from .problems import check_problems


VALUE_LIMIT = 10 ** 16 - 1
"""错值的上限：绝对值超过它的错值按 ±(10^16 − 1) 继续算，保证 int64 不溢出（10^16 × 99 < 2^63）。
这样的值离正确答案（≤ 9999）太远，以后的加减乘不可能再把它变回正确答案，所以不影响对错。"""


@dataclass(frozen=True)
class ProblemBatch:
    """
    一批题目的数组形式（P 道题，补齐到最长的 L 步），连同每道题沿正确路径的表（只和题目有关，采样时查表）。

    【属性】start (P,)；ops (P, L)：OPS 的下标；operands (P, L)；mask (P, L)：这一步存在；
        answer (P,)；lengths (P,)；problems：原来的 Problem 列表；
        path (P, L + 1)：正确的值（第 t 列是第 t 步之前的值，path[:, 0] = start）；
        path_ctx (P, L)：正确路径上每一步的情境；path_bug (P, L)：正确路径上每一步 bug 的结果
        （补齐的步是"加 0"，不用 mask 去掉时也是合法的数）
    """
    start: np.ndarray
    ops: np.ndarray
    operands: np.ndarray
    mask: np.ndarray
    answer: np.ndarray
    lengths: np.ndarray
    problems: tuple
    path: np.ndarray
    path_ctx: np.ndarray
    path_bug: np.ndarray

    def __len__(self):
        return len(self.problems)

    def subset(self, rows):
        """
        这批题的一部分（第 rows 行，按给的顺序），列数 L 不变，这样几批采样的结果可以直接接起来。

        【参数】rows：行下标的整数数组（非空）
        """
        rows = np.asarray(rows, dtype=np.int64)
        if rows.ndim != 1 or len(rows) == 0:
            raise ValueError(f"rows 必须是非空的一维整数数组，收到 {rows!r}")
        return ProblemBatch(**{f.name: tuple(map(self.problems.__getitem__, rows.tolist())) if f.name == "problems"
                               else getattr(self, f.name)[rows] for f in fields(ProblemBatch)})


def prepare_problems(problems, name="problems"):
    """
    把 list of Problem 变成 ProblemBatch（只需做一次，可以反复采样）；ProblemBatch 原样返回。

    【参数】problems：Problem 的列表或 ProblemBatch；name：报错时用的参数名
    【返回】ProblemBatch。最近用过的几批题记在 _PREPARED 里：同一批 Problem（逐个是同一个对象；Problem 不可变）
        再来时直接返回上次的 ProblemBatch（train 每次调用都要准备训练题，notebook 里同一份题常常训练很多遍）。
        所以返回的数组是只读的（numpy 的 writeable = False），要改请先 copy。
    【边界】problems 为空、不是 Problem 的列表：中文的 ValueError / TypeError（见 problems.check_problems）。
    """
    if isinstance(problems, ProblemBatch):
        return problems
    problems = check_problems(name, problems)
    for i, (seen, batch) in enumerate(_PREPARED):
        if len(seen) == len(problems) and all(map(operator.is_, seen, problems)):
            _PREPARED.insert(0, _PREPARED.pop(i))
            return batch
    batch = _prepare(problems)
    for f in fields(ProblemBatch):
        if f.name != "problems":
            getattr(batch, f.name).flags.writeable = False
    _PREPARED.insert(0, (problems, batch))
    del _PREPARED[_PREPARED_SIZE:]
    return batch


_PREPARED = []                 # [(tuple of Problem, ProblemBatch)]，最近用过的在前
_PREPARED_SIZE = 8


def _prepare(problems):
    """prepare_problems 的计算部分：problems 是检查过的 tuple of Problem。"""
    lengths = np.array([len(p.steps) for p in problems], dtype=np.int64)
    P, L = len(problems), int(lengths.max())
    ops, operands = np.zeros((P, L), dtype=np.int64), np.zeros((P, L), dtype=np.int64)
    mask = np.arange(L)[None, :] < lengths[:, None]
    # 按行优先的顺序（第 0 题的每一步、第 1 题的每一步……）正好是 mask 里 True 的顺序：一次填进去，不逐格赋值
    ops[mask] = np.array([OP_INDEX[s.op] for p in problems for s in p.steps], dtype=np.int64)
    operands[mask] = np.array([s.operand for p in problems for s in p.steps], dtype=np.int64)
    path = np.zeros((P, L + 1), dtype=np.int64)
    path[:, 0] = [p.start for p in problems]
    for t in range(L):                    # 沿正确路径走一遍：正确的值（每一步只是一次加减乘）
        path[:, t + 1] = exact_np(ops[:, t], path[:, t], operands[:, t])
    # 每一步的情境、bug 的结果只取决于这一步的 (运算, 输入, 运算数)：所有题的所有步一次算完
    x = path[:, :-1].ravel()
    op, b = ops.ravel(), operands.ravel()
    path_ctx = context_ids_np(op, x, b).reshape(P, L)
    path_bug = apply_op_np(op, x, b, np.ones_like(op), None, exact=path[:, 1:].ravel()).reshape(P, L)
    return ProblemBatch(path[:, 0].copy(), ops, operands, mask, np.array([p.answer for p in problems], dtype=np.int64),
                        lengths, problems, path, path_ctx, path_bug)


@dataclass(frozen=True)
class Rollouts:
    """
    B 份解答（每道题 n 份，同一道题的 n 份连在一起）。

    【属性】
        problem (B,)：第几道题；ctx (B, L)：每一步的情境下标（由模型**自己**上一步的值算出）；
        actions (B, L)：选的做法 0 / 1 / 2；values (B, L)：每一步写下的值；mask (B, L)：这一步存在；
        logp (B, L)：采样时选中做法的对数概率（不存在的步为 0）；probs (B, L, 3)：采样时的概率；
        step_ok (B, L)：这一步的值等于"对它自己的输入做正确运算"的结果（过程奖励）；
        final (B,)：最终答案；correct (B,)：最终答案是否正确；lengths (B,)；n：每道题几份
    """
    problem: np.ndarray
    ctx: np.ndarray
    actions: np.ndarray
    values: np.ndarray
    mask: np.ndarray
    logp: np.ndarray
    probs: np.ndarray
    step_ok: np.ndarray
    final: np.ndarray
    correct: np.ndarray
    lengths: np.ndarray
    n: int

    def __len__(self):
        return len(self.problem)


def check_rollouts(rollouts):
    """rollouts 必须是 Rollouts（sample_rollouts 的结果），否则报中文的 TypeError；原样返回。"""
    return as_instance("rollouts", rollouts, Rollouts, "sampler.Rollouts（sample_rollouts 的结果）")


def _choose(probs, u):
    """按累积概率选做法：第一个满足 u < 累积概率 的下标；舍入误差落到概率为 0 的做法上时退回。"""
    cum = np.cumsum(probs, axis=1)
    a = (u[:, None] >= cum[:, :-1]).sum(axis=1)
    rows = np.arange(len(a))
    for _ in range(probs.shape[1] - 1):
        zero = probs[rows, a] == 0.0
        if not np.any(zero):
            break
        a = a - zero
    return a


def sample_rollouts(model, problems, n, rng, temperature=1.0, *, logit_bonus=None):
    """
    让模型把每道题做 n 遍（向量化）。

    【参数】model：ToyLLM 或 TrainableLLM（按 policy.logit_table 的公式：思维链和 Δ 都算在内）；
        problems：list of Problem 或 ProblemBatch；n：每道题做几遍（≥ 1）；
        rng：numpy.random.Generator，例如 np.random.default_rng(0)；temperature：≥ 0（0 是贪心）；
        logit_bonus：None，或每一步给 logits 的"加分"函数（见 _sample 的说明；imitation.hinted_rollouts 用它）
    【返回】Rollouts
    【例子】r = sample_rollouts(TrainableLLM(1e9), problems, 8, np.random.default_rng(0)); r.correct.mean()
    【边界】careless 的随机数也来自 rng；同一个 rng 状态 → 完全相同的结果。
    """
    batch = prepare_problems(problems)
    n = as_int("n", n, low=1)
    as_generator("rng", rng)
    temperature = as_real("temperature", temperature, low=0.0)
    as_callable("logit_bonus", logit_bonus, "函数或 None", allow_none=True)
    check_table_model(model)              # 不是 ToyLLM、或重写了逐步 logits 的子类时报错
    return _sample(model, batch, n, rng, temperature, logit_bonus)


def sample_subset(model, batch, rows, n, rng, temperature=1.0):
    """
    只做 batch 里第 rows 道题，每道 n 遍：和 sample_rollouts(model, batch.subset(rows), n, rng, temperature) 逐位相同，
    只是不先拼出一个小 ProblemBatch（RL 引擎每次迭代挑一批题，rl.toy 的 ToyPolicy.sample 用它）。

    【参数】model、n、rng、temperature：同 sample_rollouts；batch：ProblemBatch（或 Problem 的列表）；
        rows：题号的一维整数数组（非空，0 … len(batch) − 1）
    【返回】Rollouts（problem 字段是 rows 里的第几道，和 subset 的结果一样）
    【边界】参数不对时报中文的 TypeError / ValueError（说出参数名）。
    """
    check_table_model(model)
    batch = prepare_problems(batch, "batch")
    rows = np.asarray(rows)
    if rows.ndim != 1 or len(rows) == 0 or rows.dtype.kind not in "iu" or np.minimum.reduce(rows) < 0 \
            or np.maximum.reduce(rows) >= len(batch):            # = rows.min()、rows.max()，不走 Python 包装
        raise ValueError(f"rows 必须是非空的一维整数数组（题号 0 … {len(batch) - 1}），收到 {rows!r}"[:300])
    n = as_int("n", n, low=1)
    as_generator("rng", rng)
    temperature = as_real("temperature", temperature, low=0.0)
    return _sample(model, batch, n, rng, temperature, subset=rows)


def _sample(model, batch, n, rng, temperature, logit_bonus=None, *, subset=None):
    """
    采样循环本身（参数已经检查过，sample_rollouts 调用它）。

    【参数】model、n、rng、temperature：同 sample_rollouts；batch：ProblemBatch；
        logit_bonus：None，或函数 logit_bonus(t, live, op, x, b, exact) → (m, 3) float 数组：
            第 t 步、正在做这一步的 m 行（live：行下标数组或切片，行按 Rollouts 的顺序，B = 题数 × n）
            每个做法的 logit 加多少；op、x、b、exact 是这 m 行的运算下标、输入值、运算数、正确结果。
        subset：None，或题号的整数数组：只做 batch 的这几道题，结果和 _sample(..., batch.subset(subset), ...) 逐位相同
            （RL 每次迭代挑一批题，不必先拼出一个小 ProblemBatch 再取一遍行）
    【返回】Rollouts；给了 logit_bonus 时 probs / logp 是**加分以后**的采样概率
    【边界】logit_bonus 不许用 rng（每一步只抽"选做法"和"careless"两次随机数，顺序不变，结果才可复现）。
        不给 logit_bonus 时按情境查概率表（快）；给了就每一行单独做 softmax（慢一些，只有加分的时候才需要）。
    【Python 小知识】logit_bonus 通常是一个闭包：在调用者里定义的小函数，记得调用者的变量（例如每道题的正确中间值）。
    """
    L = batch.ops.shape[1]
    P = batch.ops.shape[0] if subset is None else len(subset)
    B, rows = P * n, np.repeat(np.arange(P), n)
    src = rows if subset is None else subset[rows]               # 每一行是 batch 的第几道题
    if logit_bonus is not None:
        logits = [logit_table(model)] * L if model.cot else [logit_table(model, t) for t in range(L)]
    elif model.cot:
        tables = [softmax_rows(logit_table(model), temperature)] * L
    else:
        tables = [softmax_rows(logit_table(model, t), temperature) for t in range(L)]

    ctx, actions, values = (np.zeros((B, L), dtype=np.int64) for _ in range(3))
    step_ok = np.zeros((B, L), dtype=bool)
    if logit_bonus is not None:                # 查表时概率和 log 概率在循环后一次取出；加分时逐步记下
        logp, probs = np.zeros((B, L)), np.tile([1.0, 0.0, 0.0], (B, L, 1))
    # 每一行取出自己那道题的表（np.take(…, axis=0) 和 batch.mask[src] 取出的相同，取整行快一倍）
    mask, ops, operands = (np.take(a, src, axis=0) for a in (batch.mask, batch.ops, batch.operands))
    path, path_ctx, path_bug = (np.take(a, src, axis=0) for a in (batch.path, batch.path_ctx, batch.path_bug))
    x = path[:, 0].copy()
    lengths = batch.lengths[src]
    n_full = int(lengths.min())                # 前 n_full 步每一行都在做：用切片，省掉挑行的开销
    for t in range(L):
        live = slice(None) if t < n_full else np.nonzero(mask[:, t])[0]
        op, b, xl = ops[live, t], operands[live, t], x[live]
        # 还在正确路径上的行查表（path_ctx、path_bug 是这次采样自己的副本，可以原地改；path 的下一列下一步还要用）
        c, exact, bug = path_ctx[live, t], path[live, t + 1].copy(), path_bug[live, t]
        off = np.nonzero(xl != path[live, t])[0]
        if len(off):                           # 走偏了的行：现算情境和正确结果（bug 的结果等选了 bug 再算）
            oo, xo, bo = op[off], xl[off], b[off]
            c[off], exact[off] = context_ids_np(oo, xo, bo), exact_np(oo, xo, bo)
        if logit_bonus is None:                # 查表：概率和 log 概率在循环后按 (情境, 步号) 一次取出
            if t == 0 or tables[t] is not tables[t - 1]:
                cum, has_zero = np.cumsum(tables[t], axis=1)[:, :-1], bool((tables[t] == 0).any())
                cum_cols = [cum[:, k].copy() for k in range(cum.shape[1])]      # 每个累积概率一列（12,）
            u = rng.random(len(c))
            if has_zero:
                a = _choose(tables[t][c], u)
            else:                              # = (u[:, None] >= cum[c]).sum(axis=1)：逐列比较再相加，不取 (m, 2) 的二维块
                a = (u >= cum_cols[0][c]).astype(np.int64)
                for col in cum_cols[1:]:
                    a += u >= col[c]
        else:
            pr = softmax_rows(logits[t][c] + logit_bonus(t, live, op, xl, b, exact), temperature)
            u = rng.random(len(c))
            a = _choose(pr, u)
            logp[live, t] = np.log(pr[np.arange(len(a)), a])
            probs[live, t] = pr
        if len(off):                           # 走偏了又选了 bug 的行：bug 的结果现算
            fix = off[a[off] == 1]
            if len(fix):                       # = apply_op_np(…, a[fix] 全是 1, None, exact=…)，直接调它里面的 bug_np
                bug[fix] = bug_np(op[fix], xl[fix], b[fix], exact[fix])
        v = apply_op_np(op, xl, b, a, rng, exact=exact, bug=bug)
        ctx[live, t], actions[live, t], values[live, t] = c, a, v
        step_ok[live, t] = v == exact
        x[live] = np.minimum(np.maximum(v, -VALUE_LIMIT), VALUE_LIMIT)
    if logit_bonus is None:                    # 不存在的步查补上的第 13 行：概率 (1, 0, 0)、log 概率 0
        K = len(CONTEXTS)
        step_tables = np.empty((L if not model.cot else 1, K + 1, 3))
        step_tables[:, :K] = tables if not model.cot else tables[0]
        step_tables[:, K] = (1.0, 0.0, 0.0)
        padded = np.where(mask, ctx, K)
        if model.cot:                          # 一张表：一维的下标 3c + a 取 log 概率（和二维的花式索引取出的数相同）
            probs = np.take(step_tables[0], padded, axis=0)
            log_table = np.empty((K + 1, 3))
            if has_zero:                       # 概率是 0 的做法：log 0 = −inf（不会被采到）
                with np.errstate(divide="ignore"):
                    log_table[:K] = np.log(tables[0])
            else:
                log_table[:K] = np.log(tables[0])
            log_table[K] = (0.0, -np.inf, -np.inf)                      # = log (1, 0, 0)
            logp = log_table.ravel()[padded * 3 + actions]
        else:
            t_index = np.arange(L)[None, :]
            probs = step_tables[t_index, padded]
            with np.errstate(divide="ignore"):
                logp = np.log(step_tables)[t_index, padded, actions]
    final = x
    correct = final == batch.answer[src]
    return Rollouts(rows, ctx, actions, values, mask, logp, probs, step_ok, final, correct, lengths, n)
