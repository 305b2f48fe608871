"""
网络的策略接口：把小 transformer 接到 RL 循环（toyllm.rl.loop.run）上 —— 和玩具的 rl.train 是同一个循环。

【思路】循环要的只有几样（见 loop.Policy）：
        sample   每道题生成 G 份解答（model.generate，温度 T），奖励 = 最终答案对不对（0 / 1）；
        tokens   解答排成 (B, L) 的 token（batch_tokens），前向一次得到 π_old；参考模型、陈旧采样的旧参数各前向一次；
        forward  每个 token 的 log π(o_t | o_<t)（和熵）；backward  ∂loss/∂z = s · (onehot(o_t) − π) / T（+ 熵那一项），
                 再交给 layers.backward；
        critic   advantage="gae" 时的价值头 ValueHead（线性，读最后一层的残差流）。
    损失的每一块都来自 toyllm.rl.objective.rl_objective（和玩具同一个函数），由循环调用。
"""

import math

import numpy as np

from ..rl import losses
from ..rl.loop import Group, Policy, Tokens
from .analysis import accuracy
from .layers import backward as layers_backward
from .layers import forward as layers_forward
from ..logits import log_softmax
from .model import generate
from .text import END_ID, encode


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
    z, cache = layers_forward(params, inputs, model.layers, model.heads)
    lp = log_softmax(z / np.asarray(temperature, z.dtype))
    return np.take_along_axis(lp, targets[..., None], -1)[..., 0], lp, cache


def dlogits_from_dlogp(s, logprobs, targets, temperature=1.0):
    """∂loss/∂z = s · (onehot(o_t) − π) / T：log softmax 的梯度（第 4.1 节），s = ∂loss/∂log π(o_t)。"""
    d = -np.exp(logprobs) * s[..., None]
    np.put_along_axis(d, targets[..., None], np.take_along_axis(d, targets[..., None], -1) + s[..., None], -1)
    return d / np.asarray(temperature, d.dtype)


def forward(model, inputs, targets, cfg, computed=None):
    """
    每个 token 的 log π 和熵 H（c_H = 0 时 None）：(logp, H, 反向要的东西)。数组是网络的 dtype（float32）。

    【参数】computed：这组参数上已经算好的 token_logprobs(...) 的结果（μ 次更新的第一次就是采样后算 π_old 的那次前向）
    """
    T, dt = cfg.temperature, model.params["tok"].dtype
    logp, lp, cache = token_logprobs(model, inputs, targets, T) if computed is None else computed
    ent = losses.entropy(np.exp(lp), lp, T) if cfg.entropy_coef != 0 else None
    return logp, None if ent is None else ent.value.astype(dt), (lp, cache, ent)


def backward(model, fwd, obj, targets, temperature=1.0):
    """∂loss/∂z = s · (onehot(o_t) − π) / T + e · ∂H/∂z（∂H/∂z 来自 losses.entropy），再交给 layers.backward。"""
    lp, cache, ent = fwd
    d = dlogits_from_dlogp(obj.dloss_dlogp, lp, targets, temperature)
    if ent is not None:
        d = d + obj.dloss_dentropy[..., None] * ent.dlogits.astype(model.params["tok"].dtype)
    return layers_backward(model.params, d, cache)


class ValueHead:
    """
    PPO 的价值头（critic）：V(s_t) = h_t · w + b，h_t 是网络最后一层 LayerNorm 之后的残差流（advantage="gae"）。

    【思路】价值损失 ½(V − R)²（toyllm.rl.critic.value_loss）只训练这个线性头，梯度不传回网络
        （stop-gradient：策略网络只由策略损失训练）。回报 R 和优势由 critic.gae 算出，和玩具的价值表同一个函数。
    """

    def __init__(self, d, dtype):
        self.params = {"w": np.zeros(d, dtype), "b": np.zeros(1, dtype)}

    def values(self, tokens):
        """(B, L) 的 V（mask 外为 0），读这批 token 采样后那次前向的残差流。"""
        return np.where(tokens.mask, tokens.inputs["h"] @ self.params["w"] + self.params["b"][0], 0)

    def grads(self, tokens, dvalues):
        """∂loss/∂V (B, L) → 对 w、b 的梯度。"""
        h = tokens.inputs["h"]
        dv = dvalues.astype(h.dtype)
        return {"w": np.einsum("bld,bl->d", h, dv), "b": np.array([dv.sum()], h.dtype)}

    def error(self, tokens, values, group):
        """网络不知道精确价值：NaN（记录里没有这一列）。"""
        return math.nan


class NetworkPolicy(Policy):
    """小 transformer 的策略接口（loop.Policy）。ref：参考模型；heldout、eval_every：记录贪心准确率。"""
    average = "running"

    def __init__(self, model, examples, cfg, ref, heldout=None, eval_every=20):
        self.model, self.examples, self.cfg, self.ref = model, examples, cfg, ref
        self.heldout, self.eval_every = heldout, eval_every
        self.params, self.n_problems = model.params, len(examples)
        self.dt = model.params["tok"].dtype
        self.max_len = max(len(e.target) for e in examples)
        self.sampler = model.copy() if cfg.staleness else model
        self.critic = ValueHead(model.d, self.dt) if cfg.advantage == "gae" else None

    def sample(self, rows, G, rng, params=None):
        """第 rows 道题每题生成 G 份解答（params：陈旧采样用的旧参数）→ Group。"""
        sampler = self.model
        if params is not None:
            sampler = self.sampler
            sampler.params = params
        per_row = [self.examples[i] for i in rows for _ in range(G)]
        got = generate(sampler, [e.prompt for e in per_row], self.cfg.temperature, rng)
        r = np.array([e.is_correct(o) for o, e in zip(got, per_row)], float)
        return Group((per_row, got), r, None, np.repeat(rows, G))

    def select(self, data, keep):
        return [e for e, k in zip(data[0], keep) if k], [o for o, k in zip(data[1], keep) if k]

    def concat(self, parts):
        return [e for p in parts for e in p[0]], [o for p in parts for o in p[1]]

    def drawn_stats(self, group):
        """采样 pass@1（= 平均奖励）；熵和 KL 在训练的 token 上算（tokens），一组都没有时是 NaN。"""
        return {"pass1_sampled": float(np.mean(group.rewards)), "entropy": math.nan, "kl_est": math.nan}

    def tokens(self, group, behaviour=None):
        """前向一次得到 π_old（第一次更新还用它）；参考模型一次；陈旧采样时采样用的旧参数再一次。"""
        cfg, model, T = self.cfg, self.model, self.cfg.temperature
        examples, outs = group.data
        x, y, m = batch_tokens(model, [e.prompt for e in examples], outs)
        first = token_logprobs(model, x, y, T)
        old_logp, lp, cache = first
        ref_logp = token_logprobs(self.ref, x, y, T)[0]
        stats = {"entropy": float(losses.entropy(np.exp(lp[m]), lp[m]).value.mean()),
                 "kl_est": float(losses.kl_estimator(old_logp[m], ref_logp[m], cfg.kl_estimator).value.mean())}
        # 陈旧采样：π_old = 现在的参数，π_behaviour = 采样用的参数（rl_objective 乘 min(π_old / π_behaviour, C)）
        behaviour_logp = token_logprobs(self.sampler, x, y, T)[0] if behaviour is not None else None
        return Tokens(m, old_logp, ref_logp, behaviour_logp, self.max_len, stats,
                      {"x": x, "y": y, "first": first, "h": cache[-1]})

    def spread(self, tokens, adv):
        return adv.astype(self.dt)

    def forward(self, tokens):
        inputs = tokens.inputs
        computed, inputs["first"] = inputs["first"], None          # 第一次更新：参数还没变，用采样后那次前向
        return forward(self.model, inputs["x"], inputs["y"], self.cfg, computed)

    def backward(self, tokens, fwd, obj):
        return backward(self.model, fwd, obj, tokens.inputs["y"], self.cfg.temperature)

    def evaluate(self, it):
        """每 eval_every 次迭代（和最后一次）记一次留出题上的贪心准确率，别的行是 NaN。"""
        due = self.heldout is not None and (it % self.eval_every == 0 or it == self.cfg.iterations)
        return {"greedy": accuracy(self.model, self.heldout) if due else math.nan}


__all__ = ["NetworkPolicy", "ValueHead", "batch_tokens", "dlogits_from_dlogp", "token_logprobs"]
