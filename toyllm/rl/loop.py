"""
RL 的训练循环，两个模型共用这一个：采样 → 过滤 → 优势 → μ 次更新 → 记录（第 6 讲：从 REINFORCE 到 GRPO、PPO、DAPO
是同一个循环，只是选项不同）。

【思路】每一次迭代（run）：
        1. 采样（draw）：随机挑 gen_batch_scale × batch_problems 道题，每道题让模型做 group_size 遍（一"组"）；
        2. 过滤：开了动态采样就丢掉奖励全相同的组、补采（DAPO），凑不满时按 on_short；
        3. 优势：学生的 advantage_fn、价值函数 + GAE（advantage="gae"），或 losses.group_advantages；
        4. 更新：μ 次，每次 policy_step：策略给出每个 token 的 log π，objective.rl_objective 拼出损失和 ∂loss/∂log π，
           策略用自己的链式法则把它变成参数的梯度，优化器走一步（价值函数也走一步）；
        5. 记录：History 的一行。
    循环不知道它训练的是哪个模型：模型只通过一个很小的"策略接口"出现（Policy）。玩具的策略在 rl/toy.py
    （Δ 表和它的链式法则），小 transformer 的在 tinylm/policy.py（网络的前向和反向）。
【第 6 讲 8.5–8.9 节】advantage="gae" 时价值函数和策略一起训练（自己的 Adam、critic_lr、vf_coef），GAE 的优势整批白化
    （和 verl 一样）；staleness = k > 0 时用 k 次更新之前的参数采样，每步损失乘 min(π_old / π_behaviour, tis_cap)；
    动态采样凑不满的次数记在 meta["short_batches"]。
"""

import functools
from typing import NamedTuple

import numpy as np

from ..history import stop_on_interrupt
from ..optim import SGD, Adam
from . import critic, losses, objective


class Group(NamedTuple):
    """
    采到的一批解答，每 G 行是同一道题的一组。data 是模型自己的记录（玩具：sampler.Rollouts；网络：(题, 解答)），
    rewards：(B,) 或 (B, L) 奖励；mask：(B, L) 每步奖励的 mask（网络是 None）；problems：(B,) 每份解答是第几道训练题。
    """
    data: object
    rewards: np.ndarray
    mask: np.ndarray
    problems: np.ndarray


class Tokens(NamedTuple):
    """
    一批用来训练的解答排成 (B, L) 的 token（或步）：mask、采样时的对数概率 old_logp（π_old）、参考策略的 ref_logp
    （不需要时 None）、陈旧采样时采样策略的 behaviour_logp（None：采样的就是 π_old）、常数聚合的 max_len；
    stats：记录里由这批 token 算出的数；inputs：策略自己前向、反向要用的东西。
    """
    mask: np.ndarray
    old_logp: np.ndarray
    ref_logp: np.ndarray
    behaviour_logp: np.ndarray
    max_len: int
    stats: dict
    inputs: object


class Policy:
    """
    循环训练的策略：一个很小的接口，玩具（rl/toy.py）和网络（tinylm/policy.py）各实现一遍。

    【思路】循环只用下面这些：
        params                        优化器更新的参数（数组，或 {名字: 数组}）；critic：价值函数（advantage="gae"）或 None
        sample(rows, G, rng, params)  第 rows 道题每题采样 G 份 → Group（params 不是 None 时用这组旧参数采样）
        select(data, keep) / concat(parts)     按每份解答的 bool 挑出一部分 / 把几批接起来（Group.data 的操作）
        tokens(group, behaviour)      → Tokens（π_old、π_ref 下的对数概率……）；spread(tokens, adv) 把优势排成损失要的形状
        forward(tokens)               → (每个 token 的 log π, 熵 H 或 None, 反向要的东西)
        backward(tokens, fwd, obj)    把 ∂loss/∂log π（和 ∂loss/∂H）变成对 params 的梯度
        drawn_stats(group) / evaluate(it)      记录里的数：这次采到的全部解答上的；更新之后评估的
    """
    average = "sum"
    """μ 次更新的平均怎样算（记录用）："sum" 先加再除，"running" 逐次加 x / μ（两种写法的末位可能不同）。"""


def draw(policy, cfg, rng, n_problems, params=None):
    """
    一次迭代的采样：随机挑 gen_batch_scale × batch_problems 道题，每题采样 G 份；开了动态采样就丢掉奖励全相同的组，
    最多留 batch_problems 组，不够再采下一批（verl 的 filter_groups；每批的大小是 verl 的 data.gen_batch_size）。

    【返回】(drawn, kept, n_constant, short)：采到的每一批、用来训练的每一批（Group 的列表）、奖励全相同的组数、
        开了动态采样而采满 max_draws 批还没凑满
    """
    G, target = cfg.group_size, min(cfg.batch_problems, n_problems)
    n_draw = min(target * cfg.gen_batch_scale, n_problems)
    drawn, kept, n_constant, n_kept = [], [], 0, 0
    for _ in range(cfg.max_draws if cfg.dynamic_sampling else 1):
        group = policy.sample(rng.choice(n_problems, size=n_draw, replace=False), G, rng, params)
        drawn.append(group)
        constant = losses.constant_groups(group.rewards, G, group.mask)
        n_constant += int(np.count_nonzero(constant))
        if not cfg.dynamic_sampling:
            kept.append(group)
            break
        keep = ~constant & (np.cumsum(~constant) <= target - n_kept)
        if keep.any():
            rows = np.repeat(keep, G)
            kept.append(Group(policy.select(group.data, rows), group.rewards[rows],
                              None if group.mask is None else group.mask[rows], group.problems[rows]))
            n_kept += int(keep.sum())
        if n_kept >= target:
            break
    return drawn, kept, n_constant, bool(cfg.dynamic_sampling and n_kept < target)


def concat(policy, parts):
    """把几批 Group 接起来（一批时原样返回）。"""
    if len(parts) == 1:
        return parts[0]
    return Group(policy.concat([p.data for p in parts]), np.concatenate([p.rewards for p in parts]),
                 None if parts[0].mask is None else np.concatenate([p.mask for p in parts]),
                 np.concatenate([p.problems for p in parts]))


def policy_step(policy, tokens, adv, cfg, surrogate_fn=None, rng=None):
    """
    一次更新的损失和梯度：策略给出 log π（和熵），objective.rl_objective 拼出损失和 ∂loss/∂log π，策略做反向。

    【返回】(Objective, 对 policy.params 的梯度)
    """
    logp, entropy, fwd = policy.forward(tokens)
    obj = objective.rl_objective(logp, tokens.old_logp, adv, tokens.mask, cfg, ref_logp=tokens.ref_logp,
                                 entropy=entropy, behaviour_logp=tokens.behaviour_logp, max_len=tokens.max_len,
                                 surrogate_fn=surrogate_fn, rng=rng)
    return obj, policy.backward(tokens, fwd, obj)


def _copy(params):
    """参数的一份拷贝（数组，或 {名字: 数组}）。"""
    return {k: v.copy() for k, v in params.items()} if isinstance(params, dict) else params.copy()


def _scale(c, grads):
    """c × 梯度（数组，或 {名字: 数组}）。"""
    return {k: c * g for k, g in grads.items()} if isinstance(grads, dict) else c * grads


def _averages(columns, style, mu):
    """μ 次更新记下的数的平均；style 见 Policy.average（价值损失在 "sum" 时用 np.mean）。"""
    if style == "running":
        return {k: functools.reduce(lambda total, x: total + x / mu, xs, 0.0) for k, xs in columns.items()}
    return {k: float(np.mean(xs)) if k == "value_loss" else float(sum(xs) / len(xs)) for k, xs in columns.items()}


def advantages(policy, cfg, group, tokens, row, advantage_fn=None):
    """3. 奖励 → 优势：学生的 advantage_fn、价值函数 + GAE（整批白化），或 losses.group_advantages。"""
    r, m, G = group.rewards, tokens.mask, cfg.group_size
    if advantage_fn is not None:
        adv = np.asarray(advantage_fn(r, G), dtype=float)
        if adv.shape != r.shape or not np.all(np.isfinite(adv)):
            raise ValueError(f"advantage_fn 必须返回和 rewards 形状相同（{r.shape}）的有限数组，收到形状 {adv.shape}")
        return adv, None
    if policy.critic is not None:                 # 价值函数 V(s_t)、GAE，优势整批白化（verl）
        values = policy.critic.values(tokens)
        per_step = critic.outcome_step_rewards(r, m) if r.ndim == 1 else r
        adv, returns = critic.gae(per_step, values, m, cfg.gamma, cfg.lam)
        adv = losses.whiten(adv, m)
        row["value_err"] = policy.critic.error(tokens, values, group)
        return adv, returns
    if r.ndim == 1 and cfg.advantage not in losses.MASKED_ADVANTAGES:
        amask = None
    elif cfg.advantage == "reinforce_pp":           # 在 token 上白化：每行的 token 数就是它的权重
        amask = np.arange(m.shape[1]) < m.sum(axis=1)[:, None]
    else:
        amask = m
    return losses.group_advantages(r, G, cfg.advantage, cfg.scale_rewards, cfg.std_eps, amask, cfg.gamma), None


def run(policy, cfg, hist, *, advantage_fn=None, surrogate_fn=None, callback=None, model=None, bar=None):
    """
    训练循环本身（rl.train 和 tinylm.rl_train 都调用它）：每次迭代 采样 → 过滤 → 优势 → μ 次更新 → 记录。

    【参数】policy：Policy；cfg：RLConfig；hist：空的 History（列决定记录哪些数）；advantage_fn、surrogate_fn：学生自己写的
        优势函数和替代损失；callback：每次迭代后调用 callback(hist, model)；bar：进度条（有 update 方法）或 None
    【返回】hist；meta["short_batches"] 是动态采样凑不满的次数
    【边界】Ctrl+C（KeyboardInterrupt）：停下，返回已完成迭代的记录，hist.interrupted = True。
        动态采样凑不满且 on_short="raise" 时报 RuntimeError。
    """
    G, cols = cfg.group_size, set(hist)
    rng = np.random.default_rng(cfg.seed)
    loss_rng = np.random.default_rng((cfg.seed, 1)) if cfg.policy_loss == "clip_cov" else None   # Clip-Cov 挑步
    optimizer = (Adam if cfg.optimizer == "adam" else SGD)(policy.params, cfg.lr)
    critic_opt = Adam(policy.critic.params, cfg.critic_lr) if policy.critic is not None else None
    snapshots = [_copy(policy.params)] if cfg.staleness else None     # 最近 k + 1 次的参数（陈旧采样用）
    state = {"it": 0, "updates": 0, "samples": 0, "short": 0}

    def unrecorded():
        return f"（第 {state['it']} 次迭代做了 {state['updates']} 次更新，没有记录）" if state["updates"] else ""

    with stop_on_interrupt(hist, cfg.iterations, "次迭代", "全部更新", unrecorded):
        for it in range(1, cfg.iterations + 1):
            state.update(it=it, updates=0)
            behaviour = snapshots[0] if cfg.staleness else None           # 用 k 次更新之前的参数采样
            drawn, kept, n_constant, short = draw(policy, cfg, rng, policy.n_problems, behaviour)
            n_kept = sum(len(k.rewards) for k in kept) // G
            if short:
                state["short"] += 1
                if cfg.on_short == "raise":
                    raise RuntimeError(f"动态采样：第 {it} 次迭代采了 max_draws = {cfg.max_draws} 批，只凑到 {n_kept} / "
                                       f"{cfg.batch_problems} 组奖励不全相同的题（on_short=\"raise\"，和 verl 一样停下）。"
                                       f"可以加大 max_draws、减小 batch_problems，或设 on_short=\"train\" 用凑到的组训练")
            everything = concat(policy, drawn)
            n_drawn = len(everything.rewards)
            state["samples"] += n_drawn
            row = {"iteration": it, "samples": state["samples"], "groups": n_kept,
                   "reward": float(np.mean(everything.rewards if everything.rewards.ndim == 1 else
                                   everything.rewards.sum(axis=1) / np.maximum(everything.mask.sum(axis=1), 1))),
                   "zero_std": n_constant / (n_drawn // G), "loss": 0.0, "grad_norm": 0.0, "clip_low": 0.0,
                   "clip_high": 0.0, "value_err": float("nan"), "value_loss": float("nan"),
                   **policy.drawn_stats(everything)}
            if kept:                                     # 动态采样到了上限也可能一组都没凑到：不更新
                group = concat(policy, kept)
                tokens = policy.tokens(group, behaviour)
                row.update(tokens.stats)
                adv, returns = advantages(policy, cfg, group, tokens, row, advantage_fn)
                adv = policy.spread(tokens, adv)
                stats = {k: [] for k in ("loss", "clip_low", "clip_high", "grad_norm", "value_loss") if k in cols}
                for _ in range(cfg.mu):
                    obj, grads = policy_step(policy, tokens, adv, cfg, surrogate_fn, loss_rng)
                    for k, v in (("loss", obj.loss), ("clip_low", obj.clip_low), ("clip_high", obj.clip_high)):
                        stats[k].append(v)
                    if "grad_norm" in stats:
                        stats["grad_norm"].append(float(np.linalg.norm(grads)))
                    optimizer.step(policy.params, grads)
                    state["updates"] += 1
                    if critic_opt is not None:            # 价值函数走一步：½(V − 回报)² 的梯度乘 vf_coef
                        vl, dv = critic.value_loss(policy.critic.values(tokens), returns, tokens.mask)
                        critic_opt.step(policy.critic.params, _scale(cfg.vf_coef, policy.critic.grads(tokens, dv)))
                        stats["value_loss"].append(vl)
                    if cfg.staleness:
                        snapshots = (snapshots + [_copy(policy.params)])[-(cfg.staleness + 1):]
                row.update(_averages(stats, policy.average, cfg.mu))
            row.update(policy.evaluate(it))
            hist.append({c: row[c] for c in hist})
            state["updates"] = 0
            if bar is not None:
                bar.update()
            if callback is not None:
                callback(hist, model)
    hist.meta["short_batches"] = state["short"]
    return hist


def progress_bar(total, desc, show, unit="步"):
    """文字的进度（tables.TextProgress：一行字，notebook 保存以后照样能读；show=False 时什么也不写）。"""
    from ..tables import TextProgress
    return TextProgress(total, desc, show, unit)


__all__ = ["Group", "Policy", "Tokens", "run"]
