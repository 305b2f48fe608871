"""
RL 的配置：所有算法都是同一个循环，一个 RLConfig 的不同取值（第 6 讲"从 REINFORCE 到 DAPO"）。

【思路】REINFORCE、RLOO、GRPO、Dr. GRPO、PPO、DAPO 的差别只在几个选项：优势怎么算、损失怎么聚合、
    每批更新几次、裁剪区间、KL、动态采样。每个选项的中文名和说明只写一次（字段的 metadata），
    RLConfig 的文档、预设对照表和维护者的命令行 tools/train_cli.py 的帮助都从这里生成。
"""

import dataclasses
import difflib
import math
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from .._checks import as_bool, as_choice, as_int, as_real
from .losses import (ADVANTAGES, AGGREGATION_TABLE, AGGREGATIONS, CISPO_CLIPS, GROUP_ADVANTAGES, IS_LEVELS,
                     KL_ESTIMATORS, SCALES)
from .surrogates import PEERS_LOADED, POLICY_LOSSES, peers_hint


class _Choices:
    """几组取值合起来（as_choice、argparse 用 in 和 for）：登记表里加了新的名字，这里马上就有。"""

    def __init__(self, *parts):
        self.parts = parts

    def __iter__(self):
        return (k for part in self.parts for k in part)

    def __contains__(self, value):
        return any(value in part for part in self.parts)


ADVANTAGE_ESTIMATORS = _Choices(GROUP_ADVANTAGES, ("gae",))
"""RLConfig.advantage 接受的全部取值：登记过的优势估计（losses.GROUP_ADVANTAGES），加上 "gae"（学到的 critic，rl/critic.py）。
公式的选项（ADVANTAGES、SCALES、AGGREGATIONS、KL_ESTIMATORS……）写在 losses 里，这里只是导入。"""
ON_SHORT = ("train", "raise")
REWARDS = ("outcome", "process", "procedure")
OPTIMIZERS = ("sgd", "adam")


def option(default, name, help, more="", choices=None, *, low=None, high=None, above=None, off=None, peers=None):
    """
    一个选项：默认值 + 中文名 name + 一句说明 help（命令行帮助用）+ 细节 more（只进文档）+ 接受什么。

    【参数】choices：可选的值；low / high：闭区间的界；above：必须严格大于它；
        off：表示"不用"的值，(None,) 或 (None, inf)（都记为 None：配置要能写进标准 JSON）；
        peers：取值不在 choices 里、又还没 import toyllm.peers 时，报错提示它（"toyllm.peers 的其他损失"）
    """
    return field(default=default, metadata={"name": name, "help": help, "more": more, "choices": choices,
                                            "low": low, "high": high, "above": above, "off": off, "peers": peers})


def _check_option(f, value):
    """按字段的类型和 metadata（option 写的）检查一个选项，返回规整后的值；报错的参数名写成 "lr（学习率）"。"""
    m = f.metadata
    label = f"{f.name}（{m['name']}）"
    if value is None and m["off"]:
        return None
    if m["choices"] is not None:
        try:
            return as_choice(label, value, m["choices"])
        except ValueError as e:
            raise ValueError(str(e) + (peers_hint(m["peers"]) if m["peers"] else "")) from None
    if f.type is bool:
        return as_bool(label, value)
    if f.type is int:
        return as_int(label, value, low=m["low"])
    low, low_open = (m["low"], False) if m["above"] is None else (m["above"], True)
    value = as_real(label, value, low, m["high"], low_open=low_open, allow_inf=math.inf in (m["off"] or ()))
    return None if value == math.inf else value


class OptionBlock(NamedTuple):
    """
    OPTION_BLOCKS 的一项：一组不属于 RLConfig 自己的选项（toyllm.peers 登记的），和它们起作用的地方。

    【参数】fields：{选项名: dataclasses.Field}（用 option(...) 写的，默认值和检查同 RLConfig 的字段）；
        check(cfg)：组合不对时报 ValueError；rollout(cfg, logp_old, logp_behaviour, mask)：陈旧采样的权重和留下的步，
        None 表示用本包的 truncated_is_weights；inputs(cfg, LossInputs)：交给策略损失之前改一改输入（序列级比率……）
    """
    fields: dict
    check: Callable
    rollout: Callable
    inputs: Callable


OPTION_BLOCKS = []
"""登记过的选项块（import toyllm.peers 以后有一个）。RLConfig(tau_pos=2) 这样的选项记在 cfg.peer 里，cfg.tau_pos 读它。"""


def register_options(options, check, rollout, inputs):
    """
    登记一组选项：options 是用 option(...) 写字段的 dataclass；其余见 OptionBlock。之后 RLConfig 接受这些选项。

    【例子】register_options(PeerOptions, check, rollout, inputs)（toyllm.peers 这样登记）
    """
    if not (isinstance(options, type) and dataclasses.is_dataclass(options)) or not all(map(callable, (check, rollout, inputs))):
        raise TypeError(f"register_options(options, check, rollout, inputs)：options 必须是用 option(...) 写字段的 dataclass 类，"
                        f"check、rollout、inputs 必须是函数，收到 {options!r}、{check!r}、{rollout!r}、{inputs!r}")
    OPTION_BLOCKS.append(OptionBlock({f.name: f for f in dataclasses.fields(options)}, check, rollout, inputs))
    PEERS_LOADED.append(options.__module__)


def _block_field(name):
    return next((b.fields[name] for b in OPTION_BLOCKS if name in b.fields), None)


def _check_peer(values):
    """peer 里的选项：逐个检查，去掉等于默认值的，按登记的顺序排成 ((名字, 值), …)（可以比较、可以哈希）。"""
    out = {}
    for key, value in values.items():
        f = _block_field(key)
        if f is None:
            raise TypeError(f"RLConfig 没有选项 {key!r}" + peers_hint("verl / TRL 的选项"))
        value = _check_option(f, value)
        if value != f.default:
            out[key] = value
    order = [n for b in OPTION_BLOCKS for n in b.fields]
    return tuple(sorted(out.items(), key=lambda kv: order.index(kv[0])))


@dataclass(frozen=True, init=False)
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
        都报中文的 ValueError。bool 选项必须真的是 True / False（不接受 0 / 1）。toyllm.peers 的选项（tau_pos……）、
        损失（policy_loss="gpg"……）在没有 import toyllm.peers 时报错，提示先写这一句；import 以后写法和自己的选项一样。
    【例子】
        RLConfig()                                      # 默认 = GRPO 预设
        RLConfig(mu=4, eps_high=0.28)
        PRESETS["dapo"].replace(iterations=50)
        RLConfig(group_size=1)   # ValueError: group_size（组大小 G） 必须 >= 2，收到 1
    【Python 小知识】@dataclass(frozen=True, init=False) 自动生成 __repr__、__eq__、__hash__，并禁止给属性赋值；
        __init__ 是自己写的（要收下 toyllm.peers 的选项），里面给字段赋值只能用 object.__setattr__(self, 名字, 值)。
        __getattr__ 只在找不到属性时才被调用：cfg.tau_pos 就这样读到 peer 里的值。
        field(metadata={...}) 给字段挂上任意说明：这里的文档和命令行帮助都是从它生成的。
    """
    iterations: int = option(200, "迭代次数", "迭代次数（≥ 0）", low=0)
    batch_problems: int = option(32, "每次的题数", "每次迭代训练用几道题（≥ 1）",
                                  "TRL 里是 per_device_train_batch_size / num_generations", low=1)
    group_size: int = option(8, "组大小 G", "每道题采样几份解答 G（≥ 2）",
                              "TRL num_generations；verl actor_rollout_ref.rollout.n", low=2)
    lr: float = option(2.0, "学习率", "学习率（有限、≥ 0）",
                        "TRL learning_rate。optimizer='sgd' 时参数 −= lr × 梯度；真实系统用 AdamW", low=0.0)
    advantage: str = option(
        "grpo", "优势", "优势：none（REINFORCE）/ mean（组平均基线）/ rloo（留一法）/ grpo（再除以标准差）",
        "\"none\"：A = r，没有基线（CS336 作业 5 的 no_baseline）；\"mean\"：A = r − 组平均（Dr. GRPO；"
        "TRL scale_rewards=\"none\"）；\"rloo\"：A = r − 同组其他人的平均 = G/(G−1)·(r − 组平均)（TRL RLOOTrainer；"
        "verl adv_estimator=rloo）；\"grpo\"：A = (r − 组平均) / (标准差 + std_eps)（DeepSeekMath；verl adv_estimator=grpo）；"
        "\"reinforce_pp\"：REINFORCE++ 带基线，先减组平均，再在整批（所有步）上白化 (a − 均值) / √(方差 + 1e-8)（verl "
        "adv_estimator=reinforce_plus_plus_baseline，不是 verl 的 reinforce_plus_plus；奖励全相同的组减组平均后是 0，"
        "白化减去整批的均值：同组解答步数不同时它们的优势不再是 0，步数相同时仍是 0）；"
        "import toyllm.peers 以后还有 reinforce_pp_no_baseline、opo、gpg（见 toyllm.peers.advantages）；"
        "\"gae\"：学到的价值表 V(s) 和 GAE(γ, λ)，再整批白化（verl adv_estimator=gae；见 rl/critic.py）",
        ADVANTAGE_ESTIMATORS, peers="verl 的其他优势（reinforce_pp_no_baseline、opo、gpg）")
    scale_rewards: str = option(
        "group", "标准差范围", "GRPO 的标准差：group（同组）/ batch（整批）/ none（不除）",
        "只对 advantage=\"grpo\" 有用。\"group\" 是 TRL 默认；\"batch\" 是 TRL scale_rewards=\"batch\"：组中心化的奖励除以"
        "整批奖励的标准差（这不是 verl 的 REINFORCE++，那个是 advantage=\"reinforce_pp\"）；"
        "\"none\" 等于 \"mean\"（verl norm_adv_by_std_in_grpo=False）", SCALES)
    std_eps: float = option(1e-4, "std_eps", "除以标准差时加的小数（> 0）", "TRL 用 1e-4，verl 用 1e-6", above=0.0)
    loss_agg: str = option(
        "seq-mean", "损失聚合", "损失聚合：seq-mean（GRPO）/ token-mean（DAPO）/ constant（Dr. GRPO），或 verl / TRL 的名字",
        "完整的归一化表见 losses.AGGREGATION_TABLE（B 份解答，第 i 份 |o_i| 步）。"
        "\"seq-mean\"（= verl \"seq-mean-token-mean\" = TRL loss_type=\"grpo\"）：Σ_i (Σ_t l / |o_i|) / B；"
        "\"token-mean\"（= verl \"token-mean\" = TRL \"dapo\" / \"bnpo\"，单卡）：Σ l / Σ|o_i|；"
        "\"constant\"（= TRL \"dr_grpo\"）：Σ l / (B × L_max)，L_max = 训练题里最长的步数（相当于 TRL 的 "
        "max_completion_length）；verl \"seq-mean-token-sum-norm\" 在一个 micro-batch 上是 Σ l / L（L 是补齐后的长度），"
        "不除以 B；verl 的 actor 再乘 1 / 梯度累积步数、各卡梯度取平均，所以它是 constant 的 m · L_max / L 倍"
        "（m 是每卡一个 micro-batch 的份数；一张卡、一个 micro-batch 时 m = B）。verl actor.loss_scale_factor 可以换掉 L"
        "（本包的选项 loss_scale_factor；verl 只有新的 worker 读它）；verl "
        "\"seq-mean-token-sum\"：Σ_i Σ_t l / B。有全空的行时 verl 的两个 seq-mean-* 只除以非空的行数（core_algos.py agg_loss 的 "
        "seq_mask），TRL grpo 和本包 seq-mean 除以 B；TRL \"luspo\"：Σ_i |o_i| l_i / B（配 is_level=\"sequence\"）", AGGREGATIONS)
    mu: int = option(1, "每批更新次数 μ", "每批数据更新几次 μ（≥ 1）",
                      "TRL num_iterations；verl ppo_epochs。μ = 1 时 ρ ≡ 1，裁剪不会发生", low=1)
    clip: bool = option(True, "裁剪", "是否裁剪重要性比率",
                         "False 时损失是 −ρA，即带重要性采样的策略梯度")
    eps_low: float = option(0.2, "ε_low", "裁剪下界 1 − eps_low（0 ~ 1）",
                             "TRL epsilon；verl clip_ratio_low", low=0.0, high=1.0)
    eps_high: float = option(0.2, "ε_high", "裁剪上界 1 + eps_high（≥ 0；DAPO 0.28）",
                              "TRL epsilon_high；verl clip_ratio_high", low=0.0)
    beta: float = option(0.0, "KL 系数 β", "KL 惩罚系数 β（≥ 0）",
                          "TRL beta（0.19 版起默认 0，之前 0.04）；verl kl_loss_coef（use_kl_loss）", low=0.0)
    kl_estimator: str = option("k3", "KL 估计", "损失里的 KL 估计：k1 / k2 / k3（Schulman）",
                                "TRL 用 k3；verl kl_loss_type=\"kl\"（k1）/\"mse\"（k2）/\"low_var_kl\"（k3）",
                                KL_ESTIMATORS)
    dynamic_sampling: bool = option(False, "动态采样", "动态采样（DAPO）：丢掉奖励全相同的组，再采新题补满",
                                     "verl 的 DAPO recipe：algorithm.filter_groups.enable（main_ppo 没有）")
    max_draws: int = option(10, "最多采几批", "动态采样时每次迭代最多采几批（≥ 1）",
                             "到了上限就用已经凑到的组训练。verl 的 DAPO recipe：algorithm.filter_groups.max_num_gen_batches", low=1)
    gen_batch_scale: int = option(
        1, "每批采几倍的题", "每批采样挑 gen_batch_scale × batch_problems 道题（≥ 1；DAPO 3）",
        "verl data.gen_batch_size = gen_batch_scale × data.train_batch_size（verl 的 DAPO recipe 的例子是 1536 = 3 × 512）。"
        "开了动态采样时，从一批里留下最多 batch_problems 组奖励不全相同的组，不够再采下一批；"
        "没开动态采样时一批全部用来训练（verl 也按 gen_batch_size 一批批取训练数据）", low=1)
    reward: str = option("outcome", "奖励", "奖励：outcome（最终答案）/ process（每步的值）/ procedure（每步的做法）",
                          "\"procedure\" 是一个能看懂推理过程的\"完美过程奖励模型\"", REWARDS)
    entropy_coef: float = option(0.0, "熵奖励系数", "熵奖励系数 c_H（损失里减去 c_H × 熵）",
                                  "verl actor.entropy_coeff；TRL entropy_coef；"
                                  "TRL 总是按 token 平均熵，不管 loss_type，本包按 loss_agg 的权重")
    temperature: float = option(1.0, "温度", "采样和计算损失用的温度（> 0）",
                                 "TRL temperature。熵、KL 按这个温度算；留出题上的路径 pass@1 总是按温度 1 算", above=0.0)
    optimizer: str = option(
        "sgd", "优化器", "优化器：sgd（参数 −= lr × 梯度）/ adam",
        "\"sgd\" 和参考模块的 apply_grads 一样；\"adam\"：β1 = 0.9、β2 = 0.999、ε = 1e-8（TRL / verl 默认的 AdamW "
        "去掉权重衰减），lr 要小得多（约 0.05）。Adam 对梯度的整体缩放不敏感，比较 Dr. GRPO 和 GRPO 时值得打开",
        OPTIMIZERS)
    seed: int = option(0, "随机种子", "随机种子（≥ 0）：选题和采样都从 numpy.random.default_rng(seed) 来", low=0)
    # ---- 第 6 讲 8.5–8.9 节：critic + GAE、GSPO、CISPO、dual-clip、异步（陈旧）采样 ----
    policy_loss: str = option(
        "ppo", "策略损失", "策略损失：ppo / gspo / cispo（import toyllm.peers 以后还有 sapo、gpg……）",
        "\"ppo\"：losses.clipped_surrogate（verl policy_loss.loss_mode=\"vanilla\"；TRL 默认）；"
        "\"gspo\"：losses.gspo_surrogate，s_i = exp(mean_t log ρ)，按序列裁剪，裁剪区间用 seq_eps_low / seq_eps_high"
        "（verl loss_mode=\"gspo\"；TRL importance_sampling_level=\"sequence\" 配 loss_type=\"grpo\"，见选项 is_level）；"
        "\"cispo\"：losses.cispo_surrogate，l = −sg(clip(ρ)) A log π（MiniMax-M1；verl \"cispo\"；TRL loss_type=\"cispo\"），"
        "怎么裁剪由 cispo_clip 决定；"
        "import toyllm.peers 以后还有 sapo、geo_mean、gpg、clip_cov、kl_cov、vespo（见 toyllm.peers.options）",
        POLICY_LOSSES, peers="verl / TRL 的其他损失（sapo、geo_mean、gpg、clip_cov、kl_cov、vespo）")
    seq_eps_low: float = option(3e-4, "GSPO ε_low", "GSPO 序列级比率的裁剪下界 1 − seq_eps_low（0 ~ 1）",
                                 "GSPO 论文和 verl 的 gspo 示例用 3e-4（序列级比率离 1 很近，区间要小得多）", low=0.0, high=1.0)
    seq_eps_high: float = option(4e-4, "GSPO ε_high", "GSPO 序列级比率的裁剪上界 1 + seq_eps_high（≥ 0）",
                                  "GSPO 论文和 verl 的 gspo 示例用 4e-4", low=0.0)
    cispo_clip: str = option(
        "verl", "CISPO 的裁剪", "CISPO 的权重怎么裁剪：verl（夹在 [1 − eps_low, 1 + eps_high]）/ trl（只从上面截在 eps_high）",
        "\"verl\"：w = clip(ρ, 1 − eps_low, 1 + eps_high)；\"trl\"：w = min(ρ, eps_high)（TRL clamp(ρ, max=epsilon_high)，"
        "它的文档建议 cispo 用 epsilon_high = 5.0）", CISPO_CLIPS)
    clip_ratio_c: float = option(
        None, "dual-clip c", "dual-clip 的界 C（None = 不用；> 1）：A < 0 的步损失最多 −C·A",
        "Ye et al. 2019（arXiv:1912.09729）；verl actor.clip_ratio_c，默认 3（verl 的 vanilla 损失总带着它）；"
        "TRL 叫它 delta（GRPOConfig.delta，INTELLECT-2 的 two-sided GRPO，默认 None 即不用：先把 ρ 截在 ≤ δ 再取 min，"
        "δ > 1 + ε_high 时对 A < 0 的步正好是这里的 C，见选项 delta）。"
        "l = min(max(−ρA, −clip(ρ)A), −CA)，只对 A < 0：ρ 很大的坏动作不再被无限地推下去", above=1.0, off=(None,))
    gamma: float = option(1.0, "折扣 γ", "折扣 γ（0 ~ 1；只对 advantage=\"gae\" / \"reinforce_pp_no_baseline\"）",
                           "verl algorithm.gamma（默认 1.0）；Spinning Up gamma（0.99）", low=0.0, high=1.0)
    lam: float = option(1.0, "GAE λ", "GAE 的 λ（0 ~ 1；只对 advantage=\"gae\"）：1 = 蒙特卡洛回报减 V，0 = 一步 TD",
                         "verl algorithm.lam（默认 1.0）；Spinning Up lam（0.97）", low=0.0, high=1.0)
    critic_lr: float = option(0.1, "critic 学习率", "价值表 V(s) 的学习率（Adam；有限、≥ 0；只对 advantage=\"gae\"）",
                               "verl critic.optim.lr；Spinning Up vf_lr。价值表用自己的 Adam，和策略的优化器分开", low=0.0)
    vf_coef: float = option(1.0, "价值损失系数", "价值损失 ½(V − 回报)² 的系数（> 0；只对 advantage=\"gae\"）",
                             "TRL 实验性的 PPOConfig（trl.experimental.ppo）vf_coef（默认 0.1，策略和价值共用一个网络时才要紧）；"
                             "这里价值表是单独的，用 Adam 训练，系数几乎不影响更新的大小", above=0.0)
    on_short: str = option(
        "train", "凑不满时", "动态采样采了 max_draws 批还凑不满时：train（用凑到的组训练）/ raise（报错停下）",
        "\"train\" 是原来的做法；\"raise\" 和 verl 一样停下（verl 在 max_num_gen_batches 用完时抛错）。"
        "凑不满的次数记在 history.meta[\"short_batches\"]", ON_SHORT)
    staleness: int = option(0, "陈旧步数 k", "用 k 次更新之前的策略采样（异步 RL；≥ 0，0 = 同步）",
                             "k > 0 时每步再乘截断的重要性比率 min(π_old / π_behaviour, tis_cap)"
                             "（verl rollout correction / TIS）；π_old 是这次迭代开始时的策略", low=0)
    tis_cap: float = option(2.0, "TIS 上限 C", "截断的重要性比率的上限 C（> 0；None 或 inf 表示不截断；只对 staleness > 0）",
                             "verl rollout_is_threshold（默认 2.0）；TIS 的 C", above=0.0, off=(None, math.inf))
    peer: tuple = option((), "verl / TRL 的选项", "写了的真实系统的选项 ((名字, 值), …)：import toyllm.peers 以后直接写 "
                         "RLConfig(tau_pos=2.0)，cfg.tau_pos 读它（没写的是默认值），见 toyllm.peers.PeerOptions")

    def __init__(self, *args, **kwargs):
        names = [f.name for f in dataclasses.fields(self)][:-1]            # 自己的选项（最后一个字段 peer 另算）
        if len(args) > len(names):
            raise TypeError(f"RLConfig 最多接受 {len(names)} 个位置参数，收到 {len(args)} 个；建议写成 RLConfig(lr=1.0, ...)")
        for key, value in zip(names, args):
            if key in kwargs:
                raise TypeError(f"RLConfig 的选项 {key!r} 给了两次（位置参数和关键字参数）")
            kwargs[key] = value
        peer = dict(kwargs.pop("peer", ()))
        for key in [k for k in kwargs if k not in names]:
            if _block_field(key) is None:
                close = difflib.get_close_matches(str(key), names + [n for b in OPTION_BLOCKS for n in b.fields], n=1)
                hint = f"你是不是想写 {close[0]!r}？" if close else ""
                raise TypeError(f"RLConfig 没有选项 {key!r}。{hint}可用的选项：{'、'.join(names)}"
                                + peers_hint("verl / TRL 的选项（tau_pos、is_level、rollout_is……）"))
            peer[key] = kwargs.pop(key)
        for f in dataclasses.fields(self)[:-1]:
            object.__setattr__(self, f.name, _check_option(f, kwargs.get(f.name, f.default)))
        object.__setattr__(self, "peer", _check_peer(peer))
        _check_combination(self)
        for block in OPTION_BLOCKS:
            block.check(self)

    def __getattr__(self, name):
        """toyllm.peers 登记的选项：cfg.tau_pos 取 peer 里的值，没写就是它的默认值。"""
        if name in ("to_trl", "to_verl"):
            raise AttributeError(f"RLConfig.{name}() 搬走了：写 toyllm.peers.{name}(config)（先 import toyllm.peers）")
        f = _block_field(name) if not name.startswith("_") and name != "peer" else None
        if f is None:
            raise AttributeError(f"RLConfig 没有选项 {name!r}" + peers_hint("verl / TRL 的选项"))
        return dict(self.peer).get(name, f.default)

    def replace(self, **changes):
        """返回一个改了几个选项的新配置（原配置不变）。【例子】PRESETS["grpo"].replace(mu=4, lr=1.0)"""
        return dataclasses.replace(self, **changes)

    def to_dict(self):
        """全部选项 {名字: 值}（按定义顺序；写了的真实系统的选项在最后），可以直接写进 JSON，RLConfig(**d) 读回来。"""
        return {**{f.name: getattr(self, f.name) for f in dataclasses.fields(self)[:-1]}, **dict(self.peer)}


def _check_combination(cfg):
    """只对某些取值有意义的选项：用在别处时报错（每个选项要么起作用，要么被拒绝）。真实系统的选项的组合由它们的登记块检查。"""
    if not cfg.clip and not POLICY_LOSSES[cfg.policy_loss].clipped:
        clipped = "、".join(k for k, v in POLICY_LOSSES.items() if v.clipped)
        raise ValueError(f"clip=False 只配用 eps_low / eps_high 裁剪的 policy_loss（{clipped}），"
                         f"收到 policy_loss={cfg.policy_loss!r}（它不用这两个区间，clip 对它不起作用）")
    if AGGREGATION_TABLE[cfg.loss_agg].kind == "sum" and not OPTION_BLOCKS:
        raise ValueError("loss_agg=\"luspo\" 只配 TRL 的序列级比率 is_level=\"sequence\"：先 import toyllm.peers")


RLConfig.__doc__ = RLConfig.__doc__.replace("{options}", "\n".join(
    f"        {f.name}：{f.metadata['help']}" + (f"。{f.metadata['more']}" if f.metadata["more"] else "")
    for f in dataclasses.fields(RLConfig)))


OPTION_NAMES = {f.name: f.metadata["name"] for f in dataclasses.fields(RLConfig)[:-1]}
"""每个选项的中文名（打印表格用）。"""

def option_label(name):
    """一个选项在表格里的写法 "中文名（名字）"：RLConfig 自己的选项和登记过的真实系统的选项都行。"""
    f = _block_field(name) if isinstance(name, str) else None
    if f is None and not (isinstance(name, str) and name in OPTION_NAMES):
        raise ValueError(f"option_label 的 name 必须是 RLConfig 的选项名，收到 {name!r}" + peers_hint("toyllm.peers 的选项"))
    return f"{OPTION_NAMES[name] if f is None else f.metadata['name']}（{name}）"


__all__ = ["ADVANTAGES", "ADVANTAGE_ESTIMATORS", "AGGREGATIONS", "CISPO_CLIPS", "GROUP_ADVANTAGES", "IS_LEVELS",
           "KL_ESTIMATORS", "ON_SHORT", "OPTIMIZERS", "OPTION_BLOCKS", "OPTION_NAMES", "OptionBlock", "POLICY_LOSSES",
           "REWARDS", "RLConfig", "SCALES", "option", "option_label", "register_options"]
