"""
熵和 KL：一个离散分布有多不确定、两个分布差多远（玩具模型、精确计算、RL 的熵奖励和小 transformer 都用这两个公式）。

【思路】H(π) = −Σ_j π_j log π_j（单位 nats）：三种做法等概率时 H = log 3，几乎确定时 H ≈ 0。
    π = softmax(z / T) 时它对 logits z 的导数是 ∂H/∂z_j = −π_j (log π_j + H) / T。π_j = 0 的项按 0 · log 0 = 0 处理。
    KL(π ‖ π_ref) = Σ_j π_j (log π_j − log π_ref,j) ≥ 0：精确的 KL（不是 k1 / k2 / k3 那样从采样估计）。
"""

import numpy as np


def entropy_and_grad(probs, logprobs=None, temperature=1.0):
    """
    每一行分布（最后一维）的熵 H 和 ∂H/∂z（π = softmax(z / T)）。

    【参数】probs：(…, K) 数组；logprobs：同一个分布的对数概率（None 时由 probs 算，π = 0 处按 0 log 0 = 0）；
        temperature：> 0（只影响导数）
    【返回】(H：(…) 数组，dH/dz：(…, K) 数组)
    【例子】entropy_and_grad(np.full(3, 1 / 3))[0] → log 3 ≈ 1.0986（均匀时最大，导数是 0）
    """
    pi = np.asarray(probs, dtype=float)
    logpi = np.log(np.where(pi > 0, pi, 1.0)) if logprobs is None else np.asarray(logprobs, dtype=float)
    plogp = np.where(pi > 0, pi * logpi, 0.0)          # π_j log π_j，π_j = 0 的项按 0 · log 0 = 0
    H = -plogp.sum(axis=-1)
    return H, -(plogp + pi * H[..., None]) / temperature




def kl_divergence(probs, logprobs, ref_logprobs):
    """
    每一行（最后一维）的精确 KL(π ‖ π_ref) = Σ_j π_j (log π_j − log π_ref,j)。

    【参数】probs：(…, K) π；logprobs：log π；ref_logprobs：log π_ref（形状都相同）
    【返回】(…) 数组
    【例子】kl_divergence(np.array([0.5, 0.5]), np.log([0.5, 0.5]), np.log([0.25, 0.75])) → 0.144
    """
    return (probs * (logprobs - ref_logprobs)).sum(axis=-1)
