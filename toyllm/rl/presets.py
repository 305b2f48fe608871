"""
命名的预设：REINFORCE、GRPO、PPO、DAPO……都是同一个 RLConfig 的不同取值（第 6 讲 8.4 节的表）。

【思路】config.py 定义选项（每个选项的中文名、说明、接受什么）；这里把常用的组合起上名字（PRESETS），
    并给出比较它们的工具：diff_presets（两个预设差在哪几个选项）、presets_table（排成一张表）。
    resolve_config 把"None / RLConfig / 预设名"统一成 RLConfig：train、policy_loss、小 transformer 的 rl_train 都用它。
"""

import types

from .._checks import as_list
from ..tables import display_width, pad
from .config import RLConfig, option_label
from .surrogates import peers_hint

_BASE = RLConfig()
_PRESETS = {
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
    # 每批采 3 × 32 道题（verl 文档里 DAPO 的 gen_batch_size = 3 × train_batch_size）：大多一批就凑满
    "dapo": _BASE.replace(loss_agg="token-mean", mu=4, eps_high=0.28, dynamic_sampling=True, gen_batch_scale=3),
    # ---- 第 6 讲 8.5–8.9 节 ----
    # 带 critic 的 PPO：优势来自学到的价值表 V(s) 和 GAE(γ = 1, λ = 0.95)（verl adv_estimator=gae）
    "ppo_critic": _BASE.replace(scale_rewards="batch", loss_agg="token-mean", mu=4, beta=0.04, advantage="gae",
                                lam=0.95),
    # dual-clip PPO：A < 0 的步损失最多 −3A（verl 的 vanilla 损失默认 clip_ratio_c = 3）
    "ppo_dual_clip": _BASE.replace(scale_rewards="batch", loss_agg="token-mean", mu=4, beta=0.04, clip_ratio_c=3.0),
    # GSPO：序列级比率、序列级裁剪（3e-4 / 4e-4），按解答平均（verl 的 gspo 固定用 seq-mean-token-mean）
    "gspo": _BASE.replace(policy_loss="gspo", mu=4),
    # CISPO（MiniMax-M1 §3.1）：裁剪并截断梯度的权重，梯度流过每一步的 log π；按步平均。论文不设下界、只调 ε_high：
    # eps_low = 1 让下界 1 − 1 = 0（ρ 总是 > 0，等于没有下界；verl 的 CISPO 示例写 clip_ratio_low=10）；论文没给 ε_high
    # 的值，这里用 verl 示例的 clip_ratio_high=0.2（verl 本身的默认是双边 0.2 / 0.2；TRL 的约定见 cispo_clip="trl"）
    "cispo": _BASE.replace(policy_loss="cispo", loss_agg="token-mean", mu=4, eps_low=1.0, eps_high=0.2),
    # REINFORCE++（verl reinforce_plus_plus_baseline）：组中心化后整批白化，按步平均
    "reinforce_pp": _BASE.replace(advantage="reinforce_pp", loss_agg="token-mean"),
    # 异步 GRPO：用 2 次更新之前的策略采样，截断的重要性比率 min(π_old / π_behaviour, 2) 修正（verl TIS）
    "grpo_async": _BASE.replace(staleness=2, tis_cap=2.0),
}
PRESETS = types.MappingProxyType(_PRESETS)
"""
命名的预设：同一个循环的不同配置。键："reinforce"、"rloo"、"grpo"、"dr_grpo"、"ppo"、"dapo"，
以及第 6 讲 8.5–8.9 节的 "ppo_critic"、"ppo_dual_clip"、"gspo"、"cispo"、"reinforce_pp"、"grpo_async"；
import toyllm.peers 以后再加 toyllm.peers 的 6 个（"reinforce_pp_no_baseline"、"sapo"、"gmpo"……，register_preset 登记）。

"reinforce_pp" 是 REINFORCE++ 带基线，即 verl 的 adv_estimator=reinforce_plus_plus_baseline（先减组平均再整批白化）；
verl 叫 reinforce_plus_plus 的是另一个估计（折扣回报直接整批白化，不减组平均），在 toyllm.peers 里是 "reinforce_pp_no_baseline"。

【例子】PRESETS["dapo"].eps_high → 0.28；diff_presets("grpo", "dapo") 看它们差在哪里。
【Python 小知识】types.MappingProxyType 是字典的只读视图：PRESETS["my"] = ... 会报错，预设不会被意外改掉。
"""

PRESET_NAMES = {"reinforce": "REINFORCE", "rloo": "RLOO", "grpo": "GRPO", "dr_grpo": "Dr. GRPO",
                "ppo": "PPO", "dapo": "DAPO", "ppo_critic": "PPO+critic", "ppo_dual_clip": "PPO dual-clip",
                "gspo": "GSPO", "cispo": "CISPO", "reinforce_pp": "REINFORCE++-baseline", "grpo_async": "异步 GRPO"}
"""每个预设的算法名（打印表格用）。"""


def register_preset(name, config, label):
    """
    登记一个预设：之后 preset(name)、PRESETS[name]、presets_table() 和命令行都有它（toyllm.peers 这样登记它的预设）。

    【参数】name：预设名（小写，"_" 连接）；config：RLConfig；label：算法名（表头用）
    """
    if not (isinstance(name, str) and isinstance(config, RLConfig) and isinstance(label, str)):
        raise TypeError(f"register_preset(name, config, label)：name 和 label 必须是 str，config 必须是 RLConfig，"
                        f"收到 {name!r}、{type(config).__name__}、{label!r}")
    _PRESETS[name] = config
    PRESET_NAMES[name] = label
    return config


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
        raise ValueError(f"{param}：未知的预设 {config!r}；可用的预设：{'、'.join(PRESETS)}"
                         + peers_hint("verl / TRL 的预设（sapo、gmpo、gpg、clip_cov……）"))
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
    ca, cb = resolve_config(a, "a"), resolve_config(b, "b")
    keys = dict.fromkeys([*ca.to_dict(), *cb.to_dict()])             # 写了的真实系统的选项也比
    return {k: (getattr(ca, k), getattr(cb, k)) for k in keys if getattr(ca, k) != getattr(cb, k)}


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
    configs = [resolve_config(n, "names 里的预设名") for n in names]
    every = list(dict.fromkeys(k for c in configs for k in c.to_dict()))         # 写了真实系统的选项的预设多几个键
    dicts = [{k: getattr(c, k) for k in every} for c in configs]
    keys = [k for k in every if len({repr(d[k]) for d in dicts}) > 1] if len(dicts) > 1 else every
    heads = [PRESET_NAMES.get(n, n) for n in names]
    w0 = max(display_width(option_label(k)) for k in keys) + 2 if keys else 10
    widths = [max(display_width(h), max((len(format_option(d[k])) for k in keys), default=0)) + 2
              for h, d in zip(heads, dicts)]
    lines = [pad("选项", w0) + "".join(pad(h, w, "right") for h, w in zip(heads, widths))]
    for k in keys:
        lines.append(pad(option_label(k), w0)
                     + "".join(pad(format_option(d[k]), w, "right") for d, w in zip(dicts, widths)))
    return "\n".join(lines)


def format_option(v):
    """一个选项值的中文写法：True / False → 开 / 关，None → 无，浮点数用 :g。"""
    if v is None:
        return "无"
    return ("开" if v else "关") if isinstance(v, bool) else f"{v:g}" if isinstance(v, float) else str(v)


__all__ = ["PRESETS", "PRESET_NAMES", "diff_presets", "format_option", "preset", "presets_table", "register_preset",
           "resolve_config"]
