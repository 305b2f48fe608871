"""
RL 的配置：所有算法都是同一个循环，一个 RLConfig 的不同取值（第 6 讲"从 REINFORCE 到 DAPO"）。

【思路】REINFORCE、RLOO、GRPO、Dr. GRPO、PPO、DAPO 的差别只在几个选项：优势怎么算、损失怎么聚合、
    每批更新几次、裁剪区间、KL、动态采样。每个选项的中文名和说明只写一次（字段的 metadata），
    RLConfig 的文档、预设对照表和维护者的命令行 tools/train_cli.py 的帮助都从这里生成。
"""

import dataclasses
import difflib
import math
import types
from dataclasses import dataclass, field

from .._checks import as_bool, as_choice, as_int, as_list, as_real
from ..text import display_width, pad
from .losses import (ADVANTAGES, AGGREGATION_TABLE, AGGREGATIONS, CISPO_CLIPS, GROUP_ADVANTAGES, IS_LEVELS,
                     KL_ESTIMATORS, POLICY_LOSSES, SCALES)

ADVANTAGE_ESTIMATORS = GROUP_ADVANTAGES + ("gae",)
"""RLConfig.advantage 接受的全部取值："gae" 用学到的 critic（rl/critic.py），不是按组算的。
公式的选项（ADVANTAGES、SCALES、AGGREGATIONS、KL_ESTIMATORS……）写在 losses 里，这里只是导入。"""
ON_SHORT = ("train", "raise")
REWARDS = ("outcome", "process", "procedure")
OPTIMIZERS = ("sgd", "adam")


def _option(default, name, help, more="", choices=None, *, low=None, high=None, above=None, off=None):
    """
    一个选项：默认值 + 中文名 name + 一句说明 help（命令行帮助用）+ 细节 more（只进文档）+ 接受什么。

    【参数】choices：可选的值；low / high：闭区间的界；above：必须严格大于它；
        off：表示"不用"的值，(None,) 或 (None, inf)（都记为 None：配置要能写进标准 JSON）
    """
    return field(default=default, metadata={"name": name, "help": help, "more": more, "choices": choices,
                                            "low": low, "high": high, "above": above, "off": off})


def _check_option(f, value):
    """按字段的类型和 metadata 检查一个选项，返回规整后的值；报错的参数名写成 "lr（学习率）"。"""
    m = f.metadata
    label = f"{f.name}（{m['name']}）"
    if value is None and m["off"]:
        return None
    if m["choices"] is not None:
        return as_choice(label, value, m["choices"])
    if f.type is bool:
        return as_bool(label, value)
    if f.type is int:
        return as_int(label, value, low=m["low"])
    low, low_open = (m["low"], False) if m["above"] is None else (m["above"], True)
    value = as_real(label, value, low, m["high"], low_open=low_open, allow_inf=math.inf in (m["off"] or ()))
    return None if value == math.inf else value


@dataclass(frozen=True)
class RLConfig:
    """
    一次 RL 训练的全部选项。所有算法都是这个配置的不同取值（见 PRESETS）。

    【思路】frozen dataclass：创建后不能修改（cfg.lr = 1 会报错），要改就用 cfg.replace(lr=1) 得到一个新配置。
        这样一个配置可以放心地在预设表、历史记录、保存的文件之间共享，不会被谁悄悄改掉。
        创建时检查每一个选项，错误用中文说明（参数名、收到的值、接受什么）。
    【参数】（括号里是真实系统的对应选项）
{options}
    【返回】RLConfig
    【边界】未知的选项名报 TypeError，并提示最像的选项名；group_size < 2、eps < 0、mu < 1、lr 不是有限的数……
        都报中文的 ValueError。bool 选项必须真的是 True / False（不接受 0 / 1）。
    【例子】
        RLConfig()                                      # 默认 = GRPO 预设
        RLConfig(mu=4, eps_high=0.28)
        PRESETS["dapo"].replace(iterations=50)
        RLConfig(group_size=1)   # ValueError: group_size（组大小 G） 必须 >= 2，收到 1
    【Python 小知识】@dataclass(frozen=True) 自动生成 __init__、__repr__、__eq__，并禁止给属性赋值；
        在 __post_init__ 里要"修改"字段只能用 object.__setattr__(self, 名字, 值)。
        field(metadata={...}) 给字段挂上任意说明：这里的文档和命令行帮助都是从它生成的。
    """
    iterations: int = _option(200, "迭代次数", "迭代次数（≥ 0）", low=0)
    batch_problems: int = _option(32, "每次的题数", "每次迭代训练用几道题（≥ 1）",
                                  "TRL 里是 per_device_train_batch_size / num_generations", low=1)
    group_size: int = _option(8, "组大小 G", "每道题采样几份解答 G（≥ 2）",
                              "TRL num_generations；verl actor_rollout_ref.rollout.n", low=2)
    lr: float = _option(2.0, "学习率", "学习率（有限、≥ 0）",
                        "TRL learning_rate。optimizer='sgd' 时参数 −= lr × 梯度；真实系统用 AdamW", low=0.0)
    advantage: str = _option(
        "grpo", "优势", "优势：none（REINFORCE）/ mean（组平均基线）/ rloo（留一法）/ grpo（再除以标准差）",
        "\"none\"：A = r，没有基线（CS336 作业 5 的 no_baseline）；\"mean\"：A = r − 组平均（Dr. GRPO；"
        "TRL scale_rewards=\"none\"）；\"rloo\"：A = r − 同组其他人的平均 = G/(G−1)·(r − 组平均)（TRL RLOOTrainer；"
        "verl adv_estimator=rloo）；\"grpo\"：A = (r − 组平均) / (标准差 + std_eps)（DeepSeekMath；verl adv_estimator=grpo）；"
        "\"reinforce_pp\"：先减组平均，再在整批（所有步）上白化 (a − 均值) / √(方差 + 1e-8)（verl "
        "adv_estimator=reinforce_plus_plus_baseline；奖励全相同的组白化后不再是 0）；"
        "\"reinforce_pp_no_baseline\"：折扣回报 γ^{|o|−1−t}·r（γ = gamma），不减组平均，直接整批白化（verl "
        "adv_estimator=reinforce_plus_plus）；\"opo\"：A = r − Σ|o_j| r_j / Σ|o_j|，按长度加权的组基线（verl adv_estimator=opo）；"
        "\"gpg\"：A = α (r − 组平均)，α = B / 奖励非零的份数（verl adv_estimator=gpg）。这三个 TRL 都没有；"
        "\"gae\"：学到的价值表 V(s) 和 GAE(γ, λ)，再整批白化（verl adv_estimator=gae；见 rl/critic.py）",
        ADVANTAGE_ESTIMATORS)
    scale_rewards: str = _option(
        "group", "标准差范围", "GRPO 的标准差：group（同组）/ batch（整批）/ none（不除）",
        "只对 advantage=\"grpo\" 有用。\"group\" 是 TRL 默认；\"batch\" 是 TRL scale_rewards=\"batch\"：组中心化的奖励除以"
        "整批奖励的标准差（这不是 verl 的 REINFORCE++，那个是 advantage=\"reinforce_pp\"）；"
        "\"none\" 等于 \"mean\"（verl norm_adv_by_std_in_grpo=False）", SCALES)
    std_eps: float = _option(1e-4, "std_eps", "除以标准差时加的小数（> 0）", "TRL 用 1e-4，verl 用 1e-6", above=0.0)
    loss_agg: str = _option(
        "seq-mean", "损失聚合", "损失聚合：seq-mean（GRPO）/ token-mean（DAPO）/ constant（Dr. GRPO），或 verl / TRL 的名字",
        "完整的归一化表见 losses.AGGREGATION_TABLE（B 份解答，第 i 份 |o_i| 步）。"
        "\"seq-mean\"（= verl \"seq-mean-token-mean\" = TRL loss_type=\"grpo\"）：Σ_i (Σ_t l / |o_i|) / B；"
        "\"token-mean\"（= verl \"token-mean\" = TRL \"dapo\" / \"bnpo\"，单卡）：Σ l / Σ|o_i|；"
        "\"constant\"（= TRL \"dr_grpo\"）：Σ l / (B × L_max)，L_max = 训练题里最长的步数（相当于 TRL 的 "
        "max_completion_length）；verl \"seq-mean-token-sum-norm\" 是 Σ l / L_max（L_max 是补齐后的长度），"
        "不除以 B，所以是 constant 的 B 倍（verl actor.loss_scale_factor 可以换掉 L_max，选项 loss_scale_factor）；verl "
        "\"seq-mean-token-sum\"：Σ_i Σ_t l / B。有全空的行时 verl 的两个 seq-mean-* 只除以非空的行数（core_algos.py agg_loss 的 "
        "seq_mask），TRL grpo 和本包 seq-mean 除以 B；TRL \"luspo\"：Σ_i |o_i| l_i / B（配 is_level=\"sequence\"）", AGGREGATIONS)
    mu: int = _option(1, "每批更新次数 μ", "每批数据更新几次 μ（≥ 1）",
                      "TRL num_iterations；verl ppo_epochs。μ = 1 时 ρ ≡ 1，裁剪不会发生", low=1)
    clip: bool = _option(True, "裁剪", "是否裁剪重要性比率",
                         "False 时损失是 −ρA，即带重要性采样的策略梯度")
    eps_low: float = _option(0.2, "ε_low", "裁剪下界 1 − eps_low（0 ~ 1）",
                             "TRL epsilon；verl clip_ratio_low", low=0.0, high=1.0)
    eps_high: float = _option(0.2, "ε_high", "裁剪上界 1 + eps_high（≥ 0；DAPO 0.28）",
                              "TRL epsilon_high；verl clip_ratio_high", low=0.0)
    beta: float = _option(0.0, "KL 系数 β", "KL 惩罚系数 β（≥ 0）",
                          "TRL beta（0.19 版起默认 0，之前 0.04）；verl kl_loss_coef（use_kl_loss）", low=0.0)
    kl_estimator: str = _option("k3", "KL 估计", "损失里的 KL 估计：k1 / k2 / k3（Schulman）",
                                "TRL 用 k3；verl kl_loss_type=\"kl\"（k1）/\"mse\"（k2）/\"low_var_kl\"（k3）",
                                KL_ESTIMATORS)
    dynamic_sampling: bool = _option(False, "动态采样", "动态采样（DAPO）：丢掉奖励全相同的组，再采新题补满",
                                     "verl algorithm.filter_groups.enable")
    max_draws: int = _option(10, "最多采几批", "动态采样时每次迭代最多采几批（≥ 1）",
                             "到了上限就用已经凑到的组训练。verl algorithm.filter_groups.max_num_gen_batches", low=1)
    reward: str = _option("outcome", "奖励", "奖励：outcome（最终答案）/ process（每步的值）/ procedure（每步的做法）",
                          "\"procedure\" 是一个能看懂推理过程的\"完美过程奖励模型\"", REWARDS)
    entropy_coef: float = _option(0.0, "熵奖励系数", "熵奖励系数 c_H（损失里减去 c_H × 熵）",
                                  "verl actor.entropy_coeff；TRL 的 GRPOConfig 没有熵奖励（查于 huggingface/trl 主分支 2026 年初的 "
                                  "grpo_config.py；它的 top_entropy_quantile 只在损失里保留高熵 token，不是熵奖励）")
    temperature: float = _option(1.0, "温度", "采样和计算损失用的温度（> 0）",
                                 "TRL temperature。熵、KL 按这个温度算；留出题上的路径 pass@1 总是按温度 1 算", above=0.0)
    optimizer: str = _option(
        "sgd", "优化器", "优化器：sgd（参数 −= lr × 梯度）/ adam",
        "\"sgd\" 和参考模块的 apply_grads 一样；\"adam\"：β1 = 0.9、β2 = 0.999、ε = 1e-8（TRL / verl 默认的 AdamW "
        "去掉权重衰减），lr 要小得多（约 0.05）。Adam 对梯度的整体缩放不敏感，比较 Dr. GRPO 和 GRPO 时值得打开",
        OPTIMIZERS)
    seed: int = _option(0, "随机种子", "随机种子（≥ 0）：选题和采样都从 numpy.random.default_rng(seed) 来", low=0)
    # ---- 第 6 讲 8.5–8.9 节：critic + GAE、GSPO、CISPO、dual-clip、异步（陈旧）采样 ----
    policy_loss: str = _option(
        "ppo", "策略损失", "策略损失：ppo / gspo / cispo，或 sapo / geo_mean / gpg / clip_cov / kl_cov / vespo",
        "\"ppo\"：losses.clipped_surrogate（verl policy_loss.loss_mode=\"vanilla\"；TRL 默认）；"
        "\"gspo\"：losses.gspo_surrogate，s_i = exp(mean_t log ρ)，按序列裁剪，裁剪区间用 seq_eps_low / seq_eps_high"
        "（verl loss_mode=\"gspo\"；TRL importance_sampling_level=\"sequence\"）；"
        "\"cispo\"：losses.cispo_surrogate，l = −sg(clip(ρ)) A log π（MiniMax-M1；verl \"cispo\"；TRL loss_type=\"cispo\"），"
        "怎么裁剪由 cispo_clip 决定；"
        "\"sapo\"：peer_losses.sapo_surrogate，光滑的门 σ(τ(ρ−1))·4/τ 代替裁剪（verl loss_mode=\"sapo\"，verl 固定按解答平均；"
        "TRL loss_type=\"sapo\"）；\"geo_mean\"：GMPO，peer_losses.gmpo_surrogate，逐步在 log 空间裁剪后取几何平均"
        "（verl loss_mode=\"geo_mean\"，verl 不看聚合，等于 loss_agg=\"seq-mean\"；TRL 没有）；\"gpg\"：l = −A log π"
        "（verl loss_mode=\"gpg\"；TRL 没有）；\"clip_cov\" / \"kl_cov\"：按协方差挑步截断梯度 / 加 |log ρ| 惩罚"
        "（verl loss_mode=\"clip_cov\" / \"kl_cov\"，verl/trainer/ppo/core_algos.py；TRL 没有）；\"vespo\"："
        "序列级比率的 Gamma 权重 φ(w)·(−A log π)（TRL loss_type=\"vespo\"，trl/trainer/grpo_trainer.py；verl 没有）",
        POLICY_LOSSES)
    seq_eps_low: float = _option(3e-4, "GSPO ε_low", "GSPO 序列级比率的裁剪下界 1 − seq_eps_low（0 ~ 1）",
                                 "GSPO 论文和 verl 的 gspo 示例用 3e-4（序列级比率离 1 很近，区间要小得多）", low=0.0, high=1.0)
    seq_eps_high: float = _option(4e-4, "GSPO ε_high", "GSPO 序列级比率的裁剪上界 1 + seq_eps_high（≥ 0）",
                                  "GSPO 论文和 verl 的 gspo 示例用 4e-4", low=0.0)
    cispo_clip: str = _option(
        "verl", "CISPO 的裁剪", "CISPO 的权重怎么裁剪：verl（夹在 [1 − eps_low, 1 + eps_high]）/ trl（只从上面截在 eps_high）",
        "\"verl\"：w = clip(ρ, 1 − eps_low, 1 + eps_high)；\"trl\"：w = min(ρ, eps_high)（TRL clamp(ρ, max=epsilon_high)，"
        "它的文档建议 cispo 用 epsilon_high = 5.0）", CISPO_CLIPS)
    clip_ratio_c: float = _option(
        None, "dual-clip c", "dual-clip 的界 c（None = 不用；> 1）：A < 0 的步损失最多 −c·A",
        "Ye et al. 2019（arXiv 1912.09729）；verl actor.clip_ratio_c，默认 3（verl 的 vanilla 损失默认就开着，TRL 没有）。"
        "l = min(max(−ρA, −clip(ρ)A), −cA)，只对 A < 0：ρ 很大的坏动作不再被无限地推下去", above=1.0, off=(None,))
    gamma: float = _option(1.0, "折扣 γ", "折扣 γ（0 ~ 1；只对 advantage=\"gae\" / \"reinforce_pp_no_baseline\"）",
                           "verl algorithm.gamma（默认 1.0）；Spinning Up gamma（0.99）", low=0.0, high=1.0)
    lam: float = _option(1.0, "GAE λ", "GAE 的 λ（0 ~ 1；只对 advantage=\"gae\"）：1 = 蒙特卡洛回报减 V，0 = 一步 TD",
                         "verl algorithm.lam（默认 1.0）；Spinning Up lam（0.97）", low=0.0, high=1.0)
    critic_lr: float = _option(0.1, "critic 学习率", "价值表 V(s) 的学习率（Adam；有限、≥ 0；只对 advantage=\"gae\"）",
                               "verl critic.optim.lr；Spinning Up vf_lr。价值表用自己的 Adam，和策略的优化器分开", low=0.0)
    vf_coef: float = _option(1.0, "价值损失系数", "价值损失 ½(V − 回报)² 的系数（> 0；只对 advantage=\"gae\"）",
                             "TRL PPOConfig vf_coef（默认 0.1，策略和价值共用一个网络时才要紧）；"
                             "这里价值表是单独的，用 Adam 训练，系数几乎不影响更新的大小", above=0.0)
    on_short: str = _option(
        "train", "凑不满时", "动态采样采了 max_draws 批还凑不满时：train（用凑到的组训练）/ raise（报错停下）",
        "\"train\" 是原来的做法；\"raise\" 和 verl 一样停下（verl 在 max_num_gen_batches 用完时抛错）。"
        "凑不满的次数记在 history.meta[\"short_batches\"]", ON_SHORT)
    staleness: int = _option(0, "陈旧步数 k", "用 k 次更新之前的策略采样（异步 RL；≥ 0，0 = 同步）",
                             "k > 0 时每步再乘截断的重要性比率 min(π_old / π_behaviour, tis_cap)"
                             "（verl rollout correction / TIS）；π_old 是这次迭代开始时的策略", low=0)
    tis_cap: float = _option(2.0, "TIS 上限 C", "截断的重要性比率的上限 C（> 0；None 或 inf 表示不截断；只对 staleness > 0）",
                             "verl rollout_is_threshold（默认 2.0）；TIS 的 C", above=0.0, off=(None, math.inf))
    rollout_is: str = _option(
        "token", "rollout IS 级别", "陈旧采样的重要性比率：token（逐步 min(ρ_t, C)）/ sequence（整份解答 min(Π ρ_t, C)）",
        "verl algorithm.rollout_correction.rollout_is（verl/trainer/ppo/rollout_corr_helper.py）；TRL vllm_importance_sampling_mode"
        " 的 token_truncate 对应 \"token\"。只对 staleness > 0（= 0 时 π_old = π_behaviour，权重恒为 1）", IS_LEVELS)
    rollout_rs: str = _option(
        None, "rollout 拒绝", "陈旧采样的拒绝采样：None（不拒绝）/ token_k1（π_behaviour/π_old 不在 [1/τ, τ] 的步去掉）",
        "verl algorithm.rollout_correction.rollout_rs=\"token_k1\"：被拒绝的步从 mask 去掉（不进损失，也不算进聚合的分母）。"
        "verl 的其他 seq_* 选项本包没有", ("token_k1",), off=(None,))
    rollout_rs_threshold: float = _option(2.0, "拒绝的界 τ", "拒绝采样的界 τ（> 1；下界 1/τ）",
                                          "verl rollout_rs_threshold（一个数 τ 时下界是 1/τ；verl 的 \"下界_上界\" 写法本包没有）",
                                          above=1.0)
    loss_scale_factor: int = _option(
        None, "聚合的分母", "seq-mean-token-sum-norm 的分母（None = 补齐后的长度 L；≥ 1）",
        "verl actor.loss_scale_factor：训练中用同一个常数代替随批变化的 L。只配 loss_agg=\"seq-mean-token-sum-norm\"",
        low=1, off=(None,))

    # ---- verl / TRL 的其他损失（peer_losses.py）。verl 的名字在 verl/workers/config/actor.py，TRL 的在 trl/trainer/grpo_config.py ----
    is_level: str = _option(
        "token", "比率的级别", "重要性比率：token（每步的 ρ）/ sequence（每份解答 s = exp(mean_t log ρ)）",
        "TRL importance_sampling_level（trl/trainer/grpo_config.py）。\"sequence\" 可配 policy_loss=\"ppo\"（裁剪区间仍是 "
        "eps_low / eps_high，这就是 TRL 的 GSPO；verl 的 \"gspo\" 用 seq_eps_low / seq_eps_high）、\"cispo\"、\"sapo\"；"
        "gspo、geo_mean、vespo 自己就是序列级的，不接受它。序列级时裁剪比例按 TRL 的算法数**解答**（被裁的解答 / B），"
        "verl 的 \"gspo\" 数的是步", IS_LEVELS)
    delta: float = _option(
        None, "TRL δ", "TRL 的 delta（None = 不用；> 1 + eps_high）：A < 0 的步 ρ 最多算到 δ",
        "TRL GRPOConfig.delta（INTELLECT-2，arXiv 2505.07291；trl/trainer/grpo_trainer.py 把 ρ clamp 到 ≤ δ 再取 min）。"
        "δ > 1 + ε_high 时它就是 verl 的 dual-clip（actor.clip_ratio_c = δ），这里用同一个实现（clipped_surrogate 的 "
        "clip_ratio_c）；δ ≤ 1 + ε_high 时 TRL 连 A > 0 的步也截，本包不提供。只配 policy_loss=\"ppo\"、is_level=\"token\"，"
        "不能和 clip_ratio_c 同时给", above=1.0, off=(None,))
    tau_pos: float = _option(1.0, "SAPO τ_pos", "SAPO 的门对 A > 0 的温度（> 0）", "verl actor.tau_pos；TRL sapo_temperature_pos", above=0.0)
    tau_neg: float = _option(1.05, "SAPO τ_neg", "SAPO 的门对 A ≤ 0 的温度（> 0）", "verl actor.tau_neg；TRL sapo_temperature_neg", above=0.0)
    clip_cov_ratio: float = _option(2e-4, "Clip-Cov 比例", "Clip-Cov 截断梯度的步占多少（> 0；至少 1 步）",
                                    "verl actor.policy_loss.clip_cov_ratio（默认 2e-4）", above=0.0)
    clip_cov_lb: float = _option(1.0, "Clip-Cov 下界", "Clip-Cov 只在协方差 > 它的步里挑",
                                 "verl actor.policy_loss.clip_cov_lb（默认 1.0）")
    clip_cov_ub: float = _option(5.0, "Clip-Cov 上界", "Clip-Cov 只在协方差 < 它的步里挑",
                                 "verl actor.policy_loss.clip_cov_ub（默认 5.0）")
    kl_cov_ratio: float = _option(2e-4, "KL-Cov 比例", "KL-Cov 加惩罚的步占多少（> 0；至少 1 步）",
                                  "verl actor.policy_loss.kl_cov_ratio（默认 2e-4）", above=0.0)
    ppo_kl_coef: float = _option(0.1, "KL-Cov 系数", "KL-Cov 的 |log ρ| 惩罚系数", "verl actor.policy_loss.ppo_kl_coef（默认 0.1）", low=0.0)
    vespo_k_pos: float = _option(2.0, "VESPO k+", "VESPO：A ≥ 0 时的幂 k（≥ 0）", "TRL vespo_k_pos（默认 2）", low=0.0)
    vespo_lambda_pos: float = _option(3.0, "VESPO λ+", "VESPO：A ≥ 0 时的衰减 λ", "TRL vespo_lambda_pos（默认 3）", low=0.0)
    vespo_k_neg: float = _option(3.0, "VESPO k−", "VESPO：A < 0 时的幂 k（≥ 0）", "TRL vespo_k_neg（默认 3）", low=0.0)
    vespo_lambda_neg: float = _option(2.0, "VESPO λ−", "VESPO：A < 0 时的衰减 λ", "TRL vespo_lambda_neg（默认 2）", low=0.0)

    def __new__(cls, *args, **kwargs):
        names = [f.name for f in dataclasses.fields(cls)]
        if len(args) > len(names):
            raise TypeError(f"RLConfig 最多接受 {len(names)} 个位置参数，收到 {len(args)} 个；建议写成 RLConfig(lr=1.0, ...)")
        for key in kwargs:
            if key not in names:
                close = difflib.get_close_matches(str(key), names, n=1)
                hint = f"你是不是想写 {close[0]!r}？" if close else ""
                raise TypeError(f"RLConfig 没有选项 {key!r}。{hint}可用的选项：{'、'.join(names)}")
        return super().__new__(cls)

    def __post_init__(self):
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, _check_option(f, getattr(self, f.name)))
        _check_combination(self)

    def replace(self, **changes):
        """返回一个改了几个选项的新配置（原配置不变）。【例子】PRESETS["grpo"].replace(mu=4, lr=1.0)"""
        return dataclasses.replace(self, **changes)

    def to_dict(self):
        """全部选项 {名字: 值}（按定义顺序），可以直接写进 JSON。"""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def _check_combination(cfg):
    """只对某些取值有意义的选项：用在别处时报错（每个选项要么起作用，要么被拒绝）。"""
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
    if not cfg.clip and cfg.policy_loss not in ("ppo", "cispo", "geo_mean", "clip_cov"):
        raise ValueError(f"clip=False 只配用 eps_low / eps_high 裁剪的 policy_loss（ppo、cispo、geo_mean、clip_cov），"
                         f"收到 policy_loss={cfg.policy_loss!r}（它不用这两个区间，clip 对它不起作用）")


RLConfig.__doc__ = RLConfig.__doc__.replace("{options}", "\n".join(
    f"        {f.name}：{f.metadata['help']}" + (f"。{f.metadata['more']}" if f.metadata["more"] else "")
    for f in dataclasses.fields(RLConfig)))


OPTION_NAMES = {f.name: f.metadata["name"] for f in dataclasses.fields(RLConfig)}
"""每个选项的中文名（打印表格用）。"""

_BASE = RLConfig()
PRESETS = types.MappingProxyType({
    # 无基线：奖励直接当权重，每份解答按步平均（CS336 作业 5 的 no_baseline）；不是 Williams 按步求和的 REINFORCE
    "reinforce": _BASE.replace(advantage="none"),
    # RLOO：留一法基线（TRL RLOOTrainer；verl adv_estimator=rloo）
    "rloo": _BASE.replace(advantage="rloo"),
    # GRPO（DeepSeekMath）：组内标准化，按解答平均；β = 0 是 TRL 0.19 起的默认
    "grpo": _BASE,
    # Dr. GRPO：去掉"除以标准差"（难度偏差）和"除以长度"（长度偏差）
    "dr_grpo": _BASE.replace(advantage="mean", loss_agg="constant"),
    # PPO 式更新：每批更新 μ = 4 次、对称裁剪 0.2、整批标准化优势、按步平均、带 KL 惩罚（没有 critic，用组平均基线）
    "ppo": _BASE.replace(scale_rewards="batch", loss_agg="token-mean", mu=4, beta=0.04),
    # DAPO：clip-higher（0.2 / 0.28）、动态采样、按步平均、没有 KL；μ = 4 让重要性比率能离开 1
    # （默认 lr = 2 时离开得很少，裁剪几乎不发生；notebook 06 用 lr = 30 才看得到裁剪和 clip-higher 的效果）
    "dapo": _BASE.replace(loss_agg="token-mean", mu=4, eps_high=0.28, dynamic_sampling=True),
    # ---- 第 6 讲 8.5–8.9 节 ----
    # 带 critic 的 PPO：优势来自学到的价值表 V(s) 和 GAE(γ = 1, λ = 0.95)（verl adv_estimator=gae）
    "ppo_critic": _BASE.replace(scale_rewards="batch", loss_agg="token-mean", mu=4, beta=0.04, advantage="gae",
                                lam=0.95),
    # dual-clip PPO：A < 0 的步损失最多 −3A（verl 的 vanilla 损失默认 clip_ratio_c = 3）
    "ppo_dual_clip": _BASE.replace(scale_rewards="batch", loss_agg="token-mean", mu=4, beta=0.04, clip_ratio_c=3.0),
    # GSPO：序列级比率、序列级裁剪（3e-4 / 4e-4），按解答平均（verl 的 gspo 固定用 seq-mean-token-mean）
    "gspo": _BASE.replace(policy_loss="gspo", mu=4),
    # CISPO（MiniMax-M1）：裁剪并截断梯度的权重，梯度流过每一步的 log π；verl 的双边裁剪、按步平均
    "cispo": _BASE.replace(policy_loss="cispo", loss_agg="token-mean", mu=4, eps_high=0.28),
    # REINFORCE++（verl reinforce_plus_plus_baseline）：组中心化后整批白化，按步平均
    "reinforce_pp": _BASE.replace(advantage="reinforce_pp", loss_agg="token-mean"),
    # 异步 GRPO：用 2 次更新之前的策略采样，截断的重要性比率 min(π_old / π_behaviour, 2) 修正（verl TIS）
    "grpo_async": _BASE.replace(staleness=2, tis_cap=2.0),
    # ---- verl / TRL 的其他算法（peer_losses.py、peer_advantages.py）----
    # REINFORCE++ 不带基线（verl reinforce_plus_plus）：折扣回报（γ = 1）直接整批白化，按步平均
    "reinforce_pp_no_baseline": _BASE.replace(advantage="reinforce_pp_no_baseline", loss_agg="token-mean"),
    # SAPO：光滑的门代替裁剪（τ = 1 / 1.05），按解答平均（verl 固定如此；TRL sapo 同 grpo）；μ = 4 让 ρ 离开 1
    "sapo": _BASE.replace(policy_loss="sapo", mu=4),
    # GMPO（verl geo_mean）：log ρ 裁在 [−0.4, 0.4] 后取几何平均（verl 的 GMPO 示例），对解答平均
    "gmpo": _BASE.replace(policy_loss="geo_mean", mu=4, eps_low=0.4, eps_high=0.4),
    # GPG：A = α (r − 组平均)、l = −A log π，按步平均（verl 的 GPG 示例：adv_estimator=gpg、loss_mode=gpg）
    "gpg": _BASE.replace(advantage="gpg", policy_loss="gpg", loss_agg="token-mean"),
    # Clip-Cov / KL-Cov（The Entropy Mechanism of RL for Reasoning LMs）：verl 的默认比例，按步平均，μ = 4
    "clip_cov": _BASE.replace(policy_loss="clip_cov", loss_agg="token-mean", mu=4),
    "kl_cov": _BASE.replace(policy_loss="kl_cov", loss_agg="token-mean", mu=4),
})
"""
命名的预设：同一个循环的不同配置。键："reinforce"、"rloo"、"grpo"、"dr_grpo"、"ppo"、"dapo"，
以及第 6 讲 8.5–8.9 节的 "ppo_critic"、"ppo_dual_clip"、"gspo"、"cispo"、"reinforce_pp"、"grpo_async"，
verl / TRL 的 "reinforce_pp_no_baseline"、"sapo"、"gmpo"、"gpg"、"clip_cov"、"kl_cov"。

【例子】PRESETS["dapo"].eps_high → 0.28；diff_presets("grpo", "dapo") 看它们差在哪里。
【Python 小知识】types.MappingProxyType 是字典的只读视图：PRESETS["my"] = ... 会报错，预设不会被意外改掉。
"""

PRESET_NAMES = {"reinforce": "REINFORCE", "rloo": "RLOO", "grpo": "GRPO", "dr_grpo": "Dr. GRPO",
                "ppo": "PPO", "dapo": "DAPO", "ppo_critic": "PPO+critic", "ppo_dual_clip": "PPO dual-clip",
                "gspo": "GSPO", "cispo": "CISPO", "reinforce_pp": "REINFORCE++", "grpo_async": "异步 GRPO",
                "reinforce_pp_no_baseline": "REINFORCE++ 无基线", "sapo": "SAPO", "gmpo": "GMPO", "gpg": "GPG",
                "clip_cov": "Clip-Cov", "kl_cov": "KL-Cov"}


PRESET_PEERS = types.MappingProxyType({
    "reinforce": ("—", "—（CS336 作业 5 的 no_baseline）"),
    "rloo": ("adv_estimator=rloo", "RLOOTrainer"),
    "grpo": ("adv_estimator=grpo, loss_agg_mode=seq-mean-token-mean", "loss_type=grpo"),
    "dr_grpo": ("norm_adv_by_std_in_grpo=False, loss_agg_mode=seq-mean-token-sum-norm（B 倍）",
                "loss_type=dr_grpo, scale_rewards=none"),
    "ppo": ("ppo_epochs=4, use_kl_loss, loss_agg_mode=token-mean", "scale_rewards=batch, num_iterations=4, beta=0.04"),
    "dapo": ("filter_groups.enable, clip_ratio_high=0.28, token-mean", "loss_type=dapo, epsilon_high=0.28（无动态采样）"),
    "ppo_critic": ("adv_estimator=gae", "PPOTrainer"),
    "ppo_dual_clip": ("clip_ratio_c=3（vanilla 默认）", "delta=3"),
    "gspo": ("loss_mode=gspo", "importance_sampling_level=sequence"),
    "cispo": ("loss_mode=cispo", "loss_type=cispo（只截上界）"),
    "reinforce_pp": ("adv_estimator=reinforce_plus_plus_baseline", "—"),
    "grpo_async": ("rollout_is=token, rollout_is_threshold=2", "vllm_importance_sampling_correction（token_truncate）"),
    "reinforce_pp_no_baseline": ("adv_estimator=reinforce_plus_plus", "—"),
    "sapo": ("loss_mode=sapo", "loss_type=sapo"),
    "gmpo": ("loss_mode=geo_mean, clip_ratio=0.4", "—"),
    "gpg": ("adv_estimator=gpg, loss_mode=gpg", "—"),
    "clip_cov": ("loss_mode=clip_cov", "—"),
    "kl_cov": ("loss_mode=kl_cov", "—"),
})
"""每个预设在 verl（b178a3cd，core_algos.py 的 loss_mode / adv_estimator）和 TRL（f2cd5771，GRPOConfig）里最接近的设置。"""


def preset(name, **overrides):
    """
    取一个预设，可以顺便改几个选项。

    【参数】name：PRESETS 的键（"grpo"、"dapo"……，大小写、"-" 和 "_" 都可以）；overrides：要改的选项
    【返回】RLConfig
    【边界】未知的预设名报 ValueError，列出可用的名字；未知的选项报 TypeError。
    【例子】preset("grpo", iterations=50, seed=1)；preset("Dr-GRPO")
    """
    return resolve_config(name, "name").replace(**overrides) if overrides else resolve_config(name, "name")


def resolve_config(config, param="config"):
    """
    config 可以是 None（默认 = GRPO）、RLConfig 或预设名；返回 RLConfig。

    【边界】未知的预设名报 ValueError、别的类型报 TypeError，消息里用 param 作参数名。
    """
    if config is None:
        return RLConfig()
    if isinstance(config, RLConfig):
        return config
    if isinstance(config, str):
        key = config.strip().lower().replace("-", "_").replace(".", "").replace(" ", "_")
        if key in PRESETS:
            return PRESETS[key]
        raise ValueError(f"{param}：未知的预设 {config!r}；可用的预设：{'、'.join(PRESETS)}")
    raise TypeError(f"{param} 必须是 RLConfig 或预设名（{'、'.join(PRESETS)}），收到 {type(config).__name__}")


def diff_presets(a, b):
    """
    两个配置（或预设）有哪些选项不同。

    【思路】所有算法都是同一个循环，所以"GRPO 和 DAPO 有什么区别"就是"哪几个选项的值不同"。
    【参数】a、b：预设名（"grpo"）或 RLConfig
    【返回】dict {选项名: (a 的值, b 的值)}，按选项的定义顺序；完全相同时是空字典
    【例子】diff_presets("grpo", "dapo") →
        {"loss_agg": ("seq-mean", "token-mean"), "mu": (1, 4), "eps_high": (0.2, 0.28), "dynamic_sampling": (False, True)}
    """
    da, db = resolve_config(a, "a").to_dict(), resolve_config(b, "b").to_dict()
    return {k: (da[k], db[k]) for k in da if da[k] != db[k]}


def presets_table(names=None):
    """
    把几个预设排成一张中文表格（字符串）：每行一个选项，每列一个预设；只列出至少有一个预设不同的选项。

    【参数】names：预设名的列表，默认全部
    【边界】names 为空、不是列表、含未知的预设名时报中文的 ValueError / TypeError。
    【例子】print(presets_table(["grpo", "dr_grpo", "dapo"]))
    """
    if names is None:
        names = list(PRESETS)
    else:
        names = [str(n) for n in as_list("names", names, "预设名", "['grpo', 'dapo']")]
    dicts = [resolve_config(n, "names 里的预设名").to_dict() for n in names]
    keys = [k for k in dicts[0] if len({repr(d[k]) for d in dicts}) > 1] if len(dicts) > 1 else list(dicts[0])
    heads = [PRESET_NAMES.get(n, n) for n in names]
    w0 = max(display_width(f"{OPTION_NAMES[k]}（{k}）") for k in keys) + 2 if keys else 10
    widths = [max(display_width(h), max((len(format_option(d[k])) for k in keys), default=0)) + 2
              for h, d in zip(heads, dicts)]
    lines = [pad("选项", w0) + "".join(pad(h, w, "right") for h, w in zip(heads, widths))]
    for k in keys:
        lines.append(pad(f"{OPTION_NAMES[k]}（{k}）", w0)
                     + "".join(pad(format_option(d[k]), w, "right") for d, w in zip(dicts, widths)))
    return "\n".join(lines)


def format_option(v):
    """一个选项值的中文写法：True / False → 开 / 关，None → 无，浮点数用 :g。"""
    if v is None:
        return "无"
    return ("开" if v else "关") if isinstance(v, bool) else f"{v:g}" if isinstance(v, float) else str(v)


__all__ = ["ADVANTAGES", "ADVANTAGE_ESTIMATORS", "AGGREGATIONS", "CISPO_CLIPS", "GROUP_ADVANTAGES", "IS_LEVELS",
           "KL_ESTIMATORS", "ON_SHORT", "OPTIMIZERS", "OPTION_NAMES", "POLICY_LOSSES", "PRESETS", "PRESET_NAMES",
           "PRESET_PEERS", "REWARDS", "RLConfig",
           "SCALES", "diff_presets", "format_option", "preset", "presets_table", "resolve_config"]
