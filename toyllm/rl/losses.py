"""
RL 损失里的每一个公式，值和导数写在一起（第 6 讲"优势、裁剪、KL、聚合"）。

【思路】一次更新的损失是几块拼起来的（"步"在玩具里扮演真实 LLM 里"token"的角色）：
        ρ_{i,t} = π_θ(a_t | c_t) / π_old(a_t | c_t)                                     重要性比率
        l_{i,t} = − min( ρ A_{i,t} ,  clip(ρ, 1 − ε_low, 1 + ε_high) A_{i,t} )          裁剪的替代损失
        loss    = Σ_{i,t} w_{i,t} [ l_{i,t} + β k(π_θ, π_ref) − c_H H(π_θ(· | c_t)) ]      w：聚合权重
    这里每个函数只管一块，输入是普通的 numpy 数组：每步的量可以是任意形状，聚合用 (B, L) 加 mask。
    它们不知道玩具模型是什么 —— 玩具的引擎（kernel.py）和以后的小 transformer 调用的是同一批函数。
    每个公式旁边就是它的导数：clipped_surrogate(...).dloss_dratio、kl_estimator(...).dvalue_dlogp、
    entropy(...).dlogits，引擎用链式法则把它们接起来，不再另写一遍。
【扩展】新的替代损失（GSPO 的序列级比率、CISPO、dual-clip……）写成和 clipped_surrogate 一样的形状：
    输入每步的 ρ、A（需要整条序列时再加 (B, L) 的 mask），返回 Surrogate 并挂上 dloss_dratio；
    新的聚合方式（verl 的 loss_agg_mode）是 AGGREGATIONS 里的一个名字加上 aggregation_weights 里的一个分支。
"""

import math
from typing import NamedTuple

import numpy as np

from .._checks import as_choice, as_int, as_real
from .config import ADVANTAGES, AGGREGATIONS, KL_ESTIMATORS, REWARDS, SCALES


# =============================================================================
# 优势
# =============================================================================
def constant_groups(rewards, group_size, mask=None):
    """
    哪些组的奖励全都相同（全对或全错）：这样的组优势全是 0，对梯度没有贡献。

    【参数】rewards：(B,) 结果奖励或 (B, L) 每步奖励（连续 G 行一组）；group_size：G；mask：(B, L) bool（每步奖励时）
    【返回】(B / G,) bool
    【例子】constant_groups(np.array([1., 1, 0, 0, 1, 1, 1, 1]), 4) → [False, True]
    """
    group_size = as_int("group_size", group_size, low=1)
    r = _as_float_array("rewards", rewards)
    if r.ndim not in (1, 2) or r.shape[0] % group_size:
        raise ValueError(f"rewards 必须是 (B,) 或 (B, L) 的数组，B 是 group_size = {group_size} 的倍数，收到形状 {r.shape}")
    if r.ndim == 1:
        return np.ptp(r.reshape(-1, group_size), axis=1) == 0
    m = np.asarray(mask, dtype=bool) if mask is not None else None
    if m is None or m.shape != r.shape:
        raise ValueError(f"每步奖励需要和 rewards 同形状的 mask，收到 {None if m is None else m.shape}")
    L = r.shape[1]
    rg, mg = r.reshape(-1, group_size, L), m.reshape(-1, group_size, L)
    lo = np.where(mg, rg, np.inf).min(axis=(1, 2))
    hi = np.where(mg, rg, -np.inf).max(axis=(1, 2))
    return lo == hi


def group_advantages(rewards, group_size, method="grpo", scale="group", eps=1e-4, mask=None):
    """
    按组计算优势（advantage）。同一道题的 G 份解答是一组，连续排列：第 0 … G−1 行是第一组，以此类推。

    【思路】策略梯度 ∇J = E[Σ_t ∇log π(a_t | c_t) · A]。A 可以是奖励本身，也可以减去一个不依赖于动作的基线 b
        （因为 E[∇log π] = 0，减去 b 不改变期望，只减小方差）。组内的其他解答就是现成的基线：
            "none"：A_i = r_i                                      REINFORCE，没有基线
            "mean"：A_i = r_i − mean(r)                            组平均基线（Dr. GRPO）
            "rloo"：A_i = r_i − mean_{j≠i} r_j = G/(G−1)·(r_i − mean(r))   留一法：基线不含自己，严格无偏
            "grpo"：A_i = (r_i − mean(r)) / (std(r) + eps)         GRPO；std 是样本标准差（除以 G−1，同 TRL）
                scale="group" 用本组的 std，"batch" 用整批奖励的 std，"none" 不除（等于 "mean"）
        奖励全都相同的组（constant_groups）：除 "none" 外优势全是 0 —— 这一组对梯度没有贡献
        （TRL 记录为 frac_reward_zero_std；DAPO 的动态采样把它们丢掉）。这里把这种组的优势精确地设为 0。

        过程奖励（rewards 是 (B, L) 的每步奖励，配 mask）按 DeepSeekMath 的做法：先把每步奖励用"同组所有步"的
        平均（和标准差）标准化，再从后往前累加（reward-to-go）：A_{i,t} = Σ_{t' ≥ t} r̃_{i,t'}。
        "rloo" 时基线是同组**其他**解答的所有步的平均。
        优势不依赖于参数 θ，所以没有导数要写。
    【参数】rewards：(B,) 结果奖励，或 (B, L) 每步奖励；group_size：G（≥ 2，B 必须是 G 的倍数）；
        method："none" / "mean" / "rloo" / "grpo"；scale："group" / "batch" / "none"（只对 "grpo" 有用）；
        eps：> 0；mask：(B, L) bool，每步奖励时必须给
    【返回】和 rewards 形状相同的 float 数组（每步奖励时，mask 外是 0）
    【边界】B 不是 G 的倍数、形状不对、含 NaN 时报 ValueError。
    【例子】group_advantages([1, 0, 0, 0], 4, "mean") → [0.75, −0.25, −0.25, −0.25]
        group_advantages([1, 0, 0, 0], 4, "rloo") → [1.0, −1/3, −1/3, −1/3]
        group_advantages([1, 0, 0, 0], 4, "grpo") → [1.5, −0.5, −0.5, −0.5]（std = 0.5，eps 忽略不计）
        group_advantages([1, 1, 0, 0, 1, 1, 1, 1], 4) → 第二组全对，优势全是 0
    【Python 小知识】reshape(-1, G) 把长度 B 的数组排成 B/G 行、G 列：每行一组；-1 表示"这一维自己算"。
        np.cumsum(x[:, ::-1], axis=1)[:, ::-1] 就是"从后往前累加"。
    """
    g = as_int("group_size", group_size)
    if g < 2:
        raise ValueError(f"group_size 必须 >= 2（组里至少两份解答才能互相比较），收到 {g}")
    method = as_choice("method", method, ADVANTAGES)
    scale = as_choice("scale", scale, SCALES)
    eps = as_real("eps", eps, 0.0, low_open=True)
    r = _as_float_array("rewards", rewards)
    if r.ndim not in (1, 2) or r.shape[0] == 0:
        raise ValueError(f"rewards 必须是 (B,) 或 (B, L) 的数组（B ≥ 1），收到形状 {r.shape}")
    if r.shape[0] % g:
        raise ValueError(f"rewards 的长度 B = {r.shape[0]} 必须是 group_size = {g} 的倍数（每组 G 份连续排列）")
    if r.ndim == 2:
        if mask is None:
            raise ValueError("每步奖励（二维的 rewards）需要 mask（哪些步存在），收到 mask=None")
        m = np.asarray(mask, dtype=bool)
        if m.shape != r.shape:
            raise ValueError(f"mask 的形状 {m.shape} 必须和 rewards 的形状 {r.shape} 相同")
        r = np.where(m, r, 0.0)
    else:
        m = None
    if not np.all(np.isfinite(r)):
        raise ValueError("rewards 里有 NaN 或无穷")
    if m is None:
        return _outcome_advantages(r, g, method, scale, eps)
    return _process_advantages(r, m, g, method, scale, eps)


def _outcome_advantages(r, g, method, scale, eps):
    grp = r.reshape(-1, g)
    if method == "none":
        return grp.reshape(-1).copy()
    total = grp.sum(axis=1, keepdims=True)
    if method == "rloo":
        adv = grp - (total - grp) / (g - 1)
    else:
        adv = grp - total / g
        if method == "grpo" and scale != "none":
            std = grp.std(axis=1, ddof=1, keepdims=True) if scale == "group" else r.std(ddof=1)
            adv = adv / (std + eps)
    adv[constant_groups(r, g)] = 0.0
    return adv.reshape(-1)


def _process_advantages(r, m, g, method, scale, eps):
    B, L = r.shape
    if method == "none":
        norm = r
    else:
        rg, mg = r.reshape(-1, g, L), m.reshape(-1, g, L)
        s_i, n_i = rg.sum(axis=2), mg.sum(axis=2)                      # 每份解答的奖励和、步数 (P, G)
        s_g, n_g = s_i.sum(axis=1, keepdims=True), n_i.sum(axis=1, keepdims=True)
        if method == "rloo":
            base = (s_g - s_i) / np.maximum(n_g - n_i, 1)              # 同组其他解答所有步的平均
        else:
            base = np.broadcast_to(s_g / np.maximum(n_g, 1), s_i.shape)
        norm = rg - base[:, :, None]
        if method == "grpo" and scale != "none":
            if scale == "group":
                mean_g = (s_g / np.maximum(n_g, 1))[:, :, None]
                var = (((rg - mean_g) ** 2) * mg).sum(axis=(1, 2)) / np.maximum(n_g[:, 0] - 1, 1)
                std = np.sqrt(var)[:, None, None]
            else:
                std = r[m].std(ddof=1) if m.sum() > 1 else 0.0
            norm = norm / (std + eps)
        varied = ~constant_groups(r, g, m)
        norm = np.where(mg & varied[:, None, None], norm, 0.0).reshape(B, L)
    norm = np.where(m, norm, 0.0)
    return np.where(m, np.cumsum(norm[:, ::-1], axis=1)[:, ::-1], 0.0)


# =============================================================================
# 裁剪的替代损失
# =============================================================================
class _SurrogateFields(NamedTuple):
    loss: np.ndarray
    clipped_low: np.ndarray
    clipped_high: np.ndarray


class Surrogate(_SurrogateFields):
    """
    clipped_surrogate 的结果：每步的损失、哪些步在下界被裁剪、哪些步在上界被裁剪（可以解包成这 3 个）。

    【属性】dloss_dratio：每步损失对 ρ 的导数 ∂l/∂ρ（不算在解包的 3 个里面；自己构造的 Surrogate 没有它时是 None）
    """
    dloss_dratio = None


def clipped_surrogate(ratio, adv, eps_low=0.2, eps_high=0.2, *, validate=True):
    """
    PPO / GRPO / DAPO 的裁剪替代损失（每一步一个数），连同它对 ρ 的导数。

    【思路】l = − min( ρ A ,  clip(ρ, 1 − ε_low, 1 + ε_high) A )
        · A > 0（好动作）：ρ 超过 1 + ε_high 以后损失不再下降 —— 这一批数据已经把它的概率推得够高了，别再推；
        · A < 0（坏动作）：ρ 低于 1 − ε_low 以后同理。
        导数：∂l/∂ρ = 0（被裁剪的步），否则 −A。所以被裁剪的步梯度为 0。
        裁剪只在"重要性比率已经离开 1"时发生，所以 μ = 1（每批只更新一次，ρ ≡ 1）时从不裁剪。
        DAPO 的 clip-higher：ε_high = 0.28 > ε_low = 0.2，让低概率的好动作能涨得更多，防止熵塌缩。
    【参数】ratio：ρ 数组；adv：A 数组（形状相同或可广播）；eps_low、eps_high：≥ 0（可以是 inf 表示不裁剪）；
        validate：是否检查参数（引擎内部调用时为 False：学习率极大时 π_θ 可能下溢成 0，ρ = 0 也照样算）
    【返回】Surrogate(loss, clipped_low, clipped_high)，和 ratio 同形状；另有属性 .dloss_dratio（∂l/∂ρ）。
        clipped_low = (ρ < 1 − ε_low) & (A < 0)，clipped_high = (ρ > 1 + ε_high) & (A > 0)
        （和 TRL 记录 clip_ratio/low_mean、clip_ratio/high_mean 的定义相同）
    【边界】ratio 必须 > 0（它是两个概率之比）。
        在这个玩具里，裁剪要在 μ > 1 且学习率足够大时才真的发生（默认 lr = 2 时重要性比率几乎不离开 [0.8, 1.2]）。
        但 lr = 2 时 PPO / DAPO 预设的曲线仍和 GRPO 不同：μ = 4 让每批数据多做 3 次更新，动态采样多用好几倍样本
        （notebook 06 第 1.4 节的表：1e9、200 次迭代后精确 pass@1 GRPO 约 0.94，PPO 约 0.996，DAPO 约 0.9998）。裁剪确实发生时（notebook 06：1e8、μ = 4、lr = 30），clip-higher
        让"同样可行"的低概率做法 —— 不咬人情境里的 bug —— 保留了更多概率，熵更高，pass@1 不变；
        这和 DAPO 在真实 LLM 上看到的方向一致。单看一批数据，它让低概率、优势为正的 correct 涨得更多。
    【例子】clipped_surrogate(np.array([1.0, 1.5, 0.5]), np.array([1.0, 1.0, -1.0]))
        → loss [−1.0, −1.2, 0.8]，clipped_high [F, T, F]，clipped_low [F, F, T]，dloss_dratio [−1, 0, 0]
    【Python 小知识】np.minimum 是逐元素的 min（内置的 min 只能比两个数）；np.clip(x, lo, hi) 把 x 夹在区间里。
        Surrogate 继承一个 NamedTuple 而不加 __slots__，所以实例还能多挂一个属性（dloss_dratio），解包仍是 3 个。
    """
    if validate:
        eps_low, eps_high = _as_eps("eps_low", eps_low), _as_eps("eps_high", eps_high)
        rho, a = _as_float_array("ratio", ratio), _as_float_array("adv", adv)
        try:
            np.broadcast_shapes(rho.shape, a.shape)
        except ValueError:
            raise ValueError(f"ratio 的形状 {rho.shape} 和 adv 的形状 {a.shape} 必须相同（或可以广播）") from None
        if np.any(~(rho > 0)):
            raise ValueError("ratio（重要性比率 π_θ / π_old）必须都 > 0")
        if np.any(~np.isfinite(a)):
            raise ValueError("adv（优势）里有 NaN 或无穷")
    else:
        rho, a = ratio, adv
    low = (rho < 1.0 - eps_low) & (a < 0)
    high = (rho > 1.0 + eps_high) & (a > 0)
    out = Surrogate(-np.minimum(rho * a, np.clip(rho, 1.0 - eps_low, 1.0 + eps_high) * a), low, high)
    out.dloss_dratio = np.where(low | high, 0.0, -a)
    return out


def _as_eps(name, value):
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and value == math.inf:
        return math.inf
    return as_real(name, value, low=0.0)


# =============================================================================
# KL 估计
# =============================================================================
KL_CLAMP = 10.0
"""训练损失里 k3 的上限（verl 的 low_var_kl 把它夹在 [−10, 10]）；kl_estimates 本身不夹。"""


class KLEstimates(NamedTuple):
    """kl_estimates 的结果：三个估计 k1、k2、k3（每步一个数）。"""
    k1: np.ndarray
    k2: np.ndarray
    k3: np.ndarray


class KLTerm(NamedTuple):
    """kl_estimator 的结果：一个估计的值（每步一个数）和它对 log π_θ(a) 的导数。"""
    value: np.ndarray
    dvalue_dlogp: np.ndarray


def kl_estimator(logp, logp_ref, kind="k3", clamp=None):
    """
    一个 KL 估计（每步一个数）和它对 logp 的导数，估计的是 KL(π_θ ‖ π_ref)。

    【思路】动作 a 从 π_θ 采样，log r = logp_ref − logp：
            k1 = −log r                 导数 ∂k1/∂logp = 1
            k2 = (log r)² / 2           导数 −log r
            k3 = (r − 1) − log r        导数 1 − r
        clamp（只对 k3）：像 verl 的 low_var_kl 一样把 k3 夹在 ≤ clamp，被夹住的步导数为 0；
        同时 log r 先夹在 ≤ 30，学习率很大时 exp(log r) 也不会溢出成 inf / NaN。
    【参数】logp、logp_ref：同形状的数组；kind："k1" / "k2" / "k3"；clamp：None 或上限（训练损失用 KL_CLAMP）
    【返回】KLTerm(value, dvalue_dlogp)
    【例子】kl_estimator(np.log([0.5]), np.log([0.25]), "k3").value → [0.193]；.dvalue_dlogp → [0.5]
    """
    kind = as_choice("kind", kind, KL_ESTIMATORS)
    lp, lr = _as_float_array("logp", logp), _as_float_array("logp_ref", logp_ref)
    if lp.shape != lr.shape:
        raise ValueError(f"logp 的形状 {lp.shape} 和 logp_ref 的形状 {lr.shape} 必须相同")
    if np.isnan(lp).any() or np.isnan(lr).any():
        raise ValueError("logp / logp_ref 里有 NaN")
    if clamp is not None:
        clamp = as_real("clamp", clamp, low=0.0)
    log_r = lr - lp
    if kind == "k1":
        return KLTerm(-log_r, np.ones_like(log_r))
    if kind == "k2":
        return KLTerm(0.5 * log_r ** 2, -log_r)
    if clamp is None:
        return KLTerm(np.expm1(log_r) - log_r, -np.expm1(log_r))
    log_r = np.minimum(log_r, 30.0)
    k3 = np.expm1(log_r) - log_r
    return KLTerm(np.minimum(k3, clamp), np.where(k3 <= clamp, -np.expm1(log_r), 0.0))


def kl_estimates(logp, logp_ref):
    """
    Schulman 的三个 KL 估计（每步一个数），估计的是 KL(π_θ ‖ π_ref)。

    【思路】动作 x 从 π_θ 采样，r = π_ref(x) / π_θ(x)，log r = logp_ref − logp：
            k1 = −log r                无偏，方差大，可以是负数
            k2 = (log r)² / 2          有偏，方差小
            k3 = (r − 1) − log r       无偏，方差小，永远 ≥ 0（TRL 和 GRPO 论文用它）
        每个估计的导数见 kl_estimator（引擎算梯度用的就是它）。
        在这个玩具里精确的 KL 也算得出来（每个情境 Σ_j π_j log(π_j / π_ref,j)），history 里 kl_exact 就是它。
    【参数】logp：当前策略下所选动作的对数概率；logp_ref：参考策略下同一动作的对数概率（形状相同）
    【返回】KLEstimates(k1, k2, k3)
    【例子】kl_estimates(np.log([0.5]), np.log([0.25])) → k1 = log 2 ≈ 0.693，k2 ≈ 0.240，k3 = 0.5 − 1 + 0.693 ≈ 0.193
    """
    return KLEstimates(*(kl_estimator(logp, logp_ref, kind).value for kind in KL_ESTIMATORS))


# =============================================================================
# 聚合
# =============================================================================
def aggregation_weights(mask, how="seq-mean", max_len=None):
    """
    每一步在总损失里的权重 w（B, L），loss = Σ w · l；所以 ∂loss/∂l = w。

    【思路】三种聚合（B 份解答，第 i 份有 |o_i| 步）：
            "seq-mean"：w = 1 / (B · |o_i|)       先按解答内平均，再对解答平均（原始 GRPO）
            "token-mean"：w = 1 / Σ_i |o_i|       所有步一起平均（DAPO）
            "constant"：w = 1 / (B · L_max)       常数归一化（Dr. GRPO）
        Dr. GRPO 指出 "seq-mean" 的长度偏差：长的错误解答每步受到的惩罚更小。
    【参数】mask：(B, L) bool；how：上面三种之一；max_len：L_max（≥ 1 的整数），默认 mask.shape[1]
    【返回】(B, L) float 数组，mask 外是 0
    【例子】两份解答，3 步和 1 步（L = 3）："seq-mean" → 每步 1/6、1/6、1/6 和 1/2；"token-mean" → 每步 1/4；
        "constant" → 每步 1/6
    """
    m = np.asarray(mask)
    if m.dtype != bool and not (m.size == 0 or np.isin(m, (0, 1)).all()):
        raise ValueError(f"mask 必须是 bool 数组（True 表示这一步存在），收到 dtype {m.dtype}")
    m = m if m.dtype == bool else m.astype(bool)
    if m.ndim != 2:
        raise ValueError(f"mask 必须是 (B, L) 的二维数组，收到形状 {m.shape}")
    how = as_choice("how", how, AGGREGATIONS)
    B, L = m.shape
    if B == 0:
        return np.zeros(m.shape)
    if how == "seq-mean":
        lengths = m.sum(axis=1)
        w = 1.0 / (B * np.maximum(lengths, 1))
        return np.where(m, w[:, None], 0.0)
    if how == "token-mean":
        return np.where(m, 1.0 / max(int(m.sum()), 1), 0.0)
    max_len = L if max_len is None else as_int("max_len", max_len, low=1)
    return np.where(m, 1.0 / (B * max_len), 0.0)


def aggregate_loss(per_step, mask, how="seq-mean", max_len=None):
    """
    把每一步的损失合成一个数：Σ w · l，w 见 aggregation_weights（mask 外的值不参与，可以是任何数）。

    【参数】per_step：(B, L) 每步损失；mask：(B, L) bool；how："seq-mean" / "token-mean" / "constant"；
        max_len：常数归一化的 L_max（默认 L）
    【返回】float
    【例子】per_step = [[1, 1, 0], [4, 0, 0]]，mask = [[T, T, F], [T, F, F]]：
        "seq-mean" → (1 + 4) / 2 = 2.5；"token-mean" → 6 / 3 = 2.0；"constant" → 6 / (2 × 3) = 1.0
    """
    w = aggregation_weights(mask, how, max_len)
    m = np.asarray(mask).astype(bool)
    l = _as_float_array("per_step", per_step)
    if l.shape != w.shape:
        raise ValueError(f"per_step 的形状 {l.shape} 必须和 mask 的形状 {w.shape} 相同")
    if not np.all(np.isfinite(l[m])):
        raise ValueError("per_step 在 mask 内的步里有 NaN 或无穷")
    return float(w[m] @ l[m])


# =============================================================================
# 熵奖励
# =============================================================================
class Entropy(NamedTuple):
    """entropy 的结果：每一行分布的熵 H（形状去掉最后一维）和 ∂H/∂logits（和 probs 同形状）。"""
    value: np.ndarray
    dlogits: np.ndarray


def entropy(probs, logprobs, temperature=1.0):
    """
    每一行分布 π = softmax(z / T) 的熵 H = −Σ_j π_j log π_j，和它对 logits z 的导数。

    【思路】∂H/∂z_j = −π_j (log π_j + H) / T。损失里减去 c_H × H（熵奖励）：鼓励模型保持不确定，继续探索。
        π_j = 0 的项按 0 log 0 = 0 处理。
    【参数】probs、logprobs：(…, K) 数组（同一个分布的概率和对数概率）；temperature：> 0
    【返回】Entropy(value, dlogits)
    【例子】entropy(np.full(3, 1 / 3), np.log(np.full(3, 1 / 3))).value → log 3 ≈ 1.0986；dlogits → 0（均匀时熵最大）
    """
    temperature = as_real("temperature", temperature, 0.0, low_open=True)
    pi, logpi = _as_float_array("probs", probs), _as_float_array("logprobs", logprobs)
    if pi.shape != logpi.shape or pi.ndim == 0 or pi.shape[-1] == 0:
        raise ValueError(f"probs 的形状 {pi.shape} 和 logprobs 的形状 {logpi.shape} 必须相同（至少一维、不为空）")
    if np.isnan(pi).any() or np.isnan(logpi).any():
        raise ValueError("probs / logprobs 里有 NaN")
    plogp = np.where(pi > 0, pi * logpi, 0.0)
    H = -plogp.sum(axis=-1)
    return Entropy(H, -(plogp + pi * H[..., None]) / temperature)


# =============================================================================
# 奖励
# =============================================================================
def step_rewards(rollouts, kind="outcome"):
    """
    奖励：outcome 是 (B,) 的 0/1（最终答案对不对）；process / procedure 是 (B, L) 的每步 0/1。

    【思路】
        · "outcome"：只看最终答案。做对的解答里每一步都被奖励 —— 包括一个"碰巧没出错的 bug 步"。
        · "process"：每一步的值对不对（rollouts.step_ok：这一步的值等于对它自己的输入做正确运算的结果）。
          粗心的一步被单独惩罚，前面做对的步不受连累（信用分配更准）；但碰巧没出错的 bug 步还是"对"的。
        · "procedure"：每一步用的是不是正确的做法 —— 一个能读懂推理过程的"完美过程奖励模型"：
          碰巧得到正确值的 bug 步也算错。真实系统里这样的奖励模型很难得到，这里用它做对照。
    【参数】rollouts：sampler.Rollouts（用到 correct、step_ok、actions、mask）；kind："outcome" / "process" / "procedure"
    【返回】float 数组：outcome 是 (B,)，另外两种是 (B, L)（mask 外是 0）
    【例子】r = sample_rollouts(TrainableLLM(1e9), problems, 8, np.random.default_rng(0))
        step_rewards(r).mean() 就是这一批的采样 pass@1；step_rewards(r, "process").sum(axis=1) 是每份解答做对了几步
    """
    kind = as_choice("kind", kind, REWARDS)
    if not all(hasattr(rollouts, f) for f in ("correct", "step_ok", "actions", "mask")):
        raise TypeError(f"rollouts 必须是 sampler.Rollouts（sample_rollouts 的结果），收到 {type(rollouts).__name__}")
    if kind == "outcome":
        return rollouts.correct.astype(float)
    ok = rollouts.step_ok if kind == "process" else rollouts.actions == 0
    return np.where(rollouts.mask, ok, False).astype(float)


def _as_float_array(name, value):
    if isinstance(value, (str, bytes, dict)):
        raise TypeError(f"{name} 必须是数（或数的数组），收到 {value!r}")
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} 必须是数（或数的数组），收到 {value!r}") from None


__all__ = ["Entropy", "KLEstimates", "KLTerm", "KL_CLAMP", "Surrogate", "aggregate_loss", "aggregation_weights",
           "clipped_surrogate", "constant_groups", "entropy", "group_advantages", "kl_estimates", "kl_estimator",
           "step_rewards"]
