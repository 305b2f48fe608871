"""
强化学习引擎：从 REINFORCE 到 GRPO、PPO、Dr. GRPO、DAPO，都是**同一个循环**，只是开关不同。

【思路】每一次迭代（iteration）做四件事：
        1. 采样：从训练题里随机挑 batch_problems 道题，每道题让模型做 group_size 遍（一"组"，G 份解答）；
        2. 打分：奖励 r —— 最终答案对不对（outcome），或者每一步对不对（process / procedure）；
        3. 优势：A = 奖励 − 基线（不减、减组平均、留一法 RLOO、再除以标准差 GRPO……）；
        4. 更新：对"裁剪过的替代损失"（clipped surrogate）做 μ 次梯度下降，可选再加 β·KL 和熵奖励。
    不同的算法只是这四步里的选项不同，全部写在一个 RLConfig 里：
        REINFORCE = 不减基线；RLOO = 留一法基线；GRPO = 组内标准化；Dr. GRPO = 不除以标准差 + 常数归一化；
        PPO = 每批数据更新 μ 次 + 裁剪；DAPO = 裁剪上界放宽（clip-higher）+ 动态采样 + 按步平均。
    diff_presets("grpo", "dapo") 列出两个预设到底哪几个选项不同。

    参数就是 TrainableLLM.params 这个 (12, 3) 数组（每个情境 3 个 Δ），原地训练；model.delta 是它的字典视图，
    自动同步。策略只取决于情境，所以一批几千步的梯度可以用 np.bincount 按情境一次加起来 ——
    这就是引擎快的原因（见 python -m toyllm bench）。

【公式】（"步"在这里扮演真实 LLM 里"token"的角色；π_old 是采样时的策略，π_ref 是训练开始时冻结的参考策略）
        ρ_{i,t} = π_θ(a_t | c_t) / π_old(a_t | c_t)                                     重要性比率
        l_{i,t} = − min( ρ A_i ,  clip(ρ, 1 − ε_low, 1 + ε_high) A_i )                  裁剪的替代损失
        loss    = Σ_{i,t} w_{i,t} [ l_{i,t} + β k(π_θ, π_ref) − c_H H(π_θ(· | c_t)) ]      w：聚合权重
    对 logits z 的梯度全部是解析的：∂ρ/∂z = ρ (onehot − π)；∂ log π(a)/∂z = onehot − π；
        ∂H/∂z = −π (log π + H)（温度 T ≠ 1 时都再除以 T）。

【和真实系统的对应】（选项名）
    TRL GRPOTrainer / GRPOConfig：num_generations（= group_size）、scale_rewards、loss_type、num_iterations（= μ）、
        epsilon、epsilon_high、beta、temperature、learning_rate；记录的指标 clip_ratio/low_mean、
        clip_ratio/high_mean、frac_reward_zero_std、entropy、kl。
    verl：actor_rollout_ref.rollout.n、algorithm.adv_estimator、algorithm.norm_adv_by_std_in_grpo、
        actor.loss_agg_mode、actor.ppo_epochs、actor.clip_ratio_low / clip_ratio_high、actor.use_kl_loss、
        actor.kl_loss_coef、actor.kl_loss_type、actor.entropy_coeff、algorithm.filter_groups.enable、
        algorithm.filter_groups.max_num_gen_batches。

【和真实系统的不同】优化器是朴素的梯度下降（参数 −= lr × 梯度，和参考模块的 apply_grads 一致），
    真实系统用 AdamW；每次更新用整批数据（真实系统还会把一批切成小批）；PPO 预设没有价值网络（critic），
    用组平均基线代替 GAE。

【用法】
    from toyllm import TrainableLLM
    from toyllm.rl import train, preset, default_problems

    train_set, heldout = default_problems(seed=0)
    model = TrainableLLM(1e9)
    hist = train(model, preset("grpo", iterations=200), train_set, heldout)
    print(hist.to_table(every=20))
"""

import dataclasses
import difflib
import math
import operator
import random
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ._checks import as_choice, as_int, as_real
from .arithmetic import CONTEXTS, Problem, make_problem_set
from .exact import CorrectPaths, correct_paths, exact_pass_at_1
from .policy import base_logit_table, softmax_rows
from .sampler import ProblemBatch, Rollouts, prepare_problems, sample_rollouts
from .text import display_width, pad
from .trainable import TrainableLLM

ADVANTAGES = ("none", "mean", "rloo", "grpo")
SCALES = ("group", "batch", "none")
AGGREGATIONS = ("seq-mean", "token-mean", "constant")
KL_ESTIMATORS = ("k1", "k2", "k3")
REWARDS = ("outcome", "process", "procedure")
OPTIMIZERS = ("sgd", "adam")

_N_CTX = len(CONTEXTS)


# =============================================================================
# 配置
# =============================================================================
@dataclass(frozen=True)
class RLConfig:
    """
    一次 RL 训练的全部选项。所有算法都是这个配置的不同取值（见 PRESETS）。

    【思路】frozen dataclass：创建后不能修改（cfg.lr = 1 会报错），要改就用 cfg.replace(lr=1) 得到一个新配置。
        这样一个配置可以放心地在预设表、历史记录、保存的文件之间共享，不会被谁悄悄改掉。
        创建时检查每一个选项，错误用中文说明（参数名、收到的值、接受什么）。
    【参数】（括号里是真实系统的对应选项）
        iterations：迭代次数（≥ 0）
        batch_problems：每次迭代训练用几道题（≥ 1）。TRL 里是 per_device_train_batch_size / num_generations
        group_size：每道题采样几份解答 G（≥ 2）。TRL num_generations；verl actor_rollout_ref.rollout.n
        lr：学习率（有限、≥ 0），参数 −= lr × 梯度。TRL learning_rate（真实系统用 AdamW，这里是朴素梯度下降）
        advantage：优势怎么算 ——
            "none"：A = r，没有基线（REINFORCE；CS336 作业 5 的 no_baseline）
            "mean"：A = r − 组平均（Dr. GRPO；TRL scale_rewards="none"）
            "rloo"：A = r − 同组其他人的平均 = G/(G−1)·(r − 组平均)（TRL RLOOTrainer；verl adv_estimator=rloo）
            "grpo"：A = (r − 组平均) / (标准差 + std_eps)（DeepSeekMath；verl adv_estimator=grpo）
        scale_rewards：advantage="grpo" 时标准差怎么算："group" 同组的（TRL 默认）、"batch" 整批的
            （TRL scale_rewards="batch"，REINFORCE++）、"none" 不除（= "mean"；verl norm_adv_by_std_in_grpo=False）
        std_eps：除以标准差时加的小数（> 0）。TRL 用 1e-4，verl 用 1e-6
        loss_agg：每步的损失怎么合成一个数 ——
            "seq-mean"：先在每份解答内按步平均，再对解答平均（原始 GRPO；TRL loss_type="grpo"；
                verl loss_agg_mode="seq-mean-token-mean"）
            "token-mean"：整批所有步一起平均（DAPO；TRL loss_type="dapo"/"bnpo"；verl "token-mean"）
            "constant"：总和除以常数 B × L_max（Dr. GRPO；TRL "dr_grpo"；verl "seq-mean-token-sum-norm"），
                L_max = 训练题里最长的步数（相当于真实系统的 max_completion_length）
        mu：每批数据更新几次 μ（≥ 1）。TRL num_iterations；verl ppo_epochs。μ = 1 时 ρ ≡ 1，裁剪不会发生
        clip：是否裁剪比率（False 时损失是 −ρA，即带重要性采样的策略梯度）
        eps_low、eps_high：裁剪区间 [1 − eps_low, 1 + eps_high]。PPO / GRPO 0.2 / 0.2，DAPO 0.2 / 0.28。
            TRL epsilon / epsilon_high；verl clip_ratio_low / clip_ratio_high
        beta：KL 惩罚的系数 β（≥ 0）。TRL beta（0.19 版起默认 0，之前 0.04）；verl kl_loss_coef（use_kl_loss）
        kl_estimator：损失里用哪个 KL 估计："k1"、"k2"、"k3"（Schulman）。TRL 用 k3；
            verl kl_loss_type="kl"（k1）/"mse"（k2）/"low_var_kl"（k3）
        dynamic_sampling：动态采样（DAPO）：丢掉奖励全相同的组，再采新题，直到凑满 batch_problems 组。
            verl algorithm.filter_groups.enable
        max_draws：动态采样时每次迭代最多采几批（≥ 1），到了上限就用已经凑到的组训练。
            verl algorithm.filter_groups.max_num_gen_batches
        reward："outcome"（最终答案对 = 1）、"process"（每一步的值对不对，过程奖励）、
            "procedure"（每一步用的是不是正确做法：一个能看懂推理过程的"完美过程奖励模型"）
        entropy_coef：熵奖励系数 c_H（损失里减去 c_H × 熵）。verl actor.entropy_coeff；TRL 没有这一项
        temperature：采样和计算损失用的温度（> 0；课上用 1）。TRL temperature。
            熵、KL 按这个温度下的策略算；留出题上的精确 pass@1 总是按温度 1（模型"本来的"分布）算
        optimizer："sgd"（默认）：参数 −= lr × 梯度，和参考模块的 apply_grads 一样；
            "adam"：Adam（β1 = 0.9、β2 = 0.999、ε = 1e-8，即 TRL / verl 默认的 AdamW 去掉权重衰减），lr 要小得多（约 0.05）。
            Adam 对梯度的整体缩放不敏感，所以 "constant" 和 "seq-mean" 的差别只剩"各步的相对权重"，
            不再混进"梯度整体变小了"—— 比较 Dr. GRPO 和 GRPO 时值得打开
        seed：随机种子（≥ 0）：选题和采样都从 numpy.random.default_rng(seed) 来
    【返回】RLConfig
    【边界】未知的选项名报 TypeError，并提示最像的选项名；group_size < 2、eps < 0、mu < 1、lr 不是有限的数……
        都报中文的 ValueError。bool 选项必须真的是 True / False（不接受 0 / 1）。
    【例子】
        RLConfig()                                      # 默认 = GRPO 预设
        RLConfig(mu=4, eps_high=0.28)
        PRESETS["dapo"].replace(iterations=50)
        RLConfig(group_size=1)   # ValueError: group_size（每道题采样几份）必须 >= 2 ……
    【Python 小知识】@dataclass(frozen=True) 自动生成 __init__、__repr__、__eq__，并禁止给属性赋值；
        在 __post_init__ 里要"修改"字段只能用 object.__setattr__(self, 名字, 值)。
    """
    iterations: int = 200
    batch_problems: int = 32
    group_size: int = 8
    lr: float = 2.0
    advantage: str = "grpo"
    scale_rewards: str = "group"
    std_eps: float = 1e-4
    loss_agg: str = "seq-mean"
    mu: int = 1
    clip: bool = True
    eps_low: float = 0.2
    eps_high: float = 0.2
    beta: float = 0.0
    kl_estimator: str = "k3"
    dynamic_sampling: bool = False
    max_draws: int = 10
    reward: str = "outcome"
    entropy_coef: float = 0.0
    temperature: float = 1.0
    optimizer: str = "sgd"
    seed: int = 0

    def __new__(cls, *args, **kwargs):
        names = [f.name for f in dataclasses.fields(cls)]
        if len(args) > len(names):
            raise TypeError(f"RLConfig 最多接受 {len(names)} 个位置参数，收到 {len(args)} 个；建议写成 RLConfig(lr=1.0, ...)")
        for key in kwargs:
            if key not in names:
                raise TypeError(_unknown_option_message(key, names))
        return super().__new__(cls)

    def __post_init__(self):
        s = object.__setattr__
        s(self, "iterations", as_int("iterations（迭代次数）", self.iterations, low=0))
        s(self, "batch_problems", as_int("batch_problems（每次迭代的题数）", self.batch_problems, low=1))
        g = as_int("group_size（每道题采样几份）", self.group_size)
        if g < 2:
            raise ValueError(f"group_size（每道题采样几份，G）必须 >= 2：一组只有一份解答时没法和同组比较，"
                             f"组平均基线让优势永远是 0（TRL 也要求 num_generations >= 2），收到 {g!r}")
        s(self, "group_size", g)
        s(self, "lr", as_real("lr（学习率）", self.lr, low=0.0))
        s(self, "advantage", as_choice("advantage（优势的算法）", self.advantage, ADVANTAGES))
        s(self, "scale_rewards", as_choice("scale_rewards（标准差的范围）", self.scale_rewards, SCALES))
        s(self, "std_eps", as_real("std_eps", self.std_eps, 0.0, low_open=True))
        s(self, "loss_agg", as_choice("loss_agg（损失的聚合方式）", self.loss_agg, AGGREGATIONS))
        s(self, "mu", as_int("mu（每批数据更新几次 μ）", self.mu, low=1))
        s(self, "clip", _as_bool("clip", self.clip))
        s(self, "eps_low", as_real("eps_low（裁剪下界 1 − eps_low）", self.eps_low, 0.0, 1.0))
        s(self, "eps_high", as_real("eps_high（裁剪上界 1 + eps_high）", self.eps_high, low=0.0))
        s(self, "beta", as_real("beta（KL 系数 β）", self.beta, low=0.0))
        s(self, "kl_estimator", as_choice("kl_estimator（KL 估计）", self.kl_estimator, KL_ESTIMATORS))
        s(self, "dynamic_sampling", _as_bool("dynamic_sampling", self.dynamic_sampling))
        s(self, "max_draws", as_int("max_draws（动态采样每次迭代最多采几批）", self.max_draws, low=1))
        s(self, "reward", as_choice("reward（奖励）", self.reward, REWARDS))
        s(self, "entropy_coef", as_real("entropy_coef（熵奖励系数）", self.entropy_coef))
        s(self, "temperature", as_real("temperature（温度）", self.temperature, 0.0, low_open=True))
        s(self, "optimizer", as_choice("optimizer（优化器）", self.optimizer, OPTIMIZERS))
        s(self, "seed", as_int("seed（随机种子）", self.seed, low=0))

    def replace(self, **changes):
        """返回一个改了几个选项的新配置（原配置不变）。【例子】PRESETS["grpo"].replace(mu=4, lr=1.0)"""
        return dataclasses.replace(self, **changes)

    def to_dict(self):
        """全部选项 {名字: 值}（按定义顺序），可以直接写进 JSON。"""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def _as_bool(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} 必须是 True 或 False，收到 {value!r}（类型 {type(value).__name__}）")
    return bool(value)


def _unknown_option_message(key, names):
    close = difflib.get_close_matches(str(key), names, n=1)
    hint = f"你是不是想写 {close[0]!r}？" if close else ""
    return f"RLConfig 没有选项 {key!r}。{hint}可用的选项：{'、'.join(names)}"


OPTION_NAMES = {
    "iterations": "迭代次数", "batch_problems": "每次的题数", "group_size": "组大小 G", "lr": "学习率",
    "advantage": "优势", "scale_rewards": "标准差范围", "std_eps": "std_eps", "loss_agg": "损失聚合",
    "mu": "每批更新次数 μ", "clip": "裁剪", "eps_low": "ε_low", "eps_high": "ε_high", "beta": "KL 系数 β",
    "kl_estimator": "KL 估计", "dynamic_sampling": "动态采样", "max_draws": "最多采几批", "reward": "奖励",
    "entropy_coef": "熵奖励系数", "temperature": "温度", "optimizer": "优化器", "seed": "随机种子",
}
"""每个选项的中文名（打印表格用）。"""

_BASE = RLConfig()
PRESETS = types.MappingProxyType({
    # REINFORCE：奖励直接当权重，没有基线（CS336 作业 5 的 no_baseline）
    "reinforce": _BASE.replace(advantage="none"),
    # RLOO：留一法基线（TRL RLOOTrainer；verl adv_estimator=rloo）
    "rloo": _BASE.replace(advantage="rloo"),
    # GRPO（DeepSeekMath）：组内标准化，按解答平均；β = 0 是 TRL 0.19 起的默认
    "grpo": _BASE,
    # Dr. GRPO：去掉"除以标准差"（难度偏差）和"除以长度"（长度偏差）
    "dr_grpo": _BASE.replace(advantage="mean", loss_agg="constant"),
    # PPO 式更新：每批更新 μ = 4 次、对称裁剪 0.2、整批标准化优势、按步平均、带 KL 惩罚（没有 critic，见模块说明）
    "ppo": _BASE.replace(scale_rewards="batch", loss_agg="token-mean", mu=4, beta=0.04),
    # DAPO：clip-higher（0.2 / 0.28）、动态采样、按步平均、没有 KL；μ = 4 让比率能离开 1
    # （默认 lr = 2 时离开得很少，裁剪几乎不发生；notebook 06 用 lr = 30 才看得到裁剪和 clip-higher 的效果）
    "dapo": _BASE.replace(loss_agg="token-mean", mu=4, eps_high=0.28, dynamic_sampling=True),
})
"""
命名的预设：同一个循环的不同配置。键："reinforce"、"rloo"、"grpo"、"dr_grpo"、"ppo"、"dapo"。

【例子】PRESETS["dapo"].eps_high → 0.28；diff_presets("grpo", "dapo") 看它们差在哪里。
【Python 小知识】types.MappingProxyType 是字典的只读视图：PRESETS["my"] = ... 会报错，预设不会被意外改掉。
"""

PRESET_NAMES = {"reinforce": "REINFORCE", "rloo": "RLOO", "grpo": "GRPO", "dr_grpo": "Dr. GRPO",
                "ppo": "PPO", "dapo": "DAPO"}


def preset(name, **overrides):
    """
    取一个预设，可以顺便改几个选项。

    【参数】name：PRESETS 的键（"grpo"、"dapo"……，大小写、"-" 和 "_" 都可以）；overrides：要改的选项
    【返回】RLConfig
    【边界】未知的预设名报 ValueError，列出可用的名字；未知的选项报 TypeError。
    【例子】preset("grpo", iterations=50, seed=1)；preset("Dr-GRPO")
    """
    return _resolve_config(name).replace(**overrides) if overrides else _resolve_config(name)


def _resolve_config(config):
    if config is None:
        return RLConfig()
    if isinstance(config, RLConfig):
        return config
    if isinstance(config, str):
        key = config.strip().lower().replace("-", "_").replace(".", "").replace(" ", "_")
        if key in PRESETS:
            return PRESETS[key]
        raise ValueError(f"未知的预设 {config!r}；可用的预设：{'、'.join(PRESETS)}")
    raise TypeError(f"config 必须是 RLConfig 或预设名（{'、'.join(PRESETS)}），收到 {type(config).__name__}")


def diff_presets(a, b):
    """
    两个配置（或预设）有哪些选项不同。

    【思路】所有算法都是同一个循环，所以"GRPO 和 DAPO 有什么区别"就是"哪几个选项的值不同"。
    【参数】a、b：预设名（"grpo"）或 RLConfig
    【返回】dict {选项名: (a 的值, b 的值)}，按选项的定义顺序；完全相同时是空字典
    【例子】diff_presets("grpo", "dapo") →
        {"loss_agg": ("seq-mean", "token-mean"), "mu": (1, 4), "eps_high": (0.2, 0.28), "dynamic_sampling": (False, True)}
    """
    ca, cb = _resolve_config(a), _resolve_config(b)
    da, db = ca.to_dict(), cb.to_dict()
    return {k: (da[k], db[k]) for k in da if da[k] != db[k]}


def presets_table(names=None):
    """
    把几个预设排成一张中文表格（字符串）：每行一个选项，每列一个预设；只列出至少有一个预设不同的选项。

    【参数】names：预设名的列表，默认全部
    【例子】print(presets_table(["grpo", "dr_grpo", "dapo"]))
    """
    names = list(PRESETS) if names is None else [str(n) for n in names]
    configs = [_resolve_config(n) for n in names]
    dicts = [c.to_dict() for c in configs]
    keys = [k for k in dicts[0] if len({repr(d[k]) for d in dicts}) > 1] if len(dicts) > 1 else list(dicts[0])
    heads = [PRESET_NAMES.get(n, n) for n in names]
    w0 = max(display_width(f"{OPTION_NAMES[k]}（{k}）") for k in keys) + 2 if keys else 10
    widths = [max(display_width(h), max((len(_fmt_option(d[k])) for k in keys), default=0)) + 2
              for h, d in zip(heads, dicts)]
    lines = [pad("选项", w0) + "".join(pad(h, w, "right") for h, w in zip(heads, widths))]
    for k in keys:
        lines.append(pad(f"{OPTION_NAMES[k]}（{k}）", w0)
                     + "".join(pad(_fmt_option(d[k]), w, "right") for d, w in zip(dicts, widths)))
    return "\n".join(lines)


def _fmt_option(v):
    return ("开" if v else "关") if isinstance(v, bool) else f"{v:g}" if isinstance(v, float) else str(v)


# =============================================================================
# 小的纯函数：学生可以自己写一份换进去（train 的 advantage_fn / surrogate_fn）
# =============================================================================
def group_advantages(rewards, group_size, method="grpo", scale="group", eps=1e-4, mask=None):
    """
    按组计算优势（advantage）。同一道题的 G 份解答是一组，连续排列：第 0 … G−1 行是第一组，以此类推。

    【思路】策略梯度 ∇J = E[Σ_t ∇log π(a_t | c_t) · A]。A 可以是奖励本身，也可以减去一个不依赖于动作的基线 b
        （因为 E[∇log π] = 0，减去 b 不改变期望，只减小方差）。组内的其他解答就是现成的基线：
            "none"：A_i = r_i                                      REINFORCE，没有基线
            "mean"：A_i = r_i − mean(r)                            组平均基线（Dr. GRPO）
            "rloo"：A_i = r_i − mean_{j≠i} r_j = G/(G−1)·(r_i − mean(r))   留一法：基线不含自己，严格无偏
            "grpo"：A_i = (r_i − mean(r)) / (std(r) + eps)         GRPO；std 是样本标准差（除以 G−1，同 TRL）
                scale="group" 用本组的 std，"batch" 用整批奖励的 std，"none" 不除（等于 "mean"）
        奖励全都相同的组（全对或全错）：除 "none" 外优势全是 0 —— 这一组对梯度没有贡献
        （TRL 记录为 frac_reward_zero_std；DAPO 的动态采样把它们丢掉）。这里把这种组的优势精确地设为 0。

        过程奖励（rewards 是 (B, L) 的每步奖励，配 mask）按 DeepSeekMath 的做法：先把每步奖励用"同组所有步"的
        平均（和标准差）标准化，再从后往前累加（reward-to-go）：A_{i,t} = Σ_{t' ≥ t} r̃_{i,t'}。
        "rloo" 时基线是同组**其他**解答的所有步的平均。
    【参数】rewards：(B,) 结果奖励，或 (B, L) 每步奖励；group_size：G（≥ 2，B 必须是 G 的倍数）；
        method："none" / "mean" / "rloo" / "grpo"；scale："group" / "batch" / "none"（只对 "grpo" 有用）；
        eps：> 0；mask：(B, L) bool，每步奖励时必须给
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
    method = as_choice("method", method, ADVANTAGES)
    scale = as_choice("scale", scale, SCALES)
    eps = as_real("eps", eps, 0.0, low_open=True)
    r = np.asarray(rewards, dtype=float)
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
    if not np.all(np.isfinite(r)):
        raise ValueError("rewards 里有 NaN 或无穷")
    if m is None:
        return _outcome_advantages(r, g, method, scale, eps)
    return _process_advantages(r, m, g, method, scale, eps)


def _outcome_advantages(r, g, method, scale, eps):
    grp = r.reshape(-1, g)
    if method == "none":
        return grp.reshape(-1).copy()
    total = grp.sum(axis=1, keepdims=True)
    if method == "rloo":
        adv = grp - (total - grp) / (g - 1)
    else:
        adv = grp - total / g
        if method == "grpo" and scale != "none":
            std = grp.std(axis=1, ddof=1, keepdims=True) if scale == "group" else r.std(ddof=1)
            adv = adv / (std + eps)
    const = np.ptp(grp, axis=1) == 0
    adv[const] = 0.0
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
        lo = np.where(mg, rg, np.inf).min(axis=(1, 2))
        hi = np.where(mg, rg, -np.inf).max(axis=(1, 2))
        norm = np.where(mg & ~(lo == hi)[:, None, None], norm, 0.0).reshape(B, L)
    norm = np.where(m, norm, 0.0)
    return np.where(m, np.cumsum(norm[:, ::-1], axis=1)[:, ::-1], 0.0)


class Surrogate(NamedTuple):
    """clipped_surrogate 的结果：每步的损失、哪些步在下界被裁剪、哪些步在上界被裁剪。"""
    loss: np.ndarray
    clipped_low: np.ndarray
    clipped_high: np.ndarray


def clipped_surrogate(ratio, adv, eps_low=0.2, eps_high=0.2):
    """
    PPO / GRPO / DAPO 的裁剪替代损失（每一步一个数）。

    【思路】l = − min( ρ A ,  clip(ρ, 1 − ε_low, 1 + ε_high) A )
        · A > 0（好动作）：ρ 超过 1 + ε_high 以后损失不再下降 —— 这一批数据已经把它的概率推得够高了，别再推；
        · A < 0（坏动作）：ρ 低于 1 − ε_low 以后同理。
        被裁剪的步梯度为 0。裁剪只在"比率已经离开 1"时发生，所以 μ = 1（每批只更新一次，ρ ≡ 1）时从不裁剪。
        DAPO 的 clip-higher：ε_high = 0.28 > ε_low = 0.2，让低概率的好动作能涨得更多，防止熵塌缩。
    【参数】ratio：ρ 数组；adv：A 数组（形状相同或可广播）；eps_low、eps_high：≥ 0（可以是 inf 表示不裁剪）
    【返回】Surrogate(loss, clipped_low, clipped_high)：和 ratio 同形状；
        clipped_low = (ρ < 1 − ε_low) & (A < 0)，clipped_high = (ρ > 1 + ε_high) & (A > 0)
        （和 TRL 记录 clip_ratio/low_mean、clip_ratio/high_mean 的定义相同）
    【边界】ratio 必须 > 0（它是两个概率之比）。
        在这个玩具里，裁剪要在 μ > 1 且学习率足够大时才真的发生（默认 lr = 2 时比率几乎不离开 [0.8, 1.2]，
        PPO / DAPO 预设和 GRPO 的曲线一样）。裁剪确实发生时（notebook 06：1e8、μ = 4、lr = 30），clip-higher
        让"同样可行"的低概率做法 —— 不咬人情境里的 bug —— 保留了更多概率，熵更高，pass@1 不变；
        这和 DAPO 在真实 LLM 上看到的方向一致。单看一批数据，它让低概率、优势为正的 correct 涨得更多。
    【例子】clipped_surrogate(np.array([1.0, 1.5, 0.5]), np.array([1.0, 1.0, -1.0]))
        → loss [−1.0, −1.2, 0.8]，clipped_high [F, T, F]，clipped_low [F, F, T]
    【Python 小知识】np.minimum 是逐元素的 min（内置的 min 只能比两个数）；np.clip(x, lo, hi) 把 x 夹在区间里。
    """
    el, eh = _as_eps("eps_low", eps_low), _as_eps("eps_high", eps_high)
    rho, a = np.asarray(ratio, dtype=float), np.asarray(adv, dtype=float)
    if np.any(~(rho > 0)):
        raise ValueError("ratio（重要性比率 π_θ / π_old）必须都 > 0")
    unclipped = rho * a
    clipped = np.clip(rho, 1.0 - el, 1.0 + eh) * a
    loss = -np.minimum(unclipped, clipped)
    return Surrogate(loss, (rho < 1.0 - el) & (a < 0), (rho > 1.0 + eh) & (a > 0))


def _as_eps(name, value):
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and value == math.inf:
        return math.inf
    return as_real(name, value, low=0.0)


KL_CLAMP = 10.0
"""训练损失里 k3 的上限（verl 的 low_var_kl 把它夹在 [−10, 10]）；kl_estimates 本身不夹。"""


class KLEstimates(NamedTuple):
    """kl_estimates 的结果：三个估计 k1、k2、k3（每步一个数）。"""
    k1: np.ndarray
    k2: np.ndarray
    k3: np.ndarray


def kl_estimates(logp, logp_ref):
    """
    Schulman 的三个 KL 估计（每步一个数），估计的是 KL(π_θ ‖ π_ref)。

    【思路】动作 x 从 π_θ 采样，r = π_ref(x) / π_θ(x)，log r = logp_ref − logp：
            k1 = −log r                无偏，方差大，可以是负数
            k2 = (log r)² / 2          有偏，方差小
            k3 = (r − 1) − log r       无偏，方差小，永远 ≥ 0（TRL 和 GRPO 论文用它）
        对 logp 的导数（引擎算梯度用）：k1' = 1，k2' = −log r，k3' = 1 − r。
        在这个玩具里精确的 KL 也算得出来（每个情境 Σ_j π_j log(π_j / π_ref,j)），history 里 kl_exact 就是它。
    【参数】logp：当前策略下所选动作的对数概率；logp_ref：参考策略下同一动作的对数概率（形状相同）
    【返回】KLEstimates(k1, k2, k3)
    【例子】kl_estimates(np.log([0.5]), np.log([0.25])) → k1 = log 2 ≈ 0.693，k2 ≈ 0.240，k3 = 0.5 − 1 + 0.693 ≈ 0.193
    """
    lp, lr = np.asarray(logp, dtype=float), np.asarray(logp_ref, dtype=float)
    if lp.shape != lr.shape:
        raise ValueError(f"logp 的形状 {lp.shape} 和 logp_ref 的形状 {lr.shape} 必须相同")
    log_r = lr - lp
    return KLEstimates(-log_r, 0.5 * log_r ** 2, np.expm1(log_r) - log_r)


def aggregation_weights(mask, how="seq-mean", max_len=None):
    """
    每一步在总损失里的权重 w（B, L），loss = Σ w · l。

    【思路】三种聚合（B 份解答，第 i 份有 |o_i| 步）：
            "seq-mean"：w = 1 / (B · |o_i|)       先按解答内平均，再对解答平均（原始 GRPO）
            "token-mean"：w = 1 / Σ_i |o_i|       所有步一起平均（DAPO）
            "constant"：w = 1 / (B · L_max)       常数归一化（Dr. GRPO）
        Dr. GRPO 指出 "seq-mean" 的长度偏差：长的错误解答每步受到的惩罚更小。
    【参数】mask：(B, L) bool；how：上面三种之一；max_len：L_max，默认 mask.shape[1]
    【返回】(B, L) float 数组，mask 外是 0
    【例子】两份解答，3 步和 1 步（L = 3）："seq-mean" → 每步 1/6、1/6、1/6 和 1/2；"token-mean" → 每步 1/4；
        "constant" → 每步 1/6
    """
    m = np.asarray(mask, dtype=bool)
    if m.ndim != 2:
        raise ValueError(f"mask 必须是 (B, L) 的二维数组，收到形状 {m.shape}")
    how = as_choice("how", how, AGGREGATIONS)
    B, L = m.shape
    if B == 0:
        return np.zeros(m.shape)
    if how == "seq-mean":
        lengths = m.sum(axis=1)
        w = 1.0 / (B * np.maximum(lengths, 1))
        return np.where(m, w[:, None], 0.0)
    if how == "token-mean":
        return np.where(m, 1.0 / max(int(m.sum()), 1), 0.0)
    max_len = L if max_len is None else as_int("max_len", max_len, low=1)
    return np.where(m, 1.0 / (B * max_len), 0.0)


def aggregate_loss(per_step, mask, how="seq-mean", max_len=None):
    """
    把每一步的损失合成一个数：Σ w · l，w 见 aggregation_weights。

    【参数】per_step：(B, L) 每步损失；mask：(B, L) bool；how："seq-mean" / "token-mean" / "constant"；
        max_len：常数归一化的 L_max（默认 L）
    【返回】float
    【例子】per_step = [[1, 1, 0], [4, 0, 0]]，mask = [[T, T, F], [T, F, F]]：
        "seq-mean" → (1 + 4) / 2 = 2.5；"token-mean" → 6 / 3 = 2.0；"constant" → 6 / (2 × 3) = 1.0
    """
    w = aggregation_weights(mask, how, max_len)
    l = np.asarray(per_step, dtype=float)
    if l.shape != w.shape:
        raise ValueError(f"per_step 的形状 {l.shape} 必须和 mask 的形状 {w.shape} 相同")
    return float(np.sum(np.where(w != 0, w * l, 0.0)))


# =============================================================================
# 奖励与梯度
# =============================================================================
def score_vectors(rollouts):
    """
    每份解答的"得分向量" S_i = Σ_t (e_{a_t} − π(·|c_t))，按情境放好。

    【思路】∂ log π(a | c) / ∂ z = e_a − π(· | c)（第 02 个 notebook 第 1 节）；整份解答的 log 概率是各步之和，
        所以它对 Δ 的梯度就是把每一步的 e_a − π 加到它所在情境的那一行。REINFORCE 的估计是 (1/B) Σ_i A_i S_i。
    【参数】rollouts：sampler.Rollouts（probs 是采样时的概率，temperature = 1）
    【返回】numpy 数组，形状 (B, 12, 3)
    【例子】S = score_vectors(r); g_hat = (rewards[:, None, None] * S).mean(axis=0)
    【Python 小知识】np.add.at 是"不跳过重复下标"的 +=：同一份解答两次经过同一个情境，两步都加进去。
    """
    m = rollouts.mask
    out = np.zeros((len(rollouts), _N_CTX, 3))
    np.add.at(out, (np.nonzero(m)[0], rollouts.ctx[m]), np.eye(3)[rollouts.actions[m]] - rollouts.probs[m])
    return out


def step_rewards(rollouts, kind="outcome"):
    """
    奖励：outcome 是 (B,) 的 0/1（最终答案对不对）；process / procedure 是 (B, L) 的每步 0/1。

    【思路】
        · "outcome"：只看最终答案。做对的解答里每一步都被奖励 —— 包括一个"碰巧没出错的 bug 步"。
        · "process"：每一步的值对不对（rollouts.step_ok：这一步的值等于对它自己的输入做正确运算的结果）。
          粗心的一步被单独惩罚，前面做对的步不受连累（信用分配更准）；但碰巧没出错的 bug 步还是"对"的。
        · "procedure"：每一步用的是不是正确的做法 —— 一个能读懂推理过程的"完美过程奖励模型"：
          碰巧得到正确值的 bug 步也算错。真实系统里这样的奖励模型很难得到，这里用它做对照。
    【参数】rollouts：sampler.Rollouts；kind："outcome" / "process" / "procedure"
    【返回】float 数组：outcome 是 (B,)，另外两种是 (B, L)（mask 外是 0）
    【例子】r = sample_rollouts(TrainableLLM(1e9), problems, 8, np.random.default_rng(0))
        step_rewards(r).mean() 就是这一批的采样 pass@1；step_rewards(r, "process").sum(axis=1) 是每份解答做对了几步
    """
    kind = as_choice("kind", kind, REWARDS)
    if kind == "outcome":
        return rollouts.correct.astype(float)
    ok = rollouts.step_ok if kind == "process" else rollouts.actions == 0
    return np.where(rollouts.mask, ok, False).astype(float)


def _log_softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _entropy_table(logits, temperature=1.0):
    """每个情境的熵 H = −Σ π log π（12,），π = softmax(logits / T)。"""
    logpi = _log_softmax(np.asarray(logits) / temperature)
    return -(np.exp(logpi) * logpi).sum(axis=1)


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


def policy_loss(model, rollouts, advantages, config=None, *, ref_params=None, max_len=None, surrogate_fn=None):
    """
    一批解答上的损失和它对 Δ 的精确梯度（不更新模型）。引擎每次更新调用的就是它。

    【思路】见模块说明的公式。π_old 取 rollouts.probs（采样时的概率）；π_θ 取模型**现在**的参数；
        每一步的梯度都是"一个数 × (onehot − π)"，所以同一情境的步可以用 np.bincount 一次加起来：
            grad[c] = Σ_{步在情境 c} s · onehot(a) − (Σ_{步在情境 c} s) · π_c
        μ = 1、β = 0、没有熵奖励、T = 1 时，−grad 恰好等于参考模块里对每一步
        add_grad(grads, 情境, 动作, 概率, 权重 = w · A) 的结果（测试检查到 1e-12）。
    【参数】model：TrainableLLM；rollouts：sampler.Rollouts；advantages：(B,) 或 (B, L)；config：RLConfig 或预设名；
        ref_params：参考策略的 Δ（12, 3），β > 0 时需要，默认全 0；max_len：常数聚合的 L_max；
        surrogate_fn：自定义的替代损失（签名同 clipped_surrogate），默认 clipped_surrogate 的解析版本
    【返回】LossResult(loss, grad, surrogate, kl_term, entropy_term, clip_low, clip_high, kl_est)
    【边界】自定义 surrogate_fn 时，对 ρ 的导数用中心差分（h = 1e-6）从它的返回值算出 —— 替代损失对 ρ 是分段线性的，
        所以只要 ρ 不在拐点附近，这是精确的（误差约 1e-10）。advantages 里有 NaN 时报 ValueError。
    【例子】
        r = sample_rollouts(model, problems, 8, np.random.default_rng(0))
        res = policy_loss(model, r, group_advantages(step_rewards(r), 8))
        res.loss        # μ = 1 时约等于 0（ρ ≡ 1，组内优势之和为 0）
        res.grad        # 但梯度不是 0：model.params -= 2.0 * res.grad 就是一步 GRPO
    【Python 小知识】NamedTuple 的结果既可以按名字取（res.grad），也可以像元组一样解包。
    """
    cfg = _resolve_config(config)
    _check_model(model)
    data = _prepare_batch(rollouts, advantages, cfg, max_len)
    base = base_logit_table(model.size)
    ref = np.zeros((_N_CTX, 3)) if ref_params is None else np.asarray(ref_params, dtype=float)
    ref_logp = _log_softmax((base + ref) / cfg.temperature)[data.cm, data.am]
    return _loss_and_grad(model.params, base, data, cfg, ref_logp, surrogate_fn)


class _Batch(NamedTuple):
    cm: np.ndarray        # (N,) 每个有效步的情境
    am: np.ndarray        # (N,) 动作
    flat: np.ndarray      # (N,) 情境 × 3 + 动作
    old_p: np.ndarray     # (N,) 采样时该动作的概率
    adv: np.ndarray       # (N,) 这一步的优势
    w: np.ndarray         # (N,) 聚合权重


def _prepare_batch(rollouts, advantages, cfg, max_len, check=True):
    mask = rollouts.mask
    adv = np.asarray(advantages, dtype=float)
    B = mask.shape[0]
    lengths = mask.sum(axis=1)
    if adv.shape == (B,):
        adv_steps = np.repeat(adv, lengths)           # 每行的有效步在最前面，按行展开的顺序和 mask 一致
    elif adv.shape == mask.shape:
        adv_steps = adv[mask]
    else:
        raise ValueError(f"advantages 的形状必须是 ({B},) 或 {mask.shape}，收到 {adv.shape}")
    if check and not np.all(np.isfinite(adv_steps)):
        raise ValueError("advantages 里有 NaN 或无穷")
    n = int(lengths.sum())
    if cfg.loss_agg == "seq-mean":
        w = np.repeat(1.0 / (B * np.maximum(lengths, 1)), lengths)
    elif cfg.loss_agg == "token-mean":
        w = np.full(n, 1.0 / max(n, 1))
    else:
        w = np.full(n, 1.0 / (B * (mask.shape[1] if max_len is None else max_len)))
    cm, am = rollouts.ctx[mask], rollouts.actions[mask]
    old_p = rollouts.probs[mask][np.arange(n), am]
    return _Batch(cm, am, cm * 3 + am, old_p, adv_steps, w)


def _loss_and_grad(params, base, data, cfg, ref_logp, surrogate_fn, want_kl_est=True):
    T = cfg.temperature
    z = base + params
    pi = softmax_rows(z) if T == 1.0 else softmax_rows(z, T)     # 和采样器同一个函数：参数没变时 ρ 恰好是 1
    cm, am, w, A = data.cm, data.am, data.w, data.adv
    rho = pi[cm, am] / data.old_p
    el, eh = (cfg.eps_low, cfg.eps_high) if cfg.clip else (math.inf, math.inf)
    if surrogate_fn is None:
        low = (rho < 1.0 - el) & (A < 0)
        high = (rho > 1.0 + eh) & (A > 0)
        per_step = -np.minimum(rho * A, np.clip(rho, 1.0 - el, 1.0 + eh) * A)
        dl_drho = np.where(low | high, 0.0, -A)
    else:
        per_step, low, high = _call_surrogate(surrogate_fn, rho, A, el, eh)
        h = 1e-6
        plus = _call_surrogate(surrogate_fn, rho + h, A, el, eh)[0]
        minus = _call_surrogate(surrogate_fn, rho - h, A, el, eh)[0]
        dl_drho = (plus - minus) / (2 * h)
    surrogate = float(w @ per_step)
    s = w * dl_drho * rho                                  # ∂loss/∂log π(a)
    kl_term, kl_est = 0.0, math.nan
    need_log = cfg.beta > 0 or cfg.entropy_coef != 0 or want_kl_est
    logpi = _log_softmax(z / T) if need_log else None
    if len(cm) and (cfg.beta > 0 or want_kl_est):
        est = getattr(kl_estimates(logpi[cm, am], ref_logp), cfg.kl_estimator)
        kl_est = float(est.mean())
        if cfg.beta > 0:
            log_r = ref_logp - logpi[cm, am]
            if cfg.kl_estimator == "k3":
                # 和 verl 的 low_var_kl 一样，把 k3 夹在 ≤ KL_CLAMP：远离参考策略的那几步不再回传梯度，
                # 也不会因为 exp(log r) 溢出而得到 inf / NaN（学习率很大时会发生）。
                log_r = np.minimum(log_r, 30.0)
                k3 = np.expm1(log_r) - log_r
                est = np.minimum(k3, KL_CLAMP)
                dk = np.where(k3 <= KL_CLAMP, -np.expm1(log_r), 0.0)
            else:
                dk = np.ones_like(log_r) if cfg.kl_estimator == "k1" else -log_r
            kl_term = cfg.beta * float(w @ est)
            s = s + cfg.beta * w * dk
    grad = (np.bincount(data.flat, weights=s, minlength=3 * _N_CTX).reshape(_N_CTX, 3)
            - np.bincount(cm, weights=s, minlength=_N_CTX)[:, None] * pi) / T
    entropy_term = 0.0
    if cfg.entropy_coef != 0 and len(cm):
        plogp = np.where(pi > 0, pi * logpi, 0.0)
        H = -plogp.sum(axis=1)
        Wc = np.bincount(cm, weights=w, minlength=_N_CTX)
        dH = -(plogp + pi * H[:, None]) / T
        entropy_term = -cfg.entropy_coef * float(w @ H[cm])
        grad = grad - cfg.entropy_coef * Wc[:, None] * dH
    n = max(len(cm), 1)
    return LossResult(surrogate + kl_term + entropy_term, grad, surrogate, kl_term, entropy_term,
                      np.count_nonzero(low) / n, np.count_nonzero(high) / n, kl_est)


def _call_surrogate(fn, rho, A, el, eh):
    out = fn(rho, A, el, eh)
    if isinstance(out, tuple) and len(out) == 3:
        loss, low, high = out
        low = np.zeros(rho.shape, bool) if low is None else np.asarray(low, dtype=bool)
        high = np.zeros(rho.shape, bool) if high is None else np.asarray(high, dtype=bool)
    else:
        loss, low, high = out, np.zeros(rho.shape, bool), np.zeros(rho.shape, bool)
    loss = np.asarray(loss, dtype=float)
    if loss.shape != rho.shape or low.shape != rho.shape or high.shape != rho.shape:
        raise ValueError(f"surrogate_fn 必须返回和 ratio 形状相同的 (每步损失, 下界裁剪, 上界裁剪)，"
                         f"ratio 的形状是 {rho.shape}，收到损失的形状 {loss.shape}")
    if not np.all(np.isfinite(loss)):
        raise ValueError("surrogate_fn 返回的损失里有 NaN 或无穷")
    return loss, low, high


def _check_model(model):
    if not isinstance(model, TrainableLLM):
        raise TypeError(f"model 必须是 TrainableLLM（有可以训练的参数 params），收到 {type(model).__name__}")
    if np.shape(model.params) != (_N_CTX, 3):
        raise ValueError(f"model.params 的形状必须是 ({_N_CTX}, 3)，收到 {np.shape(model.params)}")


# =============================================================================
# 训练记录
# =============================================================================
COLUMN_NAMES = {
    "iteration": "迭代", "round": "轮次", "reward": "平均奖励", "pass1_exact": "精确pass@1",
    "pass1_sampled": "采样pass@1", "entropy": "熵", "kl_est": "KL估计", "kl_exact": "KL精确",
    "clip_low": "裁剪·低", "clip_high": "裁剪·高", "zero_std": "零方差组", "groups": "训练组数",
    "grad_norm": "梯度范数", "loss": "损失", "samples": "已采样", "kept": "保留", "rationalized": "提示后做对",
}
"""history 每一列的中文表头。"""

RL_COLUMNS = ("iteration", "reward", "pass1_exact", "pass1_sampled", "entropy", "kl_est", "kl_exact",
              "clip_low", "clip_high", "zero_std", "groups", "grad_norm", "loss", "samples")


class History(Mapping):
    """
    训练记录：{列名: 每次迭代一个值的 list}，外加元数据（配置、种子、有没有被中断）。

    【思路】它是一个只读的 Mapping，所以 hist["pass1_exact"]、list(hist)、dict(hist) 都可以直接用，
        画图函数、保存函数（toyllm.checkpoint.save_model(..., history=hist)）也都把它当字典用。
        RL 的列（train 返回的）：
            iteration 第几次迭代（从 1 开始）；reward 这一次采样的平均奖励；
            pass1_exact 本次更新**之后**的模型在留出题上的精确 pass@1；pass1_sampled 这一次采样的解答里做对的比例；
            entropy 采样策略在经过的情境上的平均熵；kl_est / kl_exact 采样策略到参考策略的 KL（估计 / 精确）；
            clip_low / clip_high 被裁剪的步的比例（μ 次更新的平均）；zero_std 奖励全相同的组的比例；
            groups 实际用来训练的组数；grad_norm 梯度的范数（μ 次平均）；loss 损失（μ 次平均）；
            samples 到目前为止一共采样了多少份解答。
    【属性】meta：dict（config、seed、algorithm……，可以写进 JSON）；interrupted：是否被 Ctrl+C 中断；
        message：一句中文说明；n_rows：行数
    【例子】hist["pass1_exact"][-1]；print(hist.to_table(every=10))；hist.meta["config"]["lr"]
    【Python 小知识】继承 collections.abc.Mapping 只需实现 __getitem__、__iter__、__len__，
        就自动得到 keys()、items()、get()、in ……
    """

    def __init__(self, columns, meta=None, headers=None):
        self._data = {c: [] for c in columns}
        self.meta = dict(meta or {})
        self.headers = {**COLUMN_NAMES, **(headers or {})}
        self.interrupted = False
        self.message = ""

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)

    def __repr__(self):
        state = "，已中断" if self.interrupted else ""
        return f"History({self.n_rows} 行 × {len(self._data)} 列{state}：{', '.join(self._data)})"

    @property
    def n_rows(self):
        """行数（完成的迭代次数）。"""
        return len(next(iter(self._data.values()))) if self._data else 0

    @property
    def config(self):
        """训练用的配置（dict），没有时是 None。"""
        return self.meta.get("config")

    @property
    def seed(self):
        """随机种子，没有时是 None。"""
        return self.meta.get("seed")

    def append(self, row):
        """追加一行：row 必须恰好包含每一列。（训练循环用；一般不需要自己调用）"""
        if set(row) != set(self._data):
            missing = [c for c in self._data if c not in row]
            extra = [c for c in row if c not in self._data]
            raise ValueError(f"row 的列和 history 不一致：缺少 {missing}，多出 {extra}")
        for c in self._data:
            self._data[c].append(row[c])

    def last(self):
        """最后一行 {列名: 值}；还没有任何一行时返回空字典。"""
        return {c: v[-1] for c, v in self._data.items()} if self.n_rows else {}

    def to_dict(self):
        """普通的字典 {列名: list}（复制一份，可以写进 JSON）；元数据不在里面，见 meta、interrupted、message。"""
        return {c: list(v) for c, v in self._data.items()}

    def to_table(self, every=1, columns=None, last=True, rows=None, header=True, min_width=0):
        """
        把记录排成中文表格（字符串）。

        【参数】every：每隔几行显示一行（≥ 1）；columns：要显示的列（默认全部）；last：是否总是显示最后一行；
            rows：直接指定显示哪几行（下标的列表，给了就不看 every / last）；header：是否显示表头；
            min_width：每列至少多宽（一行一行分开打印时用固定宽度，上下才对得齐）
        【返回】str；被中断时最后附一行说明
        【例子】print(hist.to_table(every=20, columns=["iteration", "pass1_exact", "entropy"]))
        """
        every = as_int("every", every, low=1)
        min_width = as_int("min_width", min_width, low=0)
        cols = list(self._data) if columns is None else list(columns)
        for c in cols:
            if c not in self._data:
                raise ValueError(f"没有这一列 {c!r}；可用的列：{'、'.join(self._data)}")
        n = self.n_rows
        if rows is None:
            idx = [i for i in range(n) if i % every == 0]
            if last and n and (not idx or idx[-1] != n - 1):
                idx.append(n - 1)
        else:
            idx = [as_int("rows 里的下标", i, -n, n - 1) % max(n, 1) for i in rows]
        cells = [[_fmt_cell(self._data[c][i]) for c in cols] for i in idx]
        heads = [self.headers.get(c, c) for c in cols]
        widths = [max([display_width(h), min_width] + [len(r[j]) for r in cells]) for j, h in enumerate(heads)]
        lines = ["  ".join(pad(h, w, "right") for h, w in zip(heads, widths))] if header else []
        lines += ["  ".join(pad(x, w, "right") for x, w in zip(r, widths)) for r in cells]
        if self.message and rows is None:
            lines.append(self.message)
        return "\n".join(lines)


def _fmt_cell(x):
    if isinstance(x, (bool, np.bool_)):
        return "是" if x else "否"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if not math.isfinite(x):
            return str(x)
        if x != 0 and abs(x) < 1e-3:
            return f"{x:.1e}"
        return f"{x:.4f}"
    return str(x)


# =============================================================================
# 训练循环
# =============================================================================
def default_problems(seed=0, n_train=256, n_heldout=200, min_steps=3, max_steps=8):
    """
    课上用的训练题和留出题（两批不同的题，同一个种子总是同样的题）。

    【参数】seed：出题的随机种子；n_train、n_heldout：题数（≥ 1）；min_steps、max_steps：每道题的步数范围
    【返回】(train, heldout)：两个 list of Problem
    【例子】train_set, heldout = default_problems(0)
    """
    seed = as_int("seed", seed, low=0)
    n_train = as_int("n_train", n_train, low=1)
    n_heldout = as_int("n_heldout", n_heldout, low=1)
    rng = random.Random(seed)
    train_set = make_problem_set(rng, n_train, min_steps, max_steps)
    heldout = make_problem_set(rng, n_heldout, min_steps, max_steps)
    return train_set, heldout


def _as_problems(name, problems):
    if isinstance(problems, ProblemBatch):
        return problems
    if problems is None or isinstance(problems, (str, bytes)) or not hasattr(problems, "__iter__"):
        raise TypeError(f"{name} 必须是 Problem 的列表（例如 make_problem_set(...) 的结果），收到 {problems!r}")
    problems = list(problems)
    if not problems:
        raise ValueError(f"{name} 不能为空")
    for p in problems:
        if not isinstance(p, Problem):
            raise TypeError(f"{name} 里的每一项都必须是 Problem，收到 {type(p).__name__}")
    return prepare_problems(problems)


def _sub_batch(batch, idx):
    """题目批的一部分（行 idx），列数不变，这样几批采样的结果可以直接接起来。"""
    problems = operator.itemgetter(*idx)(batch.problems) if len(idx) > 1 else (batch.problems[idx[0]],)
    return ProblemBatch(batch.start[idx], batch.ops[idx], batch.operands[idx], batch.mask[idx], batch.answer[idx],
                        batch.lengths[idx], problems)


def _concat(rolls):
    """把几批 Rollouts 接起来（problem 字段仍是各批内部的题号；损失只用"每 G 行一组"的顺序）。"""
    if len(rolls) == 1:
        return rolls[0]
    fields = {f.name: (rolls[0].n if f.name == "n" else np.concatenate([getattr(r, f.name) for r in rolls]))
              for f in dataclasses.fields(Rollouts)}
    return Rollouts(**fields)


def _take_groups(roll, keep, G):
    """只保留 keep（每组一个 bool）为 True 的组。"""
    rows = np.repeat(keep, G)
    return Rollouts(**{f.name: (roll.n if f.name == "n" else getattr(roll, f.name)[rows])
                       for f in dataclasses.fields(Rollouts)})


def _collect(model, batch, cfg, rng):
    """
    一次迭代的采样。返回 (采到的每一批, 用来训练的每一批, 奖励全相同的组数)。
    不开动态采样时只采一批、全部用来训练；开了就丢掉奖励全相同的组，继续采，直到凑满 batch_problems 组
    或者采了 max_draws 批（多出来的组截掉，verl 也是这样）。
    """
    G = cfg.group_size
    drawn, kept, n_zero, n_kept = [], [], 0, 0
    for _ in range(cfg.max_draws if cfg.dynamic_sampling else 1):
        idx = np.sort(rng.choice(len(batch), size=cfg.batch_problems, replace=False))
        roll = sample_rollouts(model, _sub_batch(batch, idx), G, rng, cfg.temperature)
        drawn.append(roll)
        const = _constant_groups(step_rewards(roll, cfg.reward), roll.mask, G)
        n_zero += int(const.sum())
        if not cfg.dynamic_sampling:
            kept.append(roll)
            break
        keep = ~const & (np.cumsum(~const) <= cfg.batch_problems - n_kept)
        if keep.any():
            kept.append(_take_groups(roll, keep, G))
            n_kept += int(keep.sum())
        if n_kept >= cfg.batch_problems:
            break
    return drawn, kept, n_zero


def _constant_groups(rewards, mask, G):
    if rewards.ndim == 1:
        return np.ptp(rewards.reshape(-1, G), axis=1) == 0
    L = rewards.shape[1]
    rg, mg = rewards.reshape(-1, G, L), mask.reshape(-1, G, L)
    lo = np.where(mg, rg, np.inf).min(axis=(1, 2))
    hi = np.where(mg, rg, -np.inf).max(axis=(1, 2))
    return lo == hi


class _Optimizer:
    """朴素梯度下降（sgd），或 Adam（β1 = 0.9，β2 = 0.999，ε = 1e-8，和 torch.optim.AdamW 去掉权重衰减相同）。"""

    def __init__(self, kind, lr):
        self.kind, self.lr, self.t = kind, lr, 0
        self.m = np.zeros((_N_CTX, 3))
        self.v = np.zeros((_N_CTX, 3))

    def step(self, grad):
        if self.kind == "sgd":
            return self.lr * grad
        self.t += 1
        self.m = 0.9 * self.m + 0.1 * grad
        self.v = 0.999 * self.v + 0.001 * grad * grad
        m_hat = self.m / (1 - 0.9 ** self.t)
        v_hat = self.v / (1 - 0.999 ** self.t)
        return self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)


def _per_rollout_reward(rewards, mask):
    if rewards.ndim == 1:
        return rewards
    return rewards.sum(axis=1) / np.maximum(mask.sum(axis=1), 1)


def train(model, config=None, train_problems=None, heldout_problems=None, *, advantage_fn=None, surrogate_fn=None,
          callback=None, reference=None):
    """
    用强化学习训练模型（原地修改 model.params），返回训练记录 History。

    【思路】见模块说明。每次迭代：选题 → 每题采样 G 份 → 奖励 → 优势 → μ 次梯度下降。
        动态采样打开时，奖励全相同的组被丢掉，继续采新题，直到凑满 batch_problems 组（最多采 max_draws 批）。
        参考策略 π_ref（KL 用）是训练开始时模型的一份冻结的拷贝（或者 reference 指定的模型）。
        每次迭代结束后调用 callback(history, model)（进度条、画图、提前停止都可以放在这里）。
    【参数】
        model：TrainableLLM（有思维链），原地训练
        config：RLConfig，或预设名（"grpo"、"dapo"……），默认 RLConfig()（= GRPO）
        train_problems / heldout_problems：list of Problem；默认 default_problems(0)
        advantage_fn：自己写的优势函数，签名同 group_advantages 的前两个参数 advantage_fn(rewards, group_size) → A；
            给了就代替 config.advantage（只支持 reward="outcome"）
        surrogate_fn：自己写的替代损失，签名同 clipped_surrogate(ratio, adv, eps_low, eps_high)
            → (每步损失, 下界裁剪, 上界裁剪)，或者只返回每步损失；梯度从它的返回值算（见 policy_loss）
        callback：每次迭代后调用 callback(history, model)
        reference：参考策略（TrainableLLM，大小必须相同），默认训练开始时的 model
    【返回】History（列见 History 的说明）；meta 里有 config、seed、start_pass1_exact 等
    【边界】训练中按 Ctrl+C（KeyboardInterrupt）：循环停下，模型保留已经做完的更新，返回已完成迭代的记录，
        history.interrupted = True，history.message 说明停在哪里（不会把异常抛出去）。
        batch_problems 大于训练题数时报 ValueError。
    【例子】
        hist = train(TrainableLLM(1e9), "grpo", *default_problems(0))
        hist = train(model, preset("dapo", iterations=100), train_set, heldout,
                     advantage_fn=my_advantages, surrogate_fn=my_surrogate)
    【Python 小知识】try / except KeyboardInterrupt 可以接住 Ctrl+C：notebook 里按"中断"按钮也是发这个异常。
    """
    cfg = _resolve_config(config)
    _check_model(model)
    if not model.cot:
        raise ValueError("只能训练有思维链的模型（cot=True）")
    if train_problems is None or heldout_problems is None:
        d_train, d_held = default_problems(0)
        train_problems = d_train if train_problems is None else train_problems
        heldout_problems = d_held if heldout_problems is None else heldout_problems
    batch = _as_problems("train_problems", train_problems)
    paths = heldout_problems if isinstance(heldout_problems, CorrectPaths) else \
        correct_paths(_as_problems("heldout_problems", heldout_problems).problems)
    if cfg.batch_problems > len(batch):
        raise ValueError(f"batch_problems = {cfg.batch_problems} 大于训练题数 {len(batch)}；请减小 batch_problems 或多给一些题")
    for name, fn in (("advantage_fn", advantage_fn), ("surrogate_fn", surrogate_fn), ("callback", callback)):
        if fn is not None and not callable(fn):
            raise TypeError(f"{name} 必须是函数（可调用对象），收到 {fn!r}")
    if advantage_fn is not None and cfg.reward != "outcome":
        raise ValueError(f"自定义的 advantage_fn 只支持 reward='outcome'，收到 reward={cfg.reward!r}")
    if reference is None:
        ref_params = model.params.copy()
    else:
        _check_model(reference)
        if reference.size != model.size:
            raise ValueError(f"reference 的大小 {reference.size:g} 必须和 model 的大小 {model.size:g} 相同")
        ref_params = reference.params.copy()

    G, T = cfg.group_size, cfg.temperature
    base = base_logit_table(model.size)
    ref_logp_table = _log_softmax((base + ref_params) / T)
    max_len = int(batch.mask.sum(axis=1).max())
    rng = np.random.default_rng(cfg.seed)
    start_pass = exact_pass_at_1(model, paths)
    hist = History(RL_COLUMNS, {
        "algorithm": "rl", "config": cfg.to_dict(), "seed": cfg.seed, "model_size": model.size,
        "n_train": len(batch), "n_heldout": int(paths.mask.shape[0]), "start_pass1_exact": start_pass,
        "advantage_fn": getattr(advantage_fn, "__name__", "custom") if advantage_fn else None,
        "surrogate_fn": getattr(surrogate_fn, "__name__", "custom") if surrogate_fn else None,
    })
    samples = 0
    it, updates_done = 0, 0
    opt = _Optimizer(cfg.optimizer, cfg.lr)
    try:
        for it in range(1, cfg.iterations + 1):
            updates_done = 0
            # ---- 1. 采样（动态采样时可能采好几批）----
            drawn, kept_parts, n_zero = _collect(model, batch, cfg, rng)
            samples += sum(len(d) for d in drawn)
            n_groups = sum(len(d) for d in drawn) // G
            everything = _concat(drawn)
            # ---- 2. 采样策略在这一次经过的所有步上的熵、KL（动态采样丢掉的组也算）----
            cm_all, am_all = everything.ctx[everything.mask], everything.actions[everything.mask]
            visits = np.bincount(cm_all, minlength=_N_CTX) / len(cm_all)      # 每个情境占了多少步
            logpi = _log_softmax((base + model.params) / T)
            pi = np.exp(logpi)
            log_r = ref_logp_table[cm_all, am_all] - logpi[cm_all, am_all]
            k_est = {"k1": -log_r, "k2": 0.5 * log_r ** 2, "k3": np.expm1(log_r) - log_r}[cfg.kl_estimator]
            rewards = step_rewards(everything, cfg.reward)
            row = {"iteration": it, "samples": samples,
                   "reward": float(_per_rollout_reward(rewards, everything.mask).mean()),
                   "pass1_sampled": float(everything.correct.mean()), "zero_std": n_zero / n_groups,
                   "groups": sum(len(d) for d in kept_parts) // G,
                   "entropy": float(visits @ -(pi * logpi).sum(axis=1)),
                   "kl_exact": float(visits @ (pi * (logpi - ref_logp_table)).sum(axis=1)),
                   "kl_est": float(k_est.mean())}
            # ---- 3. 奖励 → 优势 → μ 次更新 ----
            if kept_parts:
                roll = _concat(kept_parts)
                r = rewards if roll is everything else step_rewards(roll, cfg.reward)
                if advantage_fn is not None:
                    adv = np.asarray(advantage_fn(r, G), dtype=float)
                    if adv.shape != r.shape or not np.all(np.isfinite(adv)):
                        raise ValueError(f"advantage_fn 必须返回和 rewards 形状相同（{r.shape}）的有限数组，"
                                         f"收到形状 {adv.shape}")
                else:
                    adv = group_advantages(r, G, cfg.advantage, cfg.scale_rewards, cfg.std_eps,
                                           None if r.ndim == 1 else roll.mask)
                data = _prepare_batch(roll, adv, cfg, max_len, check=False)
                ref_logp = ref_logp_table[data.cm, data.am]
                stats = []
                for _ in range(cfg.mu):
                    res = _loss_and_grad(model.params, base, data, cfg, ref_logp, surrogate_fn, want_kl_est=False)
                    stats.append((res.loss, float(np.linalg.norm(res.grad)), res.clip_low, res.clip_high))
                    model.params -= opt.step(res.grad)
                    updates_done += 1
                st = np.array(stats)
                row.update(loss=float(st[:, 0].mean()), grad_norm=float(st[:, 1].mean()),
                           clip_low=float(st[:, 2].mean()), clip_high=float(st[:, 3].mean()))
            else:                                                          # 动态采样到了上限也没凑到一组
                row.update(loss=0.0, grad_norm=0.0, clip_low=0.0, clip_high=0.0)
            row["pass1_exact"] = exact_pass_at_1(model, paths)
            hist.append(row)
            updates_done = 0
            if callback is not None:
                callback(hist, model)
    except KeyboardInterrupt:
        hist.interrupted = True
        partial = f"（第 {it} 次迭代做了 {updates_done} 次更新，没有记录）" if updates_done else ""
        hist.message = (f"训练被中断（KeyboardInterrupt）：完成了 {hist.n_rows} / {cfg.iterations} 次迭代{partial}；"
                        f"模型保留了到中断为止的全部更新。")
    hist.meta["final_pass1_exact"] = exact_pass_at_1(model, paths)
    hist.meta["interrupted"] = hist.interrupted
    return hist


__all__ = ["ADVANTAGES", "AGGREGATIONS", "COLUMN_NAMES", "History", "KLEstimates", "KL_ESTIMATORS", "LossResult",
           "OPTIMIZERS", "OPTION_NAMES", "PRESETS", "PRESET_NAMES", "REWARDS", "RLConfig", "RL_COLUMNS", "SCALES", "Surrogate",
           "aggregate_loss", "aggregation_weights", "clipped_surrogate", "default_problems", "diff_presets",
           "group_advantages", "kl_estimates", "policy_loss", "preset", "presets_table", "step_rewards", "train"]
