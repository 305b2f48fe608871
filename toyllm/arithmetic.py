"""
多步算术题：题目、三种做法（correct / bug / careless）、每一步的难度（hardness）和全部"情境"。

【思路】一道题从一个起始数开始，一步一步做运算，例如
        37  →  × 12  →  + 458  →  − 91
    模型每一步在三种"做法"（procedure）里选一种：
        · correct：算对；
        · bug：一种有名字的、系统性的错误观念（小学生常犯的那种）；
        · careless：一时粗心，某一数位上多算或少算了 1。
    每一步有多难，只看数字本身：加法看有几次进位，减法看有几次借位，乘法看乘数有几位、
    被乘数是不是三位数以上。（运算, 难度）就是这一步的"情境"（context）。

【边界】出题时每一个**正确的**中间值都在 1 … MAX_VALUE（9999）之间，步数在 1 … MAX_STEPS（20）之间；
    手写的 Problem 也会检查：步数 1 … 20，正确中间值的绝对值 ≤ 9999，answer 要和步骤一致。
    所以情境只有有限的 12 种，见 CONTEXTS。模型写错以后，中间值可以超出这个范围（甚至变成负数），
    难度的各项特征有上限（进位、借位最多算 3 次），所以任何整数输入都落在这 12 种情境里。
"""

from dataclasses import dataclass

from ._checks import as_choice, as_int, as_rng
from .arithmetic_np import apply_op_np, bug_np, context_ids_np, exact_np  # noqa: F401（向量化版本，在 arithmetic_np）

OPS = ("add", "sub", "mul")
OP_SYMBOLS = {"add": "+", "sub": "−", "mul": "×"}
OP_NAMES = {"add": "加法", "sub": "减法", "mul": "乘法"}
PROCEDURES = ("correct", "bug", "careless")
PROCEDURE_NAMES = {"correct": "正确", "bug": "错误观念", "careless": "粗心"}
BUG_NAMES = {"add": "加法忘记进位", "sub": "减法大减小（不借位，每一位都用大的减小的）",
             "mul": "乘法部分积没有错位（乘数的每一位乘完直接相加）"}

MAX_VALUE = 9999
MAX_STEPS = 20

# 难度表：下标是特征的值（进位次数、借位次数，或乘法的档位），值是难度。每个值都已经是一位小数。
ADD_HARDNESS = (0.0, 0.7, 1.4, 2.1)        # 0、1、2、≥3 次进位
SUB_HARDNESS = (0.0, 0.8, 1.6, 2.4)        # 0、1、2、≥3 次借位
MUL_HARDNESS = (0.0, 0.7, 1.5, 2.2)        # 乘一位数；乘一位数且被乘数 ≥ 100；乘两位数；乘两位数且被乘数 ≥ 100
HARDNESS_LEVELS = {"add": ADD_HARDNESS, "sub": SUB_HARDNESS, "mul": MUL_HARDNESS}

CONTEXTS = tuple((op, h) for op in OPS for h in HARDNESS_LEVELS[op])
"""全部 12 种情境 (运算, 难度)，按运算、难度排序。"""

CONTEXT_NAMES = {
    ("add", 0.0): "加法，无进位", ("add", 0.7): "加法，1 次进位", ("add", 1.4): "加法，2 次进位",
    ("add", 2.1): "加法，≥3 次进位",
    ("sub", 0.0): "减法，无借位", ("sub", 0.8): "减法，1 次借位", ("sub", 1.6): "减法，2 次借位",
    ("sub", 2.4): "减法，≥3 次借位",
    ("mul", 0.0): "乘一位数", ("mul", 0.7): "乘一位数、被乘数 ≥ 100", ("mul", 1.5): "乘两位数",
    ("mul", 2.2): "乘两位数、被乘数 ≥ 100",
}


MAX_MUL_OPERAND = 99


@dataclass(frozen=True)
class Step:
    """
    题目中的一步：运算 op（"add" / "sub" / "mul"）和运算数 operand。

    【边界】加、减的运算数在 0 … MAX_VALUE 之间，乘法的运算数在 0 … 99 之间（和出题的范围一致）。
    """
    op: str
    operand: int

    def __post_init__(self):
        as_choice("op", self.op, OPS)
        high = MAX_MUL_OPERAND if self.op == "mul" else MAX_VALUE
        object.__setattr__(self, "operand", as_int("operand", self.operand, 0, high))

    def __str__(self):
        return f"{OP_SYMBOLS[self.op]} {self.operand}"


@dataclass(frozen=True)
class Problem:
    """
    一道多步算术题。

    【属性】start：起始数；steps：tuple of Step；answer：正确的最终答案
    【例子】Problem(37, (Step("mul", 12), Step("add", 458)), 902) 表示 37 × 12 + 458 = 902
    """
    start: int
    steps: tuple
    answer: int

    def __post_init__(self):
        # 【Python 小知识】frozen dataclass 不能直接给属性赋值，要用 object.__setattr__。
        object.__setattr__(self, "start", as_int("start", self.start, 0, MAX_VALUE))
        steps = tuple(self.steps)
        if not 1 <= len(steps) <= MAX_STEPS:
            raise ValueError(f"steps 的步数必须在 1 … {MAX_STEPS} 之间，收到 {len(steps)} 步")
        if not all(isinstance(s, Step) for s in steps):
            raise TypeError("steps 里的每一项都必须是 Step（例如 Step('mul', 12)）")
        object.__setattr__(self, "steps", steps)
        values = self.correct_values()
        if any(abs(v) > MAX_VALUE for v in values):
            raise ValueError(f"这道题的正确中间值必须在 −{MAX_VALUE} … {MAX_VALUE} 之间，收到 {values}")
        answer = as_int("answer", self.answer)
        if answer != values[-1]:
            raise ValueError(f"answer 必须等于按步骤算出的正确答案 {values[-1]}，收到 {answer}")
        object.__setattr__(self, "answer", answer)

    def correct_values(self):
        """每一步之后的正确值（list），最后一个就是 answer。"""
        values, x = [], self.start
        for step in self.steps:
            x = _exact(step.op, x, step.operand)
            values.append(x)
        return values

    def __str__(self):
        return f"{self.start} " + " ".join(f"{OP_SYMBOLS[s.op]} {s.operand}" for s in self.steps)


# =============================================================================
# 逐位的特征：进位、借位、数字和
# =============================================================================
def count_carries(a, b):
    """竖式计算 |a| + |b| 时一共进位几次。a、b 是整数。【例子】count_carries(47, 38) → 1；count_carries(999, 1) → 3"""
    return _carries(as_int("a", a), as_int("b", b))


def count_borrows(a, b):
    """竖式计算 |a| − |b|（大的减小的）时一共借位几次。a、b 是整数。【例子】count_borrows(52, 17) → 1；count_borrows(1000, 1) → 3"""
    return _borrows(as_int("a", a), as_int("b", b))


def _carries(a, b):
    a, b, carry, n = abs(a), abs(b), 0, 0
    while a or b:
        carry = 1 if a % 10 + b % 10 + carry >= 10 else 0
        n += carry
        a, b = a // 10, b // 10
    return n


def _borrows(a, b):
    a, b = abs(a), abs(b)
    if a < b:
        a, b = b, a
    borrow, n = 0, 0
    while a or b:
        borrow = 1 if a % 10 - b % 10 - borrow < 0 else 0
        n += borrow
        a, b = a // 10, b // 10
    return n


def _digit_sum(n):
    n, s = abs(n), 0
    while n:
        s += n % 10
        n //= 10
    return s


def _mul_level(a, b):
    return 2 * (abs(b) >= 10) + (abs(a) >= 100)


def step_hardness(op, a, b):
    """
    一步运算有多难（只看数字本身）。

    【思路】
        · 加法：每进位一次更难一点：0、1、2、≥3 次进位 → 0.0、0.7、1.4、2.1；
        · 减法：每借位一次更难一点：0、1、2、≥3 次借位 → 0.0、0.8、1.6、2.4；
        · 乘法：乘一位数 0.0；乘一位数但被乘数 ≥ 100 是 0.7；乘两位数（或更多位）1.5；
          乘两位数且被乘数 ≥ 100 是 2.2。
        特征都看绝对值（负数只会在模型算错之后出现），所以任何整数都落在 CONTEXTS 的 12 种情境里。
    【参数】op："add" / "sub" / "mul"；a：当前的数（这一步的输入）；b：运算数（都必须是整数）
    【返回】float，已经是一位小数（round(h, 1) == h）
    【例子】step_hardness("add", 12, 34) → 0.0（无进位）；step_hardness("mul", 47, 3) → 0.0；
        step_hardness("mul", 47, 12) → 1.5；step_hardness("mul", 472, 12) → 2.2；step_hardness("sub", 52, 17) → 0.8
    """
    op = as_choice("op", op, OPS)
    a, b = as_int("a", a), as_int("b", b)
    if op == "add":
        return ADD_HARDNESS[min(_carries(a, b), 3)]
    if op == "sub":
        return SUB_HARDNESS[min(_borrows(a, b), 3)]
    return MUL_HARDNESS[_mul_level(a, b)]


# =============================================================================
# 三种做法
# =============================================================================
def _exact(op, a, b):
    return a + b if op == "add" else a - b if op == "sub" else a * b


def _bug(op, a, b):
    if a < 0 or b < 0:          # 竖式里的错误观念只针对非负数；负数只会出现在已经算错之后
        return _exact(op, a, b)
    if op == "mul":
        return a * _digit_sum(b)
    out, place = 0, 1
    while a or b:
        da, db = a % 10, b % 10
        out += ((da + db) % 10 if op == "add" else abs(da - db)) * place
        a, b, place = a // 10, b // 10, place * 10
    return out


def bug_bites(op, a, b):
    """
    这一步的错误观念会不会"咬人"，也就是 bug 的结果和正确结果不同。

    【思路】加法：有进位才会错；减法：要借位（或被减数更小）才会错；乘法：乘数是两位以上、被乘数不为 0 才会错。
        负数输入时 bug 与 correct 相同（见 apply_op），所以不咬人。
    【例子】bug_bites("add", 12, 34) → False；bug_bites("add", 47, 38) → True
    """
    op = as_choice("op", op, OPS)
    a, b = as_int("a", a), as_int("b", b)
    if a < 0 or b < 0:
        return False
    if op == "add":
        return _carries(a, b) > 0
    if op == "sub":
        return a < b or _borrows(a, b) > 0
    return b >= 10 and a != 0


def _careless(op, a, b, rng):
    c = _exact(op, a, b)
    m = abs(c)
    i = rng.randrange(len(str(m)))
    up = rng.random() < 0.5 or m == 0
    m = m + 10 ** i if up else m - 10 ** i
    return -m if c < 0 else m


def apply_op(op, a, b, procedure, rng=None):
    """
    用某一种做法算一步。

    【思路】
        · "correct"：算对。apply_op("add", 47, 38, "correct") → 85
        · "bug"：一种有名字的错误观念（BUG_NAMES），是确定性的：
            加法忘记进位：47 + 38 → 75（7+8=15 只写 5，4+3=7），12 + 34 → 46（没有进位时恰好对）；
            减法大减小：52 − 17 → 45（2−7 不够减，就写 7−2=5），58 − 17 → 41（不借位时恰好对）；
            乘法部分积没有错位：47 × 12 → 47×1 + 47×2 = 141（应该是 470 + 94 = 564），乘一位数时恰好对。
          负数（只会出现在前面已经算错之后）上错误观念不适用，bug 的结果等于正确结果。
        · "careless"：粗心，随机挑结果的某一位，多写或少写 1（差 ±10^i），**一定是错的**：
            apply_op("add", 47, 38, "careless", random.Random(0)) 可能得到 95 或 84 之类。
    【参数】op；a、b：整数；procedure：PROCEDURES 之一；rng：random.Random，只有 careless 需要
    【返回】int
    【边界】careless 不给 rng 会报错。careless 从 rng 里取两个随机数（哪一位、多还是少）。
    """
    op = as_choice("op", op, OPS)
    a, b = as_int("a", a), as_int("b", b)
    procedure = as_choice("procedure", procedure, PROCEDURES)
    if procedure == "correct":
        return _exact(op, a, b)
    if procedure == "bug":
        return _bug(op, a, b)
    if rng is None:
        raise ValueError("procedure='careless' 需要随机数发生器 rng（例如 random.Random(0)），收到 rng=None")
    return _careless(op, a, b, as_rng("rng", rng))


# =============================================================================
# 出题
# =============================================================================
def _random_step(rng, x):
    ops = [op for op, ok in (("add", x + 2 <= MAX_VALUE), ("sub", x >= 3), ("mul", 2 * x <= MAX_VALUE)) if ok]
    op = ops[rng.randrange(len(ops))]
    if op == "add":
        return op, rng.randint(2, min(999, MAX_VALUE - x))
    if op == "sub":
        return op, rng.randint(2, min(999, x - 1))
    hi = min(99, MAX_VALUE // x)
    if hi < 10 or rng.random() < 0.5:
        return op, rng.randint(2, min(9, hi))
    return op, rng.randint(10, hi)


def make_problem(rng, n_steps):
    """
    随机出一道 n_steps 步的题。

    【思路】起始数是 2 … 99 的整数；每一步在"做完以后正确值还在 1 … 9999 之间"的运算里等概率选一种：
        加法加 2 … 999，减法减 2 … 999（结果至少为 1），乘法一半概率乘一位数（2 … 9），一半乘两位数（10 … 99）。
    【参数】rng：random.Random（所有随机性都从这里来，同一个种子出同样的题）；n_steps：1 … MAX_STEPS
    【返回】Problem
    【例子】make_problem(random.Random(0), 3) → 一道 3 步的题
    """
    rng = as_rng("rng", rng)
    n_steps = as_int("n_steps", n_steps, 1, MAX_STEPS)
    start = x = rng.randint(2, 99)
    steps = []
    for _ in range(n_steps):
        op, operand = _random_step(rng, x)
        steps.append(Step(op, operand))
        x = _exact(op, x, operand)
    return Problem(start, tuple(steps), x)


def make_problem_set(rng, count, min_steps, max_steps):
    """
    出一批题，每道题的步数在 [min_steps, max_steps] 里均匀随机。

    【参数】rng：random.Random；count：题数（≥ 0）；min_steps、max_steps：1 … MAX_STEPS，且 min_steps ≤ max_steps
    【返回】list of Problem
    【例子】make_problem_set(random.Random(0), 100, 3, 8)：课上常用的 100 道 3~8 步的题
    """
    rng = as_rng("rng", rng)
    count = as_int("count", count, low=0)
    min_steps = as_int("min_steps", min_steps, 1, MAX_STEPS)
    max_steps = as_int("max_steps", max_steps, 1, MAX_STEPS)
    if min_steps > max_steps:
        raise ValueError(f"min_steps 不能大于 max_steps，收到 min_steps={min_steps}、max_steps={max_steps}")
    return [make_problem(rng, rng.randint(min_steps, max_steps)) for _ in range(count)]


# （运算, 难度）和运算的编号：CONTEXT_INDEX[("mul", 1.5)] 是这个情境在 CONTEXTS 里的下标，OP_INDEX["sub"] = 1
OP_INDEX = {op: i for i, op in enumerate(OPS)}
CONTEXT_INDEX = {key: i for i, key in enumerate(CONTEXTS)}
