"""
精确计算：不采样，直接从每个情境的概率算出"走对路径的概率"和"答对的概率"（第 6 讲 §2.3"路径 pass@k"）。

【思路】沿着**正确的**解题路径走：第 t 步的输入是正确值，情境 c_t 固定，这一步"做对"的概率是
        P(第 t 步对) = π(correct | c_t) + π(bug | c_t) · 1[这一步 bug 恰好不咬人]
    （careless 一定错）。各步独立，所以
        P(走对路径) = ∏_t P(第 t 步对)
    真正的 pass@1（答对的概率）由 answer_probs 精确算出；两者的区别、梯度推导为什么用前者：见 exact_pass_at_1。
    exact_pass_at_k / expected_reward / grad_expected_reward 建立在"走对路径的概率" p 上，pass@k 用 1 − (1 − p)^k。

    J(Δ) = (1/P) Σ_i p_i（p_i 是走对路径的概率）是 Δ 的一个光滑函数，它对每个 Δ 的梯度也能精确写出来（grad_expected_reward），
    这是 REINFORCE、GRPO 这些**估计**想要逼近的"真梯度"。推导只用到 softmax 的导数：
        ∂π_j / ∂z_k = π_j (1[j = k] − π_k)
        s_t = π_c + π_b · b_t（b_t = 1[bug 不咬人]）  ⇒  ∂s_t / ∂z_k = w_k − s_t π_k，  w = (π_c, b_t π_b, 0)
        p = ∏_t s_t（乘积法则） ⇒  ∂p / ∂z_t = (∏_{u≠t} s_u) · ∂s_t / ∂z_t = p · ∂ log s_t / ∂z_t
    同一情境在所有题、所有步里共享同一个 Δ，所以把每一步的贡献按情境加起来；z = (logits + Δ) / 温度，再乘 1 / 温度。
"""

import math
from dataclasses import dataclass

import numpy as np

from ._checks import as_instance, as_int, as_real
from .exact_answer import advance, meet, value_bounds
from .arithmetic import CONTEXTS
from .entropy import entropy_and_grad
from .policy import check_table_model, prob_table
from .sampler import prepare_problems


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

    【思路】prepare_problems 已经沿正确路径算好了每一步的情境（arithmetic.context_ids_np）和 bug 的结果
        （apply_op_np，做法 1）；"bug 不咬人"就是 bug 的结果等于正确结果 —— 和 bug_bites 的定义相同（有测试对照）。
    【边界】problems 不能为空。
    """
    batch = prepare_problems(problems)
    mask = batch.mask
    ctx = np.where(mask, batch.path_ctx, 0)
    bug_ok = mask & (batch.path_bug == batch.path[:, 1:])
    return CorrectPaths(ctx, bug_ok, mask, mask.sum(axis=1))


def path_probs(model, paths, temperature=1.0):
    """正确路径上每一步的策略概率 (P, L, 3)：π(· | c_t)（无思维链时还和步号 t 有关）。不存在的步也填了数，用 mask 去掉。"""
    check_table_model(model)
    as_instance("paths", paths, CorrectPaths, "CorrectPaths（correct_paths(problems) 的结果）")
    if model.cot:
        return prob_table(model, temperature)[paths.ctx]            # (P, L, 3)
    L = paths.ctx.shape[1]
    tables = np.stack([prob_table(model, temperature, t) for t in range(L)])   # (L, 12, 3)
    return tables[np.arange(L)[None, :], paths.ctx]


def step_right(probs, paths):
    """
    正确路径上每一步"做对"的概率 s_t = π(correct | c_t) + π(bug | c_t) · 1[bug 不咬人]（careless 一定错）。

    【参数】probs：(P, L, 3) 每一步三种做法的概率；paths：CorrectPaths
    【返回】(P, L) 数组，不存在的步记为 1（乘进去不影响）
    """
    as_instance("paths", paths, CorrectPaths, "CorrectPaths（correct_paths(problems) 的结果）")
    if not (isinstance(probs, np.ndarray) and probs.shape == paths.ctx.shape + (3,)):
        raise ValueError(f"probs 必须是形状 {paths.ctx.shape + (3,)} 的数组（每一步三种做法的概率），收到 {probs!r}"[:300])
    return np.where(paths.mask, probs[..., 0] + probs[..., 1] * paths.bug_ok, 1.0)


def step_right_probs(model, paths, temperature=1.0):
    """每道题每一步"做对"的概率 (P, L)（step_right，策略概率来自 model）；不存在的步记为 1（乘进去不影响）。"""
    return step_right(path_probs(model, paths, temperature), paths)


def exact_pass_at_1(model, problems, temperature=1.0, per_problem=False):
    """
    走对路径的概率（"路径 pass@1"）：每道题"每一步都对"的概率，再对题目取平均。

    【思路】见模块说明：P(全对) = ∏_t [π(correct | c_t) + π(bug | c_t) · 1[bug 不咬人]]。
        它和真正的 pass@1（答对的概率，answer_probs）不同的地方只有一处：不算"写错后又被修好"的路径 ——
        前面写错了，后面的 bug 或 careless 又碰巧撞回正确值（一次粗心被后一次反方向的粗心抵消，
        或者错值上的 bug 恰好算出正确结果）。bug 恰好不咬人的那一步写出的就是正确值，所以**算**在路径里。
        课上报"模型多常答对"时用 answer_probs；推导梯度时用它：它是一串每步概率的乘积，
        ∇p = p · Σ_t ∇ log s_t 正是 score function（∇ log 路径概率）的形式，REINFORCE / GRPO 估计的就是这个梯度。
    【参数】model：ToyLLM 或 TrainableLLM；problems：list of Problem 或 CorrectPaths；
        per_problem：True 时返回每道题的概率（numpy 数组）
    【返回】float（平均），或 (P,) 数组
    【边界】这是 answer_probs 的**下界**：加、减、乘（乘数 ≥ 1）在输入错了以后用 correct 做法一定还是错的，
        只有 bug / careless 恰好撞回正确值才会被修好（差多少：notebook 04）。采样的"每一步都对"的比例和本函数一致，
        采样的 pass@1 和 answer_probs 一致。RL 的训练记录（pass1_exact）也用本函数。
    """
    paths = problems if isinstance(problems, CorrectPaths) else correct_paths(problems)
    p = step_right_probs(model, paths, temperature).prod(axis=1)
    return p if per_problem else float(p.mean())


# =============================================================================
# 答对的概率（所有路径，包括"写错后又被修好"的路径）：从两头往中间走
# =============================================================================
_FACTOR = 0.8                                     # 往前的值数 × _FACTOR ≤ 倒着的值数时往前走（倒着的一步贵一些；0.5~1.0 之间差别不大）


def answer_probs(model, problems, temperature=1.0):
    """
    每道题**答对**的精确概率（所有路径都算：包括中间写错、后来又被另一个错误"修好"的路径），形状 (P,)。

    【思路】和采样器一步一步做题一样，只是不抽随机数，而是带着"中间值的概率分布"往下走：
            第 t 步以前：{值 x: 走到 x 的概率}
            每个 x 按情境 c(x) 的概率分成 correct / bug / careless 的 2 + 2·D 个结果（careless 的每一位、每个方向
            都是一个结果，见 step_outcomes），概率相乘；不同路径走到同一个值就合并（概率相加）。
        这样走到底，值的种类每步多 3 倍多。所以从两头同时走，在中间（第 s 步以前）相遇：前面往前走，后面**倒着**走：
            第 t 步以前：{值 x: 从 x 出发最后答对的概率 V_t(x)}，V_L = 1[x = 答案]，
            V_t(x) = Σ_{这一步写出的 y} P(写出 y | x) · V_{t+1}(y)，
        只需要"能写出某个 V > 0 的 y"的 x（preimages 把一步解回去），而且 |x| 不超过往前走可能达到的上界
        （exact_answer.value_bounds）—— 离得太远的数永远修不好，倒着找也找不到它们。答对的概率 = Σ_x P(走到 x) · V_s(x)。
        在哪里相遇，每道题自己决定：每一轮，哪一头的值少（倒着的一步贵一些，按 _FACTOR 折算）就让哪一头走一步。
        只差一步时不再合并：这一步的每个结果（往前走的 y，或倒着走的 x）直接到另一头查它的 V(y)（或 P(走到 x)；
        用散列表查，见 exact_answer._find；倒着走时先查，只给查到的 x 算情境和概率），乘起来加到这道题上，
        然后把这道题的状态从两头都去掉（后面的轮次不再搬动它们）。两头的状态都按 (题号, 值) 排好，走一步只排新算出来的那些。
        一个情境的概率是 0 的结果直接去掉（它不贡献任何概率）；除此以外什么都不剪，所以这是精确值（只有浮点舍入误差）。
        和 exact_pass_at_1（只走正确路径）的差，就是"被修好"的概率。
    【参数】model：ToyLLM 或 TrainableLLM；problems：list of Problem（或 ProblemBatch）；temperature：≥ 0
    【返回】(P,) numpy 数组
    【边界】用时见 tools/bench.py 的 answer_probs_time（1,000 道 3~8 步的题）。不接受 CorrectPaths（那里面只有正确路径，没有起始数）。
    【例子】answer_probs(ToyLLM(1e8), problems).mean() ≥ exact_pass_at_1(ToyLLM(1e8), problems)（差多少：notebook 04）
    【Python 小知识】把 (题号, 值) 合成一个 int64 键（题号 × 常数 + 值），np.argsort 排好以后相同的 (题号, 值) 就挨在一起，
        np.add.reduceat 把它们加起来；查另一头时把键乘一个大奇数取高位当作槽号（乘法散列），一次查完所有的键。
    """
    if isinstance(problems, CorrectPaths):
        raise TypeError("answer_probs 需要 list of Problem（CorrectPaths 只有正确路径），收到 CorrectPaths")
    check_table_model(model)
    temperature = as_real("temperature", temperature, low=0.0)
    batch = prepare_problems(problems)
    P, L = batch.ops.shape
    tables = np.stack([prob_table(model, temperature, t) for t in range(1 if model.cot else L)])   # 有思维链时各步共用一张
    lowest, bound = value_bounds(batch)
    f, b = np.zeros(P, dtype=np.int64), batch.lengths.astype(np.int64)
    fwd = (np.arange(P), batch.start.copy(), np.ones(P))
    bwd = (np.arange(P), batch.answer.copy(), np.ones(P))
    out = np.zeros(P)
    while True:
        open_ = f < b
        if not open_.any():
            return out
        # 每道题只往一个方向走一步：哪头的值少（按 _FACTOR 折算）就走哪头；倒着不能越过 lowest
        forward = open_ & ((b <= lowest) | (_FACTOR * np.bincount(fwd[0], minlength=P) <= np.bincount(bwd[0], minlength=P)))
        backward = open_ & ~forward
        last = open_ & (f + 1 == b)                   # 再走一步就相遇：直接到另一头查表，算完就去掉
        out += meet(fwd, bwd, forward & last, True, f, batch, tables, bound)
        out += meet(fwd, bwd, backward & last, False, f, batch, tables, bound)
        if last.any():                                # 算完的题从两头去掉
            keep_f, keep_b = ~last[fwd[0]], ~last[bwd[0]]
            fwd, bwd = tuple(a[keep_f] for a in fwd), tuple(a[keep_b] for a in bwd)
        fwd = advance(fwd, forward & ~last, f, True, batch, tables, bound)
        bwd = advance(bwd, backward & ~last, b - 1, False, batch, tables, bound)
        f, b = f + forward, b - backward


# =============================================================================
# pass@k、期望奖励和它的精确梯度、正确路径上的熵
# =============================================================================
def _as_paths(problems):
    if isinstance(problems, CorrectPaths):
        return problems
    if isinstance(problems, (str, bytes)) or not hasattr(problems, "__iter__"):
        raise TypeError(f"problems 必须是 Problem 的列表（例如 make_problem_set(...) 的结果）或 CorrectPaths，"
                        f"收到 {type(problems).__name__}")
    return correct_paths(problems)


def _as_ks(ks):
    """k 可以是一个整数，也可以是一串整数；返回 (tuple of int, 是不是单个整数)。"""
    if isinstance(ks, (list, tuple, range, np.ndarray)):
        ks = tuple(as_int("ks 里的 k", k, low=1) for k in ks)
        if not ks:
            raise ValueError("ks 不能为空，例如 ks=(1, 2, 4, 8)")
        return ks, False
    return (as_int("k", ks, low=1),), True


def _grad_temperature(temperature):
    temperature = as_real("temperature", temperature, low=0.0)
    if temperature == 0:
        raise ValueError("算梯度需要 temperature > 0（temperature = 0 是贪心解码，概率对 Δ 不可导），收到 0")
    return temperature


def exact_pass_at_k(model, problems, k, temperature=1.0, per_problem=False):
    """
    由走对路径的概率算的 pass@k：每道题 1 − (1 − p)^k，再对题目取平均（p = 这道题每一步都对的概率）。

    【思路】k 次**独立**采样全都错的概率是 (1 − p)^k，所以至少对一次的概率是 1 − (1 − p)^k。
        采样估计（estimators.pass_at_k，Chen et al. 的无偏估计）的期望正好是它（见 tests/unit/sampling/test_exact.py）。
    【参数】model：ToyLLM 或 TrainableLLM；problems：list of Problem 或 CorrectPaths；
        k：一个正整数，或一串正整数（例如 (1, 2, 4, 8)）；temperature：≥ 0；per_problem：True 时返回每道题的值
    【返回】k 是整数时：float（per_problem=True 时是 (P,) 数组）；k 是一串整数时：{k: 上面那样的值}
    【边界】和 exact_pass_at_1 一样，没有算"写错后又被修好"的路径，所以比真正的 pass@k 略小（想要答对的精确概率，
        见 answer_pass_at_k）。k 没有上限（精确值不需要 k ≤ n）。
    【例子】exact_pass_at_k(ToyLLM(1e9), problems, 1) 等于 exact_pass_at_1(ToyLLM(1e9), problems)；
        exact_pass_at_k(ToyLLM(1e9), problems, (1, 8)) → {1: p1, 8: p8}（p1 ≤ p8；数值见 notebook 04）
    【Python 小知识】1 − (1 − p)^k 在 p 很小时会损失精度，np.expm1(k · np.log1p(−p)) 是同一个数的精确写法。
    """
    ks, single = _as_ks(k)
    return _pass_at_ks(exact_pass_at_1(model, _as_paths(problems), temperature, per_problem=True), ks, single,
                       per_problem)


def answer_pass_at_k(model, problems, k, temperature=1.0, per_problem=False):
    """
    精确的 pass@k：每道题 1 − (1 − q)^k（q = 答对的概率，answer_probs），再对题目取平均 —— 采样的 pass@k 估计的就是它。

    【参数】【返回】同 exact_pass_at_k，只是 problems 必须是 list of Problem（不接受 CorrectPaths，见 answer_probs）。
    【例子】answer_pass_at_k(ToyLLM(1e9), problems, (1, 8)) → {1: q1, 8: q8}，q1 ≥ exact_pass_at_1(ToyLLM(1e9), problems)
    """
    ks, single = _as_ks(k)
    return _pass_at_ks(answer_probs(model, problems, temperature), ks, single, per_problem)


def _pass_at_ks(p, ks, single, per_problem):
    """每道题的概率 p → {k: 1 − (1 − p)^k（平均或每道题）}；single 时只返回那一个值。"""
    out = {}
    for kk in ks:
        with np.errstate(divide="ignore"):
            per = -np.expm1(kk * np.log1p(-p))
        out[kk] = per if per_problem else float(per.mean())
    return out[ks[0]] if single else out


def expected_reward(model, problems, temperature=1.0):
    """
    J = (1/P) Σ_i p_i，p_i 是走对路径的概率：exact_pass_at_1 的平均值。它是结果奖励（答对得 1 分）的期望的
    下界（差的是"被修好"的概率，见 answer_probs），课上把它当作 RL 的目标。

    【思路】RL 要最大化的目标。把它单独起个名字，是为了和它的梯度 grad_expected_reward 放在一起看。
    【例子】expected_reward(TrainableLLM(1e9), problems) 等于 exact_pass_at_1(TrainableLLM(1e9), problems)
    """
    return exact_pass_at_1(model, _as_paths(problems), temperature)


def log_expected_reward(model, problems, temperature=1.0):
    """log J：期望奖励（平均 pass@1）的对数；梯度 ∇ log J = ∇J / J。【边界】J = 0 时报错。"""
    J = expected_reward(model, problems, temperature)
    if J <= 0:
        raise ValueError("期望奖励 J = 0，log J = −∞，没有定义")
    return math.log(J)


def mean_log_reward(model, problems, temperature=1.0):
    """
    (1/P) Σ_i log p_i：每道题"全对"概率的对数的平均（不是 log J！它对做错概率大的题给的权重更大）。

    【边界】某道题 p_i = 0 时是 −inf，会报错。
    """
    p = exact_pass_at_1(model, _as_paths(problems), temperature, per_problem=True)
    if np.any(p <= 0):
        raise ValueError("有题目做对的概率是 0，log p = −∞；mean_log_reward 只在所有 p_i > 0 时有定义")
    return float(np.log(p).mean())


def _step_derivs(model, paths, temperature):
    """每一步做对的概率 s_t (P, L) 和 ∂s_t/∂z (P, L, 3)（z 是除以温度以后的 logits）。"""
    probs = path_probs(model, paths, temperature)
    r = step_right(probs, paths)
    w = np.zeros_like(probs)
    w[..., 0] = probs[..., 0]
    w[..., 1] = probs[..., 1] * paths.bug_ok
    dr = np.where(paths.mask[..., None], w - r[..., None] * probs, 0.0)
    return r, dr


def _scatter(paths, contrib):
    """把每一步的贡献 (P, L, 3) 按情境加起来，得到 (12, 3)。"""
    ctx = paths.ctx[paths.mask]
    vals = contrib[paths.mask]
    return np.stack([np.bincount(ctx, weights=vals[:, j], minlength=len(CONTEXTS)) for j in range(3)], axis=1)


def grad_expected_reward(model, problems, temperature=1.0, per_problem=False):
    """
    J(Δ) = (1/P) Σ_i p_i（p_i = 走对路径的概率，见 expected_reward）对每个 Δ 的**精确**梯度，形状 (12, 3)，第 i 行对应 CONTEXTS[i]。

    【思路】见模块说明。p_i = ∏_t s_t，乘积法则：
            ∂p_i / ∂Δ_{c,k} = (1/温度) Σ_{t: c_t = c} (∏_{u≠t} s_u) · (w_{t,k} − s_t π_{t,k})
        数学上 s_t 总是 > 0（softmax 的概率都是正的），所以它等于 p_i · Σ_t ∂ log s_t / ∂z ——
        "整道题的梯度 = 各步 log 梯度之和 × p"。但浮点数里 s_t 会下溢成 0（Δ 极大或温度极低时），
        那时 p_i · (∂s_t/∂z) / s_t 是 0 / 0。这里不除以 s_t，而用"除了第 t 步以外的乘积"（前缀积 × 后缀积）：
        恰好一步下溢成 0 时，p_i = 0，这一步的梯度仍是其余各步的乘积 × ∂s_t/∂z（一般不是 0），其余各步的是 0；
        两步以上下溢时，每个乘积里都有一个 0，梯度全是 0（没有 NaN）。
    【参数】model：ToyLLM 或 TrainableLLM（ToyLLM 看作 Δ = 0）；problems：list of Problem 或 CorrectPaths；
        temperature：> 0；per_problem：True 时返回每道题的 ∂p_i/∂Δ，形状 (P, 12, 3)
    【返回】numpy 数组 (12, 3)（或 (P, 12, 3)）
    【边界】Δ 是每个情境的"偏移量"，对 correct / bug / careless 三个 logit 都加同一个常数，softmax 不变，
        所以每一行三个数之和总是 0。题目没经过的情境，梯度是 0。
    【例子】g = grad_expected_reward(TrainableLLM(1e9), problems)；g[:, 0] 全部 > 0（多选 correct 总是好的）
    【Python 小知识】np.cumprod 是累积乘积；[1, r0, r0·r1, …] 和 [… , r2·r3, r3, 1] 对应相乘就是"除了自己以外的乘积"。
    """
    paths = _as_paths(problems)
    temperature = _grad_temperature(temperature)
    r, dr = _step_derivs(model, paths, temperature)
    P, L = r.shape
    ones = np.ones((P, 1))
    before = np.concatenate([ones, np.cumprod(r, axis=1)[:, :-1]], axis=1)
    after = np.concatenate([np.cumprod(r[:, ::-1], axis=1)[:, ::-1][:, 1:], ones], axis=1)
    contrib = (before * after)[..., None] * dr / temperature
    if per_problem:
        out = np.zeros((P, len(CONTEXTS), 3))
        rows = np.broadcast_to(np.arange(P)[:, None], paths.ctx.shape)[paths.mask]
        np.add.at(out, (rows, paths.ctx[paths.mask]), contrib[paths.mask])
        return out
    return _scatter(paths, contrib) / P


def exact_entropy(model, problems, temperature=1.0):
    """
    策略在正确路径所经过的情境上的平均熵：对所有（题目, 步）取平均的 H(π(· | c_t)) = −Σ_j π_j log π_j（nats）。

    【思路】trainable.entropy_of 是**采样**版本：让模型自己做题，在它自己走过的情境上平均熵，有随机误差，
        而且做错以后情境会变。这里沿正确路径走，情境是固定的，所以是一个确定的数。
        模型大多数时候都做对时，两者很接近。每一步权重相同（和 entropy_of 一样，步数多的题占的权重大）。
    【参数】model；problems：list of Problem 或 CorrectPaths；temperature：≥ 0
    【返回】float，在 [0, log 3 ≈ 1.0986] 里
    【例子】exact_entropy(TrainableLLM(1e9), problems) 和 entropy_of(TrainableLLM(1e9), problems, random.Random(0)) 差不多
    """
    paths = _as_paths(problems)
    h, _ = entropy_and_grad(path_probs(model, paths, as_real("temperature", temperature, low=0.0)))
    return float(h[paths.mask].mean())
