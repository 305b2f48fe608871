"""
verl 和 TRL 里另外几种策略损失[S518]（SAPO、GMPO、GPG、Clip-Cov、KL-Cov、VESPO）和 rollout 修正，每个连同对本步 log π 的导数。

【思路】和 toyllm.rl.surrogates 一样：输入是普通的 (B, L) 数组，输出 Surrogate(loss, clipped_low, clipped_high)，
    挂上 .dloss_dlogp；objective.rl_objective 只用它。每个损失在文件末尾登记一行（register_policy_loss），
    之后就是 RLConfig.policy_loss 的一个取值：新加一个损失 = 一个函数 + 一行登记。公式照 verl（commit b178a3cd）的
    verl/trainer/ppo/core_algos.py 和 TRL（commit f2cd5771）的 trl/trainer/grpo_trainer.py 写，测试用 numpy 从它们的
    代码独立地再算一遍[S518]。
    序列级的损失（GMPO）把一份解答的损失 l_i 抄到它的每一步，.dloss_dlogp 写成 |o_i| · ∂l_i/∂log π_t：
    聚合权重在一行里相同（losses.aggregation_weights），所以 Σ_t w_t l_i 的导数正好是 w_t · |o_i| · ∂l_i/∂log π_t
    （GSPO 也是这样，见 surrogates.gspo_surrogate）。
"""

import math

import numpy as np

from .._checks import as_float_array, as_generator, as_real
from ..rl.surrogates import Surrogate, register_policy_loss, truncated_is_weights

LOG_RATIO_BOUND = 20.0
"""verl 的 SAPO、CISPO 和 rollout 修正先把 log ρ 夹在 [−20, 20]（core_algos.py、rollout_corr_helper.py 的 SAFETY_BOUND）[S519]。"""


def _arrays(mask, **named):
    """检查 (B, L) 的 mask 和同形状（或 (B,)，按行铺开）的有限数组；返回 (mask, 数组……)。"""
    m = np.asarray(mask, dtype=bool)
    if m.ndim != 2:
        raise ValueError(f"mask 必须是 (B, L) 的 bool 数组，收到形状 {m.shape}")
    out = [m]
    for name, value in named.items():
        a = as_float_array(name, value)
        if a.shape == m.shape[:1]:
            a = np.broadcast_to(a[:, None], m.shape)
        if a.shape != m.shape:
            raise ValueError(f"{name} 的形状必须是 ({m.shape[0]},) 或 {m.shape}，收到 {a.shape}")
        a = np.where(m, a, 0.0)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} 在 mask 内必须都是有限的数（不能是 NaN 或 ±inf）")
        out.append(a)
    return out


def _none(m):
    return np.zeros(m.shape, bool)


def sapo_surrogate(log_ratio, adv, mask, tau_pos=1.0, tau_neg=1.05):
    """
    SAPO（Qwen 团队 2025，arXiv 2511.20347）[S518]：用一条光滑的"门"代替硬裁剪。

    【思路】ρ = exp(clip(log ρ, −20, 20))，τ = τ_pos（A > 0）或 τ_neg（A ≤ 0）：
            f(ρ) = σ(τ (ρ − 1)) · 4 / τ          ρ = 1 时 f = 2/τ、斜率 1（和 −ρA 在 ρ = 1 处一样）
            l = − f(ρ) · A                       导数 ∂l/∂log π = − A · 4σ(1 − σ) · ρ
        ρ 离 1 越远，斜率 4σ(1 − σ) 越小：离策略的步被慢慢"关掉"，而不是一刀切成 0。
        verl policy_loss.loss_mode="sapo"（actor.tau_pos = 1.0、tau_neg = 1.05；它固定用 seq-mean-token-mean 聚合）[S518]；
        TRL loss_type="sapo"（sapo_temperature_pos = 1.0、sapo_temperature_neg = 1.05；按解答平均，和 "grpo" 一样）[S539]。
        TRL 不夹 log ρ；两者只在 |log ρ| > 20 时不同[S539]。
    【参数】log_ratio：(B, L) log π_θ − log π_old；adv：(B,) 或 (B, L)；mask：(B, L) bool；tau_pos、tau_neg：> 0
    【返回】Surrogate（clipped_low / high 全是 False：没有硬裁剪，verl 记 pg_clipfrac = 0[S518]），另有 .dloss_dlogp、.gate = f(ρ)
    【例子】sapo_surrogate(np.zeros((1, 1)), np.array([1.0]), np.ones((1, 1), bool)).loss → [[−2.0]]；
        .dloss_dlogp → [[−1.0]]（ρ = 1 时和 PPO 的梯度相同）
    """
    m, lr, a = _arrays(mask, log_ratio=log_ratio, adv=adv)
    tau_pos = as_real("tau_pos", tau_pos, 0.0, low_open=True)
    tau_neg = as_real("tau_neg", tau_neg, 0.0, low_open=True)
    inside = np.abs(lr) < LOG_RATIO_BOUND
    rho = np.exp(np.clip(lr, -LOG_RATIO_BOUND, LOG_RATIO_BOUND))
    tau = np.where(a > 0, tau_pos, tau_neg)
    sig = 0.5 * (1.0 + np.tanh(0.5 * tau * (rho - 1.0)))          # σ(x) = (1 + tanh(x/2)) / 2，不会溢出
    gate = sig * 4.0 / tau
    out = Surrogate(np.where(m, -gate * a, 0.0), _none(m), _none(m))
    out.dloss_dlogp = np.where(m & inside, -a * 4.0 * sig * (1.0 - sig) * rho, 0.0)
    out.gate = gate
    return out


def gmpo_surrogate(log_ratio, adv, mask, eps_low=0.4, eps_high=0.4):
    """
    GMPO（Zhao et al. 2025，arXiv 2507.20673）[S520]：一份解答的比率是每步（裁剪后的）比率的几何平均。

    【思路】verl policy_loss.loss_mode="geo_mean" 的做法[S520]，x_t = log ρ_t，s = sign(A_t)：
            x̃_t = s · min(s · x_t, s · clip(x_t, −ε_low, ε_high))      在 log 空间、按 A 的符号只裁一边
            r_i = exp( Σ_t x̃_t / |o_i| )，Ā_i = Σ_t A_t / |o_i|
            l_i = − Ā_i · r_i，loss = mean_i l_i（verl 用 torch.mean：全空的行也算在 B 里）
        ∂l_i/∂log π_t = − Ā_i r_i / |o_i|（x_t 没被裁时），否则 0。这里把 l_i 抄到每一步，
        .dloss_dlogp = − Ā_i r_i（见模块说明）；配 loss_agg="seq-mean"（除以 B）正好是 verl 的数[S520]。
        verl 的 GMPO 示例（examples/gmpo_trainer/run_qwen2_5-7b_math.sh）用 clip_ratio_low = clip_ratio_high = 0.4[S520]
        （裁的是 log ρ：ρ ∈ [e^−0.4, e^0.4]）。TRL 的 GRPOTrainer 没有 GMPO，另有实验性的 GMPOTrainer[S544]
        （trl/experimental/gmpo/gmpo_trainer.py）。
    【参数】log_ratio：(B, L)；adv：(B,) 或 (B, L)；mask：(B, L) bool；eps_low、eps_high：≥ 0（log ρ 的裁剪区间）
    【返回】Surrogate：clipped_low = x_t 被裁 & A < 0，clipped_high = x_t 被裁 & A > 0（verl 的 pg_clipfrac_lower /
        pg_clipfrac[S520]）；另有 .dloss_dlogp、.seq_ratio（每份解答的 r_i）
    【例子】gmpo_surrogate(np.log([[1.1, 1.0]]), np.array([1.0]), np.ones((1, 2), bool)).seq_ratio → [√1.1 ≈ 1.0488]
    """
    m, x, a = _arrays(mask, log_ratio=log_ratio, adv=adv)
    eps_low = as_real("eps_low", eps_low, 0.0, allow_inf=True)
    eps_high = as_real("eps_high", eps_high, 0.0, allow_inf=True)
    s = np.sign(a)
    xc = np.clip(x, -eps_low, eps_high)
    x_min = s * np.minimum(s * x, s * xc)
    n = m.sum(axis=1)
    r = np.exp((x_min * m).sum(axis=1) / (n + 1e-8))
    a_bar = (a * m).sum(axis=1) / (n + 1e-8)
    moves = (s != 0) & (s * x <= s * xc)                # x̃ 跟着 x 动的步
    clipped = m & (x != xc)
    out = Surrogate(np.where(m, -(a_bar * r)[:, None], 0.0), clipped & (a < 0), clipped & (a > 0))
    out.dloss_dlogp = np.where(m & moves, (-a_bar * r * n / (n + 1e-8))[:, None], 0.0)
    out.seq_ratio = r
    return out


def gpg_surrogate(adv, logp, mask):
    """
    GPG（Chu et al. 2025，arXiv 2504.02546）：最朴素的策略梯度[S521] l = −A · log π，没有比率、没有裁剪。

    【思路】导数 ∂l/∂log π = −A。verl policy_loss.loss_mode="gpg"（配 adv_estimator="gpg"[S510]：
        A = α (r − 组平均)，α = B / 奖励非零的份数，是 verl 代码的算法，见 toyllm.peers.advantages.gpg_advantages）。
        μ > 1 时也不看 π_old：每次更新都是同一个 −A ∇log π。TRL 没有 GPG；CS336 的 naive 损失是同一个公式[S502]
        （toyllm.peers.cs336.naive_policy_gradient_loss，它接受任何实数，这里的 log π 来自模型）。
    【参数】adv：(B,) 或 (B, L)；logp：(B, L) log π_θ；mask：(B, L) bool
    【返回】Surrogate（不裁剪），另有 .dloss_dlogp = −A
    【例子】gpg_surrogate(np.array([2.0]), np.log([[0.5]]), np.ones((1, 1), bool)).loss → [[2 log 2 ≈ 1.386]]
    """
    m, a, lp = _arrays(mask, adv=adv, logp=logp)
    out = Surrogate(np.where(m, -a * lp, 0.0), _none(m), _none(m))
    out.dloss_dlogp = np.where(m, -a, 0.0)
    return out


def _covariance(adv, logp, mask):
    """每个有效步的 (A − 平均 A)(log π − 平均 log π)，平均只算 mask 内（Clip-Cov / KL-Cov 挑步用）。"""
    n = max(int(mask.sum()), 1)
    return (adv - adv[mask].sum() / n) * (logp - logp[mask].sum() / n)


def clip_cov_surrogate(log_ratio, adv, logp, mask, eps_low=0.2, eps_high=0.2, *, ratio=2e-4, lb=1.0, ub=5.0,
                       rng=None):
    """
    Clip-Cov（Cui et al. 2025，arXiv 2505.22617[S522] "The Entropy Mechanism of RL for Reasoning LMs"）：
    在 PPO 的裁剪损失上，再随机挑几个"协方差大"的步，截断它们的梯度。

    【思路】verl policy_loss.loss_mode="clip_cov"[S522]：
            l_t = max(−ρA, −clip(ρ, 1 − ε_low, 1 + ε_high)A)        PPO 的裁剪损失（没有 dual-clip）
            cov_t = (A_t − mean A)(log π_t − mean log π)             mask 内求平均
            候选：lb < cov_t < ub、在 mask 内、没被 PPO 裁剪的步
            从候选里**随机**挑 k = max(⌊ratio · N⌋, 1) 个（N = mask 内的步数），l_t 乘 0
        协方差大的步（好动作的概率已经高、或坏动作的概率已经低）是熵下降的主要来源；截断它们的梯度让熵降得慢。
        verl 用 torch.randperm 挑（没有种子参数）[S522]，这里用传进来的 numpy Generator，所以可以重现。
        默认值是 verl 的：clip_cov_ratio = 2e-4、clip_cov_lb = 1、clip_cov_ub = 5（verl/workers/config/actor.py）[S522]。
    【参数】log_ratio、logp：(B, L)；adv：(B,) 或 (B, L)；mask：(B, L) bool；eps_low、eps_high：≥ 0；
        ratio：> 0；lb < ub；rng：numpy.random.Generator（必须给）
    【返回】Surrogate：clipped_low / high 是 PPO 的裁剪（同 clipped_surrogate）；另有 .dloss_dlogp、
        .selected（被挑中、梯度截断的步；verl 的 pg_clipfrac 就是它在 mask 内的比例[S522]）
    【例子】clip_cov_surrogate(lr, A, logp, m, rng=np.random.default_rng(0)).selected.sum() → 1（N < 1 万步时）
    """
    m, lr, a, lp = _arrays(mask, log_ratio=log_ratio, adv=adv, logp=logp)
    eps_low = as_real("eps_low", eps_low, 0.0, allow_inf=True)
    eps_high = as_real("eps_high", eps_high, 0.0, allow_inf=True)
    ratio = as_real("ratio", ratio, 0.0, low_open=True)
    lb, ub = as_real("lb", lb), as_real("ub", ub)
    as_generator("rng", rng, "；Clip-Cov 随机挑步用")
    rho = np.exp(lr)
    pg1, pg2 = -a * rho, -a * np.clip(rho, 1.0 - eps_low, 1.0 + eps_high)
    by_clip = m & (pg2 > pg1)
    cov = _covariance(a, lp, m)
    cand = np.flatnonzero(m & ~by_clip & (cov > lb) & (cov < ub))
    k = max(int(ratio * int(m.sum())), 1)
    selected = np.zeros(m.size, bool)
    selected[cand[rng.permutation(len(cand))[:k]]] = True
    selected = selected.reshape(m.shape)
    keep = m & ~selected
    out = Surrogate(np.where(keep, np.maximum(pg1, pg2), 0.0), m & (rho < 1.0 - eps_low) & (a < 0),
                    m & (rho > 1.0 + eps_high) & (a > 0))
    out.dloss_dlogp = np.where(keep & ~by_clip, -a * rho, 0.0)
    out.selected = selected
    return out


def kl_cov_surrogate(log_ratio, adv, logp, mask, *, ratio=2e-4, coef=0.1):
    """
    KL-Cov（Cui et al. 2025，arXiv 2505.22617）[S522]：不裁剪；对协方差最大的几个步加一个 |log ρ| 的惩罚。

    【思路】verl policy_loss.loss_mode="kl_cov"[S522]：
            l_t = −ρA                                 每一步（没有裁剪）
            l_t = −ρA + coef · |log ρ|               cov_t 最大的 k = max(1, ⌊ratio · N⌋) 步
        导数 −Aρ，被挑中的步再加 coef · sign(log ρ)（log ρ = 0 时 0，和 torch 的 abs 一样）。
        挑选是确定的（torch.topk）；协方差相同的步，这里取下标小的（torch.topk 没有规定并列时取哪个，
        玩具里同一情境、同一做法、同一优势的步协方差相同，并列很常见）。
        默认值是 verl 的：kl_cov_ratio = 2e-4、ppo_kl_coef = 0.1（verl/workers/config/actor.py 的 PolicyLossConfig）[S522]。
    【参数】log_ratio、logp：(B, L)；adv：(B,) 或 (B, L)；mask：(B, L) bool；ratio：> 0；coef：≥ 0
    【返回】Surrogate（不裁剪），另有 .dloss_dlogp、.selected（加了惩罚的步）
    【例子】μ = 1 时 log ρ = 0：惩罚和它的导数都是 0，KL-Cov 就是 −ρA
    """
    m, lr, a, lp = _arrays(mask, log_ratio=log_ratio, adv=adv, logp=logp)
    ratio = as_real("ratio", ratio, 0.0, low_open=True)
    coef = as_real("coef", coef, 0.0)
    rho = np.exp(lr)
    valid = np.flatnonzero(m)
    selected = np.zeros(m.size, bool)
    if len(valid):
        cov = _covariance(a, lp, m).ravel()[valid]
        k = max(1, int(len(valid) * ratio))
        selected[valid[np.argsort(-cov, kind="stable")[:k]]] = True
    selected = selected.reshape(m.shape)
    out = Surrogate(np.where(m, -a * rho + np.where(selected, coef * np.abs(lr), 0.0), 0.0), _none(m), _none(m))
    out.dloss_dlogp = np.where(m, -a * rho + np.where(selected, coef * np.sign(lr), 0.0), 0.0)
    out.selected = selected
    return out


def vespo_surrogate(log_ratio, adv, logp, mask, k_pos=2.0, lambda_pos=3.0, k_neg=3.0, lambda_neg=2.0):
    """
    VESPO（TRL loss_type="vespo"，arXiv 2602.10693）[S540]：序列级比率 w 的光滑 Gamma 权重 φ(w)，不求导，乘 −A log π。

    【思路】TRL GRPOTrainer.get_gamma_weights 的做法[S540]：
            log w_i = clip( Σ_t clip(log ρ_t, −20, 20),  log 1e-8, 20 )      是"和"，不是平均
            k, λ = (k_pos, λ_pos)（A ≥ 0）或 (k_neg, λ_neg)（A < 0）；λ 至少 1e-4
            φ = exp( λ + k log w − λ w )                φ(1) = 1；w 离 1 越远 φ 越小
            l_t = − sg(φ_i) · A · log π_t               导数 ∂l/∂log π = −φ_i A（和 CISPO 一样，梯度总是流过 log π）
        TRL 用 dapo 的聚合（全局步数），对应 loss_agg="token-mean"。importance_sampling_level 不是 "token" 时 TRL 只警告、
        不报错，而且 vespo 的 w 总是自己从逐步的 log 比率求和，不看这个选项[S582]；本包的 vespo 也只有这一种。默认值是 TRL 的：vespo_k_pos = 2、vespo_lambda_pos = 3、vespo_k_neg = 3、
        vespo_lambda_neg = 2（trl/trainer/grpo_config.py）[S540]。verl 没有 VESPO[S540]。
    【参数】log_ratio、logp：(B, L)；adv：(B,) 或 (B, L)；mask：(B, L) bool；k_pos、k_neg：≥ 0；lambda_pos、lambda_neg：≥ 0
    【返回】Surrogate（不裁剪），另有 .dloss_dlogp、.phi（每步的 φ，同一份解答相同）
    【例子】μ = 1 时 w = 1、φ = 1：VESPO 就是 −A log π（GPG 的损失）
    """
    m, lr, a, lp = _arrays(mask, log_ratio=log_ratio, adv=adv, logp=logp)
    ks = [as_real(n, v, 0.0) for n, v in (("k_pos", k_pos), ("lambda_pos", lambda_pos), ("k_neg", k_neg),
                                          ("lambda_neg", lambda_neg))]
    low = math.log(1e-8)
    log_w = np.clip((np.clip(lr, -LOG_RATIO_BOUND, LOG_RATIO_BOUND) * m).sum(axis=1, keepdims=True), low,
                    LOG_RATIO_BOUND)
    nonneg = a >= 0
    k = np.where(nonneg, ks[0], ks[2])
    lam = np.maximum(np.where(nonneg, ks[1], ks[3]), 1e-4)
    with np.errstate(over="ignore", invalid="ignore"):
        phi = np.nan_to_num(np.exp(lam + k * log_w - lam * np.exp(log_w)), nan=0.0, posinf=0.0, neginf=0.0)
    out = Surrogate(np.where(m, -phi * a * lp, 0.0), _none(m), _none(m))
    out.dloss_dlogp = np.where(m, -phi * a, 0.0)
    out.phi = phi
    return out


def rollout_correction(logp_old, logp_behaviour, mask, level="token", cap=2.0, rejection=None, threshold=2.0):
    """
    rollout 修正：π_old 和采样策略 π_behaviour 不同时（异步、推理引擎的数值误差），每步的权重和被拒绝的步。

    【思路】verl 的 rollout_corr_helper.py[S528]（compute_rollout_correction_weights、compute_rollout_rejection_mask），
        log r_t = clip(log π_old − log π_behaviour, −20, 20)：
            level="token"：w_t = min(π_old / π_behaviour, C)           逐步的 TIS（有偏、方差小；就是 truncated_is_weights，
                                                                        它不先夹 ±20，只在 log r < −20 时和 verl 不同）
            level="sequence"：w_i = min(exp(clip(Σ_t log r_t, −20, 20)), C)，铺到每一步（无偏、方差大；verl "sequence"）
            rejection="token_k1"：k1_t = −log r_t，k1 不在 [log(1/τ), log τ] 里的步被拒绝（从 mask 里去掉：
                不进损失，也不算在聚合的分母里；verl 把 response_mask 改掉）
        C = cap（verl rollout_is_threshold，默认 2；None 或 inf 不截断），τ = threshold（verl rollout_rs_threshold；
        verl 也接受 "下界_上界" 两个数，这里只接受一个数 τ，下界 1/τ，和 verl 只给一个数时一样）。
    【参数】logp_old、logp_behaviour：(B, L)；mask：(B, L) bool；level："token" / "sequence"；cap：> 0 或 None；
        rejection：None / "token_k1"；threshold：> 1
    【返回】(weights, keep)：(B, L) 权重（mask 外 0）和留下的步（bool，mask 的子集）
    【例子】rollout_correction(np.log([[0.5, 0.9]]), np.log([[0.1, 0.9]]), np.ones((1, 2), bool), "sequence")
        → 权重每步 min(5, 2) = 2；rejection="token_k1" 时第 0 步（π_old/π_beh = 5 > 2）被拒绝
    """
    m, old, beh = _arrays(mask, logp_old=logp_old, logp_behaviour=logp_behaviour)
    if level not in ("token", "sequence"):
        raise ValueError(f"level（rollout 修正的级别）必须是 'token' 或 'sequence'，收到 {level!r}")
    cap = math.inf if cap is None else as_real("cap", cap, 0.0, low_open=True, allow_inf=True)
    log_r = np.clip(old - beh, -LOG_RATIO_BOUND, LOG_RATIO_BOUND)
    if level == "token":
        w = truncated_is_weights(old, beh, cap)
    else:
        w = np.broadcast_to(np.minimum(np.exp(np.clip((log_r * m).sum(axis=1, keepdims=True), -LOG_RATIO_BOUND,
                                                      LOG_RATIO_BOUND)), cap), m.shape)
    keep = m
    if rejection is not None:
        if rejection != "token_k1":
            raise ValueError(f"rejection（拒绝采样）只支持 None 或 'token_k1'，收到 {rejection!r}")
        tau = as_real("threshold", threshold, 1.0, low_open=True)
        keep = m & (-log_r >= -math.log(tau)) & (-log_r <= math.log(tau))
    return np.where(m, w, 0.0), keep


register_policy_loss("sapo", lambda cfg, x: sapo_surrogate(x.log_ratio, x.adv, x.mask, cfg.tau_pos, cfg.tau_neg))
register_policy_loss("geo_mean", lambda cfg, x: gmpo_surrogate(x.log_ratio, x.adv, x.mask, x.eps_low, x.eps_high), clipped=True)
register_policy_loss("gpg", lambda cfg, x: gpg_surrogate(x.adv, x.logp, x.mask))
register_policy_loss("clip_cov", lambda cfg, x: clip_cov_surrogate(x.log_ratio, x.adv, x.logp, x.mask, x.eps_low, x.eps_high,
                                                                   ratio=cfg.clip_cov_ratio, lb=cfg.clip_cov_lb,
                                                                   ub=cfg.clip_cov_ub, rng=x.rng), clipped=True)
register_policy_loss("kl_cov", lambda cfg, x: kl_cov_surrogate(x.log_ratio, x.adv, x.logp, x.mask, ratio=cfg.kl_cov_ratio,
                                                               coef=cfg.ppo_kl_coef))
register_policy_loss("vespo", lambda cfg, x: vespo_surrogate(x.log_ratio, x.adv, x.logp, x.mask, cfg.vespo_k_pos,
                                                             cfg.vespo_lambda_pos, cfg.vespo_k_neg, cfg.vespo_lambda_neg))

__all__ = ["LOG_RATIO_BOUND", "clip_cov_surrogate", "gmpo_surrogate", "gpg_surrogate", "kl_cov_surrogate",
           "rollout_correction", "sapo_surrogate", "vespo_surrogate"]
