"""
verl 的其他优势估计：REINFORCE++ 不带基线[S508]、OPO、GPG（第 6 讲 8.10 节）。REINFORCE++ 带基线和整批白化 whiten 是课上讲的，
在 toyllm.rl.losses。

【思路】import toyllm.peers 把它们登记进 losses.GROUP_ADVANTAGES（"reinforce_pp_no_baseline"、"opo"、"gpg"），
    group_advantages 按 method 分到这里。
    公式照 verl（commit b178a3cd）verl/trainer/ppo/core_algos.py 的 compute_*_outcome_advantage 写[S513]；
    只支持结果奖励（(B,) 的 rewards），和 verl 一样。优势不依赖于参数 θ，没有导数要写。
"""

import numpy as np

from .._checks import as_float_array, as_int, as_real
from ..rl.losses import register_advantage, whiten

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
    verl 的 GPG 优势（adv_estimator="gpg"）[S510]：A_i = α (r_i − 组平均)，α = B / 奖励非零的份数（至少 1）。

    【思路】这是 verl compute_gpg_outcome_advantage（f_norm = 1）的算法[S510]。verl 的文档指向 GPG 论文（Chu et al. 2025，
        arXiv 2504.02546），论文里 α 怎样定义没有对照原文，所以这里只说它是 verl 的做法[S510]。不除以标准差；α 把"整批里有多少份
        拿到了奖励"折算进来：对的越少，α 越大。
    【参数】rewards：(B,) 结果奖励；group_size：G
    【返回】(B,) 数组
    【例子】gpg_advantages([1, 0, 0, 0], 4) → α = 4，A = [3, −1, −1, −1]
    """
    r, g = _outcome(rewards, group_size, "gpg")
    grp = r.reshape(-1, g)
    alpha = r.shape[0] / max(int(np.count_nonzero(r)), 1)
    return (alpha * (grp - grp.mean(axis=1, keepdims=True))).reshape(-1)


register_advantage("reinforce_pp_no_baseline", lambda r, g, mask, gamma: reinforce_pp_no_baseline_advantages(r, mask, gamma),
                   masked=True)
register_advantage("opo", lambda r, g, mask, gamma: opo_advantages(r, g, mask), masked=True)
register_advantage("gpg", lambda r, g, mask, gamma: gpg_advantages(r, g))

__all__ = ["gpg_advantages", "opo_advantages", "reinforce_pp_no_baseline_advantages"]
