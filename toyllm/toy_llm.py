"""
第 1 讲的 ToyLLM：一个"会做多步算术题"的玩具语言模型。

【思路】模型每一步在三种做法（correct / bug / careless）里按 softmax(logits / temperature) 随机选一种：
        logit(correct)  = ALPHA[运算] + BETA × log10(参数量 / REF_SIZE) − 难度
        logit(bug)      = LOGIT_BUG
        logit(careless) = LOGIT_CARELESS
    · 模型越大（size 越大），correct 的 logit 越高：规模带来能力；
    · 这一步越难（step_hardness 越大），correct 的 logit 越低；
    · 没有思维链（cot=False）时，模型要"在脑子里"记住前面的结果，越往后越难：
      第 i 步（从 0 数）的 correct logit 再减去 NO_COT_PENALTY × i。
    正确答案要求每一步都对（或者错误恰好被后面的错误抵消，极少见）。
    这个公式只写在 base_logits 里：逐步的 step_logits 和数组版本的 policy.logit_table 都调用它。
"""

import math
from dataclasses import dataclass

from ._checks import as_bool, as_instance, as_int, as_real, as_rng
from .arithmetic import CONTEXT_INDEX, CONTEXTS, OPS, PROCEDURES, Problem, apply_op, step_hardness
from .tables import fmt_size

REF_SIZE = 1e9
ALPHA = {"add": 3.2, "sub": 3.0, "mul": 3.4}
BETA = 0.9
LOGIT_BUG = 0.0
LOGIT_CARELESS = -0.5
NO_COT_PENALTY = 0.45


@dataclass(frozen=True)
class Sample:
    """
    模型对一道题的一份解答。

    【属性】values：每一步写下的值（tuple）；procs：每一步选的做法（tuple of str）；correct：最终答案对不对
    """
    values: tuple
    procs: tuple
    correct: bool


def softmax(logits, temperature=1.0):
    """
    softmax(logits / temperature)，返回 list of float（第 1 讲的写法：一串数进、一串概率出）。

    【边界】temperature = 0 表示贪心：最大的 logit 概率为 1（并列时取下标最小的那个）。
        数组的 softmax 是 toyllm.logits.softmax（同一个公式）；这里保留纯 Python（math.exp、math.fsum），
        因为第 1 讲种子模块逐步采样的数字要逐位复现，numpy 的 exp 和求和在末位可能不同。
    【Python 小知识】先减去最大值再取 exp，结果不变，但不会溢出（数值稳定的 softmax）。
    """
    if isinstance(logits, (str, bytes, dict)) or not hasattr(logits, "__iter__"):
        raise TypeError(f"logits 必须是一串数，例如 [1.9, 0.0, -0.5]，收到 {logits!r}")
    logits = list(logits)
    if not logits:
        raise ValueError("logits 不能为空（至少要有一种做法）")
    for x in logits:
        as_real("logits 里的数", x)
    return _softmax(logits, as_real("temperature", temperature, low=0.0))


def _softmax(logits, temperature):
    """softmax 本身（参数已经检查过；step_probs 每一步都调用它）。"""
    if temperature == 0:
        best = max(range(len(logits)), key=lambda j: (logits[j], -j))
        return [1.0 if j == best else 0.0 for j in range(len(logits))]
    z = [x / temperature for x in logits]
    m = max(z)
    e = [math.exp(x - m) for x in z]
    total = math.fsum(e)
    return [x / total for x in e]


class UnknownContextError(KeyError, ValueError):
    """未知的情境：既是 KeyError（字典式的 delta[key] 语义），也是 ValueError（参数不合法）。消息是中文。"""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


def context_index(key, name="key"):
    """
    情境 key = (运算, 难度) 在 CONTEXTS 里的下标。

    【边界】key 不是 12 种情境之一时报 UnknownContextError（KeyError 和 ValueError 的子类），
        消息里有参数名、收到的值和全部可用的情境。
    【例子】context_index(("mul", 1.5)) → 7
    """
    try:
        return CONTEXT_INDEX[key]
    except (KeyError, TypeError):
        raise UnknownContextError(f"{name} 必须是 toyllm.CONTEXTS 里的一个情境 (运算, 难度)，收到 {key!r}；"
                                  f"可用的情境：{'、'.join(map(repr, CONTEXTS))}") from None


def base_logits(size, cot, key, step_index=0):
    """
    情境 key = (运算, 难度) 下、第 step_index 步的三个 logits [correct, bug, careless]（模块说明里的公式）。

    【参数】size：参数量（> 0）；cot：是否有思维链；key：(运算, 难度)，难度可以是任意实数；step_index：第几步（从 0 数）
    【边界】参数不合法时报中文的 TypeError / ValueError。
    """
    size = as_real("size", size, 0.0, low_open=True)
    cot = as_bool("cot", cot)
    if not (isinstance(key, tuple) and len(key) == 2 and key[0] in ALPHA):
        raise ValueError(f"key 必须是 (运算, 难度)，运算是 {'、'.join(map(repr, ALPHA))} 之一，收到 {key!r}")
    return _logits(size, cot, key[0], as_real("key 里的难度", key[1]), as_int("step_index", step_index, low=0))


def _logits(size, cot, op, hard, step_index):
    """公式本身（参数已经检查过；step_logits 每一步都调用它）。"""
    z = ALPHA[op] + BETA * math.log10(size / REF_SIZE) - hard
    if not cot:
        z -= NO_COT_PENALTY * step_index
    return [z, LOGIT_BUG, LOGIT_CARELESS]


class ToyLLM:
    """
    第 1 讲的玩具语言模型。

    【参数】size：参数量（≥ 1 的有限数，例如 1e9 表示 1B）；cot：是否使用思维链（默认 True）；name：显示用的名字
    【例子】
        model = ToyLLM(1e9)
        model.step_probs("mul", 47, 12, 0)        # → [π(correct), π(bug), π(careless)]
        sample = model.generate(problem, random.Random(0))
    """

    def __init__(self, size, cot=True, name=None):
        self.size = as_real("size", size, 1.0)
        self.cot = as_bool("cot", cot)
        as_instance("name（显示用的名字）", name, (str, type(None)), "字符串或 None")
        self.name = name if name is not None else fmt_size(self.size) + ("" if cot else "（无思维链）")

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size:g}, cot={self.cot}, name={self.name!r})"

    def context_logits(self, key, step_index=0):
        """
        某个情境 (运算, 难度) 下的三个 logits（不需要具体的数字）。

        【返回】[correct, bug, careless] 的 logits，list of float
        【边界】key 必须是 CONTEXTS 里的情境，否则报 UnknownContextError（中文，列出可用的情境）。
        """
        context_index(key)
        return _logits(self.size, self.cot, key[0], key[1], as_int("step_index", step_index, low=0))

    def step_logits(self, op, a, b, step_index):
        """
        第 step_index 步（从 0 数）算 a op b 时三种做法的 logits。

        【返回】[ALPHA[op] + BETA·log10(size / REF_SIZE) − step_hardness(op, a, b), LOGIT_BUG, LOGIT_CARELESS]
            （cot=False 时 correct 再减 NO_COT_PENALTY × step_index）
        【例子】ToyLLM(1e9).step_logits("mul", 47, 12, 0) → [3.4 − 1.5, 0.0, −0.5] = [1.9, 0.0, −0.5]
        """
        step_index = as_int("step_index", step_index, low=0)
        if op not in OPS:
            raise ValueError(f"op 必须是 {'、'.join(map(repr, OPS))} 之一，收到 {op!r}")
        return _logits(self.size, self.cot, op, step_hardness(op, a, b), step_index)

    def step_probs(self, op, a, b, step_index, temperature=1.0):
        """
        三种做法的概率 softmax(logits / temperature)。

        【参数】temperature：≥ 0；0 表示贪心（总选 logit 最大的做法），越大越接近均匀分布
        【返回】list of 3 floats，和为 1
        【Python 小知识】这里调用的是 self.step_logits，所以子类（例如 TrainableLLM）重写 step_logits 后，
            step_probs 和 generate 自动用上新的 logits。
        """
        temperature = as_real("temperature", temperature, low=0.0)
        return _softmax(self.step_logits(op, a, b, step_index), temperature)

    def generate(self, problem, rng, temperature=1.0):
        """
        让模型做一道题：一步一步选做法、写下结果。

        【思路】每一步的输入是模型**自己上一步写下的值**（可能已经错了），不是正确值。
            选做法：取 u = rng.random()，按累积概率落在哪一段就选哪种做法；careless 再从 rng 取两个随机数。
        【参数】problem：Problem；rng：random.Random；temperature：≥ 0
        【返回】Sample(values, procs, correct)
        """
        rng = as_rng("rng", rng)
        as_instance("problem", problem, Problem, "Problem（例如 make_problem_set(...) 里的一道题）")
        values, procs = [], []
        x = problem.start
        for i, step in enumerate(problem.steps):
            probs = self.step_probs(step.op, x, step.operand, i, temperature)
            u, acc, choice = rng.random(), 0.0, len(PROCEDURES) - 1
            for j, p in enumerate(probs):
                acc += p
                if u < acc:
                    choice = j
                    break
            while probs[choice] == 0.0:       # 浮点舍入让 u 落在了概率为 0 的做法上：退回到前一个
                choice -= 1
            proc = PROCEDURES[choice]
            x = apply_op(step.op, x, step.operand, proc, rng)
            values.append(x)
            procs.append(proc)
        return Sample(tuple(values), tuple(procs), values[-1] == problem.answer if values else True)


__all__ = ["ALPHA", "BETA", "LOGIT_BUG", "LOGIT_CARELESS", "NO_COT_PENALTY", "REF_SIZE", "OPS",
           "Sample", "ToyLLM", "UnknownContextError", "base_logits", "context_index", "softmax"]
