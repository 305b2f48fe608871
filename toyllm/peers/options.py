"""
真实系统的选项：RLConfig 自己的选项是课上讲的（第 6 讲 8.1–8.9 节）；这里的 17 个只为 toyllm.peers 的损失和修正而设。

【思路】import toyllm.peers 时 register_options 把 PeerOptions 登记进 RLConfig：之后 RLConfig(policy_loss="sapo", tau_pos=2.0)、
    preset("clip_cov", clip_cov_ratio=0.05) 都能用，值记在 cfg.peer 里，cfg.tau_pos 读它（没写就是默认值）。
    每个选项要么起作用，要么被 check 拒绝（写明参数名、收到的值、接受什么）。它们起作用的两个地方：
    rollout（陈旧采样的权重：rollout_is、rollout_rs……）和 inputs（交给策略损失之前：序列级比率 is_level、
    δ、聚合的分母 loss_scale_factor）。这里也登记 toyllm.peers 的 6 个预设。
【策略损失】（policy_loss 的取值，公式在 toyllm.peers.losses）
    "sapo"：losses.sapo_surrogate，光滑的门 σ(τ(ρ−1))·4/τ 代替裁剪（verl loss_mode="sapo"，verl 固定按解答平均；TRL
    loss_type="sapo"）[S518][S539]；"geo_mean"：GMPO，losses.gmpo_surrogate，逐步在 log 空间裁剪后取几何平均（verl
    loss_mode="geo_mean"，verl 不看聚合，等于 loss_agg="seq-mean"；TRL 只有实验性的 GMPOTrainer）[S520][S544]；"gpg"：l = −A log
    π（verl loss_mode="gpg"；TRL 没有）[S521]；"clip_cov" / "kl_cov"：按协方差挑步截断梯度 / 加 |log ρ| 惩罚（verl loss_mode="clip_cov"
    / "kl_cov"，verl/trainer/ppo/core_algos.py；TRL 没有）[S522]；"vespo"：序列级比率的 Gamma 权重 φ(w)·(−A log π)（TRL
    loss_type="vespo"，trl/trainer/grpo_trainer.py；verl 没有）[S540]"
"""

from dataclasses import dataclass

import numpy as np

from ..rl.config import IS_LEVELS, option, register_options
from ..rl.losses import AGGREGATION_TABLE
from ..rl.presets import PRESETS, register_preset
from .losses import rollout_correction


@dataclass(frozen=True)
class PeerOptions:
    """真实系统的选项（字段的写法同 RLConfig：默认值、中文名、说明、接受什么）。不单独用：写在 RLConfig(...) 里。"""
    rollout_is: str = option(
        "token", "rollout IS 级别", "陈旧采样的重要性比率：token（逐步 min(ρ_t, C)）/ sequence（整份解答 min(Π ρ_t, C)）",
        "verl algorithm.rollout_correction.rollout_is（verl/trainer/ppo/rollout_corr_helper.py）；TRL vllm_importance_sampling_mode"
        " 的 token_truncate 对应 \"token\"[S543]。只对 staleness > 0（= 0 时 π_old = π_behaviour，权重恒为 1）", IS_LEVELS)
    rollout_rs: str = option(
        None, "rollout 拒绝", "陈旧采样的拒绝采样：None（不拒绝）/ token_k1（π_behaviour/π_old 不在 [1/τ, τ] 的步去掉）",
        "verl algorithm.rollout_correction.rollout_rs=\"token_k1\"：被拒绝的步从 mask 去掉（不进损失，也不算进聚合的分母）[S528]。"
        "verl 的其他 seq_* 选项本包没有[S528]", ("token_k1",), off=(None,))
    rollout_rs_threshold: float = option(2.0, "拒绝的界 τ", "拒绝采样的界 τ（> 1；下界 1/τ）",
                                          "verl rollout_rs_threshold（一个数 τ 时下界是 1/τ；verl 的 \"下界_上界\" 写法本包没有）[S528]",
                                          above=1.0)
    loss_scale_factor: int = option(
        None, "聚合的分母", "seq-mean-token-sum-norm 的分母（None = 补齐后的长度 L；≥ 1）",
        "verl actor.loss_scale_factor：训练中用同一个常数代替随批变化的 L[S514]。只配 loss_agg=\"seq-mean-token-sum-norm\"",
        low=1, off=(None,))

    is_level: str = option(
        "token", "比率的级别", "重要性比率：token（每步的 ρ）/ sequence（每份解答 s = exp(mean_t log ρ)）",
        "TRL importance_sampling_level（trl/trainer/grpo_config.py）[S537]。\"sequence\" 可配 policy_loss=\"ppo\"（裁剪区间仍是 "
        "eps_low / eps_high；verl 的 \"gspo\" 用 seq_eps_low / seq_eps_high）、\"cispo\"、\"sapo\"[S537]。"
        "TRL 的 GSPO 是 importance_sampling_level=\"sequence\" 配 loss_type=\"grpo\"（本包 loss_agg=\"seq-mean\"，"
        "to_trl 照 loss_agg 换算）：配 \"bnpo\" / \"dr_grpo\" / \"dapo\" / \"cispo\" 时 TRL 警告这些损失把每步的贡献加起来，"
        "等于按解答长度给序列加权，不再是论文的按序列的目标[S537]。"
        "gspo、geo_mean、vespo 自己就是序列级的，不接受它[S516]。序列级时裁剪比例按 TRL 的算法数**解答**（被裁的解答 / B），"
        "verl 的 \"gspo\" 数的是步[S537]", IS_LEVELS)
    delta: float = option(
        None, "TRL δ", "TRL 的 delta（None = 不用；> 1 + eps_high）：A < 0 的步 ρ 最多算到 δ[S536]",
        "TRL GRPOConfig.delta（INTELLECT-2，arXiv 2505.07291；trl/trainer/grpo_trainer.py 把 ρ clamp 到 ≤ δ 再取 min）[S536]。"
        "δ > 1 + ε_high 时它就是 verl 的 dual-clip（actor.clip_ratio_c = δ），这里用同一个实现（clipped_surrogate 的 "
        "clip_ratio_c）；δ ≤ 1 + ε_high 时 TRL 连 A > 0 的步也截，本包不提供[S536]。只配 policy_loss=\"ppo\"、is_level=\"token\"，"
        "不能和 clip_ratio_c 同时给", above=1.0, off=(None,))
    tau_pos: float = option(1.0, "SAPO τ_pos", "SAPO 的门对 A > 0 的温度（> 0）", "verl actor.tau_pos；TRL sapo_temperature_pos[S518][S539]", above=0.0)
    tau_neg: float = option(1.05, "SAPO τ_neg", "SAPO 的门对 A ≤ 0 的温度（> 0）", "verl actor.tau_neg；TRL sapo_temperature_neg[S518][S539]", above=0.0)
    clip_cov_ratio: float = option(2e-4, "Clip-Cov 比例", "Clip-Cov 截断梯度的步占多少（> 0；至少 1 步）",
                                    "verl actor.policy_loss.clip_cov_ratio（默认 2e-4）[S522]", above=0.0)
    clip_cov_lb: float = option(1.0, "Clip-Cov 下界", "Clip-Cov 只在协方差 > 它的步里挑",
                                 "verl actor.policy_loss.clip_cov_lb（默认 1.0）[S522]")
    clip_cov_ub: float = option(5.0, "Clip-Cov 上界", "Clip-Cov 只在协方差 < 它的步里挑",
                                 "verl actor.policy_loss.clip_cov_ub（默认 5.0）[S522]")
    kl_cov_ratio: float = option(2e-4, "KL-Cov 比例", "KL-Cov 加惩罚的步占多少（> 0；至少 1 步）",
                                  "verl actor.policy_loss.kl_cov_ratio（默认 2e-4）[S522]", above=0.0)
    ppo_kl_coef: float = option(0.1, "KL-Cov 系数", "KL-Cov 的 |log ρ| 惩罚系数", "verl actor.policy_loss.ppo_kl_coef（默认 0.1）[S522]", low=0.0)
    vespo_k_pos: float = option(2.0, "VESPO k+", "VESPO：A ≥ 0 时的幂 k（≥ 0）", "TRL vespo_k_pos（默认 2）[S540]", low=0.0)
    vespo_lambda_pos: float = option(3.0, "VESPO λ+", "VESPO：A ≥ 0 时的衰减 λ", "TRL vespo_lambda_pos（默认 3）[S540]", low=0.0)
    vespo_k_neg: float = option(3.0, "VESPO k−", "VESPO：A < 0 时的幂 k（≥ 0）", "TRL vespo_k_neg（默认 3）[S540]", low=0.0)
    vespo_lambda_neg: float = option(2.0, "VESPO λ−", "VESPO：A < 0 时的衰减 λ", "TRL vespo_lambda_neg（默认 2）[S540]", low=0.0)


def check(cfg):
    """只对某些取值有意义的选项：用在别处时报中文的 ValueError（RLConfig 创建时调用）。"""
    if cfg.delta is not None and (cfg.policy_loss != "ppo" or cfg.is_level != "token" or cfg.clip_ratio_c is not None):
        raise ValueError(f"delta = {cfg.delta:g} 只配 policy_loss=\"ppo\"、is_level=\"token\"、clip_ratio_c=None（δ 就是 dual-clip "
                         f"的 c），收到 policy_loss={cfg.policy_loss!r}、is_level={cfg.is_level!r}、clip_ratio_c={cfg.clip_ratio_c!r}")
    if cfg.delta is not None and not cfg.delta > 1 + cfg.eps_high:
        raise ValueError(f"delta（TRL δ）必须 > 1 + eps_high = {1 + cfg.eps_high:g}，收到 {cfg.delta:g}（δ ≤ 1 + ε_high 时 TRL "
                         "连 A > 0 的步也截，本包没有这个做法）")
    if cfg.is_level == "sequence" and cfg.policy_loss not in ("ppo", "cispo", "sapo"):
        raise ValueError(f"is_level=\"sequence\" 只配 policy_loss=\"ppo\" / \"cispo\" / \"sapo\"，收到 policy_loss="
                         f"{cfg.policy_loss!r}（gspo、geo_mean、vespo 自己就是序列级的；gpg、clip_cov、kl_cov 是逐步的）")
    if AGGREGATION_TABLE[cfg.loss_agg].kind == "sum" and (cfg.policy_loss != "ppo" or cfg.is_level != "sequence"):
        raise ValueError(f"loss_agg=\"luspo\" 只配 policy_loss=\"ppo\"、is_level=\"sequence\"（TRL 的 LUSPO 是序列级比率的裁剪损失"
                         f"乘长度），收到 policy_loss={cfg.policy_loss!r}、is_level={cfg.is_level!r}")
    if cfg.loss_scale_factor is not None and cfg.loss_agg != "seq-mean-token-sum-norm":
        raise ValueError(f"loss_scale_factor = {cfg.loss_scale_factor} 只配 loss_agg=\"seq-mean-token-sum-norm\"，收到 loss_agg="
                         f"{cfg.loss_agg!r}；把它设为 None，或换成那个聚合")


def rollout(cfg, logp_old, logp_behaviour, mask):
    """陈旧采样的权重：逐步截断、不拒绝时交给本包的 truncated_is_weights（返回 None），否则用 toyllm.peers.losses.rollout_correction。"""
    if cfg.rollout_is == "token" and cfg.rollout_rs is None:
        return None
    return rollout_correction(logp_old, logp_behaviour, mask, cfg.rollout_is, cfg.tis_cap, cfg.rollout_rs,
                              cfg.rollout_rs_threshold)


def inputs(cfg, x):
    """交给策略损失之前：序列级比率（s_i = exp(mean_t log ρ_t) 铺到每一步，裁剪比例数解答）、δ、聚合的分母。"""
    if cfg.is_level == "sequence":
        n = np.maximum(x.mask.sum(axis=1, keepdims=True), 1)
        log_ratio = np.where(x.mask, x.log_ratio.sum(axis=1, keepdims=True) / n, 0).astype(x.log_ratio.dtype)
        x = x._replace(log_ratio=log_ratio, ratio=np.exp(log_ratio), per_sequence=True)
    if cfg.delta is not None:                           # TRL 的 δ 就是 dual-clip 的 C（δ > 1 + ε_high）
        x = x._replace(clip_c=cfg.delta)
    return x._replace(scale_factor=cfg.loss_scale_factor)


register_options(PeerOptions, check, rollout, inputs)

_BASE = PRESETS["grpo"]
# REINFORCE++ 不带基线（verl reinforce_plus_plus）：折扣回报（γ = 1）直接整批白化，按步平均
register_preset("reinforce_pp_no_baseline", _BASE.replace(advantage="reinforce_pp_no_baseline", loss_agg="token-mean"),
                "REINFORCE++ 无基线")
# SAPO：光滑的门代替裁剪（τ = 1 / 1.05），按解答平均（verl 固定如此；TRL sapo 同 grpo）；μ = 4 让 ρ 离开 1
register_preset("sapo", _BASE.replace(policy_loss="sapo", mu=4), "SAPO")
# GMPO（verl geo_mean）：log ρ 裁在 [−0.4, 0.4] 后取几何平均（verl 的 GMPO 示例），对解答平均
register_preset("gmpo", _BASE.replace(policy_loss="geo_mean", mu=4, eps_low=0.4, eps_high=0.4), "GMPO")
# GPG：A = α (r − 组平均)、l = −A log π，按步平均（verl 的 GPG 示例：adv_estimator=gpg、loss_mode=gpg）
register_preset("gpg", _BASE.replace(advantage="gpg", policy_loss="gpg", loss_agg="token-mean"), "GPG")
# Clip-Cov / KL-Cov（The Entropy Mechanism of RL for Reasoning LMs）：verl 的默认比例，按步平均，μ = 4
register_preset("clip_cov", _BASE.replace(policy_loss="clip_cov", loss_agg="token-mean", mu=4), "Clip-Cov")
register_preset("kl_cov", _BASE.replace(policy_loss="kl_cov", loss_agg="token-mean", mu=4), "KL-Cov")

__all__ = ["PeerOptions", "check", "inputs", "rollout"]
