"""
小 transformer 怎样把题目写成文字：字表、编码和解码、数的写法、题目和它的标准解答（Example）。

【例子】两位数加法 "12+35=" → "47$"（$ 是结束符）；玩具的多步题 37 × 12 + 458 写成 "7300*2100+8540="，
    解答是一条思维链 "4440;2090$"（每个数补零到 4 位、个位在前，见 write_number）。
"""

import re
from dataclasses import dataclass

import numpy as np

from .._checks import as_bool, as_int, as_list
from ..arithmetic import Problem

END = "$"
"""结束符：模型写出它就表示答完了（也用来填充）。"""
VOCAB = "0123456789+-*=;" + END
"""字表：数字、三种运算、等号、分隔中间结果的分号，和结束符。"""
_ID = {ch: i for i, ch in enumerate(VOCAB)}
END_ID = _ID[END]
OP_CHARS = {"add": "+", "sub": "-", "mul": "*"}

@dataclass(frozen=True)
class Example:
    """
    一道题的文字：prompt（题面，以 "=" 结尾）、target（标准解答，以结束符结尾）、answer（正确的最终答案，int）、
    reversed_digits（文字里的数是不是"补零、个位在前"的写法，见 write_number）。

    【例子】Example("12+35=", "47$", 47)；
        多步题（problem_example）："7300*2100+8540=" → "4440;2090$"，answer = 902，reversed_digits = True
    """
    prompt: str
    target: str
    answer: int
    reversed_digits: bool = False

    def is_correct(self, completion):
        """模型写出的解答 completion 的最终答案是不是 answer（没写完、不是数都算错）。"""
        return answer_of(completion, self.reversed_digits) == self.answer


def addition_examples(n, seed=0, digits=2, exclude=()):
    """
    n 道不重复的 digits 位数加法题（例如 12+35=47），数按平常的写法。

    【参数】n：题数（1 … 所有可能的题数）；seed：numpy 随机种子；digits：1 … 3；exclude：不要出的题（Example 的列表）
    【返回】list of Example
    【例子】train = addition_examples(2000, seed=0); test = addition_examples(500, seed=1, exclude=train)
    """
    digits = as_int("digits", digits, 1, 3)
    lo, hi = 10 ** (digits - 1), 10 ** digits
    pool = [(a, b) for a in range(lo, hi) for b in range(lo, hi)]
    taken = {e.prompt for e in exclude}
    pool = [(a, b) for a, b in pool if f"{a}+{b}=" not in taken]
    n = as_int("n", n, 1, len(pool))
    order = np.random.default_rng(as_int("seed", seed, low=0)).permutation(len(pool))[:n]
    return [Example(f"{a}+{b}=", f"{a + b}{END}", a + b) for a, b in (pool[i] for i in order)]


WIDTH = 4
"""多步题里每个数写成几位（玩具的数都在 0 … 9999 之间，见 arithmetic.MAX_VALUE）。"""


def write_number(n, reversed_digits=True):
    """
    一个数写成文字。reversed_digits=True（多步题用的写法）：补零到 WIDTH 位，再倒过来，个位在前。

    【思路】网络从左往右一个字一个字地写。平常的写法先写最高位，可最高位要等所有低位的进位算完才知道；
        个位在前时，写每一位的时候，它需要的进位刚刚写过。补零到同样的位数，第 i 位总在同一个位置上，
        网络不必先数一个数有几位，才能对齐。两样合起来，网络学得快得多（tools/bench_tinylm.py --cot 量了两种写法）。
    【参数】n：0 … 10^WIDTH − 1 的整数；reversed_digits：False 时就是 str(n)
    【例子】write_number(37) → "7300"；write_number(902) → "2090"；write_number(902, False) → "902"
    """
    n = as_int("n", n, 0, 10 ** WIDTH - 1)
    return str(n).zfill(WIDTH)[::-1] if reversed_digits else str(n)


def read_number(text, reversed_digits=True):
    """write_number 的反面：文字 → int；不是一串数字（空的、有别的字符）时返回 None。【例子】read_number("2090") → 902"""
    if not isinstance(text, str):
        raise TypeError(f"text 必须是字符串，收到 {type(text).__name__}")
    if not re.fullmatch(r"\d+", text):
        return None
    return int(text[::-1] if reversed_digits else text)


def problem_example(problem, reversed_digits=True, values=None):
    """
    玩具的多步题写成文字，解答是一条思维链：每一步之后的值，用分号隔开。

    【参数】problem：toyllm.arithmetic.Problem；reversed_digits：True（默认，网络用的写法）时每个数补零到 4 位、
        个位在前（见 write_number）；False 时是人读的写法；values：解答里写下的每一步的值（默认是正确的值；
        给了就照它写，例如玩具采样的 Sample.values，可能有错；answer 仍是正确答案）
    【例子】Problem(37, (Step("mul", 12), Step("add", 458)), 902)
            → Example("7300*2100+8540=", "4440;2090$", 902, True)
            reversed_digits=False → Example("37*12+458=", "444;902$", 902)
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem 必须是 toyllm.arithmetic.Problem，收到 {type(problem).__name__}")
    reversed_digits = as_bool("reversed_digits", reversed_digits)

    def w(n):
        return write_number(n, reversed_digits)

    values = problem.correct_values() if values is None else list(values)
    if len(values) != len(problem.steps):
        raise ValueError(f"values 要有 {len(problem.steps)} 个数（每一步一个），收到 {len(values)} 个")
    prompt = w(problem.start) + "".join(f"{OP_CHARS[s.op]}{w(s.operand)}" for s in problem.steps) + "="
    return Example(prompt, ";".join(map(w, values)) + END, problem.answer, reversed_digits)


def step_values(completion, reversed_digits=False):
    """
    解答文字里每一步的值：结束符之前按分号切开，每一段读成 int（不是数的段是 None）。

    【例子】step_values("4440;2090$", True) → [444, 902]；step_values("444;9x", False) → [444, None]
    """
    if not isinstance(completion, str):
        raise TypeError(f"completion 必须是字符串，收到 {type(completion).__name__}")
    body = completion[:completion.index(END)] if END in completion else completion
    return [read_number(part, reversed_digits) for part in body.split(";")]


def answer_of(completion, reversed_digits=False):
    """
    解答文字里的最终答案：最后一个分号之后、结束符之前的整数。

    【参数】completion：模型写出的解答（str）；reversed_digits：数是不是个位在前的写法（Example.reversed_digits）
    【返回】int；没有结束符、或那一段不是整数时返回 None（奖励记为做错）
    【例子】answer_of("444;902$") → 902；answer_of("4440;2090$", True) → 902；answer_of("47") → None（没写完）
    """
    if not isinstance(completion, str):
        raise TypeError(f"completion 必须是字符串，收到 {type(completion).__name__}")
    if END not in completion:
        return None
    return step_values(completion, reversed_digits)[-1]


def encode(text, name="text"):
    """
    文字 → 字表下标。

    【参数】text：字符串；name：报错时用的参数名
    【返回】int64 数组
    【边界】字表之外的字符（例如空格、"×"）报 ValueError，指出是哪个字符、在第几位，并列出字表。
    【例子】encode("12+") → [1, 2, 10]
    """
    if not isinstance(text, str):
        raise TypeError(f"{name} 必须是字符串，收到 {type(text).__name__}")
    bad = [(i, ch) for i, ch in enumerate(text) if ch not in _ID]
    if bad:
        i, ch = bad[0]
        raise ValueError(f"{name} = {text!r} 的第 {i} 个字符 {ch!r} 不在字表里；字表是 {VOCAB!r}")
    return np.array([_ID[ch] for ch in text], dtype=np.int64)


def decode(ids):
    """字表下标 → 文字。"""
    return "".join(VOCAB[int(i)] for i in ids)


def check_examples(name, examples, context):
    """检查 examples 是非空的 Example 列表、每道题的字都在字表里、放得进上下文 context；返回 list。"""
    if isinstance(examples, Example):
        examples = [examples]
    examples = as_list(name, examples, "Example", "addition_examples(2000)")
    for e in examples:
        if not isinstance(e, Example):
            raise TypeError(f"{name} 里的每一项都必须是 Example，收到 {type(e).__name__}")
        encode(e.prompt, f"{name} 的 prompt")
        encode(e.target, f"{name} 的 target")
        if len(e.prompt) + len(e.target) > context + 1:
            raise ValueError(f"{name} 里的题 {e.prompt + e.target!r} 有 {len(e.prompt) + len(e.target)} 个字符，"
                             f"放不进上下文 context = {context}（最多 {context + 1} 个字符）；请用更大的 context 或更短的题")
    return examples

