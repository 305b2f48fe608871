"""
玩具的链式法则：把 objective.rl_objective 给出的 ∂loss/∂log π 变成对 Δ 表 (12, 3) 的精确梯度（第 6 讲"策略梯度"）。

【思路】策略只取决于情境，所以每一步的梯度都是"一个数 × (onehot(a) − π(· | c)) / T"。
    这个数 s = ∂loss/∂log π(a | c) 由 objective.rl_objective 从 losses 里每一块的导数拼出来（小 transformer 用的
    也是它）；这里用 np.bincount 按情境一次加起来（_table_grad）；熵奖励的 ∂loss/∂H 乘 losses.entropy 给出的 ∂H/∂logits。
    这里不写任何一个公式（学生改了 losses 里的函数，训练就跟着变，测试检查了这一点）。
"""

import functools
from typing import NamedTuple

import numpy as np

from ..arithmetic import CONTEXTS
from ..policy import base_logit_table, log_softmax_rows, softmax_rows
from ..sampler import Rollouts
from .. import trainable
from ..trainable import check_trainable
from . import losses, objective
from .config import RLConfig
from .presets import resolve_config

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


def _table_grad(contexts, actions, dloss_dlogp, probs, temperature=1.0, flat=None):
    """
    Σ_步 s · ∂log π(a | c)/∂z，按情境加进 (12, 3) 的表：grad[c] = (Σ s·onehot(a) − (Σ s)·π_c) / T。

    【参数】contexts、actions：(N,) 每个有效步的情境下标和动作；dloss_dlogp：(N,) 每步的 s；
        probs：(12, 3) 当前策略 π；temperature：T；flat：None，或已经算好的 contexts * 3 + actions
    【返回】(12, 3) 数组
    """
    flat = contexts * 3 + actions if flat is None else flat
    return (np.bincount(flat, weights=dloss_dlogp, minlength=3 * _N_CTX).reshape(_N_CTX, 3)
            - np.bincount(contexts, weights=dloss_dlogp, minlength=_N_CTX)[:, None] * probs) / temperature


class StepBatch(NamedTuple):
    """一批解答，排成 (B, L) 的数组（每次更新都用它，只需做一次）。mask 外的 old_logp、advantage 是 0。"""
    ctx: np.ndarray           # (B, L) 每步的情境下标
    actions: np.ndarray       # (B, L) 选中的做法
    mask: np.ndarray          # (B, L) 哪些步存在
    old_logp: np.ndarray      # (B, L) 采样时这个做法的对数概率 log π_old(a | c)
    advantage: np.ndarray     # (B, L) 这一步的优势 A
    max_len: int = None       # 常数聚合的 L_max
    behaviour_logp: np.ndarray = None   # (B, L) 陈旧采样时采样策略的对数概率（None：采样的就是 π_old）


def step_batch(rollouts, advantages, max_len=None, check=True):
    """
    把 Rollouts 和优势排成 StepBatch（每次更新都用它，只需做一次）。

    【参数】rollouts：sampler.Rollouts；advantages：(B,) 或 (B, L)；max_len：常数聚合的 L_max；
        check：是否检查优势里有没有 NaN
    """
    _check_rollouts(rollouts)
    mask = rollouts.mask
    try:
        adv = np.asarray(advantages, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"advantages 必须是数的数组，收到 {advantages!r}") from None
    if adv.shape != mask.shape[:1] and adv.shape != mask.shape:
        raise ValueError(f"advantages 的形状必须是 ({mask.shape[0]},) 或 {mask.shape}，收到 {adv.shape}")
    adv = spread(adv, mask)
    if check and not np.all(np.isfinite(adv[mask])):
        raise ValueError("advantages 里有 NaN 或无穷")
    return StepBatch(rollouts.ctx, rollouts.actions, mask, np.where(mask, rollouts.logp, 0.0), adv, max_len)


def spread(adv, mask):
    """优势排成 (B, L)：每份解答一个优势 (B,) 时铺到它的每一步；mask 外是 0。"""
    adv = np.asarray(adv, dtype=float)
    return np.where(mask, adv[:, None] if adv.ndim == 1 else adv, 0.0)


def stale_steps(steps, params, base, cfg):
    """
    陈旧采样（staleness = k）：π_old 换成这次迭代开始时的策略，采样时的概率记作 π_behaviour。

    【思路】采样用的是 k 次更新之前的参数（π_behaviour，rollouts 里记的概率）；PPO 的比率要相对于现在的 π_old，
        两者之差由 objective.rl_objective 乘上截断的重要性比率 min(π_old / π_behaviour, tis_cap) 修正。
    """
    _check_update(params, base, steps, cfg)
    m = steps.mask
    logp_old = np.where(m, _log(softmax_rows(base + params, cfg.temperature)[steps.ctx, steps.actions]), 0.0)
    return steps._replace(old_logp=logp_old, behaviour_logp=steps.old_logp)


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


def loss_and_grad(params, base, steps, cfg, ref_logp, surrogate_fn=None, want_kl_est=True, rng=None):
    """
    一次更新的损失和对 Δ 的梯度：forward 给出 log π，objective.rl_objective 拼出损失，backward 做玩具的链式法则。

    【参数】params：Δ (12, 3)；base：base_logit_table；steps：StepBatch；cfg：RLConfig；
        ref_logp：(B, L) 参考策略下每步动作的对数概率；surrogate_fn：自定义替代损失（None 用 losses.clipped_surrogate）；
        want_kl_est：是否顺便算 KL 估计的平均；rng：numpy Generator（policy_loss="clip_cov" 随机挑步用）
    【返回】LossResult
    【边界】参数类型或形状不对时报中文的 TypeError / ValueError。
    """
    _check_update(params, base, steps, cfg)
    fwd = forward(params, base, steps, cfg)
    obj = objective.rl_objective(fwd.logp, steps.old_logp, steps.advantage, steps.mask, cfg, ref_logp=ref_logp,
                                 entropy=fwd.entropy, behaviour_logp=steps.behaviour_logp, max_len=steps.max_len,
                                 surrogate_fn=surrogate_fn, want_kl_est=want_kl_est, rng=rng)
    return LossResult(obj.loss, backward(fwd, obj, steps.mask, cfg.temperature), obj.surrogate, obj.kl_term,
                      obj.entropy_term, obj.clip_low, obj.clip_high, obj.kl_est)


class Forward(NamedTuple):
    """forward 的结果：每步的 log π 和熵 H（c_H = 0 时 None），和反向要用的 π、情境、下标、熵的导数。"""
    logp: np.ndarray
    entropy: np.ndarray
    pi: np.ndarray
    ctx: np.ndarray
    flat: np.ndarray
    ent: object


def forward(params, base, steps, cfg, probs=None):
    """
    每个有效步的 log π(a | c)（和熵奖励要的 H）：(B, L)，mask 外是 0。

    【参数】probs：None，或调用者已经算好的 softmax_rows(base + params, cfg.temperature)（训练循环传进来，省掉重算）
    """
    T, m = cfg.temperature, steps.mask
    logits = base + params if probs is None or cfg.entropy_coef != 0 else None      # 只有要算 π 或熵的时候才用到
    pi = softmax_rows(logits, T) if probs is None else probs     # 和采样器同一个函数：参数没变时 ρ 恰好是 1
    ctx = steps.ctx[m]
    flat = ctx * 3 + steps.actions[m]       # (情境, 做法) 拉平后的下标
    logp = np.zeros(m.shape)
    logp[m] = np.take(_log(pi), flat)          # 先对 (12, 3) 的表取 log 再按步取出：和逐步取 log 的数逐位相同
    H = ent = None
    if cfg.entropy_coef != 0:
        ent = losses.entropy(pi, log_softmax_rows(logits, T), T)
        H = np.zeros(m.shape)
        H[m] = ent.value[ctx]
    return Forward(logp, H, pi, ctx, flat, ent)


def backward(fwd, obj, mask, temperature=1.0):
    """链式法则：∂loss/∂log π（和 ∂loss/∂H）→ 对 Δ 的梯度 (12, 3)。"""
    grad = _table_grad(fwd.ctx, None, obj.dloss_dlogp[mask], fwd.pi, temperature, fwd.flat)
    if fwd.ent is not None:                     # ∂loss/∂Δ_c += Σ_{t: c_t = c} e_t · ∂H_c/∂Δ_c
        grad = grad + np.bincount(fwd.ctx, weights=obj.dloss_dentropy[mask], minlength=_N_CTX)[:, None] * fwd.ent.dlogits
    return grad


def _log(p):
    """log p，和采样器记的 log 概率逐位相同；下溢成 0 的概率记为 log(最小正规数) ≈ −708（学习率极大时），不是 −inf。"""
    return np.log(np.maximum(p, np.finfo(float).tiny))


def _check_update(params, base, steps, cfg):
    if not isinstance(cfg, RLConfig):
        raise TypeError(f"cfg 必须是 RLConfig，收到 {type(cfg).__name__}")
    if not isinstance(steps, StepBatch):
        raise TypeError(f"steps 必须是 StepBatch（step_batch(...) 的结果），收到 {type(steps).__name__}")
    if np.shape(params) != (_N_CTX, 3) or np.shape(base) != (_N_CTX, 3):
        raise ValueError(f"params 和 base 的形状必须是 ({_N_CTX}, 3)，收到 {np.shape(params)}、{np.shape(base)}")


def _check_rollouts(rollouts):
    if not isinstance(rollouts, Rollouts):
        raise TypeError(f"rollouts 必须是 sampler.Rollouts（sample_rollouts 的结果），收到 {type(rollouts).__name__}")


def policy_loss(model, rollouts, advantages, config=None, *, ref_params=None, max_len=None, surrogate_fn=None, rng=None):
    """
    一批解答上的损失和它对 Δ 的精确梯度（不更新模型）。引擎每次更新调用的就是它的内核 loss_and_grad。

    【思路】见模块说明。π_old 取 rollouts.probs（采样时的概率）；π_θ 取模型**现在**的参数。
        μ = 1、β = 0、没有熵奖励、T = 1 时，−grad 恰好等于参考模块里对每一步
        add_grad(grads, 情境, 动作, 概率, 权重 = w · A) 的结果（测试检查到 1e-12）。
    【参数】model：TrainableLLM；rollouts：sampler.Rollouts；advantages：(B,) 或 (B, L)；config：RLConfig 或预设名；
        ref_params：参考策略的 Δ（12, 3），β > 0 时需要，默认全 0；max_len：常数聚合的 L_max；
        surrogate_fn：自定义的替代损失（签名同 clipped_surrogate），默认 losses.clipped_surrogate；
        rng：numpy Generator（policy_loss="clip_cov" 随机挑步时必须给）
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
    steps = step_batch(rollouts, advantages, max_len)
    base = base_logit_table(model.size)
    ref = np.zeros((_N_CTX, 3)) if ref_params is None else np.asarray(ref_params, dtype=float)
    if ref.shape != (_N_CTX, 3) or not np.all(np.isfinite(ref)):
        raise ValueError(f"ref_params 必须是形状 ({_N_CTX}, 3) 的有限数组，收到形状 {ref.shape}")
    ref_logp = log_softmax_rows(base + ref, cfg.temperature)[steps.ctx, steps.actions]
    return loss_and_grad(model.params, base, steps, cfg, ref_logp, surrogate_fn, rng=rng)


__all__ = ["LossResult", "StepBatch", "loss_and_grad", "policy_loss", "score_vectors", "stale_steps", "step_batch"]
