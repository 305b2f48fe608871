"""
训练小 transformer：SFT（teacher forcing），再 RL（rl_train：网络的策略接口 policy.NetworkPolicy 交给
toyllm.rl.loop.run，和玩具的 rl.train 是同一个循环）。

【思路】RL 的优势、裁剪的替代损失、聚合、KL、熵全部调用 toyllm.rl.losses 里的函数 —— 和玩具用的是同一批函数。
    它们给出"损失对每个 token 的 log 概率的导数" s_{i,t} = ∂loss/∂log π(o_t | o_<t)，
    网络的反向从这里开始：∂loss/∂z = s · (onehot(o_t) − π) / T，再交给 layers.backward，Adam（toyllm.optim）走一步。
"""

import math

import numpy as np

from .._checks import as_choice, as_int
from ..blas import one_blas_thread
from ..history import History
from ..optim import Adam
from ..rl import loop, objective
from ..rl.loop import progress_bar
from ..rl.presets import PRESETS, resolve_config
from .analysis import accuracy
from .layers import backward as layers_backward
from .model import check_model
from .policy import NetworkPolicy, backward, batch_tokens, dlogits_from_dlogp, forward, token_logprobs
from .text import check_examples

TINY_DEFAULTS = {"lr": 3e-4, "batch_problems": 16, "optimizer": "adam", "iterations": 200}
"""小 transformer 上 RL 的默认值（其余选项沿用预设）：玩具的 lr = 2、SGD 对神经网络太大了。"""


# =============================================================================
# SFT
# =============================================================================
COSINE_FLOOR = 0.05
"""schedule="cosine" 时学习率最后降到 lr 的几分之几。"""


def lr_factor(it, steps, warmup=0, schedule="constant"):
    """
    第 it 步（1 … steps）的学习率是 lr 的几倍：前 warmup 步从 0 线性升到 1；schedule="cosine" 时再乘上余弦衰减
    COSINE_FLOOR + (1 − COSINE_FLOOR) · (1 + cos(π · it / steps)) / 2（最后一步是 COSINE_FLOOR）。

    【例子】lr_factor(50, 1000, warmup=100) → 0.5；lr_factor(1000, 1000, schedule="cosine") → 0.05
    """
    f = min(1.0, it / warmup) if warmup else 1.0
    if schedule == "cosine":
        f *= COSINE_FLOOR + (1 - COSINE_FLOOR) * 0.5 * (1 + math.cos(math.pi * it / steps))
    return f


@one_blas_thread
def sft(model, examples, steps=300, batch_size=64, lr=3e-3, seed=0, heldout=None, eval_every=50, progress=False,
        warmup=0, schedule="constant", callback=None):
    """
    监督微调（teacher forcing）：最小化解答里每个字的交叉熵 −log π(o_t | o_<t) 的平均。

    【思路】∂loss/∂log π(o_t) = −1/N（N 是这一批解答的字数），交给 dlogits_from_dlogp，再 backward、Adam。
    【参数】model：TinyLM（原地训练）；examples：Example 的列表；steps：更新次数；batch_size：每批几道题；
        lr：Adam 的学习率；seed：选题的随机种子；heldout：留出题（给了就每 eval_every 步记一次贪心准确率）；
        progress：是否打印进度（一行字，约每十分之一写一次步数，见 rl.loop.TextProgress）；warmup：学习率预热的步数；schedule："constant"（默认，学习率不变）或
        "cosine"（余弦衰减，见 lr_factor）；callback：每步更新以后调用 callback(it, model)，返回 True 就提前停下
        （预训练用它在第 50 步记下参数的指纹，见 pretrained.py）
    【返回】History（列 iteration、loss、greedy；没有评估的行 greedy 是 NaN）
    【例子】hist = sft(model, train, steps=300, heldout=test[:200])；sft(model, train, 5000, warmup=200, schedule="cosine")
    """
    check_model(model)
    examples = check_examples("examples", examples, model.context)
    if heldout is not None:
        heldout = check_examples("heldout", heldout, model.context)
    steps = as_int("steps", steps, low=0)
    batch_size = as_int("batch_size", batch_size, low=1)
    eval_every = as_int("eval_every", eval_every, low=1)
    warmup = as_int("warmup", warmup, low=0)
    schedule = as_choice("schedule", schedule, ("constant", "cosine"))
    if callback is not None and not callable(callback):
        raise TypeError(f"callback 必须是函数 callback(it, model) 或 None，收到 {type(callback).__name__}")
    rng = np.random.default_rng(as_int("seed", seed, low=0))
    opt = Adam(model.params, lr)
    hist = History(["iteration", "loss", "greedy"], meta={"algorithm": "SFT", "seed": seed, "lr": lr, "warmup": warmup,
                                                          "schedule": schedule}, headers={"greedy": "贪心准确率"})
    with progress_bar(steps, "SFT", progress) as bar:
        for it in range(1, steps + 1):
            if warmup or schedule != "constant":
                opt.lr = lr * lr_factor(it, steps, warmup, schedule)
            batch = [examples[i] for i in rng.integers(0, len(examples), batch_size)]
            x, y, m = batch_tokens(model, [e.prompt for e in batch], [e.target for e in batch])
            logp, lp, cache = token_logprobs(model, x, y)
            n = m.sum()
            loss = float(-(logp * m).sum() / n)
            s = np.where(m, np.asarray(-1.0 / n, logp.dtype), np.asarray(0, logp.dtype))
            opt.step(model.params, layers_backward(model.params, dlogits_from_dlogp(s, lp, y), cache))
            acc = accuracy(model, heldout) if heldout is not None and (it % eval_every == 0 or it == steps) else math.nan
            hist.append({"iteration": it, "loss": loss, "greedy": acc})
            bar.update()
            if callback is not None and callback(it, model):
                break
    return hist


# =============================================================================
# RL：损失的每一块都来自 toyllm.rl.losses
# =============================================================================
def tiny_config(name="grpo", **overrides):
    """
    小 transformer 用的 RL 配置：预设 name，加上 TINY_DEFAULTS（Adam、lr = 3e-4、每次 16 道题），再加 overrides。

    【例子】tiny_config("dapo", dynamic_sampling=False)；tiny_config("grpo", lr=1e-3)
    """
    if not isinstance(name, str):
        raise TypeError(f"name 必须是预设的名字（{'、'.join(PRESETS)}），收到 {name!r}")
    return resolve_config(name, "name").replace(**{**TINY_DEFAULTS, **overrides})


RL_COLUMNS = ["iteration", "reward", "pass1_sampled", "entropy", "kl_est", "clip_low", "clip_high", "zero_std",
              "loss", "greedy"]
"""rl_train 返回的 History 的列；advantage="gae" 时再加 value_loss（价值头的损失，μ 次平均）。"""


def rl_loss_grad(model, inputs, targets, mask, adv, old_logp, ref_logp, cfg, max_len=None, computed=None,
                 behaviour_logp=None, rng=None):
    """
    一次更新的损失和梯度：损失由 toyllm.rl.objective.rl_objective 拼出（和玩具同一个函数），这里只做网络的反向。

    【思路】rl_objective 给出 s = ∂loss/∂log π(o_t) 和熵奖励的 e = ∂loss/∂H_t；
            ∂loss/∂z = s · (onehot(o_t) − π) / T + e · ∂H/∂z        （∂H/∂z 来自 losses.entropy）
        再交给 layers.backward。数组都是网络的 dtype（float32）：losses 的函数返回 float64，rl_objective 先转回来。
    【参数】model：TinyLM；inputs、targets、mask：batch_tokens 的结果；adv：(B,) 或 (B, L) 优势；
        old_logp、ref_logp：(B, L) π_old、π_ref 下每个 token 的对数概率；cfg：RLConfig；max_len：常数聚合的 L_max；
        computed：这组参数上已经算好的 token_logprobs(...) 的结果（μ 次更新的第一次就是采样后算 π_old 的那次前向）；
        behaviour_logp：(B, L) 陈旧采样时采样用的参数下的对数概率（rl_objective 据此乘截断的重要性比率）；
        rng：numpy Generator（policy_loss="clip_cov" 随机挑步用）
    【返回】(grads, info)；info = {loss, clip_low, clip_high}
    """
    logp, entropy, fwd = forward(model, inputs, targets, cfg, computed)
    obj = objective.rl_objective(logp, old_logp, adv, mask, cfg, ref_logp=ref_logp, behaviour_logp=behaviour_logp,
                                 max_len=max_len, entropy=entropy, rng=rng)
    return (backward(model, fwd, obj, targets, cfg.temperature),
            {"loss": obj.loss, "clip_low": obj.clip_low, "clip_high": obj.clip_high})


def _check_network_config(cfg):
    """小 transformer 上不能用的选项：报错并说出是哪一个。"""
    if cfg.reward != "outcome":
        raise ValueError(f"config.reward 在小 transformer 上只能是 'outcome'（只有最终答案能判对错），收到 {cfg.reward!r}")
    if cfg.optimizer != "adam":
        raise ValueError(f"config.optimizer 在小 transformer 上必须是 'adam'，收到 {cfg.optimizer!r}；"
                         "用 tiny_config(预设名, ...) 得到合适的默认值")


@one_blas_thread
def rl_train(model, examples, config="grpo", heldout=None, eval_every=20, progress=False, ref=None):
    """
    在小 transformer 上做 RL：RLConfig 的每个选项都和玩具的 rl.train 一样起作用（每个预设都能用）。

    【思路】每次迭代：选 batch_problems 道题，每题采样 G 份（温度 T）；奖励 = 最终答案对不对（0 / 1）；
        动态采样（dynamic_sampling）丢掉奖励全相同的组再补采（最多 max_draws 批，凑不满时按 on_short）；
        优势 losses.group_advantages（reinforce_pp 在整批 token 上白化），或 advantage="gae" 时由价值头 V 和
        critic.gae 算出（再整批白化，和 verl 一样）；然后用这批数据更新 μ 次（rl_loss_grad → rl_objective：
        policy_loss 选 PPO 裁剪 / GSPO / CISPO，clip_ratio_c 是 dual-clip，β 的 KL、熵奖励、聚合方式）。
        staleness = k > 0 时用 k 次更新之前的参数采样，每个 token 的损失乘 min(π_old / π_behaviour, tis_cap)。
        参考策略 π_ref 是 RL 开始时的模型（β > 0 时用）。
    【参数】model：TinyLM（原地训练）；examples：训练题；config：RLConfig（或预设名，会经过 tiny_config）；
        heldout：留出题，每 eval_every 次迭代记一次贪心准确率；progress：是否打印进度（一行字，见 rl.loop.TextProgress）；ref：参考模型（默认 RL 开始时的副本）
    【返回】History（列见 RL_COLUMNS；没有评估的行 greedy 是 NaN）；meta["short_batches"]：动态采样凑不满的次数
    【边界】只支持 reward="outcome"、optimizer="adam"（神经网络用 SGD 配玩具的 lr = 2 会发散），其他值报错并说出选项名。
        动态采样 on_short="raise" 时凑不满就报 RuntimeError（和玩具一样）。
    【例子】hist = rl_train(model, train, tiny_config("grpo", iterations=100), heldout=test[:200])
    """
    check_model(model)
    cfg = resolve_config(config, "config")
    if isinstance(config, str):                     # 预设名：换上 TINY_DEFAULTS（Adam、lr = 3e-4……）
        cfg = cfg.replace(**TINY_DEFAULTS)
    _check_network_config(cfg)
    examples = check_examples("examples", examples, model.context)
    if heldout is not None:
        heldout = check_examples("heldout", heldout, model.context)
    eval_every = as_int("eval_every", eval_every, low=1)
    ref = model.copy() if ref is None else ref
    check_model(ref)
    policy = NetworkPolicy(model, examples, cfg, ref, heldout, eval_every)
    hist = History(RL_COLUMNS + (["value_loss"] if policy.critic else []),
                   meta={"algorithm": "RL", "config": cfg.to_dict(), "seed": cfg.seed},
                   headers={"greedy": "贪心准确率", "value_loss": "价值损失"})
    with progress_bar(cfg.iterations, "RL", progress, "次迭代") as bar:
        return loop.run(policy, cfg, hist, bar=bar, model=model)
