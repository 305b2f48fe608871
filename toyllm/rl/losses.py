"""
RL 损失里的每一个公式，值和导数写在一起（第 6 讲"优势、裁剪、KL、聚合"）。

【思路】一次更新的损失是几块拼起来的（"步"在玩具里扮演真实 LLM 里"token"的角色）：
        ρ_{i,t} = π_θ(a_t | c_t) / π_old(a_t | c_t)                                     重要性比率
        l_{i,t} = − min( ρ A_{i,t} ,  clip(ρ, 1 − ε_low, 1 + ε_high) A_{i,t} )          裁剪的替代损失
        loss    = Σ_{i,t} w_{i,t} [ l_{i,t} + β k(π_θ, π_ref) − c_H H(π_θ(· | c_t)) ]      w：聚合权重
    这里每个函数只管一块，输入是普通的 numpy 数组：每步的量可以是任意形状，聚合用 (B, L) 加 mask。
    它们不知道玩具模型是什么 —— 玩具的引擎（kernel.py）和以后的小 transformer 调用的是同一批函数。
    每个公式旁边就是它的导数：clipped_surrogate(...).dloss_dlogp、kl_estimator(...).dvalue_dlogp、
    entropy(...).dlogits；objective.rl_objective 把它们拼成一次更新的损失（玩具和小 transformer 共用）。
【第 6 讲 8.5–8.9 节】REINFORCE++（reinforce_pp_advantages、whiten）、verl / TRL 的聚合名字（AGGREGATION_TABLE）；
    替代损失（clipped_surrogate 和 dual-clip、gspo_surrogate、cispo_surrogate、truncated_is_weights）写在 surrogates.py，
    这里转出并登记（文件末尾）；价值表和 GAE 在 critic.py。真实系统的其他损失和优势在 toyllm.peers：import toyllm.peers 把它们登记进
    POLICY_LOSSES 和 GROUP_ADVANTAGES（本包从不导入它）。
"""

from typing import NamedTuple

import numpy as np

from .._checks import as_choice, as_float_array, as_int, as_real
from ..entropy import entropy_and_grad
from .surrogates import (CISPO_CLIPS, IS_LEVELS, POLICY_LOSSES, LossInputs, Surrogate, cispo_surrogate,
                         clipped_surrogate, gspo_surrogate, peers_hint, register_policy_loss, truncated_is_weights)

# 公式的选项写在公式旁边；config（RLConfig 的取值检查、命令行帮助）从这里导入它们，反过来不行
ADVANTAGES = ("none", "mean", "rloo", "grpo")
SCALES, KL_ESTIMATORS = ("group", "batch", "none"), ("k1", "k2", "k3")
GROUP_ADVANTAGES = dict.fromkeys(ADVANTAGES + ("reinforce_pp",))
"""优势估计的登记表 {method: 函数}：本包的（值 None，写在 group_advantages 里）；toyllm.peers 再登记 opo、gpg……"""
MASKED_ADVANTAGES = {"reinforce_pp"}                   # 要知道每份解答有几步（mask）的方法


def register_advantage(name, fn, *, masked=False):
    """登记一个优势估计 method=name：fn(rewards (B,), group_size, mask, gamma) → 优势；masked：是否要 mask（每份解答的步数）。"""
    if not (isinstance(name, str) and callable(fn)):
        raise TypeError(f"register_advantage(name, fn)：name 必须是 str，fn 必须是函数，收到 {name!r}、{fn!r}")
    GROUP_ADVANTAGES[name] = fn
    MASKED_ADVANTAGES.update([name] if masked else [])


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
    r = as_float_array("rewards", rewards)
    if r.ndim not in (1, 2) or r.shape[0] % group_size:
        raise ValueError(f"rewards 必须是 (B,) 或 (B, L) 的数组，B 是 group_size = {group_size} 的倍数，收到形状 {r.shape}")
    if r.ndim == 1:                            # 每组里的每一份都和这一组的第一份相同
        grp = r.reshape(-1, group_size)
        return (grp == grp[:, :1]).all(axis=1) & np.isfinite(grp[:, 0])
    m = np.asarray(mask, dtype=bool) if mask is not None else None
    if m is None or m.shape != r.shape:
        raise ValueError(f"每步奖励需要和 rewards 同形状的 mask，收到 {None if m is None else m.shape}")
    L = r.shape[1]
    rg, mg = r.reshape(-1, group_size, L), m.reshape(-1, group_size, L)
    lo = np.where(mg, rg, np.inf).min(axis=(1, 2))
    hi = np.where(mg, rg, -np.inf).max(axis=(1, 2))
    return lo == hi


def group_advantages(rewards, group_size, method="grpo", scale="group", eps=1e-4, mask=None, gamma=1.0):
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
        method："none" / "mean" / "rloo" / "grpo"，或 "reinforce_pp"（REINFORCE++ 带基线，只支持结果奖励），
        或登记过的方法（import toyllm.peers 后有 "reinforce_pp_no_baseline" / "opo" / "gpg"）；scale："group" / "batch" / "none"（只对 "grpo" 有用）；
        eps：> 0；mask：(B, L) bool，每步奖励时必须给；gamma：折扣（只对 "reinforce_pp_no_baseline"）
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
    if method not in GROUP_ADVANTAGES:
        raise ValueError(f"method 必须是 {'、'.join(map(repr, GROUP_ADVANTAGES))} 之一，收到 {method!r}"
                         + peers_hint("verl 的其他优势（reinforce_pp_no_baseline、opo、gpg）"))
    scale = as_choice("scale", scale, SCALES)
    eps = as_real("eps", eps, 0.0, low_open=True)
    r = as_float_array("rewards", rewards)
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
    if not np.isfinite(r).all():
        raise ValueError("rewards 里有 NaN 或无穷")
    if method == "reinforce_pp":
        return reinforce_pp_advantages(r, g, mask)
    if GROUP_ADVANTAGES[method] is not None:
        return GROUP_ADVANTAGES[method](r, g, mask, gamma)
    if m is None:
        return _outcome_advantages(r, g, method, scale, eps)
    return _process_advantages(r, m, g, method, scale, eps)


def _outcome_advantages(r, g, method, scale, eps):
    grp = r.reshape(-1, g)
    if method == "none":
        return grp.reshape(-1).copy()
    if method == "rloo":
        adv = grp - (grp.sum(axis=1, keepdims=True) - grp) / (g - 1)
    else:
        adv = grp - grp.mean(axis=1, keepdims=True)
        if method == "grpo" and scale == "group":
            adv = adv / (grp.std(axis=1, ddof=1, keepdims=True) + eps)
        elif method == "grpo" and scale != "none":
            adv = adv / (r.std(ddof=1) + eps)
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


WHITEN_EPS = 1e-8
"""verl masked_whiten 里加在方差上的小数：(x − 均值) / √(方差 + 1e-8)。"""


def whiten(values, mask=None):
    """
    在整批上白化：(x − 均值) / √(方差 + 1e-8)，均值和（无偏，除以 n − 1 的）方差只算 mask 内的元素。

    【思路】verl 的 masked_whiten（REINFORCE++ 和 GAE 的优势都经过它）。mask 内元素不到 2 个时方差记为 0。
    【参数】values：数组；mask：同形状 bool，默认全部
    【返回】同形状的数组（mask 外是 0）
    【例子】whiten(np.array([1.0, 0.0])) → [0.7071, −0.7071]（方差 0.5）
    """
    x = as_float_array("values", values)
    m = np.ones(x.shape, bool) if mask is None else np.asarray(mask, dtype=bool)
    if m.shape != x.shape:
        raise ValueError(f"mask 的形状 {m.shape} 必须和 values 的形状 {x.shape} 相同")
    n = int(m.sum())
    if n == 0:
        return np.zeros_like(x)
    mean = x[m].mean()
    var = x[m].var(ddof=1) if n > 1 else 0.0
    return np.where(m, (x - mean) / np.sqrt(var + WHITEN_EPS), 0.0)


def reinforce_pp_advantages(rewards, group_size, mask=None):
    """
    REINFORCE++（带基线）的优势，和 verl 的 adv_estimator="reinforce_plus_plus_baseline" 算的一样。

    【思路】verl 的做法（compute_reinforce_plus_plus_baseline_outcome_advantage）：
            a_i = r_i − mean_group(r)                  先减组平均
            a_{i,t} = a_i（铺到这份解答的每一步）
            A = whiten(a) = (a − mean) / √(var + 1e-8)   再在整批所有步上白化（均值、方差按步数加权）
        和 TRL scale_rewards="batch" 不同：那里是 (r_i − 组平均) / std_batch(r)，除的是**奖励**的标准差、不再减均值、
        按解答（不按步）算。还有一个差别：奖励全相同的组 a = 0，白化以后是 −mean / std（verl 不把它们单独置 0）；
        同组解答步数不同时 mean ≠ 0，这些组得到非零的优势。玩具里同一道题的解答步数相同，mean 恰好是 0（到舍入误差）。
    【参数】rewards：(B,) 结果奖励；group_size：G；mask：(B, L) bool（给了就按步加权白化，和 verl 一样；
        None 时每份解答算一次）
    【返回】(B,) 数组（每份解答一个数：同一份解答的每一步优势相同）；只支持结果奖励，B 不是 G 的倍数时报 ValueError
    【例子】reinforce_pp_advantages([1, 0, 0, 0, 1, 1, 0, 0], 4)：a = [.75, −.25, −.25, −.25, .5, .5, −.5, −.5]，
        再除以 a 的样本标准差（均值是 0）
    """
    g = as_int("group_size", group_size, low=2)
    r = as_float_array("rewards", rewards)
    if r.ndim != 1 or r.shape[0] == 0 or r.shape[0] % g or not np.all(np.isfinite(r)):
        raise ValueError(f"reinforce_pp 只支持有限的结果奖励：rewards 必须是 (B,) 的数组，B 是 group_size = {g} 的倍数，"
                         f"收到形状 {r.shape}（过程奖励请用 \"grpo\" / \"rloo\" / \"mean\"）")
    grp = r.reshape(-1, g)
    a = (grp - grp.mean(axis=1, keepdims=True)).reshape(-1)
    if mask is None:
        return whiten(a)
    m = np.asarray(mask, dtype=bool)
    if m.ndim != 2 or m.shape[0] != r.shape[0]:
        raise ValueError(f"mask 必须是 ({r.shape[0]}, L) 的 bool 数组，收到形状 {m.shape}")
    w = whiten(np.broadcast_to(a[:, None], m.shape), m)
    return np.where(m[:, 0], w[:, 0], 0.0)           # 每份解答的有效步从第 0 步开始，各步的值相同


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
    lp, lr = as_float_array("logp", logp), as_float_array("logp_ref", logp_ref)
    if lp.shape != lr.shape:
        raise ValueError(f"logp 的形状 {lp.shape} 和 logp_ref 的形状 {lr.shape} 必须相同")
    for name, arr in (("logp", lp), ("logp_ref", lr)):
        if not np.isfinite(arr).all():
            raise ValueError(f"{name}（对数概率）必须都是有限的数：里面有 NaN 或 ±inf（概率为 0 的动作不会被采到）")
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
class Aggregation(NamedTuple):
    """AGGREGATION_TABLE 的一行：归一化的方式 kind、公式、谁这样做。"""
    kind: str
    formula: str
    systems: str


AGGREGATION_TABLE = {
    "seq-mean": Aggregation("seq", "Σ_i (Σ_t l_{i,t} / |o_i|) / B", "本包的原名 = TRL grpo（全空的行也算在 B 里）"),
    "token-mean": Aggregation("token", "Σ_{i,t} l_{i,t} / Σ_i |o_i|", "verl token-mean = TRL dapo / bnpo（单卡）"),
    "constant": Aggregation("constant", "Σ_{i,t} l_{i,t} / (B · L_max)", "本包的原名 = TRL dr_grpo"),
    "seq-mean-token-mean": Aggregation("seq_nonempty", "Σ_i (Σ_t l_{i,t} / |o_i|) / B'",
                                       "verl（B' = 非空的行数：verl 的 seq_mask 把全空的行排除；行都非空时 = TRL grpo）"),
    "seq-mean-token-sum": Aggregation("sum_nonempty", "Σ_i Σ_t l_{i,t} / B'", "verl（B' = 非空的行数；TRL RLOO 的序列对数概率之和）"),
    "seq-mean-token-sum-norm": Aggregation("norm", "Σ_{i,t} l_{i,t} / L",
                                           "verl（L 是补齐后的长度，或 loss_scale_factor；= B × TRL dr_grpo）"),
    "grpo": Aggregation("seq", "Σ_i (Σ_t l_{i,t} / |o_i|) / B", "TRL loss_type（原始 GRPO；全空的行也算在 B 里）"),
    "bnpo": Aggregation("token", "Σ_{i,t} l_{i,t} / Σ_i |o_i|", "TRL loss_type（本地一批的步数）"),
    "dr_grpo": Aggregation("constant", "Σ_{i,t} l_{i,t} / (B · L_max)", "TRL loss_type（L_max = max_completion_length）"),
    "dapo": Aggregation("token", "Σ_{i,t} l_{i,t} / Σ_i |o_i|", "TRL loss_type（默认；全局步数 / 进程数，单卡即本批步数）"),
    "luspo": Aggregation("sum", "Σ_i Σ_t l_{i,t} / B = Σ_i |o_i| l_i / B",
                         "TRL loss_type（序列级的 l_i 乘长度再对 B 平均；配 is_level=\"sequence\"）"),
}
AGGREGATIONS = tuple(AGGREGATION_TABLE)
"""损失聚合的全部名字：本包原来的 3 个（别名）、verl 的 loss_agg_mode、TRL 的 loss_type。"""


def aggregation_weights(mask, how="seq-mean", max_len=None, scale_factor=None):
    """
    每一步在总损失里的权重 w（B, L），loss = Σ w · l；所以 ∂loss/∂l = w。

    【思路】B 份解答，第 i 份有 |o_i| 步：
            "seq-mean"：w = 1 / (B · |o_i|)       先按解答内平均，再对解答平均（原始 GRPO；TRL "grpo"；verl "seq-mean-token-mean"）
            "token-mean"：w = 1 / Σ_i |o_i|       所有步一起平均（DAPO；TRL "dapo" / "bnpo"；verl "token-mean"）
            "constant"：w = 1 / (B · L_max)       常数归一化（Dr. GRPO；TRL "dr_grpo"）
            "seq-mean-token-sum"：w = 1 / B'      verl：每份解答内求和，再对非空的解答平均
            "seq-mean-token-sum-norm"：w = 1 / L  verl：总和除以补齐后的长度（不除以 B：这一批里它是 "constant" 的
                                                 B 倍；verl 在每个 micro-batch 上这样算，合起来的倍数见讲义 8.7 节）；
                                                 给了 scale_factor 就除以它（verl actor.loss_scale_factor）
            verl 的 "seq-mean-token-mean" 也除以非空的行数 B'，TRL "grpo" / 本包 "seq-mean" 除以 B（全空的行算在内）。
        verl / TRL 的每个名字见 AGGREGATION_TABLE（TRL 的名字和同类的 verl 名字算出同一个数）。
        Dr. GRPO 指出 "seq-mean" 的长度偏差：长的错误解答每步受到的惩罚更小。
    【参数】mask：(B, L) bool；how：AGGREGATIONS 之一；max_len：L_max（≥ 1 的整数），默认 mask.shape[1]
        （只对 "constant" / "dr_grpo"）；scale_factor：None 或 ≥ 1 的整数（只对 "seq-mean-token-sum-norm"，
        verl 的 loss_scale_factor：训练中保持同一个分母，不随补齐的长度变）
    【返回】(B, L) float 数组，mask 外是 0
    【边界】未知的名字报 ValueError，并提示最像的名字。
    【例子】两份解答，3 步和 1 步（L = 3）："seq-mean" → 每步 1/6、1/6、1/6 和 1/2；"token-mean" → 每步 1/4；
        "constant" → 每步 1/6；"seq-mean-token-sum" → 每步 1/2；"seq-mean-token-sum-norm" → 每步 1/3
    """
    m = np.asarray(mask)
    if m.dtype != bool and not (m.size == 0 or np.isin(m, (0, 1)).all()):
        raise ValueError(f"mask 必须是 bool 数组（True 表示这一步存在），收到 dtype {m.dtype}")
    m = m if m.dtype == bool else m.astype(bool)
    if m.ndim != 2:
        raise ValueError(f"mask 必须是 (B, L) 的二维数组，收到形状 {m.shape}")
    kind = AGGREGATION_TABLE[as_choice("how", how, AGGREGATIONS)].kind
    if scale_factor is not None:
        if kind != "norm":
            raise ValueError(f"scale_factor（verl 的 loss_scale_factor）只对 how=\"seq-mean-token-sum-norm\" 有用，收到 how={how!r}")
        scale_factor = as_int("scale_factor", scale_factor, low=1)
    B, L = m.shape
    lengths = m.sum(axis=1)
    rows = int(np.count_nonzero(lengths)) if kind.endswith("_nonempty") else B
    if rows == 0:
        return np.zeros(m.shape)
    if kind.startswith("seq"):
        w = 1.0 / (rows * np.maximum(lengths, 1))
        return np.where(m, w[:, None], 0.0)
    if kind == "token":
        return np.where(m, 1.0 / max(int(m.sum()), 1), 0.0)
    if kind.startswith("sum"):
        return np.where(m, 1.0 / rows, 0.0)
    if kind == "norm":
        return np.where(m, 1.0 / (scale_factor or max(L, 1)), 0.0)
    max_len = L if max_len is None else as_int("max_len", max_len, low=1)
    return np.where(m, 1.0 / (B * max_len), 0.0)


def aggregate_loss(per_step, mask, how="seq-mean", max_len=None, scale_factor=None):
    """
    把每一步的损失合成一个数：Σ w · l，w 见 aggregation_weights（mask 外的值不参与，可以是任何数）。

    【参数】per_step：(B, L) 每步损失；mask：(B, L) bool；how：AGGREGATIONS 之一（见 AGGREGATION_TABLE）；
        max_len：常数归一化的 L_max（默认 L）
    【返回】float
    【例子】per_step = [[1, 1, 0], [4, 0, 0]]，mask = [[T, T, F], [T, F, F]]：
        "seq-mean" → (1 + 4) / 2 = 2.5；"token-mean" → 6 / 3 = 2.0；"constant" → 6 / (2 × 3) = 1.0
    """
    w = aggregation_weights(mask, how, max_len, scale_factor)
    m = np.asarray(mask).astype(bool)
    l = as_float_array("per_step", per_step)
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

    【思路】∂H/∂z_j = −π_j (log π_j + H) / T（公式在 toyllm.entropy，玩具的精确计算也用它）。
        损失里减去 c_H × H（熵奖励）：鼓励模型保持不确定，继续探索。π_j = 0 的项按 0 log 0 = 0 处理。
    【参数】probs、logprobs：(…, K) 数组（同一个分布的概率和对数概率）；temperature：> 0
    【返回】Entropy(value, dlogits)
    【例子】entropy(np.full(3, 1 / 3), np.log(np.full(3, 1 / 3))).value → log 3 ≈ 1.0986；dlogits → 0（均匀时熵最大）
    """
    temperature = as_real("temperature", temperature, 0.0, low_open=True)
    pi, logpi = as_float_array("probs", probs), as_float_array("logprobs", logprobs)
    if pi.shape != logpi.shape or pi.ndim == 0 or pi.shape[-1] == 0:
        raise ValueError(f"probs 的形状 {pi.shape} 和 logprobs 的形状 {logpi.shape} 必须相同（至少一维、不为空）")
    if np.isnan(pi).any() or np.isnan(logpi).any():
        raise ValueError("probs / logprobs 里有 NaN")
    return Entropy(*entropy_and_grad(pi, logpi, temperature))


register_policy_loss("ppo", lambda cfg, x: clipped_surrogate(x.ratio, x.adv, x.eps_low, x.eps_high, validate=False,
                                                             clip_ratio_c=x.clip_c), clipped=True)   # 查的是本模块的名字
register_policy_loss("gspo", lambda cfg, x: gspo_surrogate(x.log_ratio, x.adv, x.mask, cfg.seq_eps_low, cfg.seq_eps_high))
register_policy_loss("cispo", lambda cfg, x: cispo_surrogate(x.ratio, x.adv, x.logp, x.eps_low, x.eps_high, cfg.cispo_clip),
                     clipped=True)

__all__ = ["ADVANTAGES", "AGGREGATIONS", "AGGREGATION_TABLE", "Aggregation", "CISPO_CLIPS", "GROUP_ADVANTAGES",
           "IS_LEVELS", "KL_ESTIMATORS", "MASKED_ADVANTAGES", "POLICY_LOSSES", "SCALES", "Entropy", "KLEstimates", "KLTerm", "KL_CLAMP",
           "LossInputs", "Surrogate", "WHITEN_EPS", "aggregate_loss", "aggregation_weights", "cispo_surrogate", "clipped_surrogate",
           "constant_groups", "entropy", "group_advantages", "gspo_surrogate", "kl_estimates", "kl_estimator",
           "register_advantage", "reinforce_pp_advantages", "truncated_is_weights", "whiten"]
