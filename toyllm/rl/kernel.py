"""
损失和梯度的内核：把 losses.py 里的公式接起来，得到对 Δ 表 (12, 3) 的精确梯度（第 6 讲"策略梯度"）。

【思路】策略只取决于情境，所以每一步的梯度都是"一个数 × (onehot(a) − π(· | c)) / T"。
    这个数 s = ∂loss/∂log π(a | c) 由链式法则从每一块的导数拼出来：
        s = w · ∂l/∂ρ · ρ            （替代损失：∂ρ/∂log π = ρ；losses.clipped_surrogate 给出 ∂l/∂ρ）
          + β · w · ∂k/∂log π        （KL 惩罚：losses.kl_estimator 给出 ∂k/∂log π）
    再用 np.bincount 按情境一次加起来（table_grad）；熵奖励直接给出对 logits 的导数（losses.entropy）。
    这里不写任何一个公式：只调用 losses 里的函数（学生改了那里的函数，训练就跟着变，测试检查了这一点）。
"""

import functools
import math
from typing import NamedTuple

import numpy as np

from ..arithmetic import CONTEXTS
from ..policy import base_logit_table, log_softmax_rows, softmax_rows
from ..sampler import Rollouts
from .. import trainable
from ..trainable import check_trainable
from . import losses
from .config import RLConfig, resolve_config

_N_CTX = len(CONTEXTS)


def _rollouts_first(fn):
    """先检查 rollouts 的类型再调用 fn。包在外面而不写进函数体：notebook 02 打印 score_vectors 的源码，
    inspect.getsource 沿 __wrapped__ 找到的是 trainable.score_vectors 那几行公式。"""
    @functools.wraps(fn)
    def checked(rollouts):
        _check_rollouts(rollouts)
        return fn(rollouts)
    return checked


score_vectors = _rollouts_first(trainable.score_vectors)


def _table_grad(contexts, actions, dloss_dlogp, probs, temperature=1.0):
    """
    Σ_步 s · ∂log π(a | c)/∂z，按情境加进 (12, 3) 的表：grad[c] = (Σ s·onehot(a) − (Σ s)·π_c) / T。

    【参数】contexts、actions：(N,) 每个有效步的情境下标和动作；dloss_dlogp：(N,) 每步的 s；
        probs：(12, 3) 当前策略 π；temperature：T
    【返回】(12, 3) 数组
    """
    flat = contexts * 3 + actions
    return (np.bincount(flat, weights=dloss_dlogp, minlength=3 * _N_CTX).reshape(_N_CTX, 3)
            - np.bincount(contexts, weights=dloss_dlogp, minlength=_N_CTX)[:, None] * probs) / temperature


class StepBatch(NamedTuple):
    """一批解答的有效步，展开成长度 N 的数组（按行、按步的顺序，和 rollouts.mask 一致）。"""
    contexts: np.ndarray      # 每步的情境下标
    actions: np.ndarray       # 选中的做法
    old_prob: np.ndarray      # 采样时这个做法的概率 π_old(a | c)
    advantage: np.ndarray     # 这一步的优势 A
    weight: np.ndarray        # 聚合权重 w（losses.aggregation_weights）
    mask: np.ndarray = None   # (B, L) 哪些步存在（GSPO 要按解答把步放回去）
    tis: np.ndarray = None    # 截断的重要性比率 min(π_old / π_behaviour, C)（陈旧采样时；None = 1）


def step_batch(rollouts, advantages, loss_agg="seq-mean", max_len=None, check=True):
    """
    把 Rollouts 和优势展开成 StepBatch（每次更新都用它，只需做一次）。

    【参数】rollouts：sampler.Rollouts；advantages：(B,) 或 (B, L)；loss_agg：聚合方式；max_len：常数聚合的 L_max；
        check：是否检查优势里有没有 NaN
    """
    _check_rollouts(rollouts)
    mask = rollouts.mask
    try:
        adv = np.asarray(advantages, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"advantages 必须是数的数组，收到 {advantages!r}") from None
    B = mask.shape[0]
    if adv.shape == (B,):
        adv_steps = np.repeat(adv, mask.sum(axis=1))   # 每行的有效步在最前面，按行展开的顺序和 mask 一致
    elif adv.shape == mask.shape:
        adv_steps = adv[mask]
    else:
        raise ValueError(f"advantages 的形状必须是 ({B},) 或 {mask.shape}，收到 {adv.shape}")
    if check and not np.all(np.isfinite(adv_steps)):
        raise ValueError("advantages 里有 NaN 或无穷")
    weight = losses.aggregation_weights(mask, loss_agg, max_len)[mask]
    contexts, actions = rollouts.ctx[mask], rollouts.actions[mask]
    return StepBatch(contexts, actions, rollouts.probs[mask][np.arange(len(actions)), actions], adv_steps, weight, mask)


class LossResult(NamedTuple):
    """policy_loss 的结果。grad 是损失对 Δ 的梯度（12, 3）：下降方向是 −grad，params −= lr × grad。"""
    loss: float
    grad: np.ndarray
    surrogate: float
    kl_term: float
    entropy_term: float
    clip_low: float
    clip_high: float
    kl_est: float


def loss_and_grad(params, base, steps, cfg, ref_logp, surrogate_fn=None, want_kl_est=True):
    """
    一次更新的损失和梯度：替代损失 + β·KL − c_H·熵，全部调用 losses 里的函数（见模块说明）。

    【参数】params：Δ (12, 3)；base：base_logit_table；steps：StepBatch；cfg：RLConfig；
        ref_logp：(N,) 参考策略下每步动作的对数概率；surrogate_fn：自定义替代损失（None 用 losses.clipped_surrogate）；
        want_kl_est：是否顺便算 KL 估计的平均（policy_loss 要，训练循环自己在采样时算）
    【返回】LossResult
    【边界】参数类型或形状不对时报中文的 TypeError / ValueError。
    """
    if not isinstance(cfg, RLConfig):
        raise TypeError(f"cfg 必须是 RLConfig，收到 {type(cfg).__name__}")
    if not isinstance(steps, StepBatch):
        raise TypeError(f"steps 必须是 StepBatch（step_batch(...) 的结果），收到 {type(steps).__name__}")
    if np.shape(params) != (_N_CTX, 3) or np.shape(base) != (_N_CTX, 3):
        raise ValueError(f"params 和 base 的形状必须是 ({_N_CTX}, 3)，收到 {np.shape(params)}、{np.shape(base)}")
    if np.shape(ref_logp) != steps.contexts.shape:
        raise ValueError(f"ref_logp 的形状必须是 {steps.contexts.shape}（每个有效步一个数），收到 {np.shape(ref_logp)}")
    T = cfg.temperature
    logits = base + params
    pi = softmax_rows(logits, T)                # 和采样器同一个函数：参数没变时 ρ 恰好是 1
    ctx, act, w = steps.contexts, steps.actions, steps.weight
    ratio = pi[ctx, act] / steps.old_prob
    eps_low, eps_high = (cfg.eps_low, cfg.eps_high) if cfg.clip else (math.inf, math.inf)
    need_log = cfg.beta > 0 or cfg.entropy_coef != 0 or want_kl_est or cfg.policy_loss == "cispo"
    logpi = log_softmax_rows(logits, T) if need_log else None
    if surrogate_fn is not None:
        surr = _custom_surrogate(surrogate_fn, ratio, steps.advantage, eps_low, eps_high)
    elif cfg.policy_loss == "gspo":
        surr = _gspo(steps, np.log(ratio), cfg)
    elif cfg.policy_loss == "cispo":
        surr = losses.cispo_surrogate(ratio, steps.advantage, logpi[ctx, act], eps_low, eps_high, cfg.cispo_clip)
    else:
        surr = losses.clipped_surrogate(ratio, steps.advantage, eps_low, eps_high, validate=False,
                                        clip_ratio_c=cfg.clip_ratio_c)
    wl = w if steps.tis is None else w * steps.tis          # 陈旧采样：每步损失再乘截断的重要性比率
    surrogate = float(wl @ surr.loss)
    if getattr(surr, "dloss_dlogp", None) is not None:
        dloss_dlogp = wl * surr.dloss_dlogp
    else:
        dloss_dlogp = wl * surr.dloss_dratio * ratio        # ∂ρ/∂log π = ρ
    kl_term, kl_est = 0.0, math.nan
    if len(ctx) and want_kl_est:                           # 记录用：不夹的估计
        kl_est = float(losses.kl_estimator(logpi[ctx, act], ref_logp, cfg.kl_estimator).value.mean())
    if len(ctx) and cfg.beta > 0:                          # 损失里的 KL：k3 像 verl 一样夹在 ≤ KL_CLAMP
        clamp = losses.KL_CLAMP if cfg.kl_estimator == "k3" else None
        kl = losses.kl_estimator(logpi[ctx, act], ref_logp, cfg.kl_estimator, clamp)
        kl_term = cfg.beta * float(w @ kl.value)
        dloss_dlogp = dloss_dlogp + cfg.beta * w * kl.dvalue_dlogp
    grad = _table_grad(ctx, act, dloss_dlogp, pi, T)
    entropy_term = 0.0
    if cfg.entropy_coef != 0 and len(ctx):
        ent = losses.entropy(pi, logpi, T)
        weight_per_context = np.bincount(ctx, weights=w, minlength=_N_CTX)
        entropy_term = -cfg.entropy_coef * float(w @ ent.value[ctx])
        grad = grad - cfg.entropy_coef * weight_per_context[:, None] * ent.dlogits
    n = max(len(ctx), 1)
    return LossResult(surrogate + kl_term + entropy_term, grad, surrogate, kl_term, entropy_term,
                      np.count_nonzero(surr.clipped_low) / n, np.count_nonzero(surr.clipped_high) / n, kl_est)


def _gspo(steps, log_ratio, cfg):
    """GSPO：把每步的 log ρ 放回 (B, L)，调用 losses.gspo_surrogate，再展开成每个有效步。"""
    if steps.mask is None:
        raise ValueError("policy_loss=\"gspo\" 需要 StepBatch.mask（step_batch 会填好）")
    m = steps.mask
    dense = np.zeros(m.shape)
    dense[m] = log_ratio
    adv = np.zeros(m.shape)
    adv[m] = steps.advantage
    surr = losses.gspo_surrogate(dense, adv, m, cfg.seq_eps_low, cfg.seq_eps_high)
    out = losses.Surrogate(surr.loss[m], surr.clipped_low[m], surr.clipped_high[m])   # 展开的顺序和 StepBatch 一致
    out.dloss_dlogp = surr.dloss_dlogp[m]
    return out


def _check_rollouts(rollouts):
    if not isinstance(rollouts, Rollouts):
        raise TypeError(f"rollouts 必须是 sampler.Rollouts（sample_rollouts 的结果），收到 {type(rollouts).__name__}")


def _custom_surrogate(fn, ratio, adv, eps_low, eps_high):
    """学生写的替代损失：值从它来，∂l/∂ρ 用中心差分（h = 1e-6；损失对 ρ 分段线性，所以几乎精确）。"""
    loss, low, high = _call_surrogate(fn, ratio, adv, eps_low, eps_high)
    h = 1e-6
    plus = _call_surrogate(fn, ratio + h, adv, eps_low, eps_high)[0]
    minus = _call_surrogate(fn, ratio - h, adv, eps_low, eps_high)[0]
    out = losses.Surrogate(loss, low, high)
    out.dloss_dratio = (plus - minus) / (2 * h)
    return out


def _call_surrogate(fn, ratio, adv, eps_low, eps_high):
    out = fn(ratio, adv, eps_low, eps_high)
    if isinstance(out, tuple) and len(out) == 3:
        loss, low, high = out
        low = np.zeros(ratio.shape, bool) if low is None else np.asarray(low, dtype=bool)
        high = np.zeros(ratio.shape, bool) if high is None else np.asarray(high, dtype=bool)
    else:
        loss, low, high = out, np.zeros(ratio.shape, bool), np.zeros(ratio.shape, bool)
    loss = np.asarray(loss, dtype=float)
    if loss.shape != ratio.shape or low.shape != ratio.shape or high.shape != ratio.shape:
        raise ValueError(f"surrogate_fn 必须返回和 ratio 形状相同的 (每步损失, 下界裁剪, 上界裁剪)，"
                         f"ratio 的形状是 {ratio.shape}，收到损失的形状 {loss.shape}")
    if not np.all(np.isfinite(loss)):
        raise ValueError("surrogate_fn 返回的损失里有 NaN 或无穷")
    return loss, low, high


def policy_loss(model, rollouts, advantages, config=None, *, ref_params=None, max_len=None, surrogate_fn=None):
    """
    一批解答上的损失和它对 Δ 的精确梯度（不更新模型）。引擎每次更新调用的就是它的内核 loss_and_grad。

    【思路】见模块说明。π_old 取 rollouts.probs（采样时的概率）；π_θ 取模型**现在**的参数。
        μ = 1、β = 0、没有熵奖励、T = 1 时，−grad 恰好等于参考模块里对每一步
        add_grad(grads, 情境, 动作, 概率, 权重 = w · A) 的结果（测试检查到 1e-12）。
    【参数】model：TrainableLLM；rollouts：sampler.Rollouts；advantages：(B,) 或 (B, L)；config：RLConfig 或预设名；
        ref_params：参考策略的 Δ（12, 3），β > 0 时需要，默认全 0；max_len：常数聚合的 L_max；
        surrogate_fn：自定义的替代损失（签名同 clipped_surrogate），默认 losses.clipped_surrogate
    【返回】LossResult(loss, grad, surrogate, kl_term, entropy_term, clip_low, clip_high, kl_est)
    【边界】自定义 surrogate_fn 时，对 ρ 的导数用中心差分（h = 1e-6）从它的返回值算出 —— 替代损失对 ρ 是分段线性的，
        所以只要 ρ 不在拐点附近，这是精确的（误差约 1e-10）。advantages 里有 NaN、ref_params 形状不对时报 ValueError。
    【例子】
        r = sample_rollouts(model, problems, 8, np.random.default_rng(0))
        res = policy_loss(model, r, group_advantages(step_rewards(r), 8))
        res.loss        # μ = 1 时约等于 0（ρ ≡ 1，组内优势之和为 0）
        res.grad        # 但梯度不是 0：model.params -= 2.0 * res.grad 就是一步 GRPO
    【Python 小知识】NamedTuple 的结果既可以按名字取（res.grad），也可以像元组一样解包。
    """
    cfg = resolve_config(config)
    check_trainable(model)
    steps = step_batch(rollouts, advantages, cfg.loss_agg, max_len)
    base = base_logit_table(model.size)
    ref = np.zeros((_N_CTX, 3)) if ref_params is None else np.asarray(ref_params, dtype=float)
    if ref.shape != (_N_CTX, 3) or not np.all(np.isfinite(ref)):
        raise ValueError(f"ref_params 必须是形状 ({_N_CTX}, 3) 的有限数组，收到形状 {ref.shape}")
    ref_logp = log_softmax_rows(base + ref, cfg.temperature)[steps.contexts, steps.actions]
    return loss_and_grad(model.params, base, steps, cfg, ref_logp, surrogate_fn)


__all__ = ["LossResult", "StepBatch", "loss_and_grad", "policy_loss", "score_vectors", "step_batch"]
