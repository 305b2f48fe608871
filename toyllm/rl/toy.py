"""
玩具的策略：Δ 表 (12, 3)、它的链式法则，接到 loop.run 上就是 rl.train（第 6 讲：从 REINFORCE 到 GRPO、PPO、DAPO）。

【思路】loop.py 的循环不知道模型是什么；ToyPolicy 把玩具交给它：
        sample   每道题采样 G 份（sampler.sample_subset），奖励 groups.step_rewards；
        tokens   一批解答排成 (B, L) 的步：π_old、π_ref 下每步的对数概率；
        forward  每步的 log π(a | c)（和熵奖励要的 H）；
        backward 链式法则：策略只取决于情境，每一步的梯度都是"一个数 × (onehot(a) − π(· | c)) / T"。
                 这个数 s = ∂loss/∂log π(a | c) 由 objective.rl_objective 从 losses 里每一块的导数拼出来（小 transformer
                 用的也是它），这里按情境加进 Δ 表的梯度；熵奖励的 ∂loss/∂H 乘 losses.entropy 给出的 ∂H/∂logits。
                 这里不写任何一个损失的公式（学生改了 losses 里的函数，训练就跟着变，测试检查了这一点）；
        critic   advantage="gae" 时的价值表 V[t, c, ok]（critic.py），ValueTable 给出每步的 V 和对表的梯度。
    参数就是 TrainableLLM.params 这个 (12, 3) 数组，原地训练。policy_loss 是同一个链式法则的单次调用（不更新模型）。
【和真实系统的不同】optimizer="sgd"（默认）是朴素的梯度下降（参数 −= lr × 梯度，和参考模块的 apply_grads 一致），
    optimizer="adam" 是 Adam（真实系统用 AdamW）；每次更新用整批数据（真实系统还会把一批切成小批）；
    "ppo" 预设没有价值网络（critic），用组平均基线代替 GAE；"ppo_critic" 预设用一张价值表 V(s) 和 GAE（critic.py）。
    advantage="gae" 时 history 多两列 value_err（价值表对精确价值的均方根误差，更新前）、value_loss。
"""

from typing import NamedTuple

import numpy as np

from ..arithmetic import CONTEXTS
from ..blas import one_blas_thread
from ..entropy import entropy_and_grad, kl_divergence
from ..exact import CorrectPaths, correct_paths, exact_pass_at_1, step_right
from ..history import History
from ..logits import log_softmax
from ..policy import base_logit_table, log_softmax_rows, softmax_rows
from ..problems import default_problems
from ..sampler import check_rollouts, prepare_problems, sample_subset
from ..trainable import TrainableLLM, check_trainable, score_vectors
from . import critic, groups, losses, loop, objective
from .loop import Group, Policy, Tokens
from .presets import resolve_config

_N_CTX = len(CONTEXTS)

RL_COLUMNS = ("iteration", "reward", "pass1_exact", "pass1_sampled", "entropy", "kl_est", "kl_exact",
              "clip_low", "clip_high", "zero_std", "groups", "grad_norm", "loss", "samples")
"""train 返回的 History 的列（含义见 History 的说明）。"""
CRITIC_COLUMNS = ("value_err", "value_loss")
"""advantage="gae" 时多出的两列：价值表对精确价值 V* 的均方根误差（这次采样经过的状态，更新前；只对结果奖励），
价值损失 ½(V − 回报)²（μ 次平均）。"""
CRITIC_HEADERS = {"value_err": "V误差", "value_loss": "价值损失"}


def _sampling_stats(contexts, actions, logits, ref_logp_table, cfg):
    """
    采样策略在这一次经过的所有步上的熵、KL（精确 / 估计）。动态采样丢掉的组也算。

    【思路】这几个数只取决于每一步的 (情境, 做法)，所以先在 (12, 3) 的表上算，再按经过的步取出来。
    【参数】contexts、actions：这次采到的全部有效步的情境和做法；logits：(12, 3) 采样策略的 logits；
        ref_logp_table：(12, 3) 参考策略的对数概率；cfg：RLConfig
    """
    visits = np.bincount(contexts, minlength=len(CONTEXTS)) / len(contexts)      # 每个情境占了多少步
    logpi = log_softmax(logits, cfg.temperature)
    pi = np.exp(logpi)
    kl = losses.kl_estimator(logpi, ref_logp_table, cfg.kl_estimator).value       # (12, 3)：每个 (情境, 做法) 一个估计
    return {"entropy": float(visits @ entropy_and_grad(pi, logpi)[0]),
            "kl_exact": float(visits @ kl_divergence(pi, logpi, ref_logp_table)),
            "kl_est": float(np.mean(kl[contexts, actions]))}


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
    groups.draw_size(cfg, len(batch))
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


def _table_grad(contexts, actions, dloss_dlogp, probs, temperature=1.0):
    """
    Σ_步 s · ∂log π(a | c)/∂z，按情境加进 (12, 3) 的表：grad[c] = (Σ s·onehot(a) − (Σ s)·π_c) / T。

    【参数】contexts、actions：(N,) 每个有效步的情境下标和动作；dloss_dlogp：(N,) 每步的 s；
        probs：(12, 3) 当前策略 π；temperature：T
    【返回】(12, 3) 数组
    """
    return (np.bincount(contexts * 3 + actions, weights=dloss_dlogp, minlength=3 * _N_CTX).reshape(_N_CTX, 3)
            - np.bincount(contexts, weights=dloss_dlogp, minlength=_N_CTX)[:, None] * probs) / temperature


def spread(adv, mask):
    """优势排成 (B, L)：每份解答一个优势 (B,) 时铺到它的每一步；mask 外是 0。"""
    adv = np.asarray(adv, dtype=float)
    return np.where(mask, adv[:, None] if adv.ndim == 1 else adv, 0.0)


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


class Forward(NamedTuple):
    """forward 的结果：每步的 log π 和熵 H（c_H = 0 时 None），和反向要用的 π、每步的情境和做法、熵的导数。"""
    logp: np.ndarray
    entropy: np.ndarray
    pi: np.ndarray
    ctx: np.ndarray
    actions: np.ndarray
    ent: object


def forward(params, base, rollouts, cfg):
    """每个有效步的 log π(a | c)（和熵奖励要的 H）：(B, L)，mask 外是 0。π = softmax((base + Δ) / T)，和采样器同一个函数。"""
    T, m = cfg.temperature, rollouts.mask
    logits = base + params
    pi = softmax_rows(logits, T)
    ctx, actions = rollouts.ctx[m], rollouts.actions[m]
    logp = np.zeros(m.shape)
    logp[m] = _log(pi)[ctx, actions]
    H = ent = None
    if cfg.entropy_coef != 0:
        ent = losses.entropy(pi, log_softmax_rows(logits, T), T)
        H = np.zeros(m.shape)
        H[m] = ent.value[ctx]
    return Forward(logp, H, pi, ctx, actions, ent)


def backward(fwd, obj, mask, temperature=1.0):
    """链式法则：∂loss/∂log π（和 ∂loss/∂H）→ 对 Δ 的梯度 (12, 3)。"""
    grad = _table_grad(fwd.ctx, fwd.actions, obj.dloss_dlogp[mask], fwd.pi, temperature)
    if fwd.ent is not None:                     # ∂loss/∂Δ_c += Σ_{t: c_t = c} e_t · ∂H_c/∂Δ_c
        grad = grad + np.bincount(fwd.ctx, weights=obj.dloss_dentropy[mask], minlength=_N_CTX)[:, None] * fwd.ent.dlogits
    return grad


def _log(p):
    """log p，和采样器记的 log 概率逐位相同；下溢成 0 的概率记为 log(最小正规数) ≈ −708（学习率极大时），不是 −inf。"""
    return np.log(np.maximum(p, np.finfo(float).tiny))


def policy_loss(model, rollouts, advantages, config=None, *, ref_params=None, max_len=None, surrogate_fn=None, rng=None):
    """
    一批解答上的损失和它对 Δ 的精确梯度（不更新模型）。训练（train）每次更新走的是同一条路：forward → objective.rl_objective → backward。

    【思路】见模块说明。π_old 取 rollouts.probs（采样时的概率）；π_θ 取模型**现在**的参数。
        μ = 1、β = 0、没有熵奖励、T = 1 时，−grad 恰好等于参考模块里对每一步
        add_grad(grads, 情境, 动作, 概率, 权重 = w · A) 的结果（测试检查到 1e-12）。
    【参数】model：TrainableLLM；rollouts：sampler.Rollouts；advantages：(B,) 或 (B, L)；config：RLConfig 或预设名；
        ref_params：参考策略的 Δ（12, 3），β > 0 时需要，默认全 0；max_len：常数聚合的 L_max；
        surrogate_fn：自定义的替代损失（签名同 clipped_surrogate），默认 losses.clipped_surrogate；
        rng：numpy Generator（policy_loss="clip_cov" 随机挑步时必须给）
    【返回】LossResult(loss, grad, surrogate, kl_term, entropy_term, clip_low, clip_high, kl_est)
    【边界】自定义 surrogate_fn 时，对 ρ 的导数用中心差分（h = 1e-6）从它的返回值算出 —— 替代损失对 ρ 是分段线性的，
        所以只要 ρ 不在拐点附近，这是精确的（误差约 1e-10）。advantages 里有 NaN、ref_params 形状不对时报 ValueError。
    【例子】
        r = sample_rollouts(model, problems, 8, np.random.default_rng(0))
        res = policy_loss(model, r, group_advantages(step_rewards(r), 8))
        res.loss        # μ = 1 时约等于 0（ρ ≡ 1，组内优势之和为 0）
        res.grad        # 但梯度不是 0：model.params -= 2.0 * res.grad 就是一步 GRPO
    【Python 小知识】NamedTuple 的结果既可以按名字取（res.grad），也可以像元组一样解包。
    """
    cfg = resolve_config(config)
    check_trainable(model)
    check_rollouts(rollouts)
    m = rollouts.mask
    try:
        adv = np.asarray(advantages, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"advantages 必须是数的数组，收到 {advantages!r}") from None
    if adv.shape != m.shape[:1] and adv.shape != m.shape:
        raise ValueError(f"advantages 的形状必须是 ({m.shape[0]},) 或 {m.shape}，收到 {adv.shape}")
    adv = spread(adv, m)
    if not np.all(np.isfinite(adv[m])):
        raise ValueError("advantages 里有 NaN 或无穷")
    base = base_logit_table(model.size)
    ref = np.zeros((_N_CTX, 3)) if ref_params is None else np.asarray(ref_params, dtype=float)
    if ref.shape != (_N_CTX, 3) or not np.all(np.isfinite(ref)):
        raise ValueError(f"ref_params 必须是形状 ({_N_CTX}, 3) 的有限数组，收到形状 {ref.shape}")
    ref_logp = log_softmax_rows(base + ref, cfg.temperature)[rollouts.ctx, rollouts.actions]
    fwd = forward(model.params, base, rollouts, cfg)
    obj = objective.rl_objective(fwd.logp, np.where(m, rollouts.logp, 0.0), adv, m, cfg, ref_logp=ref_logp,
                                 entropy=fwd.entropy, max_len=max_len, surrogate_fn=surrogate_fn, want_kl_est=True, rng=rng)
    return LossResult(obj.loss, backward(fwd, obj, m, cfg.temperature), obj.surrogate, obj.kl_term,
                      obj.entropy_term, obj.clip_low, obj.clip_high, obj.kl_est)


class ToyPolicy(Policy):
    """玩具的策略接口（loop.Policy）：Δ 表、采样、每步的 log π 和链式法则。"""

    def __init__(self, model, cfg, batch, paths, ref_params):
        self.model, self.cfg, self.batch, self.paths = model, cfg, batch, paths
        self.params, self.n_problems = model.params, len(batch)
        self.base = base_logit_table(model.size)
        self.ref_logp_table = log_softmax_rows(self.base + ref_params, cfg.temperature)
        self.max_len = int(batch.mask.sum(axis=1).max())
        self.critic = ValueTable(cfg, batch, self) if cfg.advantage == "gae" else None

    def probs(self, temperature):
        """现在的概率表 softmax((base + Δ) / T)，(12, 3)。"""
        return softmax_rows(self.base + self.model.params, temperature)

    def sample(self, rows, G, rng, params=None):
        """第 rows 道题（排好序）每题采样 G 份 → Group；params 是陈旧采样用的旧参数（None：现在的参数）。"""
        model = self.model
        if params is not None:
            model = TrainableLLM(self.model.size)
            model.params[:] = params
        rows = np.sort(rows)
        roll = sample_subset(model, self.batch, rows, G, rng, self.cfg.temperature)
        return Group(roll, groups.step_rewards(roll, self.cfg.reward), roll.mask, rows[roll.problem])

    def select(self, roll, keep):
        return groups.keep_rows(roll, keep)

    def concat(self, parts):
        return groups.concat_rollouts(parts)

    def drawn_stats(self, group):
        """这次采到的全部解答：采样 pass@1 和采样策略在经过的步上的熵、KL（_sampling_stats）。"""
        roll = group.data
        contexts = roll.ctx[roll.mask]
        return {"pass1_sampled": float(np.mean(roll.correct)),
                **_sampling_stats(contexts, roll.actions[roll.mask], self.base + self.model.params,
                                  self.ref_logp_table, self.cfg)}

    def tokens(self, group, behaviour=None):
        """一批解答排成步。陈旧采样时采样用的是 k 次更新之前的参数：π_old 换成这次迭代开始时（现在）的策略，
        采样时的概率记作 π_behaviour（objective.rl_objective 乘 min(π_old / π_behaviour, tis_cap) 修正）。"""
        cfg, roll = self.cfg, group.data
        m = roll.mask
        old_logp, behaviour_logp = np.where(m, roll.logp, 0.0), None
        if behaviour is not None:
            behaviour_logp = old_logp
            old_logp = np.where(m, _log(self.probs(cfg.temperature)[roll.ctx, roll.actions]), 0.0)
        # 参考策略的对数概率只有损失里有 KL（β > 0）时才用到（记录里的 KL 在采样时已经按情境算好）
        ref_logp = self.ref_logp_table[roll.ctx, roll.actions] if cfg.beta > 0 else None
        idx = critic.state_index(roll, self.critic.shape[0]) if self.critic else None    # 价值表的格子
        return Tokens(m, old_logp, ref_logp, behaviour_logp, self.max_len, {}, (roll, idx))

    def spread(self, tokens, adv):
        return spread(adv, tokens.mask)

    def forward(self, tokens):
        fwd = forward(self.model.params, self.base, tokens.inputs[0], self.cfg)
        return fwd.logp, fwd.entropy, fwd

    def backward(self, tokens, fwd, obj):
        return backward(fwd, obj, tokens.mask, self.cfg.temperature)

    def evaluate(self, it):
        """更新之后的路径 pass@1（= exact_pass_at_1）。"""
        return {"pass1_exact": float(np.mean(step_right(self.probs(1.0)[self.paths.ctx], self.paths).prod(axis=1)))}


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
        v_star = critic.exact_values(self.policy.probs(self.cfg.temperature), self.paths,
                                     group.problems, group.data)
        m = tokens.mask
        return float(np.sqrt(np.mean((values - v_star)[m] ** 2)))


__all__ = ["CRITIC_COLUMNS", "LossResult", "RL_COLUMNS", "ToyPolicy", "policy_loss", "score_vectors", "train"]
