"""
强化学习引擎：从 REINFORCE 到 GRPO、PPO、Dr. GRPO、DAPO，都是**同一个循环**，只是选项不同（第 6 讲）。

【讲义地图】每个文件是课上的一个概念：
    config.py     RLConfig、PRESETS、preset、diff_presets、presets_table —— 每个算法都是一个配置的取值
    losses.py     优势（group_advantages）、KL 估计（kl_estimator / kl_estimates）、
                  聚合（aggregation_weights / aggregate_loss）、熵（entropy）
                  —— 每个公式旁边就是它的导数，输入是普通数组，不知道玩具模型；
                  8.5–8.9 节：reinforce_pp_advantages、whiten、AGGREGATION_TABLE（聚合的各种名字）
    surrogates.py 裁剪的替代损失 clipped_surrogate（dual-clip：clip_ratio_c）、gspo_surrogate、cispo_surrogate、
                  truncated_is_weights（losses 转出它们：losses.clipped_surrogate 是同一个函数）
    真实系统的其他损失、优势、选项、预设，to_trl / to_verl，作业 5 的函数在 toyllm.peers（import toyllm.peers 登记进来）
    critic.py     价值表 V[t, c, ok]、GAE(γ, λ)、价值损失、精确价值 V*（第 6 讲 8.5 节，预设 ppo_critic）
    groups.py     玩具解答的奖励（step_rewards）、把几批解答接起来或挑出一部分、每批挑几道题
    loop.py       循环本身（两个模型共用）：采样 → 动态采样（DAPO）→ 优势 → μ 次更新 → 记录（History）
    toy.py        玩具的策略：Δ 表、采样、链式法则（对 Δ 表 (12, 3) 的精确梯度：policy_loss、score_vectors）和入口 train
    训练记录 History 在 toyllm/history.py，课上的题目 default_problems 在 toyllm/problems.py（模仿学习也用它们）。

【用法】
    from toyllm import TrainableLLM
    from toyllm.rl import train, preset, default_problems

    train_set, heldout = default_problems(seed=0)
    model = TrainableLLM(1e9)
    hist = train(model, preset("grpo", iterations=200), train_set, heldout)
    print(hist.to_table(every=20))
"""

from ..history import COLUMN_NAMES, History
from ..problems import default_problems
from . import critic
from .config import (ADVANTAGE_ESTIMATORS, ADVANTAGES, AGGREGATIONS, KL_ESTIMATORS, OPTIMIZERS, OPTION_NAMES,
                     POLICY_LOSSES, REWARDS, SCALES, RLConfig)
from .presets import PRESET_NAMES, PRESETS, diff_presets, preset, presets_table
from .losses import (AGGREGATION_TABLE, KL_CLAMP, Entropy, KLEstimates, KLTerm, Surrogate, aggregate_loss,
                     aggregation_weights, cispo_surrogate, clipped_surrogate, constant_groups, entropy, group_advantages,
                     gspo_surrogate, kl_estimates, kl_estimator, reinforce_pp_advantages, truncated_is_weights)
from .groups import step_rewards
from .toy import RL_COLUMNS, LossResult, policy_loss, score_vectors, train

__all__ = ["ADVANTAGES", "ADVANTAGE_ESTIMATORS", "AGGREGATIONS", "AGGREGATION_TABLE", "COLUMN_NAMES", "Entropy",
           "History", "KLEstimates", "KLTerm", "KL_CLAMP", "KL_ESTIMATORS", "LossResult", "OPTIMIZERS", "OPTION_NAMES",
           "POLICY_LOSSES", "PRESETS", "PRESET_NAMES", "REWARDS", "RLConfig", "RL_COLUMNS", "SCALES", "Surrogate",
           "aggregate_loss", "aggregation_weights", "cispo_surrogate", "clipped_surrogate", "constant_groups",
           "critic", "default_problems", "diff_presets", "entropy", "group_advantages", "gspo_surrogate",
           "kl_estimates", "kl_estimator", "policy_loss", "preset", "presets_table", "reinforce_pp_advantages",
           "score_vectors", "step_rewards", "train", "truncated_is_weights"]


_MOVED = {"PRESET_PEERS": "toyllm.peers.PRESET_PEERS", "cs336": "toyllm.peers.cs336"}


def __getattr__(name):
    """搬到 toyllm.peers 的名字：报错说它现在在哪里（这一版之后删掉）。"""
    if name in _MOVED:
        raise AttributeError(f"toyllm.rl.{name} 搬到了 {_MOVED[name]}：先 import toyllm.peers，再用 {_MOVED[name]}")
    raise AttributeError(f"module 'toyllm.rl' has no attribute {name!r}")
