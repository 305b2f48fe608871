"""
学到的价值函数（critic）和 GAE：经典 PPO 的优势，以及 GRPO 为什么不要它（第 6 讲 8.5 节）。

【思路】经典 PPO（Schulman et al. 2017，arXiv 1707.06347）用一个价值网络 V(x) 估计"从状态 x 出发最后能拿到的奖励"。
    状态写成 x（讲义里 s_t 是"第 t 步算对的概率"）。优势用 GAE(γ, λ)（Schulman et al. 2015，arXiv 1506.02438）：
        δ_t = r_t + γ V(x_{t+1}) − V(x_t)，    A_t = Σ_l (γλ)^l δ_{t+l}，    回报（V 的回归目标）R_t = A_t + V(x_t)
    γ 是折扣，δ_t 是 TD 误差。λ = 1 时中间的 V 两两抵消，A_t = Σ_l γ^l r_{t+l} − V(x_t)（蒙特卡洛回报减基线）；
    λ = 0 时 A_t = δ_t（一步 TD）。
    GRPO 的做法：用同一道题 G 份解答的平均代替 V，省掉一个和策略一样大的模型。

    玩具里的"状态"（做完 t 步以后、做第 t 步之前）很小，所以 critic 是一张表：
        V[t, c, ok]   t = 步号（0 … L_max − 1），c = 下一步的情境（12 个），ok = 到目前为止是否一直在正确路径上
    一共 L_max × 12 × 2 个数。最后一步之后是终止状态，V = 0。
    ok 的定义：前面每一步都"做对了"（rollouts.step_ok 全为真）；这里不算"写错后又被修好"的罕见情况，
    和 exact_values 用的正确路径概率一致。

    这个表看不到"是哪一道题"：同一个 (t, c, ok) 格子里混着不同的题，它最多学到这些题的平均。
    而**精确**的价值（exact_values）知道题目：在正确路径上时 V*(x_t) = ∏_{u ≥ t} s_u（s_u = 第 u 步算对的概率），
    离开正确路径后是 0。所以 critic 的误差来自表的"看不全"（混叠）和学得还不够（噪声）。在一批数据上，令 V̄ = 每个格子里
    V* 的平均（这张表能做到的最好值），则 误差² = mean(V* − V̄)²（混叠²）+ mean(V − V̄)²（噪声²），交叉项为 0。
    notebook 06b 第 1 节在训练完的价值表上算出这两块，并核对它们的平方和等于误差²。

    值和导数写在一起：value_loss 给出 ½(V − R)² 的平均和它对 V 的导数，table_gradient 把导数按格子加起来。
【对应】verl algorithm.adv_estimator="gae"、algorithm.gamma、algorithm.lam、critic.*（critic.optim.lr）；
    Spinning Up PPO 的 gamma、lam、vf_lr；TRL PPOConfig 的 gamma、lam、vf_coef。verl 的 critic 还有价值裁剪
    （critic.cliprange_value），这里没有。
"""

import numpy as np

from .._checks import as_int, as_real
from ..arithmetic import CONTEXTS
from ..exact import step_right

_N_CTX = len(CONTEXTS)


def table_shape(max_len):
    """
    critic 表的形状 (L_max, 12, 2)：步号 × 下一步的情境 × 是否一直在正确路径上。

    【参数】max_len：L_max（≥ 1，训练题里最长的步数）
    【返回】三元组
    【例子】table_shape(8) → (8, 12, 2)，一共 192 个数
    """
    return (as_int("max_len", max_len, low=1), _N_CTX, 2)


def on_path(rollouts):
    """
    (B, L) bool：做第 t 步之前，前面每一步都做对了（第 0 步之前总是 True）。

    【思路】"做对"用 rollouts.step_ok（这一步的值等于对它自己的输入做正确运算的结果）；一旦有一步错了，
        之后都记为 False —— 即使后面又被"修好"（罕见，exact_values 也不算它们）。
    【参数】rollouts：sampler.Rollouts
    【返回】(B, L) bool 数组（mask 外的值没有意义）
    【例子】step_ok = [T, F, T] → on_path = [T, T, F]
    """
    ok = np.where(rollouts.mask, rollouts.step_ok, True)
    before = np.cumprod(ok, axis=1)
    return np.concatenate([np.ones((len(ok), 1), bool), before[:, :-1].astype(bool)], axis=1)


def state_index(rollouts, max_len):
    """
    每一步之前的状态在 critic 表（拉平以后）里的下标 (B, L)；mask 外是 0。

    【思路】下标 = (t × 12 + c) × 2 + ok，和 np.zeros(table_shape(L_max)).ravel() 的顺序一致。
    【参数】rollouts：sampler.Rollouts；max_len：表的 L_max（≥ rollouts 的步数）
    【返回】(B, L) int 数组
    【边界】rollouts 的步数超过 max_len 时报 ValueError。
    【例子】V = table.ravel()[state_index(r, 8)]：每份解答每一步之前的价值估计
    """
    L = rollouts.mask.shape[1]
    max_len = as_int("max_len", max_len, low=1)
    if L > max_len:
        raise ValueError(f"rollouts 有 {L} 步，超过 critic 表的 L_max = {max_len}")
    t = np.broadcast_to(np.arange(L), rollouts.mask.shape)
    idx = (t * _N_CTX + rollouts.ctx) * 2 + on_path(rollouts)
    return np.where(rollouts.mask, idx, 0)


def gae(rewards, values, mask, gamma=1.0, lam=1.0):
    """
    GAE(γ, λ) 的优势和回报（每份解答从后往前算一遍）。

    【思路】δ_t = r_t + γ V(s_{t+1}) − V(s_t)（最后一步之后 V = 0），A_t = δ_t + γλ A_{t+1}，R_t = A_t + V(s_t)。
        和 verl compute_gae_advantage_return 的递推相同（verl 之后还把 A 在整批上白化：见 losses.whiten）。
    【参数】rewards：(B, L) 每步奖励（结果奖励放在最后一步）；values：(B, L) V(s_t)；mask：(B, L) bool，
        每行的有效步从第 0 步起连续；gamma、lam：0 ~ 1
    【返回】(advantages, returns)，都是 (B, L)，mask 外是 0
    【例子】一份 2 步的解答，奖励 [0, 1]，V = [0.5, 0.8]，γ = λ = 1：δ = [0.3, 0.2]，A = [0.5, 0.2]，R = [1, 1]
    """
    gamma = as_real("gamma", gamma, 0.0, 1.0)
    lam = as_real("lam", lam, 0.0, 1.0)
    r, v, m = np.asarray(rewards, float), np.asarray(values, float), np.asarray(mask, bool)
    if not (r.shape == v.shape == m.shape) or r.ndim != 2:
        raise ValueError(f"rewards、values、mask 必须是同形状的 (B, L) 数组，收到 {r.shape}、{v.shape}、{m.shape}")
    B, L = r.shape
    adv = np.zeros((B, L))
    next_v, next_a = np.zeros(B), np.zeros(B)
    for t in range(L - 1, -1, -1):
        live = m[:, t]
        delta = r[:, t] + gamma * next_v - v[:, t]
        a = delta + gamma * lam * next_a
        adv[:, t] = np.where(live, a, 0.0)
        next_v = np.where(live, v[:, t], 0.0)
        next_a = np.where(live, a, 0.0)
    return adv, np.where(m, adv + v, 0.0)


def outcome_step_rewards(outcome, mask):
    """
    结果奖励 (B,) 放到每份解答的最后一步（mask 里最后一个 True），得到 (B, L) 的每步奖励（GAE 用；
    verl 的 token_level_rewards 也这样放）。小 transformer 的 mask 从 prompt 之后才开始，也适用。

    【例子】outcome_step_rewards([1.0], [[True, True, False]]) → [[0, 1, 0]]
    """
    m = np.asarray(mask, bool)
    last = m.shape[1] - 1 - np.argmax(m[:, ::-1], axis=1)
    out = np.zeros(m.shape)
    out[np.arange(len(last)), last] = np.asarray(outcome, float)
    return out


def value_loss(values, returns, mask):
    """
    价值损失 ½·mean_t (V(s_t) − R_t)²（mask 内所有步平均，verl critic 的 token-mean）和它对 V 的导数。

    【返回】(loss: float, dloss_dvalues: (B, L) 数组，mask 外是 0)
    【例子】value_loss([[0.5]], [[1.0]], [[True]]) → (0.125, [[−0.5]])
    """
    v, R, m = np.asarray(values, float), np.asarray(returns, float), np.asarray(mask, bool)
    if not (v.shape == R.shape == m.shape):
        raise ValueError(f"values、returns、mask 的形状必须相同，收到 {v.shape}、{R.shape}、{m.shape}")
    n = max(int(m.sum()), 1)
    diff = np.where(m, v - R, 0.0)
    return float(0.5 * (diff ** 2).sum() / n), diff / n


def table_gradient(index, dloss_dvalues, mask, size):
    """
    把每步对 V 的导数按 critic 表的格子加起来：(size,) 的梯度（拉平的表）。

    【思路】V(s_t) = 表[下标]，所以 ∂loss/∂表[k] = Σ_{下标 = k 的步} ∂loss/∂V(s_t)（np.bincount 一次加完）。
    【参数】index：state_index 的结果；dloss_dvalues：value_loss 的第二个返回值；mask：(B, L) bool；size：表的格子数
    【返回】(size,) 数组
    """
    m = np.asarray(mask, bool)
    return np.bincount(np.asarray(index)[m], weights=np.asarray(dloss_dvalues)[m], minlength=size)


def exact_values(probs, paths, problem, rollouts):
    """
    每份解答每一步之前的**精确**价值 V*(s_t) = P(从这里做到最后全对)，形状 (B, L)。

    【思路】在正确路径上时 V* = ∏_{s ≥ t} P(第 s 步对)（这道题后面每一步都做对的概率）；离开了正确路径是 0
        （不算"写错后又被修好"的样本：它们很少，notebook 04 量出有多少）。第 0 步的 V* 就是这道题的路径 pass@1。
    【参数】probs：(12, 3) 策略概率；paths：exact.CorrectPaths（训练题的正确路径）；
        problem：(B,) 每份解答是 paths 的第几道题；rollouts：sampler.Rollouts（步数 L 和 paths 相同或更少）
    【返回】(B, L) 数组，mask 外是 0
    【例子】v = exact_values(prob_table(model), correct_paths(train_set), rows[r.problem], r)
        （rows[r.problem]：采样时挑的题在训练题里的下标）
    """
    right = step_right(probs[paths.ctx], paths)
    suffix = np.cumprod(right[:, ::-1], axis=1)[:, ::-1]          # ∏_{s ≥ t}
    L = rollouts.mask.shape[1]
    v = suffix[np.asarray(problem)][:, :L]
    return np.where(rollouts.mask & on_path(rollouts), v, 0.0)


__all__ = ["exact_values", "gae", "on_path", "outcome_step_rewards", "state_index",
           "table_gradient", "table_shape", "value_loss"]
