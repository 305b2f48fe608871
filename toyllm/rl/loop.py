"""
RL 的训练循环：采样 → 过滤 → 优势 → μ 次更新 → 记录（第 6 讲：从 REINFORCE 到 GRPO、PPO、DAPO 是同一个循环）。

【思路】每一次迭代：
        1. 采样：随机挑 gen_batch_scale × batch_problems 道题，每道题让模型做 group_size 遍（一"组"，filtering.draw_groups）；
        2. 过滤：开了动态采样就丢掉奖励全相同的组、补采（DAPO）；
        3. 奖励和优势：filtering.step_rewards → losses.group_advantages（或学生自己的 advantage_fn）；
        4. 更新：μ 次，每次 kernel.loss_and_grad 算损失和梯度（objective.rl_objective 拼出损失），优化器走一步；
        5. 记录：History 的一行（熵、KL、裁剪比例、路径 pass@1……）。
    这里不写任何损失公式。参数就是 TrainableLLM.params 这个 (12, 3) 数组，原地训练。
    train 里的循环就是这五步，每一步是 _Run 的一个方法（sample、advantages、update、record）；
    _Run 记着一次训练的状态（模型、配置、优化器、采样数……），价值表（advantage="gae"）在 _Critic 里。

【和真实系统的不同】optimizer="sgd"（默认）是朴素的梯度下降（参数 −= lr × 梯度，和参考模块的 apply_grads 一致），
    optimizer="adam" 是 Adam（真实系统用 AdamW）；每次更新用整批数据（真实系统还会把一批切成小批）；
    "ppo" 预设没有价值网络（critic），用组平均基线代替 GAE；"ppo_critic" 预设用一张价值表 V(s) 和 GAE（critic.py）。
【第 6 讲 8.5–8.9 节】advantage="gae" 时价值表和策略一起训练（自己的 Adam、critic_lr、vf_coef），
    history 多两列 value_err（价值表对精确价值的均方根误差，更新前）、value_loss；staleness = k > 0 时用 k 次更新之前的
    参数采样，每步损失乘 min(π_old / π_behaviour, tis_cap)；动态采样凑不满的次数记在 meta["short_batches"]。
"""

import numpy as np

from ..arithmetic import CONTEXTS
from ..blas import one_blas_thread
from ..entropy import entropy_value
from ..exact import CorrectPaths, correct_paths, exact_pass_at_1, step_right
from ..history import History, stop_on_interrupt
from ..logits import log_softmax
from ..optim import SGD, Adam
from ..policy import base_logit_table, log_softmax_rows, softmax_rows
from ..problems import default_problems
from ..sampler import prepare_problems
from ..trainable import TrainableLLM, check_trainable
from . import critic, filtering, kernel, losses
from .presets import resolve_config
from .filtering import concat_rollouts, draw_groups

RL_COLUMNS = ("iteration", "reward", "pass1_exact", "pass1_sampled", "entropy", "kl_est", "kl_exact",
              "clip_low", "clip_high", "zero_std", "groups", "grad_norm", "loss", "samples")
"""train 返回的 History 的列（含义见 History 的说明）。"""
CRITIC_COLUMNS = ("value_err", "value_loss")
"""advantage="gae" 时多出的两列：价值表对精确价值 V* 的均方根误差（这次采样经过的状态，更新前；只对结果奖励），
价值损失 ½(V − 回报)²（μ 次平均）。"""
CRITIC_HEADERS = {"value_err": "V误差", "value_loss": "价值损失"}


def _mean(x):
    """= float(x.mean())，逐位相同（同一个 np.add.reduce 再除以个数），只是不走 ndarray.mean 的 Python 包装（每次迭代要好几次）。"""
    return float(np.add.reduce(x, axis=None, dtype=np.float64) / x.size)


def _norm(x):
    """= float(np.linalg.norm(x))，逐位相同（np.linalg.norm 对实数也是拉平后 sqrt(x · x)），只是不走它的 Python 包装。"""
    x = x.ravel(order="K")
    return float(np.sqrt(x.dot(x)))


def _mean_reward(rewards, mask):
    """每份解答的平均奖励（每步奖励时按步平均），再对解答平均。"""
    per_rollout = rewards if rewards.ndim == 1 else rewards.sum(axis=1) / np.maximum(mask.sum(axis=1), 1)
    return _mean(per_rollout)


def _steps_taken(rollouts):
    """
    一批解答里每个有效步的情境和 (情境, 做法) 拉平后的下标 3c + a，按 mask 的顺序：(contexts, flat)。

    【思路】记录（_sampling_stats）和更新（kernel.loss_and_grad）都要这两个数组；没有丢掉组时两边是同一批解答，
        在采样后取一次、两边共用（少两次布尔索引和一次乘加）。
    """
    m = rollouts.mask
    contexts = rollouts.ctx[m]
    return contexts, contexts * 3 + rollouts.actions[m]


def _sampling_stats(contexts, flat, logits, ref_logp_table, cfg):
    """
    采样策略在这一次经过的所有步上的熵、KL（精确 / 估计）。动态采样丢掉的组也算。

    【思路】这几个数只取决于每一步的 (情境, 做法)，所以先在 (12, 3) 的表上算，再按经过的步取出来：
        熵和 KL 的公式各自只调用一次（entropy.entropy_value、losses.kl_estimator），不在上千步上重复。
        熵只记录、不求导：用 entropy_value（= losses.entropy(...).value，逐位相同），不算导数、不重复检查输入
        （π 是这里自己从 logits 算的；有 NaN 时上一行的 kl_estimator 已经报错）。
    【参数】contexts、flat：_steps_taken(这次采到的全部解答)；logits：(12, 3) 采样策略的 logits；
        ref_logp_table：(12, 3) 参考策略的对数概率；cfg：RLConfig
    """
    visits = np.bincount(contexts, minlength=len(CONTEXTS)) / len(contexts)      # 每个情境占了多少步
    logpi = log_softmax(logits / cfg.temperature)     # = log_softmax_rows（logits 在采样前 policy 里已经检查过）
    pi = np.exp(logpi)
    kl = losses.kl_estimator(logpi, ref_logp_table, cfg.kl_estimator).value       # (12, 3)：每个 (情境, 做法) 一个估计
    # 每步的 KL 估计按 (情境, 做法) 拉平后的下标 3c + a 取出（一维的 take 比二维的花式索引快，取出的数和顺序都一样）
    return {"entropy": float(visits @ entropy_value(pi, logpi)),
            "kl_exact": float(visits @ np.add.reduce(pi * (logpi - ref_logp_table), axis=1)),     # = (…).sum(axis=1)
            "kl_est": _mean(np.take(kl, flat))}


@one_blas_thread
def train(model, config=None, train_problems=None, heldout_problems=None, *, advantage_fn=None, surrogate_fn=None,
          callback=None, reference=None):
    """
    用强化学习训练模型（原地修改 model.params），返回训练记录 History。

    【思路】见模块说明。每次迭代：选题 → 每题采样 G 份 → 奖励 → 优势 → μ 次更新。
        动态采样打开时，奖励全相同的组被丢掉，继续采新题，直到凑满 batch_problems 组（最多采 max_draws 批）。
        参考策略 π_ref（KL 用）是训练开始时模型的一份冻结的拷贝（或者 reference 指定的模型）。
        每次迭代结束后调用 callback(history, model)（进度条、画图、提前停止都可以放在这里）。
    【参数】
        model：TrainableLLM（有思维链），原地训练
        config：RLConfig，或预设名（"grpo"、"dapo"……），默认 RLConfig()（= GRPO）
        train_problems / heldout_problems：list of Problem（heldout 也可以是 CorrectPaths）；默认 default_problems(0)
        advantage_fn：自己写的优势函数，签名同 group_advantages 的前两个参数 advantage_fn(rewards, group_size) → A；
            给了就代替 config.advantage（只支持 reward="outcome"）
        surrogate_fn：自己写的替代损失，签名同 clipped_surrogate(ratio, adv, eps_low, eps_high)
            → (每步损失, 下界裁剪, 上界裁剪)，或者只返回每步损失；梯度从它的返回值算（见 policy_loss）
        callback：每次迭代后调用 callback(history, model)
        reference：参考策略（TrainableLLM，大小必须相同），默认训练开始时的 model
    【返回】History（列见 RL_COLUMNS 和 History 的说明）；meta 里有 config、seed、start_pass1_exact 等
    【边界】训练中按 Ctrl+C（KeyboardInterrupt）：循环停下，模型保留已经做完的更新，返回已完成迭代的记录，
        history.interrupted = True，history.message 说明停在哪里（不会把异常抛出去）。
        batch_problems × gen_batch_scale 大于训练题数时报 ValueError。
        整个训练里 BLAS 只用一个线程（blas.one_blas_thread）：损失里的点积（objective.rl_objective）超过 1 万步时，
        OpenBLAS 会叫醒别的线程，在 2 核的机器上一次点积从十几微秒变成近 1 毫秒。
    【例子】
        hist = train(TrainableLLM(1e9), "grpo", *default_problems(0))
        hist = train(model, preset("dapo", iterations=100), train_set, heldout,
                     advantage_fn=my_advantages, surrogate_fn=my_surrogate)
    【Python 小知识】Ctrl+C 是一个异常（KeyboardInterrupt），notebook 里按"中断"按钮也是发这个异常；
        history.stop_on_interrupt 用 with 语句接住它（RL 和模仿学习共用）。
    """
    cfg = resolve_config(config)
    batch, paths, ref_params = _check_inputs(model, cfg, train_problems, heldout_problems, advantage_fn, surrogate_fn,
                                             callback, reference)
    run = _Run(model, cfg, batch, paths, ref_params, advantage_fn, surrogate_fn)
    with stop_on_interrupt(run.hist, cfg.iterations, "次迭代", "全部更新", run.unrecorded):
        for it in range(1, cfg.iterations + 1):
            draws, row = run.sample(it)                       # 1. 采样、2. 过滤；row 先记下这批采样的统计
            if draws.kept:                                    # （动态采样到了上限也可能一组都没凑到：不更新）
                roll, adv = run.advantages(draws, row)        # 3. 奖励 → 优势
                run.update(roll, adv, row)                    # 4. μ 次更新
            run.record(row, callback)                         # 5. 记录
    return run.finish()


def _check_inputs(model, cfg, train_problems, heldout_problems, advantage_fn, surrogate_fn, callback, reference):
    """train 的参数检查；返回 (训练题 ProblemBatch, 留出题的 CorrectPaths, 参考策略的参数)。"""
    check_trainable(model)
    if not model.cot:
        raise ValueError("只能训练有思维链的模型（cot=True）")
    if train_problems is None or heldout_problems is None:
        d_train, d_held = default_problems(0)
        train_problems = d_train if train_problems is None else train_problems
        heldout_problems = d_held if heldout_problems is None else heldout_problems
    batch = prepare_problems(train_problems, "train_problems")
    paths = heldout_problems if isinstance(heldout_problems, CorrectPaths) else \
        correct_paths(prepare_problems(heldout_problems, "heldout_problems"))
    filtering.draw_size(cfg, len(batch))
    for name, fn in (("advantage_fn", advantage_fn), ("surrogate_fn", surrogate_fn), ("callback", callback)):
        if fn is not None and not callable(fn):
            raise TypeError(f"{name} 必须是函数（可调用对象），收到 {fn!r}")
    if advantage_fn is not None and cfg.reward != "outcome":
        raise ValueError(f"自定义的 advantage_fn 只支持 reward='outcome'，收到 reward={cfg.reward!r}")
    if reference is not None:
        check_trainable(reference, "reference")
        if reference.size != model.size:
            raise ValueError(f"reference 的大小 {reference.size:g} 必须和 model 的大小 {model.size:g} 相同")
    if cfg.advantage == "gae" and advantage_fn is not None:
        raise ValueError("advantage=\"gae\" 的优势来自价值表，不能同时给 advantage_fn")
    return batch, paths, (model if reference is None else reference).params.copy()


class _Run:
    """一次 train 的状态（模型、配置、题目、参考策略、优化器、训练记录、采样数……）和循环的每一步。"""

    def __init__(self, model, cfg, batch, paths, ref_params, advantage_fn, surrogate_fn):
        self.model, self.cfg, self.batch, self.paths = model, cfg, batch, paths
        self.advantage_fn, self.surrogate_fn = advantage_fn, surrogate_fn
        self.base = base_logit_table(model.size)
        self.ref_logp_table = log_softmax_rows(self.base + ref_params, cfg.temperature)
        self.max_len = int(batch.mask.sum(axis=1).max())
        self.rng = np.random.default_rng(cfg.seed)
        self.critic = _Critic(cfg, batch) if cfg.advantage == "gae" else None
        self.hist = History(RL_COLUMNS + (CRITIC_COLUMNS if self.critic else ()), {
            "algorithm": "rl", "config": cfg.to_dict(), "seed": cfg.seed, "model_size": model.size,
            "n_train": len(batch), "n_heldout": int(paths.mask.shape[0]),
            "start_pass1_exact": exact_pass_at_1(model, paths),
            "advantage_fn": getattr(advantage_fn, "__name__", "custom") if advantage_fn else None,
            "surrogate_fn": getattr(surrogate_fn, "__name__", "custom") if surrogate_fn else None,
        }, CRITIC_HEADERS if self.critic else None)
        self.samples, self.it, self.updates_done, self.short = 0, 0, 0, 0
        self.optimizer = (Adam if cfg.optimizer == "adam" else SGD)(model.params, cfg.lr)
        self.snapshots = [model.params.copy()] if cfg.staleness else None    # 最近 k + 1 次的参数（陈旧采样用）
        # Clip-Cov 随机挑步：自己的 Generator，不动采样的随机数流（别的预设的数不变）
        self.loss_rng = np.random.default_rng((cfg.seed, 1)) if cfg.policy_loss == "clip_cov" else None
        self._tables = {}

    def policy(self, params, temperature):
        """
        概率表 softmax_rows(base + params, temperature)，(12, 3)。同一组参数只算一次：
        记录 pass@1（更新之后）、下一次采样、第一次更新用的都是同一组参数（按参数的字节认，callback 改了参数也认得出）。
        """
        key = (temperature, params.tobytes())
        probs = self._tables.get(key)
        if probs is None:
            if len(self._tables) >= 4:
                self._tables.clear()
            probs = self._tables[key] = softmax_rows(self.base + params, temperature)
            probs.flags.writeable = False            # 几处共用这一张表：谁也不能原地改它
        return probs

    def sample(self, it):
        """1. 采样、2. 过滤（filtering.draw_groups）；返回 (Draws, 这一行记录里采样的部分：奖励、熵、KL……)。"""
        cfg, G = self.cfg, self.cfg.group_size
        self.it, self.updates_done = it, 0
        sampler_model = self.model
        if cfg.staleness:                          # 用 k 次更新之前的参数采样
            sampler_model = TrainableLLM(self.model.size)
            sampler_model.params[:] = self.snapshots[0]
        table = self.policy(sampler_model.params, cfg.temperature)
        draws = draw_groups(sampler_model, self.batch, cfg, self.rng, table=table)
        if draws.short:
            self.short += 1
            if cfg.on_short == "raise":
                got = sum(len(d) for d in draws.kept) // G
                raise RuntimeError(f"动态采样：第 {it} 次迭代采了 max_draws = {cfg.max_draws} 批，只凑到 {got} / "
                                   f"{cfg.batch_problems} 组奖励不全相同的题（on_short=\"raise\"，和 verl 一样停下）。"
                                   f"可以加大 max_draws、减小 batch_problems，或设 on_short=\"train\" 用凑到的组训练")
        n_drawn = sum(len(d) for d in draws.drawn)
        self.samples += n_drawn
        everything = concat_rollouts(draws.drawn)
        rewards = filtering.step_rewards(everything, cfg.reward)
        taken = _steps_taken(everything)
        self.drawn = everything, rewards, taken            # 没有丢掉组时，advantages、update 直接用这份奖励和下标
        row = {"iteration": it, "samples": self.samples, "reward": _mean_reward(rewards, everything.mask),
               "pass1_sampled": _mean(everything.correct), "zero_std": draws.n_constant / (n_drawn // G),
               "groups": sum(len(d) for d in draws.kept) // G,
               "loss": 0.0, "grad_norm": 0.0, "clip_low": 0.0, "clip_high": 0.0,    # 一组都没凑到、不更新时就是这些
               **_sampling_stats(*taken, self.base + self.model.params, self.ref_logp_table, cfg)}
        if self.critic is not None:
            row.update(value_err=float("nan"), value_loss=float("nan"))
        return draws, row

    def advantages(self, draws, row):
        """3. 奖励 → 优势：学生的 advantage_fn、价值表 + GAE，或 losses.group_advantages；返回 (训练的解答, 优势)。"""
        cfg, G = self.cfg, self.cfg.group_size
        roll = concat_rollouts(draws.kept)
        everything, rewards, _ = self.drawn
        r = rewards if roll is everything else filtering.step_rewards(roll, cfg.reward)
        if self.advantage_fn is not None:
            adv = np.asarray(self.advantage_fn(r, G), dtype=float)
            if adv.shape != r.shape or not np.all(np.isfinite(adv)):
                raise ValueError(f"advantage_fn 必须返回和 rewards 形状相同（{r.shape}）的有限数组，"
                                 f"收到形状 {adv.shape}")
        elif self.critic is not None:
            probs = self.policy(self.model.params, cfg.temperature)
            adv, row["value_err"] = self.critic.advantages(roll, r, probs, np.concatenate(draws.kept_problems))
        else:
            adv = losses.group_advantages(r, G, cfg.advantage, cfg.scale_rewards, cfg.std_eps,
                                          None if r.ndim == 1 and cfg.advantage not in losses.MASKED_ADVANTAGES
                                          else roll.mask, cfg.gamma)
        return roll, adv

    def update(self, roll, adv, row):
        """4. μ 次更新：每次 kernel.loss_and_grad 算损失和梯度，优化器走一步（价值表也走一步）；row 记 μ 次的平均。"""
        cfg, model = self.cfg, self.model
        steps = kernel.step_batch(roll, adv, self.max_len, check=False)
        if cfg.staleness:                      # π_old = 这次迭代开始时的策略；权重 min(π_old / π_beh, C)
            steps = kernel.stale_steps(steps, model.params, self.base, cfg)
        # 参考策略的对数概率只有损失里有 KL（β > 0）时才用到（记录里的 KL 在采样时已经按情境算好）
        ref_logp = self.ref_logp_table[steps.ctx, steps.actions] if cfg.beta > 0 else None
        taken = self.drawn[2] if roll is self.drawn[0] else None       # 没有丢掉组：采样时取好的下标
        stats = []
        for _ in range(cfg.mu):
            res = kernel.loss_and_grad(model.params, self.base, steps, cfg, ref_logp, self.surrogate_fn,
                                       want_kl_est=False, rng=self.loss_rng,
                                       probs=self.policy(model.params, cfg.temperature), taken=taken)
            stats.append((res.loss, _norm(res.grad), res.clip_low, res.clip_high))
            self.optimizer.step(model.params, res.grad)
            self.updates_done += 1
            if self.critic is not None:
                self.critic.step()
            if cfg.staleness:
                self.snapshots = (self.snapshots + [model.params.copy()])[-(cfg.staleness + 1):]
        loss, grad_norm, clip_low, clip_high = (sum(col) / len(stats) for col in zip(*stats))
        row.update(loss=float(loss), grad_norm=float(grad_norm), clip_low=float(clip_low), clip_high=float(clip_high))
        if self.critic is not None:
            row["value_loss"] = float(np.mean(self.critic.losses))

    def record(self, row, callback):
        """5. 记录：更新之后的路径 pass@1，History 的一行，再调用 callback(history, model)。"""
        # = exact_pass_at_1(self.model, self.paths)，概率表用 policy 记下的那张（下一次采样还用它）
        row["pass1_exact"] = _mean(step_right(self.policy(self.model.params, 1.0)[self.paths.ctx], self.paths)
                                   .prod(axis=1))
        self.hist.append(row)
        self.updates_done = 0
        if callback is not None:
            callback(self.hist, self.model)

    def unrecorded(self):
        """Ctrl+C 时的补充说明：这次迭代已经做了几次更新、还没有记录。"""
        return f"（第 {self.it} 次迭代做了 {self.updates_done} 次更新，没有记录）" if self.updates_done else ""

    def finish(self):
        """训练结束（或被中断）：元数据里记下最后的路径 pass@1、凑不满的次数、价值表；返回 History。"""
        critic_table = {"critic_table": self.critic.table.reshape(self.critic.shape).tolist()} if self.critic else {}
        self.hist.meta.update(final_pass1_exact=exact_pass_at_1(self.model, self.paths), short_batches=self.short,
                              **critic_table, interrupted=self.hist.interrupted)
        return self.hist


class _Critic:
    """advantage="gae" 时的价值表 V[t, c, ok]（拉平存放，critic.py）和它自己的 Adam：给出 GAE 的优势，每次更新也训练它。"""

    def __init__(self, cfg, batch):
        self.cfg, self.shape = cfg, critic.table_shape(batch.mask.shape[1])
        self.table = np.zeros(int(np.prod(self.shape)))
        self.opt = Adam(self.table, cfg.critic_lr)
        self.paths = correct_paths(batch) if cfg.reward == "outcome" else None     # 精确价值 V* 只对结果奖励

    def advantages(self, roll, r, probs, problems):
        """GAE 的优势（verl 把它整批白化）[S511]，记下这批的状态和回报；返回 (优势, 价值表对 V* 的均方根误差，更新前)。"""
        cfg = self.cfg
        self.mask, self.idx, self.losses = roll.mask, critic.state_index(roll, self.shape[0]), []
        values = np.where(roll.mask, self.table[self.idx], 0.0)
        per_step = critic.outcome_step_rewards(r, roll.mask) if r.ndim == 1 else r
        adv, self.returns = critic.gae(per_step, values, roll.mask, cfg.gamma, cfg.lam)
        if self.paths is None:
            return losses.whiten(adv, roll.mask), float("nan")
        v_star = critic.exact_values(probs, self.paths, problems, roll)
        return losses.whiten(adv, roll.mask), float(np.sqrt(np.mean((values - v_star)[roll.mask] ** 2)))

    def step(self):
        """价值表走一步：½(V − 回报)² 的梯度（乘 vf_coef），记下价值损失。"""
        vl, dv = critic.value_loss(np.where(self.mask, self.table[self.idx], 0.0), self.returns, self.mask)
        self.opt.step(self.table, self.cfg.vf_coef * critic.table_gradient(self.idx, dv, self.mask, self.table.size))
        self.losses.append(vl)


__all__ = ["CRITIC_COLUMNS", "RL_COLUMNS", "train"]
