"""
小 transformer 学得怎样：准确率、pass@k 曲线，和它在玩具的多步题上一步一步错在哪里（按玩具的 12 种情境）。
"""

import math

import numpy as np

from .._checks import as_int, as_list
from ..arithmetic import CONTEXT_NAMES, CONTEXTS, Problem, apply_op, bug_bites, step_hardness
from ..blas import one_blas_thread
from ..tables import Table
from ..estimators import pass_at_k
from ..problems import check_problems
from ..toy_llm import ToyLLM, softmax
from .model import check_model, generate, greedy
from .text import check_examples, problem_example, step_values


@one_blas_thread
def accuracy(model, examples, temperature=0.0, rng=None):
    """
    完全做对（最终答案正确）的比例。

    【参数】model：TinyLM；examples：Example 的列表；temperature：0 是贪心解码（exact match），> 0 是采样；
        rng：numpy.random.Generator（采样时必须给）
    【返回】float，在 [0, 1] 里
    【例子】accuracy(model, test)；accuracy(model, test, 1.0, np.random.default_rng(0))
    """
    check_model(model)
    examples = check_examples("examples", examples, model.context)
    outs = generate(model, [e.prompt for e in examples], temperature, rng)
    return float(np.mean([e.is_correct(o) for o, e in zip(outs, examples)]))


@one_blas_thread
def pass_at_k_curve(model, examples, n, ks, seed=0, temperature=1.0):
    """
    每道题采样 n 份，用无偏估计（toyllm.estimators.pass_at_k）算 pass@k，再对题目平均。

    【返回】{k: pass@k}
    【例子】pass_at_k_curve(model, test[:100], 16, [1, 4, 16])
    """
    check_model(model)
    examples = check_examples("examples", examples, model.context)
    n = as_int("n", n, low=1)
    ks = [as_int("ks 里的 k", k, 1, n) for k in as_list("ks", ks, "k", "[1, 4, 16]")]
    outs = generate(model, [e.prompt for e in examples for _ in range(n)], temperature, np.random.default_rng(seed))
    c = np.array([e.is_correct(o) for o, e in zip(outs, (e for e in examples for _ in range(n)))])
    c = c.reshape(len(examples), n).sum(1)
    return {k: float(np.mean([pass_at_k(n, int(ci), k) for ci in c])) for k in ks}


# =============================================================================
# 网络在玩具的题上错在哪里：按玩具的 12 种情境，逐步对照三种做法
# =============================================================================
def _looks_careless(value, correct):
    """和正确结果只差某一位上的 ±1（玩具的 careless：|差| = 10^i，i 小于正确结果的位数）。"""
    d = abs(value - correct)
    return d > 0 and 10 ** round(math.log10(d)) == d and d < 10 ** len(str(abs(correct))) and value >= 0


def step_errors(model, problems):
    """
    网络在玩具的多步题上一步一步的表现，按玩具的情境 (运算, 难度) 分开数。

    【思路】每道题贪心解码一次，沿着思维链往下看：前面的步都对时，这一步落在哪个情境（arithmetic.step_hardness），
        写出的值是 对 / 像 bug（等于错误观念的结果，而且它和正确结果不同）/ 像粗心（和正确结果只差某一位上的 ±1）/
        别的（包括没写出数、少写了步）。一步错了，后面的步就不再数：它们的输入已经不是题目里的值了。
    【参数】model：TinyLM；problems：toyllm.arithmetic.Problem 的列表（用 problem_example 写成文字）
    【返回】{情境: {"steps", "correct", "bug", "careless", "other"}}，只含出现过的情境，按 arithmetic.CONTEXTS 的顺序
    【例子】counts = step_errors(model, heldout_problems); step_error_table(counts, toy=ToyLLM(1e9))
    """
    check_model(model)
    problems = check_problems("problems", [problems] if isinstance(problems, Problem) else problems)
    examples = check_examples("problems", [problem_example(p) for p in problems], model.context)
    outs = greedy(model, [e.prompt for e in examples])
    counts = {}
    for problem, out in zip(problems, outs):
        values = step_values(out, True)
        x = problem.start
        for k, step in enumerate(problem.steps):
            key = (step.op, step_hardness(step.op, x, step.operand))
            c = counts.setdefault(key, {"steps": 0, "correct": 0, "bug": 0, "careless": 0, "other": 0})
            c["steps"] += 1
            right = apply_op(step.op, x, step.operand, "correct")
            value = values[k] if k < len(values) else None
            if value == right:
                c["correct"] += 1
                x = right
                continue
            if value is not None and bug_bites(step.op, x, step.operand) \
                    and value == apply_op(step.op, x, step.operand, "bug"):
                c["bug"] += 1
            elif value is not None and _looks_careless(value, right):
                c["careless"] += 1
            else:
                c["other"] += 1
            break
    return {key: counts[key] for key in CONTEXTS if key in counts}


def step_error_table(counts, toy=None):
    """
    step_errors 的结果画成一张表（toyllm.tables.Table）：每个情境一行。

    【参数】counts：step_errors 的返回值；toy：玩具模型（toyllm.ToyLLM 或 TrainableLLM，可选）：
        给了就加三列，它在这个情境第一步的 π(correct)、π(bug)、π(careless)
    【返回】Table：情境、步数、做对（的比例），像 bug / 像粗心 / 别的（做错的步里各占多少；没有做错的步时写 —）。
        表头短，9 列的表在 1280 像素宽、开着文件浏览器的 JupyterLab 里也放得下
    """
    if not isinstance(counts, dict) or not counts:
        raise ValueError(f"counts 必须是 step_errors 返回的非空字典，收到 {counts!r}"[:200])
    headers = ["情境", "步数", "做对", "像 bug", "像粗心", "别的"]
    if toy is not None:
        if not isinstance(toy, ToyLLM):
            raise TypeError(f"toy 必须是玩具模型（toyllm.ToyLLM 或 TrainableLLM），收到 {type(toy).__name__}")
        headers += ["玩具 π(correct)", "π(bug)", "π(careless)"]
    rows = []
    for key, c in counts.items():
        wrong = c["steps"] - c["correct"]
        shares = [c[k] / wrong if wrong else "—" for k in ("bug", "careless", "other")]
        row = [CONTEXT_NAMES[key], c["steps"], c["correct"] / c["steps"], *shares]
        if toy is not None:
            row += softmax(toy.context_logits(key))
        rows.append(row)
    return Table(headers, rows, digits=3)
