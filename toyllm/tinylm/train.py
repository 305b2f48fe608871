"""
训练小 transformer：SFT（teacher forcing），再 RL。

【思路】RL 的优势、裁剪的替代损失、聚合、KL、熵全部调用 toyllm.rl.losses 里的函数 —— 和玩具用的是同一批函数。
    它们给出"损失对每个 token 的 log 概率的导数" s_{i,t} = ∂loss/∂log π(o_t | o_<t)，
    网络的反向从这里开始：∂loss/∂z = s · (onehot(o_t) − π) / T，再交给 layers.backward，Adam（toyllm.optim）走一步。
"""

import math
from typing import NamedTuple

import numpy as np

from .._checks import as_choice, as_int
from ..blas import one_blas_thread
from ..history import History
from ..logits import log_softmax
from ..optim import Adam
from ..rl import critic, losses, objective
from ..rl.presets import PRESETS, resolve_config
from .analysis import accuracy
from .layers import backward, forward
from .model import check_model, generate
from .text import END_ID, check_examples, encode

TINY_DEFAULTS = {"lr": 3e-4, "batch_problems": 16, "optimizer": "adam", "iterations": 200}
"""小 transformer 上 RL 的默认值（其余选项沿用预设）：玩具的 lr = 2、SGD 对神经网络太大了。"""


# =============================================================================
# 一批 token：teacher forcing 的输入、目标和 mask，每个 token 的 log 概率
# =============================================================================
def batch_tokens(model, prompts, completions):
    """
    把 prompt + 解答排成 (B, L) 的输入、目标和 mask（mask 只覆盖解答的字：prompt 不算损失）。

    【返回】(inputs, targets, mask)：inputs[:, t] 预测 targets[:, t] = 第 t + 1 个字；填充的位置 mask 是 False
    """
    seqs = [np.concatenate([encode(p, "prompt"), encode(c, "completion")]) for p, c in zip(prompts, completions)]
    L = max(len(s) for s in seqs)
    if L > model.context + 1:
        raise ValueError(f"题面加解答有 {L} 个字符，放不进上下文 context = {model.context}（最多 {model.context + 1} 个字符）")
    tokens = np.full((len(seqs), L), END_ID, dtype=np.int64)
    mask = np.zeros((len(seqs), L - 1), bool)
    for i, (s, p) in enumerate(zip(seqs, prompts)):
        tokens[i, :len(s)] = s
        mask[i, len(p) - 1:len(s) - 1] = True
    return tokens[:, :-1], tokens[:, 1:], mask


def token_logprobs(model, inputs, targets, temperature=1.0, params=None):
    """
    每个位置上目标字的 log 概率 log π(o_t | o_<t)（温度 T），和反向用的东西。

    【返回】(logp (B, L), logprobs (B, L, V), cache)
    """
    params = model.params if params is None else params
    z, cache = forward(params, inputs, model.layers, model.heads)
    lp = log_softmax(z / np.asarray(temperature, z.dtype))
    return np.take_along_axis(lp, targets[..., None], -1)[..., 0], lp, cache


def dlogits_from_dlogp(s, logprobs, targets, temperature=1.0):
    """∂loss/∂z = s · (onehot(o_t) − π) / T：log softmax 的梯度（第 4.1 节），s = ∂loss/∂log π(o_t)。"""
    d = -np.exp(logprobs) * s[..., None]
    np.put_along_axis(d, targets[..., None], np.take_along_axis(d, targets[..., None], -1) + s[..., None], -1)
    return d / np.asarray(temperature, d.dtype)


def _progress(total, desc, show):
    """tqdm 进度条（show=False 时不显示）。"""
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, disable=not show, leave=False)


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
        progress：是否显示 tqdm 进度条；warmup：学习率预热的步数；schedule："constant"（默认，学习率不变）或
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
    with _progress(steps, "SFT", progress) as bar:
        for it in range(1, steps + 1):
            if warmup or schedule != "constant":
                opt.lr = lr * lr_factor(it, steps, warmup, schedule)
            batch = [examples[i] for i in rng.integers(0, len(examples), batch_size)]
            x, y, m = batch_tokens(model, [e.prompt for e in batch], [e.target for e in batch])
            logp, lp, cache = token_logprobs(model, x, y)
            n = m.sum()
            loss = float(-(logp * m).sum() / n)
            s = np.where(m, np.asarray(-1.0 / n, logp.dtype), np.asarray(0, logp.dtype))
            opt.step(model.params, backward(model.params, dlogits_from_dlogp(s, lp, y), cache))
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
    T, dt = cfg.temperature, model.params["tok"].dtype
    logp, lp, cache = token_logprobs(model, inputs, targets, T) if computed is None else computed
    ent = losses.entropy(np.exp(lp), lp, T) if cfg.entropy_coef != 0 else None
    obj = objective.rl_objective(logp, old_logp, adv, mask, cfg, ref_logp=ref_logp, behaviour_logp=behaviour_logp,
                                 max_len=max_len, entropy=None if ent is None else ent.value.astype(dt), rng=rng)
    d = dlogits_from_dlogp(obj.dloss_dlogp, lp, targets, T)
    if ent is not None:
        d = d + obj.dloss_dentropy[..., None] * ent.dlogits.astype(dt)
    return backward(model.params, d, cache), {"loss": obj.loss, "clip_low": obj.clip_low, "clip_high": obj.clip_high}


class ValueHead:
    """
    PPO 的价值头（critic）：V(s_t) = h_t · w + b，h_t 是网络最后一层 LayerNorm 之后的残差流（advantage="gae"）。

    【思路】价值损失 ½(V − R)²（toyllm.rl.critic.value_loss）只训练这个线性头，梯度不传回网络
        （stop-gradient：策略网络只由策略损失训练）。回报 R 和优势由 critic.gae 算出，和玩具的价值表同一个函数。
    """

    def __init__(self, d, dtype):
        self.params = {"w": np.zeros(d, dtype), "b": np.zeros(1, dtype)}

    def values(self, h, mask):
        """(B, L, d) 的残差流 → (B, L) 的 V（mask 外为 0）。"""
        return np.where(mask, h @ self.params["w"] + self.params["b"][0], 0)

    def grads(self, h, dvalues):
        """∂loss/∂V (B, L) → 对 w、b 的梯度。"""
        dv = dvalues.astype(h.dtype)
        return {"w": np.einsum("bld,bl->d", h, dv), "b": np.array([dv.sum()], h.dtype)}


class _Batch(NamedTuple):
    """一次迭代用来训练的组：examples（每行一份解答的题）、outs（解答）、rewards；drawn_rewards 是采到的全部。"""
    examples: list
    outs: list
    rewards: np.ndarray
    drawn_rewards: np.ndarray
    n_constant: int
    short: bool


def _draw(sampler, examples, cfg, rng):
    """
    采样一批组（gen_batch_scale × batch_problems 道题）；开了动态采样就丢掉奖励全相同的组，最多留 batch_problems 组，
    不够再采下一批（最多 max_draws 批，和玩具一样）。
    """
    G, n_problems = cfg.group_size, min(cfg.batch_problems, len(examples))
    n_draw = min(n_problems * cfg.gen_batch_scale, len(examples))
    rows, outs, rewards, drawn, n_constant = [], [], [], [], 0
    for _ in range(cfg.max_draws if cfg.dynamic_sampling else 1):
        batch = [examples[i] for i in rng.choice(len(examples), n_draw, False)]
        per_row = [e for e in batch for _ in range(G)]
        got = generate(sampler, [e.prompt for e in per_row], cfg.temperature, rng)
        r = np.array([e.is_correct(o) for o, e in zip(got, per_row)], float)
        drawn.append(r)
        const = losses.constant_groups(r, G)
        n_constant += int(const.sum())
        keep = np.ones(len(batch), bool) if not cfg.dynamic_sampling else \
            ~const & (np.cumsum(~const) <= n_problems - len(rows) // G)
        take = np.repeat(keep, G)
        rows += [e for e, k in zip(per_row, take) if k]
        outs += [o for o, k in zip(got, take) if k]
        rewards.append(r[take])
        if len(rows) // G >= n_problems:
            break
    return _Batch(rows, outs, np.concatenate(rewards), np.concatenate(drawn), n_constant,
                  len(rows) // G < n_problems)


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
        critic.gae 算出（再整批白化，和 verl 一样 [S404]）；然后用这批数据更新 μ 次（rl_loss_grad → rl_objective：
        policy_loss 选 PPO 裁剪 / GSPO / CISPO，clip_ratio_c 是 dual-clip，β 的 KL、熵奖励、聚合方式）。
        staleness = k > 0 时用 k 次更新之前的参数采样，每个 token 的损失乘 min(π_old / π_behaviour, tis_cap)。
        参考策略 π_ref 是 RL 开始时的模型（β > 0 时用）。
    【参数】model：TinyLM（原地训练）；examples：训练题；config：RLConfig（或预设名，会经过 tiny_config）；
        heldout：留出题，每 eval_every 次迭代记一次贪心准确率；progress：tqdm 进度条；ref：参考模型（默认 RL 开始时的副本）
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
    rng = np.random.default_rng(cfg.seed)
    loss_rng = np.random.default_rng((cfg.seed, 1)) if cfg.policy_loss == "clip_cov" else None   # Clip-Cov 挑步
    opt = Adam(model.params, cfg.lr)
    G, dt = cfg.group_size, model.params["tok"].dtype
    max_len = max(len(e.target) for e in examples)
    head = ValueHead(model.d, dt) if cfg.advantage == "gae" else None
    head_opt = Adam(head.params, cfg.critic_lr) if head else None
    sampler = model.copy() if cfg.staleness else model
    snapshots = [{k: v.copy() for k, v in model.params.items()}] if cfg.staleness else None
    hist = History(RL_COLUMNS + (["value_loss"] if head else []),
                   meta={"algorithm": "RL", "config": cfg.to_dict(), "seed": cfg.seed},
                   headers={"greedy": "贪心准确率", "value_loss": "价值损失"})
    short = 0
    with _progress(cfg.iterations, "RL", progress) as bar:
        for it in range(1, cfg.iterations + 1):
            if cfg.staleness:                       # 用 k 次更新之前的参数采样
                sampler.params = snapshots[0]
            got = _draw(sampler, examples, cfg, rng)
            if got.short:
                short += 1
                if cfg.on_short == "raise":
                    raise RuntimeError(f"动态采样：第 {it} 次迭代采了 max_draws = {cfg.max_draws} 批，只凑到 "
                                       f"{len(got.examples) // G} / {cfg.batch_problems} 组奖励不全相同的题"
                                       f"（on_short=\"raise\"）。可以加大 max_draws、减小 batch_problems，或设 on_short=\"train\"")
            row = {"iteration": it, "reward": float(got.drawn_rewards.mean()),
                   "pass1_sampled": float(got.drawn_rewards.mean()),
                   "zero_std": got.n_constant / (len(got.drawn_rewards) // G),
                   "loss": 0.0, "clip_low": 0.0, "clip_high": 0.0, "entropy": math.nan, "kl_est": math.nan}
            if head:
                row["value_loss"] = math.nan
            if got.examples:
                row.update(_update(model, ref, opt, head, head_opt, sampler, snapshots, got, cfg, max_len, loss_rng))
            row["greedy"] = accuracy(model, heldout) if heldout is not None and \
                (it % eval_every == 0 or it == cfg.iterations) else math.nan
            hist.append(row)
            bar.update()
    hist.meta["short_batches"] = short
    return hist


def _update(model, ref, opt, head, head_opt, sampler, snapshots, got, cfg, max_len, loss_rng=None):
    """一次迭代的优势和 μ 次更新；返回记录用的数（熵、KL、损失、裁剪比例，有 critic 时还有价值损失）。"""
    G, T, dt = cfg.group_size, cfg.temperature, model.params["tok"].dtype
    prompts = [e.prompt for e in got.examples]
    x, y, m = batch_tokens(model, prompts, got.outs)
    first = token_logprobs(model, x, y, T)
    old_logp, lp, cache = first
    ref_logp = token_logprobs(ref, x, y, T)[0]
    stats = {"entropy": float(losses.entropy(np.exp(lp[m]), lp[m]).value.mean()),
             "kl_est": float(losses.kl_estimator(old_logp[m], ref_logp[m], cfg.kl_estimator).value.mean())}
    # 陈旧采样：π_old = 现在的参数，π_behaviour = 采样用的参数（rl_objective 乘 min(π_old / π_behaviour, C)）
    behaviour = token_logprobs(sampler, x, y, T)[0] if cfg.staleness else None
    if head:                                        # 价值头 V(s_t)、GAE，优势整批白化（verl）
        h = cache[-1]
        adv, returns = critic.gae(critic.outcome_step_rewards(got.rewards, m), head.values(h, m), m, cfg.gamma, cfg.lam)
        adv = losses.whiten(adv, m)
    else:                                           # reinforce_pp 在 token 上白化：每行的 token 数就是它的权重
        lengths = np.arange(m.shape[1]) < m.sum(axis=1)[:, None]
        adv = losses.group_advantages(got.rewards, G, cfg.advantage, cfg.scale_rewards, cfg.std_eps,
                                      lengths if cfg.advantage == "reinforce_pp" else
                                      m if cfg.advantage in losses.MASKED_ADVANTAGES else None, cfg.gamma)
    adv = adv.astype(dt)
    totals = {"loss": 0.0, "clip_low": 0.0, "clip_high": 0.0, **({"value_loss": 0.0} if head else {})}
    for epoch in range(cfg.mu):
        grads, info = rl_loss_grad(model, x, y, m, adv, old_logp, ref_logp, cfg, max_len,
                                   first if epoch == 0 else None, behaviour, loss_rng)
        opt.step(model.params, grads)
        if head:
            vl, dv = critic.value_loss(head.values(h, m), returns, m)
            head_opt.step(head.params, {k: cfg.vf_coef * g for k, g in head.grads(h, dv).items()})
            info["value_loss"] = vl
        if cfg.staleness:
            snapshots.append({k: v.copy() for k, v in model.params.items()})
            del snapshots[:-(cfg.staleness + 1)]
        totals = {k: totals[k] + info[k] / cfg.mu for k in totals}
    return {**stats, **totals}
