"""
玩具的策略：Δ 表 (12, 3) 和它的链式法则，接到 loop.run 上就是 rl.train（第 6 讲：从 REINFORCE 到 GRPO、PPO、DAPO）。

【思路】loop.py 的循环不知道模型是什么；ToyPolicy 把玩具交给它：
        sample   每道题采样 G 份（sampler.sample_subset），奖励 filtering.step_rewards；
        tokens   一批解答排成 (B, L) 的步（kernel.step_batch 的数组）：π_old、π_ref 下每步的对数概率；
        forward / backward    kernel.forward 给出每步的 log π(a | c)，kernel.backward 把 ∂loss/∂log π 按情境加进 Δ 表的梯度；
        critic   advantage="gae" 时的价值表 V[t, c, ok]（critic.py），ValueTable 给出每步的 V 和对表的梯度。
    参数就是 TrainableLLM.params 这个 (12, 3) 数组，原地训练。
【和真实系统的不同】optimizer="sgd"（默认）是朴素的梯度下降（参数 −= lr × 梯度，和参考模块的 apply_grads 一致），
    optimizer="adam" 是 Adam（真实系统用 AdamW）；每次更新用整批数据（真实系统还会把一批切成小批）；
    "ppo" 预设没有价值网络（critic），用组平均基线代替 GAE；"ppo_critic" 预设用一张价值表 V(s) 和 GAE（critic.py）。
    advantage="gae" 时 history 多两列 value_err（价值表对精确价值的均方根误差，更新前）、value_loss。
"""

import numpy as np

from ..arithmetic import CONTEXTS
from ..blas import one_blas_thread
from ..entropy import entropy_value
from ..exact import CorrectPaths, correct_paths, exact_pass_at_1, step_right
from ..history import History
from ..logits import log_softmax
from ..policy import base_logit_table, log_softmax_rows, softmax_rows
from ..problems import default_problems
from ..sampler import prepare_problems, sample_subset
from ..trainable import TrainableLLM, check_trainable
from . import critic, filtering, kernel, losses, loop
from .loop import Group, Policy, Tokens, fast_mean
from .presets import resolve_config

RL_COLUMNS = ("iteration", "reward", "pass1_exact", "pass1_sampled", "entropy", "kl_est", "kl_exact",
              "clip_low", "clip_high", "zero_std", "groups", "grad_norm", "loss", "samples")
"""train 返回的 History 的列（含义见 History 的说明）。"""
CRITIC_COLUMNS = ("value_err", "value_loss")
"""advantage="gae" 时多出的两列：价值表对精确价值 V* 的均方根误差（这次采样经过的状态，更新前；只对结果奖励），
价值损失 ½(V − 回报)²（μ 次平均）。"""
CRITIC_HEADERS = {"value_err": "V误差", "value_loss": "价值损失"}


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
    logpi = log_softmax(logits, cfg.temperature)      # = log_softmax_rows（logits 在采样前 policy 里已经检查过）
    pi = np.exp(logpi)
    kl = losses.kl_estimator(logpi, ref_logp_table, cfg.kl_estimator).value       # (12, 3)：每个 (情境, 做法) 一个估计
    # 每步的 KL 估计按 (情境, 做法) 拉平后的下标 3c + a 取出（一维的 take 比二维的花式索引快，取出的数和顺序都一样）
    return {"entropy": float(visits @ entropy_value(pi, logpi)),
            "kl_exact": float(visits @ np.add.reduce(pi * (logpi - ref_logp_table), axis=1)),     # = (…).sum(axis=1)
            "kl_est": fast_mean(np.take(kl, flat))}


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
    policy = ToyPolicy(model, cfg, batch, paths, ref_params)
    hist = History(RL_COLUMNS + (CRITIC_COLUMNS if policy.critic else ()), {
        "algorithm": "rl", "config": cfg.to_dict(), "seed": cfg.seed, "model_size": model.size,
        "n_train": len(batch), "n_heldout": int(paths.mask.shape[0]),
        "start_pass1_exact": exact_pass_at_1(model, paths),
        "advantage_fn": getattr(advantage_fn, "__name__", "custom") if advantage_fn else None,
        "surrogate_fn": getattr(surrogate_fn, "__name__", "custom") if surrogate_fn else None,
    }, CRITIC_HEADERS if policy.critic else None)
    loop.run(policy, cfg, hist, advantage_fn=advantage_fn, surrogate_fn=surrogate_fn, callback=callback, model=model)
    critic_table = {"critic_table": policy.critic.params.reshape(policy.critic.shape).tolist()} if policy.critic else {}
    hist.meta.update(final_pass1_exact=exact_pass_at_1(model, paths), **critic_table, interrupted=hist.interrupted)
    return hist


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


class ToyPolicy(Policy):
    """玩具的策略接口（loop.Policy）：Δ 表、采样、每步的 log π 和链式法则；概率表按参数缓存（几处共用同一组参数）。"""

    def __init__(self, model, cfg, batch, paths, ref_params):
        self.model, self.cfg, self.batch, self.paths = model, cfg, batch, paths
        self.params, self.n_problems = model.params, len(batch)
        self.base = base_logit_table(model.size)
        self.ref_logp_table = log_softmax_rows(self.base + ref_params, cfg.temperature)
        self.max_len = int(batch.mask.sum(axis=1).max())
        self.critic = ValueTable(cfg, batch, self) if cfg.advantage == "gae" else None
        self._tables = {}

    def probs(self, params, temperature):
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

    def sample(self, rows, G, rng, params=None):
        """第 rows 道题（排好序）每题采样 G 份 → Group；params 是陈旧采样用的旧参数（None：现在的参数）。"""
        model = self.model
        if params is not None:
            model = TrainableLLM(self.model.size)
            model.params[:] = params
        rows = np.sort(rows)
        roll = sample_subset(model, self.batch, rows, G, rng, self.cfg.temperature,
                             table=self.probs(model.params, self.cfg.temperature))
        return Group(roll, filtering.step_rewards(roll, self.cfg.reward), roll.mask, rows[roll.problem])

    def select(self, roll, keep):
        return filtering.keep_rows(roll, keep)

    def concat(self, parts):
        return filtering.concat_rollouts(parts)

    def drawn_stats(self, group):
        """这次采到的全部解答：采样 pass@1 和采样策略在经过的步上的熵、KL（_sampling_stats）。"""
        roll = group.data
        contexts = roll.ctx[roll.mask]
        return {"pass1_sampled": fast_mean(roll.correct),
                **_sampling_stats(contexts, contexts * 3 + roll.actions[roll.mask], self.base + self.model.params,
                                  self.ref_logp_table, self.cfg)}

    def tokens(self, group, behaviour=None):
        """一批解答排成步；陈旧采样时 π_old 换成现在的策略，采样时的概率记作 π_behaviour（kernel.stale_steps）。"""
        cfg, roll = self.cfg, group.data
        steps = kernel.StepBatch(roll.ctx, roll.actions, roll.mask, np.where(roll.mask, roll.logp, 0.0), None,
                                 self.max_len)
        if behaviour is not None:
            steps = kernel.stale_steps(steps, self.model.params, self.base, cfg)
        # 参考策略的对数概率只有损失里有 KL（β > 0）时才用到（记录里的 KL 在采样时已经按情境算好）
        ref_logp = self.ref_logp_table[steps.ctx, steps.actions] if cfg.beta > 0 else None
        idx = critic.state_index(roll, self.critic.shape[0]) if self.critic else None    # 价值表的格子
        return Tokens(steps.mask, steps.old_logp, ref_logp, steps.behaviour_logp, self.max_len, {}, (steps, idx))

    def spread(self, tokens, adv):
        return kernel.spread(adv, tokens.mask)

    def forward(self, tokens):
        fwd = kernel.forward(self.model.params, self.base, tokens.inputs[0], self.cfg,
                             probs=self.probs(self.model.params, self.cfg.temperature))
        return fwd.logp, fwd.entropy, fwd

    def backward(self, tokens, fwd, obj):
        return kernel.backward(fwd, obj, tokens.mask, self.cfg.temperature)

    def evaluate(self, it):
        """更新之后的路径 pass@1（= exact_pass_at_1，概率表用缓存的那张，下一次采样还用它）。"""
        return {"pass1_exact": fast_mean(step_right(self.probs(self.model.params, 1.0)[self.paths.ctx], self.paths)
                                     .prod(axis=1))}


class ValueTable:
    """advantage="gae" 时的价值表 V[t, c, ok]（拉平存放，critic.py）：每步的 V、对表的梯度、对精确价值 V* 的误差。"""

    def __init__(self, cfg, batch, policy):
        self.cfg, self.policy, self.shape = cfg, policy, critic.table_shape(batch.mask.shape[1])
        self.params = np.zeros(int(np.prod(self.shape)))
        self.paths = correct_paths(batch) if cfg.reward == "outcome" else None     # 精确价值 V* 只对结果奖励

    def values(self, tokens):
        """每步之前的 V（mask 外是 0）。"""
        return np.where(tokens.mask, self.params[tokens.inputs[1]], 0.0)

    def grads(self, tokens, dvalues):
        """∂loss/∂V → 对表的梯度（按格子加起来）。"""
        return critic.table_gradient(tokens.inputs[1], dvalues, tokens.mask, self.params.size)

    def error(self, tokens, values, group):
        """价值表对 V* 的均方根误差（这批经过的状态，更新前）；不是结果奖励时是 NaN。"""
        if self.paths is None:
            return float("nan")
        v_star = critic.exact_values(self.policy.probs(self.policy.model.params, self.cfg.temperature), self.paths,
                                     group.problems, group.data)
        m = tokens.mask
        return float(np.sqrt(np.mean((values - v_star)[m] ** 2)))


__all__ = ["CRITIC_COLUMNS", "RL_COLUMNS", "ToyPolicy", "train"]
