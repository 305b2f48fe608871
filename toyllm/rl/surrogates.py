"""
裁剪的替代损失（PPO / GRPO / DAPO、GSPO、CISPO）和截断的重要性比率，每个连同它对本步 log π 的导数。

【思路】l_{i,t} = − min( ρ A_{i,t} ,  clip(ρ, 1 − ε_low, 1 + ε_high) A_{i,t} ) 和它的变体（第 6 讲 8.5–8.9 节）。
    每个替代损失都返回 Surrogate，挂上 dloss_dlogp（∂ρ/∂log π = ρ 那一步就写在各自的公式旁边）；
    objective.rl_objective 只用它。学生和训练代码从 losses 取这些名字（losses.clipped_surrogate 就是这里的函数）。
"""

import math
from typing import NamedTuple

import numpy as np

from .._checks import as_choice, as_float_array, as_real

IS_LEVELS = ("token", "sequence")
"""重要性比率的级别："sequence" 用 s_i = exp(mean_t log ρ_t) 代替每步的 ρ（选项在 toyllm.peers）。"""
CISPO_CLIPS = ("verl", "trl")
PEERS_LOADED = []
"""import toyllm.peers 以后里面有一项：报错时据此提示要不要先 import toyllm.peers。"""


def peers_hint(what):
    """报错的后半句：还没 import toyllm.peers 时提示 what（"toyllm.peers 的其他损失"……）在那里。"""
    return "" if PEERS_LOADED else f"（{what}在 toyllm.peers 里：先 import toyllm.peers）"


class LossInputs(NamedTuple):
    """
    一个策略损失要的输入（rl_objective 准备好）：(B, L) 的 ratio = ρ、log_ratio、adv、logp（mask 外是 0）、mask，
    裁剪区间 eps_low / eps_high（clip=False 时是 inf）、dual-clip 的界 clip_c、随机数 rng；
    per_sequence：裁剪比例按解答数（序列级的比率）；scale_factor：聚合 seq-mean-token-sum-norm 的分母。
    """
    ratio: np.ndarray
    log_ratio: np.ndarray
    adv: np.ndarray
    logp: np.ndarray
    mask: np.ndarray
    eps_low: float
    eps_high: float
    clip_c: object = None
    rng: object = None
    per_sequence: bool = False
    scale_factor: object = None


class PolicyLoss(NamedTuple):
    """POLICY_LOSSES 的一项：fn(config, LossInputs) → Surrogate；clipped：用 eps_low / eps_high 裁剪（clip=False 才有意义）。"""
    fn: object
    clipped: bool


POLICY_LOSSES = {}
"""策略损失的登记表 {RLConfig.policy_loss 的取值: PolicyLoss}：本包的 ppo、gspo、cispo（登记在 losses.py）；import toyllm.peers 再登记它的。"""


def register_policy_loss(name, fn, *, clipped=False):
    """
    登记一个策略损失：之后 RLConfig(policy_loss=name) 就用它（rl_objective 调用 fn(config, LossInputs)）。

    【参数】name：名字；fn：(config, LossInputs) → Surrogate（必须带 .dloss_dlogp）；clipped：是否用 eps_low / eps_high 裁剪
    【例子】register_policy_loss("gpg", lambda cfg, x: gpg_surrogate(x.adv, x.logp, x.mask))（toyllm.peers 这样登记；
        本包的 ppo、gspo、cispo 登记在 losses.py 的末尾）
    """
    if not (isinstance(name, str) and callable(fn)):
        raise TypeError(f"register_policy_loss(name, fn)：name 必须是 str，fn 必须是函数，收到 {name!r}、{fn!r}")
    POLICY_LOSSES[name] = PolicyLoss(fn, bool(clipped))
    return fn


class _SurrogateFields(NamedTuple):
    loss: np.ndarray
    clipped_low: np.ndarray
    clipped_high: np.ndarray


class Surrogate(_SurrogateFields):
    """
    clipped_surrogate 的结果：每步的损失、哪些步在下界被裁剪、哪些步在上界被裁剪（可以解包成这 3 个）。

    【属性】（不算在解包的 3 个里面）dloss_dlogp：每步损失对本步 log π_θ 的导数 —— 每个替代损失都给出它，
        objective.rl_objective 只用它；dloss_dratio：对 ρ 的导数 ∂l/∂ρ（PPO 的裁剪损失给出，∂l/∂log π = ∂l/∂ρ · ρ）
    """
    dloss_dratio = None
    dloss_dlogp = None


def clipped_surrogate(ratio, adv, eps_low=0.2, eps_high=0.2, *, validate=True, clip_ratio_c=None):
    """
    PPO / GRPO / DAPO 的裁剪替代损失（每一步一个数），连同它对 ρ 的导数。

    【思路】l = − min( ρ A ,  clip(ρ, 1 − ε_low, 1 + ε_high) A )
        · A > 0（好动作）：ρ 超过 1 + ε_high 以后损失不再下降 —— 这一批数据已经把它的概率推得够高了，别再推；
        · A < 0（坏动作）：ρ 低于 1 − ε_low 以后同理。
        导数：∂l/∂ρ = 0（被裁剪的步），否则 −A。所以被裁剪的步梯度为 0。
        裁剪只在"重要性比率已经离开 1"时发生，所以 μ = 1（每批只更新一次，ρ ≡ 1）时从不裁剪。
        DAPO 的 clip-higher：ε_high = 0.28 > ε_low = 0.2，让低概率的好动作能涨得更多，防止熵塌缩。
        dual-clip（Ye et al. 2019，arXiv 1912.09729；verl actor.clip_ratio_c，默认 3，必须 > 1）：上面的 min 对 A < 0、
        ρ 很大的步没有上限（−ρA 随 ρ 线性增长：一个已经被推得很高的坏动作会得到很大的梯度）。dual-clip 再加一个界：
            A < 0 时 l = min( max(−ρA, −clip(ρ)A), −c·A )，即 ρ > c 以后损失停在 −cA、梯度为 0。
        verl 的 vanilla 损失总带着它（c 默认 3）。TRL 叫它 GRPOConfig.delta（INTELLECT-2 的 two-sided GRPO），默认 None
        （不用）：它在取 min 之前把 ρ 截在 ≤ δ，δ > 1 + ε_high 时对 A < 0 的步正好是 c = δ 的 dual-clip，对 A > 0 的步
        不起作用。本函数默认 clip_ratio_c=None（不用），RLConfig(clip_ratio_c=3.0)（预设 "ppo_dual_clip"）或
        RLConfig(delta=3.0) 打开它。
    【参数】ratio：ρ 数组；adv：A 数组（形状相同或可广播）；eps_low、eps_high：≥ 0（可以是 inf 表示不裁剪）；
        validate：是否检查参数（引擎内部调用时为 False：学习率极大时 π_θ 可能下溢成 0，ρ = 0 也照样算）；
        clip_ratio_c：dual-clip 的界 C（> 1），None 表示不用
    【返回】Surrogate(loss, clipped_low, clipped_high)，和 ratio 同形状；另有属性 .dloss_dratio（∂l/∂ρ）和
        .dloss_dlogp = ∂l/∂ρ · ρ（对本步 log π 的导数，因为 ∂ρ/∂log π = ρ）。
        clipped_low = (ρ < 1 − ε_low) & (A < 0)，clipped_high = (ρ > 1 + ε_high) & (A > 0)
        （和 TRL 记录 clip_ratio/low_mean、clip_ratio/high_mean 的定义相同）；
        用 dual-clip 时还有属性 .dual_clipped = (A < 0) & (−cA < 原来的损失)（verl 记录为 pg_clipfrac_lower）
    【边界】ratio 必须 > 0（它是两个概率之比）。
        在这个玩具里，裁剪要在 μ > 1 且学习率足够大时才真的发生；PPO / DAPO 预设和 GRPO 的曲线不同，
        主要来自 μ = 4 的多次更新和动态采样的更多样本（notebook 06 第 1.4 节量出这些曲线）。裁剪确实发生时
        （notebook 06 的 clip-higher 实验），clip-higher 让"同样可行"的低概率做法 —— 不咬人情境里的 bug —— 保留了
        更多概率，熵更高；这和 DAPO 在真实 LLM 上看到的方向一致。单看一批数据，它让低概率、优势为正的 correct 涨得更多。
    【例子】clipped_surrogate(np.array([1.0, 1.5, 0.5]), np.array([1.0, 1.0, -1.0]))
        → loss [−1.0, −1.2, 0.8]，clipped_high [F, T, F]，clipped_low [F, F, T]，dloss_dratio [−1, 0, 0]
        clipped_surrogate(np.array([5.0]), np.array([-1.0]), clip_ratio_c=3.0) → loss [3.0]（没有 c 时是 5.0），导数 [0]
    【Python 小知识】np.minimum 是逐元素的 min（内置的 min 只能比两个数）；np.clip(x, lo, hi) 把 x 夹在区间里。
        Surrogate 继承一个 NamedTuple 而不加 __slots__，所以实例还能多挂一个属性（dloss_dratio），解包仍是 3 个。
    """
    if validate:
        eps_low = as_real("eps_low", eps_low, 0.0, allow_inf=True)
        eps_high = as_real("eps_high", eps_high, 0.0, allow_inf=True)
        rho, a = as_float_array("ratio", ratio), as_float_array("adv", adv)
        try:
            np.broadcast_shapes(rho.shape, a.shape)
        except ValueError:
            raise ValueError(f"ratio 的形状 {rho.shape} 和 adv 的形状 {a.shape} 必须相同（或可以广播）") from None
        if np.any(~((rho > 0) & (rho < np.inf))):
            raise ValueError("ratio（重要性比率 π_θ / π_old）必须都是有限的正数（> 0，不能是 NaN 或无穷）")
        if np.any(~np.isfinite(a)):
            raise ValueError("adv（优势）里有 NaN 或无穷")
        if clip_ratio_c is not None:
            clip_ratio_c = as_real("clip_ratio_c", clip_ratio_c)
            if not clip_ratio_c > 1:
                raise ValueError(f"clip_ratio_c（dual-clip 的界 C）必须 > 1（verl 默认 3），收到 {clip_ratio_c!r}")
    else:
        rho, a = ratio, adv
    low = (rho < 1.0 - eps_low) & (a < 0)
    high = (rho > 1.0 + eps_high) & (a > 0)
    loss = -np.minimum(rho * a, np.clip(rho, 1.0 - eps_low, 1.0 + eps_high) * a)
    dloss = np.where(low | high, 0.0, -a)
    if clip_ratio_c is None:
        out = Surrogate(loss, low, high)
    else:
        dual = (a < 0) & (-clip_ratio_c * a < loss)
        out = Surrogate(np.where(dual, -clip_ratio_c * a, loss), low, high)
        dloss = np.where(dual, 0.0, dloss)
        out.dual_clipped = dual
    out.dloss_dratio = dloss
    out.dloss_dlogp = dloss * rho                     # ∂ρ/∂log π = ρ
    return out


def gspo_surrogate(log_ratio, adv, mask, eps_low=3e-4, eps_high=4e-4):
    """
    GSPO（Zheng et al. 2025，arXiv 2507.18071）的序列级替代损失，连同每步损失对本步 log π 的导数。

    【思路】一份解答一个比率：s_i = exp( mean_t log ρ_{i,t} )（每步比率的几何平均），按序列裁剪：
            l_{i,t} = − min( s_i A_i ,  clip(s_i, 1 − ε_low, 1 + ε_high) A_i )      （同一份解答的每一步相同）
        这和 verl 的 policy_loss.loss_mode="gspo" 完全一样：verl 把 s_i 写成 sg(s_i) · π_θ(a_t) / sg(π_θ(a_t))，
        值是 s_i，对本步 log π 的导数是 s_i（不是 s_i / |o_i|），每步用自己的 A_{i,t}，再固定用 seq-mean-token-mean 聚合
        （本包用 RLConfig.loss_agg；预设 "gspo" 用 "seq-mean"，即同一个聚合）——
        于是整份解答的梯度是 −A_i ∇s_i，正是论文的公式。TRL importance_sampling_level="sequence" 的梯度
        在按解答平均（loss_type="grpo"）时与之相同。log s_i 像 verl 一样先夹在 ≤ 10。
        裁剪区间比逐步的小得多（论文 3e-4 / 4e-4）：s_i 是几何平均，离 1 很近。
    【参数】log_ratio：(B, L) 每步 log π_θ − log π_old；adv：(B,) 或 (B, L)（每步自己的 A，和 verl 一样）；
        mask：(B, L) bool；eps_low、eps_high：≥ 0
    【返回】Surrogate(loss, clipped_low, clipped_high)，都是 (B, L)（mask 外为 0 / False），
        另有 .dloss_dlogp（每步损失对本步 log π_θ 的导数）、.seq_ratio（每份解答的 s_i，(B,)）
    【例子】gspo_surrogate(np.log([[1.1, 1.0]]), np.array([1.0]), np.ones((1, 2), bool), 0.2, 0.2)
        → s = √1.1 ≈ 1.0488；loss 每步 −1.0488；dloss_dlogp 每步 −1.0488
    """
    lr, m = as_float_array("log_ratio", log_ratio), np.asarray(mask, dtype=bool)
    if lr.ndim != 2 or m.shape != lr.shape:
        raise ValueError(f"log_ratio 和 mask 必须是同形状的 (B, L) 数组，收到 {lr.shape}、{m.shape}")
    a = as_float_array("adv", adv)
    if a.shape == lr.shape[:1]:
        a = np.broadcast_to(a[:, None], lr.shape)
    if a.shape != lr.shape:
        raise ValueError(f"adv 的形状必须是 ({lr.shape[0]},) 或 {lr.shape}，收到 {a.shape}")
    a = np.where(m, a, 0.0)
    if not np.all(np.isfinite(a)) or np.isnan(lr[m]).any():
        raise ValueError("adv 必须是有限的数，log_ratio 在 mask 内不能是 NaN")
    eps_low = as_real("eps_low", eps_low, 0.0, allow_inf=True)
    eps_high = as_real("eps_high", eps_high, 0.0, allow_inf=True)
    n = np.maximum(m.sum(axis=1), 1)
    s_i = np.exp(np.minimum(np.where(m, lr, 0.0).sum(axis=1) / n, 10.0))[:, None]
    low = m & (s_i < 1.0 - eps_low) & (a < 0)
    high = m & (s_i > 1.0 + eps_high) & (a > 0)
    loss = -np.minimum(s_i * a, np.clip(s_i, 1.0 - eps_low, 1.0 + eps_high) * a)
    out = Surrogate(np.where(m, loss, 0.0), low, high)
    out.dloss_dlogp = np.where(m & ~(low | high), -a * s_i, 0.0)
    out.seq_ratio = s_i[:, 0]
    return out


def cispo_surrogate(ratio, adv, logp, eps_low=0.2, eps_high=0.2, convention="verl"):
    """
    CISPO（MiniMax-M1，arXiv 2506.13585；ScaleRL 选的损失）：裁剪重要性**权重**，不裁剪更新。

    【思路】l_{i,t} = − sg( w(ρ_{i,t}) ) · A_i · log π_θ(a_t | c_t)，sg = 截断梯度（detach）
        · 导数 ∂l/∂log π = −w·A：每一步都有梯度 —— PPO 的裁剪让 ρ 出界的步梯度为 0，CISPO 只是把它的权重截住。
        · 两个系统的裁剪不一样（本函数两种都有，convention 选）：
            "verl"：w = clip(ρ, 1 − ε_low, 1 + ε_high)（双边，verl policy_loss.loss_mode="cispo"）
            "trl"：w = min(ρ, ε_high)（只截上面，截在 ε_high 本身；TRL loss_type="cispo" 的 clamp(ρ, max=epsilon_high)，
                   TRL 文档建议此时 epsilon_high = 5.0）
        · 损失的值里有 log π，所以它不是 ~0（和 PPO 的替代损失不同），比较的时候看梯度。
    【参数】ratio：ρ；adv：A（同形状或可广播）；logp：log π_θ(a_t)（同形状）；eps_low、eps_high：≥ 0；
        convention："verl" / "trl"
    【返回】Surrogate(loss, clipped_low, clipped_high)：按 convention 的那个系统记裁剪比例 ——
        "verl"：权重在下界 / 上界被截住的步（不看 A 的符号；两者之和是 verl 的 pg_clipfrac = mean(ρ ≠ clip(ρ))）；
        "trl"：clipped_high = (ρ > ε_high) & (A > 0)（TRL 的 cispo_clip_ratio），clipped_low 全是 False；
        另有 .dloss_dlogp = −w·A、.weight = w、.dloss_dratio = 0（权重截断了梯度）
    【例子】cispo_surrogate(np.array([1.5]), np.array([1.0]), np.log([0.5])) → w = 1.2，loss = 1.2·log 2 ≈ 0.832，
        dloss_dlogp = −1.2（PPO 在这一步的梯度是 0）
    """
    convention = as_choice("convention", convention, CISPO_CLIPS)
    rho, a, lp = as_float_array("ratio", ratio), as_float_array("adv", adv), as_float_array("logp", logp)
    try:
        np.broadcast_shapes(rho.shape, a.shape, lp.shape)
    except ValueError:
        raise ValueError(f"ratio、adv、logp 的形状 {rho.shape}、{a.shape}、{lp.shape} 必须相同（或可以广播）") from None
    if np.any(~(rho > 0)) or not (np.all(np.isfinite(a)) and np.all(lp <= 0)):
        raise ValueError("ratio 必须都 > 0，adv 必须是有限的数，logp（对数概率）必须都 <= 0")
    eps_low = as_real("eps_low", eps_low, 0.0, allow_inf=True)
    eps_high = as_real("eps_high", eps_high, 0.0, allow_inf=True)
    if convention == "verl":
        lo, hi = 1.0 - eps_low, 1.0 + eps_high
    else:
        lo, hi = -math.inf, eps_high
    w = np.clip(rho, lo, hi)
    high = (rho > hi) if convention == "verl" else (rho > hi) & (a > 0)
    out = Surrogate(-w * a * lp, np.broadcast_to(rho < lo, high.shape), high)
    out.dloss_dlogp = -w * a
    out.dloss_dratio = np.zeros(np.broadcast_shapes(rho.shape, a.shape))
    out.weight = w
    return out


def truncated_is_weights(logp_old, logp_behaviour, cap=2.0):
    """
    截断的重要性比率 min(π_old / π_behaviour, C)：陈旧（异步）采样的修正（verl rollout correction / TIS）。

    【思路】异步 RL 里采样用的策略 π_behaviour 是 k 次更新之前的参数，训练时的 π_old 是现在的。
        每步损失乘上 w = min(π_old(a) / π_behaviour(a), C)（不求导）：C 截住少数很大的权重，换来更小的方差，
        代价是一点偏差（C = inf 时是逐步的重要性采样）。
    【参数】logp_old、logp_behaviour：同形状的对数概率；cap：C（> 0；None 或 inf 表示不截断）
    【返回】同形状的权重数组
    【例子】truncated_is_weights(np.log([0.5, 0.9]), np.log([0.1, 0.9])) → [2.0, 1.0]（5 被截到 2）
    """
    a, b = as_float_array("logp_old", logp_old), as_float_array("logp_behaviour", logp_behaviour)
    if a.shape != b.shape:
        raise ValueError(f"logp_old 的形状 {a.shape} 和 logp_behaviour 的形状 {b.shape} 必须相同")
    cap = math.inf if cap is None else as_real("cap", cap, 0.0, allow_inf=True)
    if cap == 0:
        raise ValueError("cap（截断的上限 C）必须 > 0，收到 0")
    return np.minimum(np.exp(np.minimum(a - b, 700.0)), cap)


__all__ = ["CISPO_CLIPS", "IS_LEVELS", "LossInputs", "PEERS_LOADED", "POLICY_LOSSES", "PolicyLoss", "Surrogate",
           "peers_hint", "register_policy_loss", "cispo_surrogate", "clipped_surrogate", "gspo_surrogate",
           "truncated_is_weights"]
