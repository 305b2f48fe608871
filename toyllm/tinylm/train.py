"""
训练小 transformer：SFT（teacher forcing），再 RL。

【思路】RL 的优势、裁剪的替代损失、聚合、KL、熵全部调用 toyllm.rl.losses 里的函数 —— 和玩具用的是同一批函数。
    它们给出"损失对每个 token 的 log 概率的导数" s_{i,t} = ∂loss/∂log π(o_t | o_<t)，
    网络的反向从这里开始：∂loss/∂z = s · (onehot(o_t) − π) / T，再交给 layers.backward，Adam（toyllm.optim）走一步。
"""

import math

import numpy as np

from .._checks import as_int
from ..blas import one_blas_thread
from ..history import History
from ..logits import log_softmax
from ..optim import Adam
from ..rl import losses
from ..rl.config import PRESETS, resolve_config
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
@one_blas_thread
def sft(model, examples, steps=300, batch_size=64, lr=3e-3, seed=0, heldout=None, eval_every=50, progress=False):
    """
    监督微调（teacher forcing）：最小化解答里每个字的交叉熵 −log π(o_t | o_<t) 的平均。

    【思路】∂loss/∂log π(o_t) = −1/N（N 是这一批解答的字数），交给 dlogits_from_dlogp，再 backward、Adam。
    【参数】model：TinyLM（原地训练）；examples：Example 的列表；steps：更新次数；batch_size：每批几道题；
        lr：Adam 的学习率；seed：选题的随机种子；heldout：留出题（给了就每 eval_every 步记一次贪心准确率）；
        progress：是否显示 tqdm 进度条
    【返回】History（列 iteration、loss、greedy；没有评估的行 greedy 是 NaN）
    【例子】hist = sft(model, train, steps=300, heldout=test[:200])
    """
    check_model(model)
    examples = check_examples("examples", examples, model.context)
    if heldout is not None:
        heldout = check_examples("heldout", heldout, model.context)
    steps = as_int("steps", steps, low=0)
    batch_size = as_int("batch_size", batch_size, low=1)
    eval_every = as_int("eval_every", eval_every, low=1)
    rng = np.random.default_rng(as_int("seed", seed, low=0))
    opt = Adam(model.params, lr)
    hist = History(["iteration", "loss", "greedy"], meta={"algorithm": "SFT", "seed": seed, "lr": lr},
                   headers={"greedy": "贪心准确率"})
    with _progress(steps, "SFT", progress) as bar:
        for it in range(1, steps + 1):
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


def rl_loss_grad(model, inputs, targets, mask, adv, old_logp, ref_logp, cfg, max_len=None, computed=None):
    """
    一次更新的损失和梯度：每一块都调用 toyllm.rl.losses，网络的反向从 s = ∂loss/∂log π(o_t) 开始。

    【思路】ρ = exp(log π_θ − log π_old)（填充的位置 ρ = 1）；
            s = w · ∂l/∂ρ · ρ + β · w · ∂k/∂log π         （losses.clipped_surrogate、kl_estimator、aggregation_weights）
            ∂loss/∂z = s (onehot − π) / T − c_H · w · ∂H/∂z  （losses.entropy）
        losses 的函数返回 float64，这里先转成 float32 再和网络的数组相乘（否则整步都变成 float64，慢 3 倍）。
        computed：这组参数上已经算好的 token_logprobs(...) 的结果（μ 次更新的第一次就是采样后算 π_old 的那次前向）
    【返回】(grads, info)；info = {loss, clip_low, clip_high}
    """
    dt = model.params["tok"].dtype
    T = cfg.temperature
    logp, lp, cache = token_logprobs(model, inputs, targets, T) if computed is None else computed
    w = losses.aggregation_weights(mask, cfg.loss_agg, max_len).astype(dt)
    ratio = np.where(mask, np.exp(np.where(mask, logp - old_logp, 0)), np.asarray(1, dt))
    eps_low, eps_high = (cfg.eps_low, cfg.eps_high) if cfg.clip else (math.inf, math.inf)
    surr = losses.clipped_surrogate(ratio, np.broadcast_to(adv[:, None], mask.shape), eps_low, eps_high,
                                     validate=False)    # 学习率极大时 ρ 可能下溢成 0，照样算（同 rl.kernel）
    loss = float((w * surr.loss.astype(dt)).sum())
    s = w * surr.dloss_dratio.astype(dt) * ratio
    if cfg.beta > 0:
        clamp = losses.KL_CLAMP if cfg.kl_estimator == "k3" else None
        kl = losses.kl_estimator(np.where(mask, logp, ref_logp), ref_logp, cfg.kl_estimator, clamp)
        loss += cfg.beta * float((w * kl.value.astype(dt)).sum())
        s = s + np.asarray(cfg.beta, dt) * w * kl.dvalue_dlogp.astype(dt)
    d = dlogits_from_dlogp(s, lp, targets, T)
    if cfg.entropy_coef != 0:
        ent = losses.entropy(np.exp(lp), lp, T)
        loss -= cfg.entropy_coef * float((w * ent.value.astype(dt)).sum())
        d = d - np.asarray(cfg.entropy_coef, dt) * w[..., None] * ent.dlogits.astype(dt)
    n = max(int(mask.sum()), 1)
    info = {"loss": loss, "clip_low": float(np.count_nonzero(surr.clipped_low & mask) / n),
            "clip_high": float(np.count_nonzero(surr.clipped_high & mask) / n)}
    return backward(model.params, d, cache), info


@one_blas_thread
def rl_train(model, examples, config="grpo", heldout=None, eval_every=20, progress=False, ref=None):
    """
    在小 transformer 上做 RL（GRPO / Dr. GRPO / DAPO / PPO 式），选项和玩具的 rl.train 同名（RLConfig）。

    【思路】每次迭代：选 batch_problems 道题，每题采样 G 份（温度 T）；奖励 = 最终答案对不对（0 / 1）；
        优势 losses.group_advantages；DAPO 的动态采样（dynamic_sampling=True）在这里只丢掉奖励全相同的组，
        不再补采；然后用这批数据更新 μ 次（rl_loss_grad）。参考策略 π_ref 是 RL 开始时的模型（β > 0 时用）。
    【参数】model：TinyLM（原地训练）；examples：训练题；config：RLConfig（或预设名，会经过 tiny_config）；
        heldout：留出题，每 eval_every 次迭代记一次贪心准确率；progress：tqdm 进度条；ref：参考模型（默认 RL 开始时的副本）
    【返回】History（列见 RL_COLUMNS；没有评估的行 greedy 是 NaN）
    【边界】只支持 reward="outcome"、optimizer="adam"（神经网络用 SGD 配玩具的 lr = 2 会发散）。
    【例子】hist = rl_train(model, train, tiny_config("grpo", iterations=100), heldout=test[:200])
    """
    check_model(model)
    cfg = resolve_config(config, "config")
    if isinstance(config, str):                     # 预设名：换上 TINY_DEFAULTS（Adam、lr = 3e-4……）
        cfg = cfg.replace(**TINY_DEFAULTS)
    if cfg.reward != "outcome":
        raise ValueError(f"config.reward 在小 transformer 上只能是 'outcome'（只有最终答案能判对错），收到 {cfg.reward!r}")
    if cfg.optimizer != "adam":
        raise ValueError(f"config.optimizer 在小 transformer 上必须是 'adam'，收到 {cfg.optimizer!r}；"
                         "用 tiny_config(预设名, ...) 得到合适的默认值")
    examples = check_examples("examples", examples, model.context)
    if heldout is not None:
        heldout = check_examples("heldout", heldout, model.context)
    eval_every = as_int("eval_every", eval_every, low=1)
    ref = model.copy() if ref is None else ref
    check_model(ref)
    rng = np.random.default_rng(cfg.seed)
    opt = Adam(model.params, cfg.lr)
    G, dt = cfg.group_size, model.params["tok"].dtype
    max_len = max(len(e.target) for e in examples)
    hist = History(RL_COLUMNS, meta={"algorithm": "RL", "config": cfg.to_dict(), "seed": cfg.seed},
                   headers={"greedy": "贪心准确率"})
    with _progress(cfg.iterations, "RL", progress) as bar:
        for it in range(1, cfg.iterations + 1):
            batch = [examples[i] for i in rng.choice(len(examples), min(cfg.batch_problems, len(examples)), False)]
            prompts = [e.prompt for e in batch for _ in range(G)]
            outs = generate(model, prompts, cfg.temperature, rng)
            rewards = np.array([e.is_correct(o) for o, e in zip(outs, (e for e in batch for _ in range(G)))],
                               float)
            const = losses.constant_groups(rewards, G)
            adv = losses.group_advantages(rewards, G, cfg.advantage, cfg.scale_rewards, cfg.std_eps).astype(dt)
            keep = np.repeat(~const, G) if cfg.dynamic_sampling else np.ones(len(outs), bool)
            info = {"loss": 0.0, "clip_low": 0.0, "clip_high": 0.0}
            x, y, m = batch_tokens(model, prompts, outs)
            first = token_logprobs(model, x, y, cfg.temperature)
            old_logp, lp = first[0], first[1]
            ref_logp = token_logprobs(ref, x, y, cfg.temperature)[0]
            ent = float(losses.entropy(np.exp(lp[m]), lp[m]).value.mean())
            kl = float(losses.kl_estimator(old_logp[m], ref_logp[m], cfg.kl_estimator).value.mean())
            if keep.any():
                reuse = first if keep.all() else None       # 没丢掉任何组时，第一次更新的前向就是上面那一次
                x, y, m, a, ol, rl_ = x[keep], y[keep], m[keep], adv[keep], old_logp[keep], ref_logp[keep]
                totals = {k: 0.0 for k in info}
                for epoch in range(cfg.mu):
                    grads, info = rl_loss_grad(model, x, y, m, a, ol, rl_, cfg, max_len, reuse if epoch == 0 else None)
                    opt.step(model.params, grads)
                    totals = {k: totals[k] + info[k] / cfg.mu for k in totals}
                info = totals
            acc = accuracy(model, heldout) if heldout is not None and (it % eval_every == 0 or it == cfg.iterations) \
                else math.nan
            hist.append({"iteration": it, "reward": float(rewards.mean()), "pass1_sampled": float(rewards.mean()),
                         "entropy": ent, "kl_est": kl, **info, "zero_std": float(const.mean()), "greedy": acc})
            bar.update()
    return hist

