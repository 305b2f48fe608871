"""
按组以外的优势：verl 的 REINFORCE++[S507]（带 / 不带基线）、OPO、GPG，和它们共用的整批白化（第 6 讲 8.5–8.9 节）。

【思路】losses.group_advantages 按 method 分到这里（"reinforce_pp"、"reinforce_pp_no_baseline"、"opo"、"gpg"）。
    公式照 verl（commit b178a3cd）verl/trainer/ppo/core_algos.py 的 compute_*_outcome_advantage 写[S513]；
    只支持结果奖励（(B,) 的 rewards），和 verl 一样。优势不依赖于参数 θ，没有导数要写。
"""

import numpy as np

from .._checks import as_float_array, as_int, as_real

WHITEN_EPS = 1e-8
"""verl masked_whiten 里加在方差上的小数[S512]：(x − 均值) / √(方差 + 1e-8)。"""


def whiten(values, mask=None):
    """
    在整批上白化：(x − 均值) / √(方差 + 1e-8)，均值和（无偏，除以 n − 1 的）方差只算 mask 内的元素。

    【思路】verl 的 masked_whiten（REINFORCE++ 和 GAE 的优势都经过它）[S512]。mask 内元素不到 2 个时方差记为 0。
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


def _outcome(rewards, group_size, method):
    g = as_int("group_size", group_size, low=2)
    r = as_float_array("rewards", rewards)
    if r.ndim != 1 or r.shape[0] == 0 or r.shape[0] % g:
        raise ValueError(f"{method} 只支持结果奖励：rewards 必须是 (B,) 的数组，B 是 group_size = {g} 的倍数，"
                         f"收到形状 {r.shape}（过程奖励请用 \"grpo\" / \"rloo\" / \"mean\"）")
    if not np.all(np.isfinite(r)):
        raise ValueError("rewards 里有 NaN 或无穷")
    return r, g


def _step_mask(mask, B, method):
    m = np.asarray(mask, dtype=bool) if mask is not None else None
    if m is None or m.ndim != 2 or m.shape[0] != B:
        raise ValueError(f"{method} 需要 ({B}, L) 的 bool mask（每份解答有几步），收到 "
                         f"{None if m is None else m.shape}")
    return m


def reinforce_pp_advantages(rewards, group_size, mask=None):
    """
    REINFORCE++（带基线）的优势，和 verl 的 adv_estimator="reinforce_plus_plus_baseline" 算的一样[S507]。

    【思路】verl 的做法（compute_reinforce_plus_plus_baseline_outcome_advantage）[S507]：
            a_i = r_i − mean_group(r)                  先减组平均
            a_{i,t} = a_i（铺到这份解答的每一步）
            A = whiten(a) = (a − mean) / √(var + 1e-8)   再在整批所有步上白化（均值、方差按步数加权）
        和 TRL scale_rewards="batch" 不同：那里是 (r_i − 组平均) / std_batch(r)，除的是**奖励**的标准差、不再减均值、
        按解答（不按步）算。还有一个差别：奖励全相同的组 a = 0，白化以后是 −mean / std（verl 不把它们单独置 0）[S507]；
        同组解答步数不同时 mean ≠ 0，这些组得到非零的优势。玩具里同一道题的解答步数相同，mean 恰好是 0（到舍入误差）。
    【参数】rewards：(B,) 结果奖励；group_size：G；mask：(B, L) bool（给了就按步加权白化，和 verl 一样[S512]；
        None 时每份解答算一次）
    【返回】(B,) 数组（每份解答一个数：同一份解答的每一步优势相同）
    【边界】只支持结果奖励（(B,) 的 rewards）；B 不是 G 的倍数时报 ValueError。
    【例子】reinforce_pp_advantages([1, 0, 0, 0, 1, 1, 0, 0], 4)：a = [.75, −.25, −.25, −.25, .5, .5, −.5, −.5]，
        再除以 a 的样本标准差（均值是 0）
    """
    r, g = _outcome(rewards, group_size, "reinforce_pp")
    grp = r.reshape(-1, g)
    a = (grp - grp.mean(axis=1, keepdims=True)).reshape(-1)
    if mask is None:
        return whiten(a)
    m = np.asarray(mask, dtype=bool)
    if m.ndim != 2 or m.shape[0] != r.shape[0]:
        raise ValueError(f"mask 必须是 ({r.shape[0]}, L) 的 bool 数组，收到形状 {m.shape}")
    w = whiten(np.broadcast_to(a[:, None], m.shape), m)
    return np.where(m[:, 0], w[:, 0], 0.0)           # 每份解答的有效步从第 0 步开始，各步的值相同


def reinforce_pp_no_baseline_advantages(rewards, mask, gamma=1.0):
    """
    REINFORCE++（不带基线）的优势：verl adv_estimator="reinforce_plus_plus"（Hu 2025，arXiv 2501.03262）[S508]。

    【思路】verl compute_reinforce_plus_plus_outcome_advantage[S508]：结果奖励放在最后一步，
            G_t = Σ_{t' ≥ t} γ^{t' − t} r_{t'}  = γ^{|o_i| − 1 − t} · r_i        折扣回报（γ = algorithm.gamma）
            A = whiten(G)                                                       在整批所有步上白化
        没有组平均：同一道题的其他解答不参与；全对的组白化后也不是 0。不看 group_size（verl 不用 index）[S508]。
    【参数】rewards：(B,) 结果奖励；mask：(B, L) bool（每行的有效步从第 0 步开始）；gamma：0 ~ 1
    【返回】(B, L) 数组（mask 外 0；γ < 1 时一份解答的各步不同）
    【例子】reinforce_pp_no_baseline_advantages([1, 0], np.ones((2, 1), bool)) → [[0.7071], [−0.7071]]
    """
    r = as_float_array("rewards", rewards)
    if r.ndim != 1 or not np.all(np.isfinite(r)):
        raise ValueError(f"reinforce_pp_no_baseline 只支持有限的结果奖励 (B,)，收到形状 {r.shape}")
    m = _step_mask(mask, r.shape[0], "reinforce_pp_no_baseline")
    gamma = as_real("gamma", gamma, 0.0, 1.0)
    to_end = m.sum(axis=1, keepdims=True) - 1 - np.arange(m.shape[1])     # 离最后一步还有几步
    returns = np.where(m, r[:, None] * gamma ** np.maximum(to_end, 0), 0.0)
    return whiten(returns, m)


def opo_advantages(rewards, group_size, mask):
    """
    OPO（Hao et al. 2025，arXiv 2505.23585）[S509]的优势：基线是组内按长度加权的平均奖励。

    【思路】verl compute_opo_outcome_advantage[S509]：b = Σ_j |o_j| r_j / Σ_j |o_j|（同组），A_i = r_i − b。
        不除以标准差；奖励全相同的组 A = 0。长解答在基线里分量更重（它的每一步都在梯度里）。
    【参数】rewards：(B,) 结果奖励；group_size：G；mask：(B, L) bool（|o_i| = 每行的步数）
    【返回】(B,) 数组
    【例子】opo_advantages([1, 0], 2, [[T, T, T], [T, F, F]]) → b = 3/4，A = [0.25, −0.75]
    """
    r, g = _outcome(rewards, group_size, "opo")
    n = _step_mask(mask, r.shape[0], "opo").sum(axis=1).reshape(-1, g).astype(float)
    grp = r.reshape(-1, g)
    return (grp - (n * grp).sum(axis=1, keepdims=True) / np.maximum(n.sum(axis=1, keepdims=True), 1)).reshape(-1)


def gpg_advantages(rewards, group_size):
    """
    GPG（Chu et al. 2025，arXiv 2504.02546）的优势[S510]：A_i = α (r_i − 组平均)，α = B / 奖励非零的份数（至少 1）。

    【思路】verl compute_gpg_outcome_advantage（f_norm = 1）[S510]：不除以标准差；α 把"整批里有多少份拿到了奖励"
        折算进来：对的越少，α 越大。
    【参数】rewards：(B,) 结果奖励；group_size：G
    【返回】(B,) 数组
    【例子】gpg_advantages([1, 0, 0, 0], 4) → α = 4，A = [3, −1, −1, −1]
    """
    r, g = _outcome(rewards, group_size, "gpg")
    grp = r.reshape(-1, g)
    alpha = r.shape[0] / max(int(np.count_nonzero(r)), 1)
    return (alpha * (grp - grp.mean(axis=1, keepdims=True))).reshape(-1)


__all__ = ["WHITEN_EPS", "gpg_advantages", "opo_advantages", "reinforce_pp_advantages",
           "reinforce_pp_no_baseline_advantages", "whiten"]
