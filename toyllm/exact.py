"""
精确计算：不采样，直接从每个情境的概率算出"这道题做对的概率"。

【思路】沿着**正确的**解题路径走：第 t 步的输入是正确值，情境 c_t 固定，这一步"做对"的概率是
        P(第 t 步对) = π(correct | c_t) + π(bug | c_t) · 1[这一步 bug 恰好不咬人]
    （careless 一定错）。各步独立，所以
        P(全对) = ∏_t P(第 t 步对)
    这就是 pass@1，只差一种极少见的情况：中间写错了、后面又被另一个错误"修好"了（见 exact_pass_at_1）。
    有了 p = P(全对)，k 次独立采样至少对一次的概率就是 pass@k = 1 − (1 − p)^k。
"""

from dataclasses import dataclass

import numpy as np

from .arithmetic import CONTEXT_INDEX, bug_bites, step_hardness
from .policy import prob_table


@dataclass(frozen=True)
class CorrectPaths:
    """
    一批题目的正确解题路径，补齐成矩形数组（P 道题 × 最长步数 L）。

    【属性】ctx：情境下标 (P, L)；bug_ok：这一步 bug 恰好不咬人 (P, L)；mask：这一步存在 (P, L)；
        lengths：每道题的步数 (P,)
    """
    ctx: np.ndarray
    bug_ok: np.ndarray
    mask: np.ndarray
    lengths: np.ndarray


def correct_paths(problems):
    """
    把题目沿正确路径拆成数组（只和题目有关，和模型无关，可以算一次反复用）。

    【边界】problems 不能为空。
    """
    problems = list(problems)
    if not problems:
        raise ValueError("problems 不能为空")
    L = max(len(p.steps) for p in problems)
    P = len(problems)
    ctx = np.zeros((P, L), dtype=np.int64)
    bug_ok = np.zeros((P, L), dtype=bool)
    mask = np.zeros((P, L), dtype=bool)
    for i, p in enumerate(problems):
        x = p.start
        for t, step in enumerate(p.steps):
            ctx[i, t] = CONTEXT_INDEX[(step.op, step_hardness(step.op, x, step.operand))]
            bug_ok[i, t] = not bug_bites(step.op, x, step.operand)
            mask[i, t] = True
            x = x + step.operand if step.op == "add" else x - step.operand if step.op == "sub" else x * step.operand
    return CorrectPaths(ctx, bug_ok, mask, mask.sum(axis=1))


def step_right_probs(model, paths, temperature=1.0):
    """每道题每一步"做对"的概率 (P, L)；不存在的步记为 1（乘进去不影响）。"""
    if model.cot:
        probs = prob_table(model, temperature)[paths.ctx]            # (P, L, 3)
    else:
        L = paths.ctx.shape[1]
        tables = np.stack([prob_table(model, temperature, t) for t in range(L)])   # (L, 12, 3)
        probs = tables[np.arange(L)[None, :], paths.ctx]
    right = probs[..., 0] + probs[..., 1] * paths.bug_ok
    return np.where(paths.mask, right, 1.0)


def exact_pass_at_1(model, problems, temperature=1.0, per_problem=False):
    """
    精确的 pass@1：每道题"每一步都对"的概率，再对题目取平均。

    【思路】见模块说明：P(全对) = ∏_t [π(correct | c_t) + π(bug | c_t) · 1[bug 不咬人]]。
    【参数】model：ToyLLM 或 TrainableLLM；problems：list of Problem 或 CorrectPaths；
        per_problem：True 时返回每道题的概率（numpy 数组）
    【返回】float（平均），或 (P,) 数组
    【边界】这比真正的 pass@1 少算了"写错后又被后面的错误修好"的情况：加、减、乘（乘数 ≥ 2）在输入错了以后
        用 correct 做法一定还是错的，只有 bug / careless 恰好撞回正确值才会被修好，概率极小。
        采样结果和它在置信区间内一致（见测试）。
    """
    paths = problems if isinstance(problems, CorrectPaths) else correct_paths(problems)
    p = step_right_probs(model, paths, temperature).prod(axis=1)
    return p if per_problem else float(p.mean())
