"""
RL 的目标函数：把 losses.py 里的公式拼成一次更新的损失，玩具和小 transformer 调用的是**同一个**函数。

【思路】输入是每个 token（玩具里是每一步）的数组，形状 (B, L)，加一个 mask：
        log π_θ(o_t)、log π_old(o_t)、优势 A、（可选）log π_ref(o_t)、熵 H_t、采样策略的 log π_behaviour(o_t)。
    陈旧采样时 TIS_t = min(π_old / π_behaviour, tis_cap)（losses.truncated_is_weights），否则 TIS_t = 1。
    输出是损失、它的三块（替代损失、β·KL、−c_H·熵），和两个"往回传"的数：
        s_t = ∂loss/∂log π_θ(o_t) = TIS_t · w_t · ∂l_t/∂log π  +  β · w_t · ∂k_t/∂log π
        e_t = ∂loss/∂H_t          = −c_H · w_t
    w 是聚合权重（losses.aggregation_weights）。每个替代损失（PPO 裁剪、GSPO、CISPO）自己给出 ∂l/∂log π。
    拿到 s 和 e 以后，每个模型只剩自己的链式法则：
        玩具（toy.py）：∂log π(a | c)/∂Δ_c = (e_a − π_c) / T，按情境加进 (12, 3) 的表；
        小 transformer（tinylm/train.py）：∂log π(o_t)/∂z_t = (e_{o_t} − π_t) / T，再反向传过整个网络。
    这里不写任何一个公式，只调用 losses 里的函数。
"""

import math
from typing import NamedTuple

import numpy as np

from . import losses
from .config import OPTION_BLOCKS
from .presets import resolve_config


class Objective(NamedTuple):
    """rl_objective 的结果。loss = surrogate + kl_term + entropy_term。"""
    loss: float
    surrogate: float                # Σ TIS · w · l
    kl_term: float                  # β · Σ w · k（β = 0 时为 0）
    entropy_term: float             # −c_H · Σ w · H（c_H = 0 时为 0）
    dloss_dlogp: np.ndarray         # (B, L)：s_t = ∂loss/∂log π_θ(o_t)；mask 外为 0
    dloss_dentropy: np.ndarray      # (B, L)：e_t = ∂loss/∂H_t = −c_H · w_t；c_H = 0 时为 None
    clip_low: float                 # 在下界被裁剪（或截住）的 token 占 mask 内的比例（序列级的比率：解答 / B）
    clip_high: float                # 在上界被裁剪（或截住）的比例
    kl_est: float                   # 不夹的 KL 估计在 mask 内的平均（want_kl_est=False 或没有 ref_logp 时为 NaN）


def rl_objective(logp, old_logp, adv, mask, config=None, *, ref_logp=None, entropy=None, behaviour_logp=None, max_len=None,
                 surrogate_fn=None, want_kl_est=False, rng=None):
    """
    一次更新的损失和 ∂loss/∂log π：替代损失 + β·KL − c_H·熵，按 config 选公式、聚合（见模块说明）。

    【思路】ρ_t = exp(log π_θ − log π_old)（mask 外 ρ = 1）；config.policy_loss 选替代损失：
            "ppo"：losses.clipped_surrogate（ε_low / ε_high，clip=False 时不裁剪；clip_ratio_c 是 dual-clip）
            "gspo"：losses.gspo_surrogate（序列级比率，seq_eps_low / seq_eps_high）
            "cispo"：losses.cispo_surrogate（cispo_clip 选 verl / TRL 的截法）
            登记过的其他名字：losses.POLICY_LOSSES[名字].fn(config, LossInputs)（import toyllm.peers 登记它的）
        登记过的选项块（toyllm.peers）可以先改输入（序列级比率、δ）、换掉陈旧采样的权重。
        每步损失乘聚合权重 w（config.loss_agg、max_len），陈旧采样时再乘截断的重要性比率
        min(π_old / π_behaviour, tis_cap)；β > 0 时加 β·w·k（k 由
        config.kl_estimator 选，k3 像 verl 一样夹在 ≤ KL_CLAMP）；c_H ≠ 0 时减 c_H·w·H。
    【参数】logp、old_logp：(B, L) 现在的 / 采样时（π_old）的对数概率；adv：(B,) 或 (B, L) 优势；
        mask：(B, L) bool；config：RLConfig 或预设名；ref_logp：(B, L) 参考策略的对数概率（β > 0 或要 KL 估计时）；
        entropy：(B, L) 每个 token 处分布的熵 H_t（c_H ≠ 0 时必须给）；
        behaviour_logp：(B, L) 采样用的（陈旧的）策略的对数概率，给了就乘截断的重要性比率（None：采样的就是 π_old）；
        max_len：常数聚合的 L_max；surrogate_fn：学生写的替代损失（签名同 clipped_surrogate，只用于 policy_loss="ppo"）；
        want_kl_est：是否顺便算 KL 估计的平均（记录用）；rng：numpy Generator（policy_loss="clip_cov" 随机挑步用）
    【返回】Objective(loss, surrogate, kl_term, entropy_term, dloss_dlogp, dloss_dentropy, clip_low, clip_high, kl_est)；
        数组和 logp 的 dtype 相同（小 transformer 用 float32）
    【边界】形状不对、缺了需要的输入时报中文的 ValueError；surrogate_fn 和 policy_loss="gspo" / "cispo" 不能同时用。
        学习率极大时 π_θ 可能下溢成 0（ρ = 0），照样计算（不检查 ρ > 0）。
    【例子】
        m = np.ones((1, 2), bool)
        obj = rl_objective(np.log([[0.5, 0.5]]), np.log([[0.5, 0.5]]), np.array([1.0]), m, "grpo")
        obj.dloss_dlogp → [[−0.5, −0.5]]（seq-mean：w = 1/2，ρ = 1，∂l/∂log π = −A·ρ）
    """
    cfg = resolve_config(config)
    m = np.asarray(mask)
    if m.dtype != bool or m.ndim != 2:
        raise ValueError(f"mask 必须是 (B, L) 的 bool 数组，收到 dtype {m.dtype}、形状 {m.shape}")
    logp, old_logp = _tokens("logp", logp, m), _tokens("old_logp", old_logp, m)
    dt = logp.dtype
    a = np.asarray(adv, dtype=dt)
    if a.shape == m.shape[:1]:
        a = np.broadcast_to(a[:, None], m.shape)
    elif a.shape != m.shape:
        raise ValueError(f"adv 的形状必须是 ({m.shape[0]},) 或 {m.shape}，收到 {a.shape}")
    if cfg.beta > 0 and ref_logp is None:
        raise ValueError(f"config.beta = {cfg.beta} > 0（KL 惩罚）时必须给 ref_logp（参考策略的对数概率）")
    if cfg.entropy_coef != 0 and entropy is None:
        raise ValueError(f"config.entropy_coef = {cfg.entropy_coef} ≠ 0（熵奖励）时必须给 entropy（每个 token 的熵）")
    if surrogate_fn is not None and cfg.policy_loss != "ppo":
        raise ValueError(f"surrogate_fn 只能配 policy_loss=\"ppo\"，收到 policy_loss={cfg.policy_loss!r}")
    tis = None
    if behaviour_logp is not None:                         # 陈旧采样：rollout 修正的权重，拒绝的步从 mask 去掉
        beh = _tokens("behaviour_logp", behaviour_logp, m)
        tis, m = _rollout_weights(cfg, np.where(m, old_logp, 0), np.where(m, beh, 0), m)
    log_ratio = np.where(m, logp - old_logp, np.asarray(0, dt))
    eps_low, eps_high = (cfg.eps_low, cfg.eps_high) if cfg.clip else (math.inf, math.inf)
    x = losses.LossInputs(np.exp(log_ratio), log_ratio, a, np.where(m, logp, 0), m, eps_low, eps_high, cfg.clip_ratio_c, rng)
    for block in OPTION_BLOCKS:                            # 登记过的选项（toyllm.peers）：序列级比率、δ……
        x = block.inputs(cfg, x)
    surr = _custom_surrogate(surrogate_fn, x) if surrogate_fn is not None else \
        losses.POLICY_LOSSES[cfg.policy_loss].fn(cfg, x)
    if getattr(surr, "dloss_dlogp", None) is None:
        raise ValueError(f"替代损失（policy_loss={cfg.policy_loss!r}）返回的 Surrogate 必须带 .dloss_dlogp"
                         "（每步损失对本步 log π 的导数）")
    scale = {} if x.scale_factor is None else {"scale_factor": x.scale_factor}   # 学生的 3 个参数的版本照样能用
    w = losses.aggregation_weights(m, cfg.loss_agg, max_len, **scale).astype(dt, copy=False)
    wl = w if tis is None else w * np.where(m, tis, 0).astype(dt)
    surrogate = float(wl[m] @ surr.loss.astype(dt, copy=False)[m])
    s = wl * surr.dloss_dlogp.astype(dt, copy=False)
    kl_term, kl_est = 0.0, math.nan
    if ref_logp is not None and (cfg.beta > 0 or want_kl_est) and m.any():
        ref = _tokens("ref_logp", ref_logp, m)
        here = np.where(m, logp, ref)                      # mask 外 k = 0
        if want_kl_est:                                    # 记录用：不夹的估计
            kl_est = float(losses.kl_estimator(here[m], ref[m], cfg.kl_estimator).value.mean())
        if cfg.beta > 0:                                   # 损失里的 KL：k3 像 verl 一样夹在 ≤ KL_CLAMP
            clamp = losses.KL_CLAMP if cfg.kl_estimator == "k3" else None
            kl = losses.kl_estimator(here, ref, cfg.kl_estimator, clamp)
            kl_term = cfg.beta * float(w[m] @ kl.value.astype(dt)[m])
            s = s + np.asarray(cfg.beta, dt) * w * kl.dvalue_dlogp.astype(dt)
    entropy_term, dent = 0.0, None
    if cfg.entropy_coef != 0:
        H = _tokens("entropy", entropy, m)
        entropy_term = -cfg.entropy_coef * float(w[m] @ H[m])
        dent = np.asarray(-cfg.entropy_coef, dt) * w
    return Objective(surrogate + kl_term + entropy_term, surrogate, kl_term, entropy_term,
                     np.where(m, s, np.asarray(0, dt)), dent, *_clip_fractions(x.per_sequence, surr, m), kl_est)


def _clip_fractions(per_sequence, surr, m):
    """裁剪比例：逐步时是被裁的步 / mask 内的步；序列级的比率（TRL importance_sampling_level）按 TRL 数解答：被裁的解答 / B。"""
    if per_sequence:
        B = max(m.shape[0], 1)
        return tuple(int(np.count_nonzero((c & m).any(axis=1))) / B for c in (surr.clipped_low, surr.clipped_high))
    n = max(int(np.count_nonzero(m)), 1)
    return int(np.count_nonzero(surr.clipped_low & m)) / n, int(np.count_nonzero(surr.clipped_high & m)) / n


def _rollout_weights(cfg, old, beh, m):
    """rollout 修正：(每步的权重, 留下的步)。本包是 truncated_is_weights；登记过的选项块（toyllm.peers）可以换掉它。"""
    for block in OPTION_BLOCKS:
        out = block.rollout(cfg, old, beh, m)
        if out is not None:
            return out
    return losses.truncated_is_weights(old, beh, cfg.tis_cap), m


def _tokens(name, value, mask):
    """(B, L) 的浮点数组，形状和 mask 相同（小 transformer 的 float32 保持 float32）。"""
    try:
        arr = np.asarray(value)
        arr = arr if arr.dtype in (np.float32, np.float64) else arr.astype(float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} 必须是数的数组，收到 {type(value).__name__}") from None
    if arr.shape != mask.shape:
        raise ValueError(f"{name} 的形状必须和 mask 相同 {mask.shape}，收到 {arr.shape}")
    return arr


def _custom_surrogate(fn, x):
    """学生写的替代损失：值从它来，∂l/∂ρ 用中心差分（h = 1e-6；损失对 ρ 分段线性，所以几乎精确），∂l/∂log π = ∂l/∂ρ · ρ。"""
    ratio, adv, eps_low, eps_high = np.asarray(x.ratio, float), np.asarray(x.adv, float), x.eps_low, x.eps_high
    loss, low, high = _call_surrogate(fn, ratio, adv, eps_low, eps_high)
    h = 1e-6
    plus = _call_surrogate(fn, ratio + h, adv, eps_low, eps_high)[0]
    minus = _call_surrogate(fn, ratio - h, adv, eps_low, eps_high)[0]
    out = losses.Surrogate(loss, low, high)
    out.dloss_dratio = (plus - minus) / (2 * h)
    out.dloss_dlogp = out.dloss_dratio * ratio
    return out


def _call_surrogate(fn, ratio, adv, eps_low, eps_high):
    out = fn(ratio, adv, eps_low, eps_high)
    loss, low, high = out if isinstance(out, tuple) and len(out) == 3 else (out, None, None)
    low, high = (np.zeros(ratio.shape, bool) if c is None else np.asarray(c, dtype=bool) for c in (low, high))
    loss = np.asarray(loss, dtype=float)
    if loss.shape != ratio.shape or low.shape != ratio.shape or high.shape != ratio.shape:
        raise ValueError(f"surrogate_fn 必须返回和 ratio 形状相同的 (每步损失, 下界裁剪, 上界裁剪)，"
                         f"ratio 的形状是 {ratio.shape}，收到损失的形状 {loss.shape}")
    if not np.all(np.isfinite(loss)):
        raise ValueError("surrogate_fn 返回的损失里有 NaN 或无穷")
    return loss, low, high


__all__ = ["Objective", "rl_objective"]
