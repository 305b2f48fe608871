"""
玩具解答的奖励和分组：step_rewards、每批挑几道题、把几批解答接起来、挑出一部分（第 6 讲 DAPO 一节）。

【思路】step_rewards 从玩具的解答（sampler.Rollouts）读出奖励：最终答案对不对，或者每一步对不对。
    一组 G 份解答的奖励全相同（全对或全错）时，组内优势全是 0，这一组对梯度没有贡献。动态采样（loop.draw，
    两个模型共用）把这样的组丢掉（keep_rows）、再采新题，直到凑满 batch_problems 组。
"""

import dataclasses

import numpy as np

from .._checks import as_choice, as_int
from ..sampler import Rollouts, check_rollouts
from .config import REWARDS, RLConfig


def step_rewards(rollouts, kind="outcome"):
    """
    奖励：outcome 是 (B,) 的 0/1（最终答案对不对）；process / procedure 是 (B, L) 的每步 0/1。

    【思路】
        · "outcome"：只看最终答案。做对的解答里每一步都被奖励 —— 包括一个"碰巧没出错的 bug 步"。
        · "process"：每一步的值对不对（rollouts.step_ok：这一步的值等于对它自己的输入做正确运算的结果）。
          粗心的一步被单独惩罚，前面做对的步不受连累（信用分配更准）；但碰巧没出错的 bug 步还是"对"的。
        · "procedure"：每一步用的是不是正确的做法 —— 一个能读懂推理过程的"完美过程奖励模型"：
          碰巧得到正确值的 bug 步也算错。真实系统里这样的奖励模型很难得到，这里用它做对照。
    【参数】rollouts：sampler.Rollouts（用到 correct、step_ok、actions、mask）；kind："outcome" / "process" / "procedure"
    【返回】float 数组：outcome 是 (B,)，另外两种是 (B, L)（mask 外是 0）
    【例子】r = sample_rollouts(TrainableLLM(1e9), problems, 8, np.random.default_rng(0))
        step_rewards(r).mean() 就是这一批的采样 pass@1；step_rewards(r, "process").sum(axis=1) 是每份解答做对了几步
    """
    kind = as_choice("kind", kind, REWARDS)
    check_rollouts(rollouts)
    if kind == "outcome":
        return rollouts.correct.astype(float)
    ok = rollouts.step_ok if kind == "process" else rollouts.actions == 0
    return np.where(rollouts.mask, ok, False).astype(float)


def concat_rollouts(parts):
    """
    把几批 Rollouts 接起来（problem 字段仍是各批内部的题号；损失只用"每 G 行一组"的顺序）。

    【边界】parts 必须是非空的 Rollouts 列表，每批的步数 L 相同，否则报中文的 TypeError / ValueError。
    """
    if isinstance(parts, Rollouts) or not isinstance(parts, (list, tuple)) or not parts:
        raise TypeError(f"parts 必须是非空的 Rollouts 列表，收到 {parts!r}")
    if not all(isinstance(r, Rollouts) for r in parts):
        raise TypeError("parts 里的每一项都必须是 Rollouts（sample_rollouts 的结果）")
    if len({r.mask.shape[1] for r in parts}) > 1:
        raise ValueError(f"几批 Rollouts 的步数 L 必须相同，收到 {[r.mask.shape[1] for r in parts]}")
    if len(parts) == 1:
        return parts[0]
    return Rollouts(**{f.name: (parts[0].n if f.name == "n" else np.concatenate([getattr(r, f.name) for r in parts]))
                       for f in dataclasses.fields(Rollouts)})


def keep_rows(rollouts, rows):
    """只保留 rows（每份解答一个 bool）为 True 的解答（动态采样丢掉整组时用）。"""
    return Rollouts(**{f.name: (rollouts.n if f.name == "n" else getattr(rollouts, f.name)[rows])
                       for f in dataclasses.fields(Rollouts)})


def draw_size(cfg, n_problems, name="训练题"):
    """
    每批挑几道题：gen_batch_scale × batch_problems。

    【参数】cfg：RLConfig；n_problems：题的总数；name：报错时怎么称呼这些题
    【返回】int
    【边界】比 n_problems 多时报中文的 ValueError，说出两个选项的值。
    【例子】draw_size(preset("dapo"), 256) → 96
    """
    if not isinstance(cfg, RLConfig):
        raise TypeError(f"cfg 必须是 RLConfig，收到 {type(cfg).__name__}")
    n_problems = as_int("n_problems", n_problems, low=0)
    n = cfg.batch_problems * cfg.gen_batch_scale
    if n > n_problems:
        both = f"batch_problems × gen_batch_scale = {cfg.batch_problems} × {cfg.gen_batch_scale} = {n}" \
            if cfg.gen_batch_scale > 1 else f"batch_problems = {n}"
        raise ValueError(f"{both} 大于{name}数 {n_problems}；请减小 batch_problems（或 gen_batch_scale），或多给一些题")
    return n


__all__ = ["concat_rollouts", "draw_size", "step_rewards"]
