"""
第 6 讲：一个可以训练的 toy LLM。

【思路】第 1 讲的 ToyLLM 每一步按 softmax(logits) 在 correct / bug / careless 里选一种，logits 是固定的公式。
    这里给它加上**可以学习的参数**：每一种"情境"（context）—— 运算类型 × 这一步的难度 —— 有一个
    长度为 3 的偏移量 Δ，加到原来的 logits 上：

            logits(情境) = ToyLLM 原来的 logits + Δ[情境]

    · Δ 初始为 0：训练前的模型和第 1 讲的 ToyLLM 完全一样。
    · 所有题目里同一种情境**共享**同一组参数 —— 在一道题上学到的东西，会用到所有有这种情境的题上（泛化）。
    · 全部参数放在一个形状为 (12, 3) 的 numpy 数组 model.params 里；model.delta 是它的字典视图：
      model.delta[("mul", 2.2)] 就是 params 的一行，改它就是改 params（RL 引擎直接用 params）。

    梯度：在情境 c 选了做法 a 的概率 π(a | c) = softmax(z)[a]，
            ∂ log π(a | c) / ∂ z_j = 1[j = a] − π(j | c)
    （temperature = 1 时；本讲训练和评估都用 temperature = 1，即模型"本来的"分布。）

【用法】
    import random
    from toyllm import TrainableLLM, make_problem_set, evaluate

    model = TrainableLLM(1e9)
    problems = make_problem_set(random.Random(0), 100, 3, 8)
    print(evaluate(model, problems, random.Random(1), n=4))
"""

import functools
import math
from collections.abc import Mapping, MutableMapping

import numpy as np

from ._checks import as_array, as_instance, as_int, as_list, as_real, as_rng
from .arithmetic import CONTEXT_INDEX, CONTEXTS, PROCEDURES, Problem, step_hardness
from .entropy import entropy_and_grad
from .estimators import pass_at_k
from .problems import check_problems
from .tables import mean
from .toy_llm import Sample, ToyLLM, context_index, softmax

TEMPERATURE = 1.0


def context_key(op, a, b):
    """
    一步运算的"情境"：(运算类型, 难度)。难度用 step_hardness 算出，保留一位小数（避免浮点误差产生不同的键）。

    【例子】47 × 12：("mul", 1.5)（乘两位数）；472 × 12：("mul", 2.2)（乘两位数 + 被乘数 ≥ 100）。
    """
    as_instance("op", op, str, "运算名（字符串），例如 'mul'")
    return op, round(step_hardness(op, a, b), 1)


def _as_delta_row(key, value):
    """情境 key 的 Δ 那一行：3 个有限的数 [Δ_correct, Δ_bug, Δ_careless]。"""
    return as_array(f"情境 {key!r} 的 Δ（3 个数 [Δ_correct, Δ_bug, Δ_careless]）", value, (3,))


class DeltaView(MutableMapping):
    """
    Δ 的字典视图：{情境: Δ 那一行}，底下是 TrainableLLM.params 这个 (12, 3) 数组。

    【思路】第 6 讲最初的版本把 Δ 存在 dict 里；RL 引擎要用数组一次处理所有情境。
        DeltaView 让两种写法指向同一块内存：delta[key] 返回 params 的一行（numpy 视图），
        原地修改它（delta[key][0] += 0.1）就是修改 params。
    【边界】情境是固定的 12 种（toyllm.CONTEXTS），不能新增也不能删除；未知情境报 UnknownContextError
        （KeyError 的子类，中文消息列出可用的情境），所以 delta.get(key) 照样返回 None。
    【Python 小知识】继承 collections.abc.MutableMapping 并实现 5 个方法（__getitem__、__setitem__、
        __delitem__、__iter__、__len__），就自动得到 get、setdefault、items、update……
    """

    def __init__(self, params):
        self._params = params

    def __getitem__(self, key):
        return self._params[context_index(key, "delta 的键")]

    def __setitem__(self, key, value):
        self._params[context_index(key, "delta 的键")] = _as_delta_row(key, value)

    def __delitem__(self, key):
        raise TypeError(f"Δ 的情境是固定的，不能删除 {key!r}；要清零请写 delta[key] = [0.0, 0.0, 0.0]")

    def __iter__(self):
        return iter(CONTEXTS)

    def __len__(self):
        return len(CONTEXTS)

    def __contains__(self, key):
        try:
            return key in CONTEXT_INDEX
        except TypeError:
            return False

    def __repr__(self):
        return "{" + ", ".join(f"{k!r}: {[round(x, 4) for x in self._params[i].tolist()]}"
                               for i, k in enumerate(CONTEXTS)) + "}"


class TrainableLLM(ToyLLM):
    """
    可以训练的 ToyLLM：在原来的 logits 上加一个按情境查表的偏移量 Δ。

    【参数】size：参数量（决定原来的 logits）；delta：{情境: [Δ_correct, Δ_bug, Δ_careless]}，默认全 0；
        name：显示用的名字
    【属性】params：形状 (12, 3) 的 numpy 数组，第 i 行是情境 CONTEXTS[i] 的 Δ；delta：它的字典视图
    【边界】只有思维链（cot=True）的版本可以训练。
    【Python 小知识】class TrainableLLM(ToyLLM)：继承。TrainableLLM 自动拥有 ToyLLM 的所有方法（generate、
        step_probs……），这里只**重写**（override）了 step_logits —— generate 内部调用 self.step_probs，
        self.step_probs 又调用 self.step_logits，于是自动用上了新的 logits。
    """

    def __init__(self, size, delta=None, name=None):
        super().__init__(size, cot=True, name=name)           # 【Python 小知识】super() 调用父类的 __init__
        self.params = np.zeros((len(CONTEXTS), 3))
        self.delta = delta

    @property
    def delta(self):
        """Δ 的字典视图（DeltaView）。"""
        return DeltaView(self.params)

    @delta.setter
    def delta(self, value):
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            raise TypeError(f"delta 必须是 {{情境: [3 个数]}} 形式的字典，收到 {type(value).__name__}")
        new = np.zeros_like(self.params)
        for key, row in value.items():
            new[context_index(key, "delta 的键")] = _as_delta_row(key, row)
        self.params[...] = new

    def step_logits(self, op, a, b, step_index):
        base = super().step_logits(op, a, b, step_index)
        d = self.params[CONTEXT_INDEX[context_key(op, a, b)]].tolist()
        return [z + dz for z, dz in zip(base, d)]

    def context_logits(self, key, step_index=0):
        """某个情境下加上 Δ 以后的三个 logits。"""
        base = super().context_logits(key, step_index)
        return [z + dz for z, dz in zip(base, self.params[context_index(key)].tolist())]

    def copy(self, name=None):
        """复制一个参数相同的新模型（训练时常要保留"旧策略"或"参考策略"）。新模型的 params 是一份新数组。"""
        return TrainableLLM(self.size, self.delta, name or self.name)

    def p_correct(self, key):
        """
        在某个情境下选 correct 的概率（只看情境，不需要具体的数字）。用来观察训练学到了什么。

        【思路】和 ToyLLM.step_logits 的公式相同：correct 的 logit = ALPHA[运算] + BETA × log10(参数量 / 1e9) − 难度，
            bug 和 careless 的 logit 是常数，再加上这个情境的 Δ。
        【边界】key 不是 CONTEXTS 里的情境时报 UnknownContextError（中文，列出可用的情境）。
        【例子】TrainableLLM(1e9).p_correct(("mul", 2.2))
        """
        return softmax(self.context_logits(key))[0]


def check_trainable(model, name="model"):
    """检查 model 是 TrainableLLM、params 的形状是 (12, 3)；返回 model。【边界】否则报中文的 TypeError / ValueError。"""
    as_instance(name, model, TrainableLLM, "TrainableLLM（有可以训练的参数 params）")
    if np.shape(model.params) != (len(CONTEXTS), 3):
        raise ValueError(f"{name}.params 的形状必须是 ({len(CONTEXTS)}, 3)，收到 {np.shape(model.params)}")
    return model


def _check_model(model):
    as_instance("model", model, ToyLLM, "ToyLLM 或 TrainableLLM")


def _check_pair(problem, sample):
    as_instance("problem", problem, Problem, "Problem（例如 make_problem(...) 的结果）")
    as_instance("sample", sample, Sample, "Sample（model.generate(...) 的结果）")
    if len(sample.values) != len(problem.steps) or len(sample.procs) != len(problem.steps):
        raise ValueError(f"sample 的步数（{len(sample.values)}）必须和 problem 的步数（{len(problem.steps)}）相同")


# =============================================================================
# 训练用的小工具
# =============================================================================
def step_records(problem, sample):
    """
    把一份解答拆成每一步的 (情境, 选择的做法的下标)。

    【思路】每一步的输入是上一步**写下的**值（不是正确值），所以要从 sample.values 重建每一步的输入。
    【返回】list of (key, action_index)
    """
    _check_pair(problem, sample)
    records = []
    x = problem.start
    for step, v, proc in zip(problem.steps, sample.values, sample.procs):
        records.append((context_key(step.op, x, step.operand), PROCEDURES.index(proc)))
        x = v
    return records


def probs_for(model, problem, sample):
    """每一步在当前模型下选那个做法的概率分布（list of 3-list），和 step_records 一一对应。"""
    _check_model(model)
    _check_pair(problem, sample)
    out = []
    x = problem.start
    for i, (step, v) in enumerate(zip(problem.steps, sample.values)):
        out.append(model.step_probs(step.op, x, step.operand, i, TEMPERATURE))
        x = v
    return out


def score(actions, probs):
    """
    得分向量 ∂ log π(a | c) / ∂ z = e_a − π(· | c)：一步（一个下标、3 个概率）或一批（(N,) 个下标、(N, 3) 个概率）。

    【例子】score(0, [0.7, 0.2, 0.1]) → [0.3, −0.2, −0.1]
    【边界】actions 不是 0 / 1 / 2 的整数、probs 不是每步 3 个数：中文的 ValueError。
    """
    a = np.asarray(actions)
    if a.dtype.kind not in "iu" or ((a < 0) | (a > 2)).any():
        raise ValueError(f"actions 必须是做法的下标 0 / 1 / 2（一个整数或整数数组），收到 {actions!r}"[:200])
    try:
        p = np.asarray(probs, dtype=float)
    except (TypeError, ValueError):
        p = None
    if p is None or p.shape[-1:] != (3,):
        raise ValueError(f"probs 必须是每步 3 个概率（形状 (3,) 或 (N, 3)），收到 {probs!r}"[:200])
    return np.eye(3)[a] - p


def score_vectors(rollouts):
    """
    每份解答的"得分向量" S_i = Σ_t (e_{a_t} − π(·|c_t))，按情境放好。

    【思路】∂ log π(a | c) / ∂ z = e_a − π(· | c)（第 02 个 notebook 第 1 节）；整份解答的 log 概率是各步之和，
        所以它对 Δ 的梯度就是把每一步的 e_a − π 加到它所在情境的那一行。REINFORCE 的估计是 (1/B) Σ_i A_i S_i。
    【参数】rollouts：sampler.Rollouts（probs 是采样时的概率，temperature = 1）
    【返回】numpy 数组，形状 (B, 12, 3)
    【例子】S = score_vectors(r); g_hat = (rewards[:, None, None] * S).mean(axis=0)
    【Python 小知识】np.add.at 是"不跳过重复下标"的 +=：同一份解答两次经过同一个情境，两步都加进去。
    """
    m = rollouts.mask
    out = np.zeros((len(rollouts), len(CONTEXTS), 3))
    np.add.at(out, (np.nonzero(m)[0], rollouts.ctx[m]), score(rollouts.actions[m], rollouts.probs[m]))
    return out


def _rollouts_only(fn):
    """先检查 rollouts 有 mask、ctx、actions、probs 再调用 fn（包在外面：notebook 02 打印的源码仍是上面几行公式）。"""
    @functools.wraps(fn)
    def checked(rollouts):
        if not all(hasattr(rollouts, n) for n in ("mask", "ctx", "actions", "probs")) or not hasattr(rollouts, "__len__"):
            raise TypeError(f"rollouts 必须是 sampler.Rollouts（有 mask、ctx、actions、probs），收到 {type(rollouts).__name__}")
        return fn(rollouts)
    return checked


score_vectors = _rollouts_only(score_vectors)


def add_grad(grads, key, action, probs, weight):
    """
    累加一步的梯度：weight × ∂ log π(action | key) / ∂ z = weight × (onehot − probs)。

    【参数】grads：{情境: [g0, g1, g2]}（原地修改）；action：做法的下标 0 / 1 / 2；probs：这一步的概率；
        weight：这一步的权重（例如 advantage）
    【例子】probs = [0.7, 0.2, 0.1]、action = 0、weight = 1 → 梯度 [0.3, −0.2, −0.1]
    【边界】grads 不是字典、key 不是已知情境、action 不是 0 / 1 / 2、probs 不是 3 个有限的数、weight 不是有限的数：
        中文的 TypeError / ValueError。
    """
    as_instance("grads", grads, MutableMapping, "字典 {情境: [g0, g1, g2]}")
    context_index(key)
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or action not in (0, 1, 2):
        raise ValueError(f"action 必须是做法的下标 0 / 1 / 2，收到 {action!r}")
    try:
        ok = len(probs) == 3 and math.isfinite(probs[0] + probs[1] + probs[2])
    except TypeError:
        ok = False
    if isinstance(probs, (str, bytes)) or not ok:
        raise ValueError(f"probs 必须是 3 个有限的数（这一步的概率），收到 {probs!r}")
    if not (type(weight) is float and math.isfinite(weight)):              # 快路径：普通的有限浮点数
        weight = as_real("weight", weight)
    g, s = grads.setdefault(key, [0.0, 0.0, 0.0]), score(action, probs)
    for j in range(3):
        g[j] += weight * float(s[j])


def apply_grads(model, grads, lr):
    """梯度上升：Δ ← Δ + lr × 梯度。【参数】grads：{情境: [g0, g1, g2]}；lr：学习率（有限的数）"""
    check_trainable(model)
    lr = as_real("lr", lr)
    as_instance("grads", grads, Mapping, "字典 {情境: [g0, g1, g2]}")
    for key, g in grads.items():
        context_index(key, "grads 的键")
        if isinstance(g, (str, bytes)) or len(g) != 3 or not all(math.isfinite(x) for x in g):
            raise ValueError(f"grads[{key!r}] 必须是 3 个有限的数，收到 {g!r}")
    for key, g in grads.items():
        d = model.delta.setdefault(key, [0.0, 0.0, 0.0])
        for j in range(3):
            d[j] += lr * g[j]


def sft(model, data, epochs=30, lr=2.0):
    """
    监督微调（SFT）：最大化 Σ log π(做法 | 情境)，数据是一批 (题目, 解答)。

    【思路】这就是"让模型更像这些解答"。每个 epoch 用全部数据算一次平均梯度，做一步梯度上升。
        STaR / rejection sampling fine-tuning 的"微调"就是它：数据只包含**做对了**的解答。
    【参数】model：被训练的模型（原地修改）；data：list of (problem, sample)；epochs：≥ 0；lr：学习率
    【返回】model（同一个对象）
    【边界】数据为空时什么也不做。
    """
    check_trainable(model)
    epochs = as_int("epochs", epochs, low=0)
    lr = as_real("lr", lr)
    data = _as_data(data)
    recs = [(r, problem, sample) for problem, sample in data for r in step_records(problem, sample)]
    if not recs:
        return model
    for _ in range(epochs):
        grads = {}
        for problem, sample in data:
            for (key, action), probs in zip(step_records(problem, sample), probs_for(model, problem, sample)):
                add_grad(grads, key, action, probs, 1.0 / len(recs))
        apply_grads(model, grads, lr)
    return model


def log_likelihood(model, data):
    """数据的平均每步对数似然 (1/步数) Σ log π(做法 | 情境)，SFT 让它上升。【边界】数据为空时报错。"""
    logs = [math.log(probs[action])
            for problem, sample in _as_data(data)
            for (_, action), probs in zip(step_records(problem, sample), probs_for(model, problem, sample))]
    if not logs:
        raise ValueError("log_likelihood 的 data 里没有任何一步（数据为空）")
    return math.fsum(logs) / len(logs)


def evaluate(model, problems, rng, n=4, ks=(1,)):
    """
    评估：每道题采样 n 次，返回 {k: 平均 pass@k}（无偏估计）。

    【参数】model；problems：list of Problem；rng：random.Random；n：每道题采样次数；ks：要算的 k
    【返回】dict {k: float}
    【边界】k 不能超过 n；problems 不能为空。
    """
    rng = as_rng("rng", rng)
    n = as_int("n", n, low=1)
    ks = tuple(as_int("ks 里的 k", k, 1) for k in as_list("ks", ks, "k", "(1, 4)"))
    for k in ks:
        if k > n:
            raise ValueError(f"ks 里的 k 不能大于 n（每道题的采样次数），收到 k={k}、n={n}")
    _check_model(model)
    problems = check_problems("problems", problems)
    counts = [sum(model.generate(p, rng, TEMPERATURE).correct for _ in range(n)) for p in problems]
    return {k: mean(pass_at_k(n, c, k) for c in counts) for k in ks}


def entropy_of(model, problems, rng, n=2):
    """
    策略的平均熵（只在模型自己生成的解答所经过的情境上算）：H = −Σ π log π，单位是 nats。

    【思路】熵衡量"模型还有多不确定"：三种做法等概率时 H = log 3 ≈ 1.10；几乎确定时 H ≈ 0。
        RL 训练中熵下降得太快（entropy collapse）意味着模型不再探索 —— DAPO 要解决的问题之一。
    """
    rng = as_rng("rng", rng)
    n = as_int("n", n, low=1)
    _check_model(model)
    problems = check_problems("problems", problems)
    probs = [row for p in problems for _ in range(n) for row in probs_for(model, p, model.generate(p, rng, TEMPERATURE))]
    return mean(entropy_and_grad(probs)[0])


HARD_CONTEXTS = (("加法，无进位", ("add", 0.0)), ("乘一位数", ("mul", 0.0)),
                 ("乘两位数", ("mul", 1.5)), ("乘两位数、被乘数 ≥ 100", ("mul", 2.2)))


def _as_data(data):
    """data：list of (Problem, Sample)。"""
    if isinstance(data, (str, bytes, Mapping)) or not hasattr(data, "__iter__"):
        raise TypeError(f"data 必须是 (题目, 解答) 对的列表，收到 {data!r}")
    data = list(data)
    for item in data:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError(f"data 里的每一项都必须是 (Problem, Sample) 对，收到 {item!r}")
        _check_pair(*item)
    return data


def context_report(model):
    """几个代表性情境下选 correct 的概率，用来看训练"教会了模型什么"。【返回】{名字: 概率}"""
    check_trainable(model)
    return {name: model.p_correct(key) for name, key in HARD_CONTEXTS}
