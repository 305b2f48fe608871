"""
CS336 作业 5（stanford-cs336/assignment5-alignment）要学生写的几个函数[S500]，numpy 版，值和导数写在一起。

【思路】CS336 的函数对象是 torch 张量，靠 autograd 求导；这里每个函数都直接给出对 log π 的导数，
    输入接受任何有限的实数（CS336 的测试用随机正态数当 log π，可以 > 0）[S503]。测试把 CS336 自己的快照测试[S500]
    （tests/_snapshots/*.npz）经过适配器跑在这些函数上。
        naive_policy_gradient_loss    −A · log π                        （compute_naive_policy_gradient_loss）
        policy_gradient_loss          no_baseline / reinforce_with_baseline / grpo_clip
        sft_loss                      −log π（每个 token）
        masked_mean、masked_normalize  带 mask 的平均 / 除以常数的和
        microbatch_train_step         一个小批的损失和导数，除以梯度累积的步数
"""

from typing import NamedTuple

import numpy as np

from .._checks import as_choice, as_float_array, as_int, as_real
from ..rl.surrogates import Surrogate, clipped_surrogate

PG_LOSS_TYPES = ("no_baseline", "reinforce_with_baseline", "grpo_clip")
EMPTY_MEANS = ("zero", "nan")


def _finite(name, value):
    a = as_float_array(name, value)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} 必须都是有限的实数（不能是 NaN 或 ±inf）")
    return a


def naive_policy_gradient_loss(raw_rewards_or_advantages, policy_log_probs):
    """
    每个 token 的策略梯度损失 l = −A · log π（CS336 compute_naive_policy_gradient_loss）[S502]，和导数 ∂l/∂log π = −A。

    【思路】REINFORCE 的"替代损失"：它的梯度 −A ∇log π 就是策略梯度（取负号，因为要最小化）。
        和 toyllm.peers.losses.gpg_surrogate 是同一个公式；这里接受任何实数的 log π（CS336 的测试用正态随机数）[S503]，
        而 CISPO 在 ρ = 1 时虽然值相同，却要求 log π ≤ 0（它是概率的对数）。
    【参数】raw_rewards_or_advantages：(B, 1) 或能和 policy_log_probs 广播的数组；policy_log_probs：(B, L)
    【返回】Surrogate(loss, 全 False, 全 False)，另有 .dloss_dlogp = −A（广播成 (B, L)）
    【例子】naive_policy_gradient_loss([[2.0]], [[0.5, -1.0]]).loss → [[−1.0, 2.0]]
    """
    a, lp = _finite("raw_rewards_or_advantages", raw_rewards_or_advantages), _finite("policy_log_probs", policy_log_probs)
    try:
        shape = np.broadcast_shapes(a.shape, lp.shape)
    except ValueError:
        raise ValueError(f"raw_rewards_or_advantages 的形状 {a.shape} 必须能和 policy_log_probs 的形状 {lp.shape} 广播"
                         "（CS336 用 (B, 1) 和 (B, L)）") from None
    none = np.zeros(shape, bool)
    out = Surrogate(-a * lp, none, none)
    out.dloss_dlogp = np.broadcast_to(-a, shape).copy()
    return out


def policy_gradient_loss(policy_log_probs, loss_type, raw_rewards=None, advantages=None, old_log_probs=None,
                         cliprange=None):
    """
    CS336 compute_policy_gradient_loss[S501]：按 loss_type 选每个 token 的损失，连同 ∂l/∂log π。

    【思路】"no_baseline"：−r · log π；"reinforce_with_baseline"：−A · log π（A 由调用者算好，比如组平均基线）；
        "grpo_clip"：−min(ρA, clip(ρ, 1 − ε, 1 + ε)A)，ρ = exp(log π − log π_old)（就是 clipped_surrogate，
        ε_low = ε_high = cliprange）。
    【参数】policy_log_probs：(B, L)；loss_type：PG_LOSS_TYPES 之一；raw_rewards、advantages：(B, 1)；
        old_log_probs：(B, L)（只对 grpo_clip）；cliprange：≥ 0（只对 grpo_clip）
    【返回】Surrogate，另有 .dloss_dlogp
    【边界】缺了 loss_type 需要的输入时报中文的 ValueError，说明要哪一个。
    【例子】policy_gradient_loss([[-1.0]], "no_baseline", raw_rewards=[[1.0]]).loss → [[1.0]]
    """
    loss_type = as_choice("loss_type", loss_type, PG_LOSS_TYPES)
    need = {"no_baseline": ("raw_rewards",), "reinforce_with_baseline": ("advantages",),
            "grpo_clip": ("advantages", "old_log_probs", "cliprange")}[loss_type]
    given = {"raw_rewards": raw_rewards, "advantages": advantages, "old_log_probs": old_log_probs, "cliprange": cliprange}
    for name in need:
        if given[name] is None:
            raise ValueError(f"loss_type={loss_type!r} 需要 {name}，收到 None")
    if loss_type != "grpo_clip":
        return naive_policy_gradient_loss(given[need[0]], policy_log_probs)
    lp, old = _finite("policy_log_probs", policy_log_probs), _finite("old_log_probs", old_log_probs)
    if lp.shape != old.shape:
        raise ValueError(f"old_log_probs 的形状 {old.shape} 必须和 policy_log_probs 的形状 {lp.shape} 相同")
    eps = as_real("cliprange", cliprange, 0.0)
    return clipped_surrogate(np.exp(lp - old), _finite("advantages", advantages), eps, eps)


def sft_loss(policy_log_probs):
    """
    每个 token 的 SFT 损失 l = −log π（最大似然），导数 ∂l/∂log π = −1。

    【参数】policy_log_probs：任意形状的有限实数
    【返回】Surrogate(loss, 全 False, 全 False)，另有 .dloss_dlogp（全是 −1）
    【例子】sft_loss(np.log([[0.5]])).loss → [[0.693]]
    """
    lp = _finite("policy_log_probs", policy_log_probs)
    none = np.zeros(lp.shape, bool)
    out = Surrogate(-lp, none, none)
    out.dloss_dlogp = -np.ones(lp.shape)
    return out


def _masked(values, mask, axis):
    x = _finite("values", values)
    m = np.asarray(mask)
    if m.shape != x.shape:
        raise ValueError(f"mask 的形状 {m.shape} 必须和 values 的形状 {x.shape} 相同")
    if axis is not None:
        axis = as_int("axis", axis, low=-x.ndim, high=x.ndim - 1)
    return x, m.astype(float), axis


def masked_mean(values, mask, axis=None, empty="zero"):
    """
    mask 内元素的平均（CS336 masked_mean）[S504]：Σ x·m / Σ m，沿 axis（None = 全部）。

    【思路】一整行都被 mask 掉时 Σ m = 0，两种约定本函数都有：
            empty="nan"：0 / 0 = NaN —— CS336 的写法（torch 的除法不报错，结果是 nan）[S504]；
            empty="zero"：记为 0 —— 本包的约定（losses.aggregation_weights 也这样：空行对损失的贡献是 0，
                一个空的小批不会让参数变成 NaN）。
    【参数】values、mask：同形状（mask 是 bool 或 0/1）；axis：None 或一维的下标；empty："zero" / "nan"
    【返回】float 或沿 axis 缩掉一维的数组
    【例子】masked_mean([[1.0, 3.0], [5.0, 7.0]], [[1, 1], [0, 0]], axis=1) → [2.0, 0.0]；empty="nan" → [2.0, nan]
    """
    x, m, axis = _masked(values, mask, axis)
    empty = as_choice("empty", empty, EMPTY_MEANS)
    total, count = (x * m).sum(axis=axis), m.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(count > 0, total / np.where(count > 0, count, 1), np.nan if empty == "nan" else 0.0)
    return float(out) if np.ndim(out) == 0 else out


def masked_normalize(values, mask, normalize_constant=1.0, axis=None):
    """
    mask 内元素的和除以一个常数（CS336 masked_normalize）[S504]：Σ x·m / c。

    【思路】Dr. GRPO 的"常数归一化"：分母不随长度变。c 可以是任何正数（CS336 的测试用 42）[S503]。
    【参数】values、mask：同形状；normalize_constant：> 0；axis：None 或一维的下标
    【返回】float 或数组
    【例子】masked_normalize([[1.0, 3.0]], [[1, 0]], 2.0) → 0.5
    """
    x, m, axis = _masked(values, mask, axis)
    c = as_real("normalize_constant", normalize_constant, 0.0, low_open=True)
    out = (x * m).sum(axis=axis) / c
    return float(out) if np.ndim(out) == 0 else out


class MicroStep(NamedTuple):
    """microbatch_train_step 的结果：这一小批的损失（已除以累积步数）和它对每个 log π 的导数。"""
    loss: float
    dloss_dlogp: np.ndarray


def microbatch_train_step(per_token, response_mask, gradient_accumulation_steps, normalize_constant=None, grad=None):
    """
    一个小批（microbatch）的损失和导数：CS336 的 grpo_microbatch_train_step / sft_microbatch_train_step[S505]。

    【思路】每个 token 的损失 l（policy_gradient_loss 或 sft_loss 的结果）先在每行内合成一个数，再对行平均，
        最后除以梯度累积的步数 n（n 个小批的梯度加起来，等于一个大批的平均）：
            normalize_constant=None：loss = mean_i( masked_mean(l_i, m_i) ) / n          （GRPO 的小批）
            normalize_constant=c：   loss = mean_i( Σ_t l_{i,t} m_{i,t} / c ) / n        （SFT 的小批，c 任意正数）
        导数 ∂loss/∂log π_{i,t} = m_{i,t} · ∂l/∂log π / (B · |o_i| · n)（或 / (B · c · n)）。
        grad 给了就把导数加进去（原地），像 torch 的 .grad 一样跨小批累积。
    【参数】per_token：带 .loss 和 .dloss_dlogp 的结果（(B, L)）；response_mask：(B, L)；
        gradient_accumulation_steps：≥ 1 的整数；normalize_constant：None 或 > 0；grad：None 或 (B, L) 的浮点数组
    【返回】MicroStep(loss, dloss_dlogp)
    【边界】全空的行：normalize_constant=None 时按本包的约定记为 0（CS336 会得到 NaN，见 masked_mean）[S504]。
    【例子】microbatch_train_step(sft_loss(lp), mask, 2, normalize_constant=1.0)：CS336 的 sft_microbatch_train_step[S505]
    """
    n = as_int("gradient_accumulation_steps", gradient_accumulation_steps, low=1)
    l, d = _finite("per_token.loss", per_token.loss), _finite("per_token.dloss_dlogp", per_token.dloss_dlogp)
    m = np.asarray(response_mask).astype(float)
    if l.ndim != 2 or m.shape != l.shape or d.shape != l.shape:
        raise ValueError(f"per_token 的损失、导数和 response_mask 必须是同形状的 (B, L)，收到 {l.shape}、{d.shape}、{m.shape}")
    B = l.shape[0]
    if normalize_constant is None:
        per_row = np.maximum(m.sum(axis=1, keepdims=True), 1)
        loss = float(masked_mean(l, m, axis=1).mean()) / n
    else:
        per_row = as_real("normalize_constant", normalize_constant, 0.0, low_open=True)
        loss = float(masked_normalize(l, m, per_row, axis=1).mean()) / n
    dl = m * d / (B * per_row * n)
    if grad is not None:
        grad += dl
    return MicroStep(loss, dl)


__all__ = ["EMPTY_MEANS", "MicroStep", "PG_LOSS_TYPES", "masked_mean", "masked_normalize", "microbatch_train_step",
           "naive_policy_gradient_loss", "policy_gradient_loss", "sft_loss"]
