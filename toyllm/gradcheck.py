"""
梯度检查：把你算出来的梯度和一个可靠的参考（有限差分，或者包里的精确梯度）逐个情境比较。

【思路】写梯度最容易出错：符号反了、忘了减 π、少乘一个 p、情境对错了行……
    最可靠的检查是**有限差分**：不用任何公式，直接把一个参数挪一点点，看目标函数变了多少：
            ∂f/∂θ ≈ [f(θ + h) − f(θ − h)] / (2h)            （中心差分，误差 ~ h²）
    这和 Karpathy 的 nn-zero-to-hero 里的 cmp 是同一个想法：对每一块参数打印"完全相同 / 在容差内 / 最大差异"。
    这里"一块"就是一个情境的 3 个 Δ。

【用法】
    from toyllm import TrainableLLM, make_problem_set
    from toyllm.exact import grad_expected_reward
    from toyllm.gradcheck import compare_grads

    model = TrainableLLM(1e9)
    problems = make_problem_set(random.Random(0), 20, 3, 8)
    mine = grad_expected_reward(model, problems)          # 换成你自己算的梯度
    compare_grads("期望奖励的梯度", mine, model=model, problems=problems)   # 参考 = 有限差分
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._checks import as_array, as_callable, as_choice, as_instance, as_real
from .arithmetic import CONTEXT_INDEX, CONTEXT_NAMES, CONTEXTS
from .exact import correct_paths, expected_reward, log_expected_reward, mean_log_reward
from .problems import check_problems
from .tables import display_width, pad
from .toy_llm import ToyLLM

OBJECTIVES = ("expected_reward", "log_expected_reward", "mean_log_reward")
"""compare_grads 能自己算有限差分的目标函数：J、log J、(1/P) Σ log p_i（见 toyllm.exact）。"""

_OBJECTIVE_FUNCS = {"expected_reward": expected_reward, "log_expected_reward": log_expected_reward,
                    "mean_log_reward": mean_log_reward}


class _ParamModel:
    """只有 size、cot、params 的"模型"：policy.logit_table 只需要这三样。有限差分时用来试不同的 Δ。"""

    def __init__(self, size, cot, params):
        self.size, self.cot, self.params = size, cot, params


def as_grad_array(name, grad):
    """
    把梯度统一成 (12, 3) 的 float 数组（第 i 行对应 CONTEXTS[i]）。

    【参数】grad：形状 (12, 3) 的数组 / 嵌套列表；或 {情境: [3 个数]} 的字典（例如 add_grad 累加出来的 grads），
        字典里没有的情境记为 0
    【返回】新的 numpy 数组（不会和你的数据共用内存）
    【边界】形状不对、情境不认识、有 NaN / 无穷时报错（中文说明是哪一个参数）。
    """
    if isinstance(grad, Mapping):
        out = np.zeros((len(CONTEXTS), 3))
        for key, row in grad.items():
            if key not in CONTEXT_INDEX:
                raise ValueError(f"{name} 里有未知的情境 {key!r}；情境必须是 toyllm.CONTEXTS 里的一个，例如 ('mul', 1.5)")
            out[CONTEXT_INDEX[key]] = as_array(f"{name} 里情境 {key!r} 的梯度", row, (3,), hint=_NAN_HINT)
        return out
    return as_array(name, grad, (len(CONTEXTS), 3), hint=_NAN_HINT).copy()


_NAN_HINT = "（先检查一下是不是除以了 0 或者 log 了 0）"


def finite_difference_grad(f, params, h=1e-6):
    """
    中心差分梯度：对 params 的每一个数 θ，算 [f(θ + h) − f(θ − h)] / (2h)。

    【思路】不需要知道 f 的公式，只需要能算 f 的值，所以它是检查"手推梯度"的标准参照物。
        中心差分的误差是 O(h²)（单边差分是 O(h)）；h 太小又会被浮点舍入放大（~ 1e-16 / h），
        h = 1e-6 对这里的函数（值在 0 … 1 附近）是合适的折中：误差大约 1e-10。
    【参数】f：函数，输入一个和 params 形状相同的数组，返回一个实数；params：数组（通常是 (12, 3) 的 Δ）；h：> 0
    【返回】和 params 形状相同的 numpy 数组
    【边界】不会修改你传进来的 params（在副本上挪动）。要调用 f 2 × params.size 次（(12, 3) 时 72 次）。
    【例子】finite_difference_grad(lambda d: (d ** 2).sum(), np.ones((12, 3))) ≈ 2 × 全 1 数组
    【Python 小知识】x.flat[i] 按"摊平以后的第 i 个"读写多维数组，不用关心它是第几行第几列。
    """
    as_callable("f", f, "一个函数（输入参数数组，返回一个数）")
    h = as_real("h", h, 0.0, low_open=True)
    theta = as_array("params", params).copy()
    if theta.size == 0:
        raise ValueError(f"params 必须是非空的数字数组（例如形状 (12, 3) 的 Δ），收到 {params!r}")
    grad = np.zeros_like(theta)
    for i in range(theta.size):
        old = theta.flat[i]
        theta.flat[i] = old + h
        up = _value(f, theta)
        theta.flat[i] = old - h
        down = _value(f, theta)
        theta.flat[i] = old
        grad.flat[i] = (up - down) / (2 * h)
    return grad


def _value(f, theta):
    v = f(theta.copy())
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"f 必须返回一个数，收到 {v!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"f 在有限差分的某个点上返回了 {v}（不是有限的数）；换一个更小的 h 或检查目标函数")
    return v


def objective_function(model, problems, objective="expected_reward", temperature=1.0):
    """
    把"某个模型在一批题上的目标"变成一个只吃 Δ 数组的函数 f(params)，给 finite_difference_grad 用。

    【参数】model：ToyLLM 或 TrainableLLM（只读它的 size、cot，不会改它的参数）；problems：list of Problem；
        objective：OBJECTIVES 之一 —— "expected_reward"（J）、"log_expected_reward"（log J）、"mean_log_reward"
        （(1/P) Σ log p_i）；temperature：> 0
    【返回】函数 f(params) → float
    【例子】f = objective_function(TrainableLLM(1e9), problems)；f(np.zeros((12, 3))) 就是 exact_pass_at_1
    """
    as_instance("model", model, ToyLLM, "ToyLLM 或 TrainableLLM")
    problems = check_problems("problems", problems)
    objective = as_choice("objective", objective, OBJECTIVES)
    temperature = as_real("temperature", temperature, 0.0, low_open=True)
    paths = correct_paths(problems)
    func = _OBJECTIVE_FUNCS[objective]
    size, cot = model.size, model.cot

    def f(params):
        return func(_ParamModel(size, cot, np.asarray(params, dtype=float)), paths, temperature)

    return f


@dataclass(frozen=True)
class GradCheckResult:
    """
    compare_grads 的结果。可以直接当 bool 用：`if compare_grads(...):` 表示"全部在容差内"。

    【属性】name；exact：每个数都完全相等；close：每个数都在容差内（np.allclose 的规则）；
        max_abs_diff：最大绝对差；max_rel_diff：最大相对差 |差| / max(|参考|, atol)；
        worst：差得最多的情境；rows：每个情境一行 (情境, 完全相同, 在容差内, 最大差异)；
        mine、reference：两份梯度 (12, 3)
    """
    name: str
    exact: bool
    close: bool
    max_abs_diff: float
    max_rel_diff: float
    worst: tuple
    rows: tuple
    mine: np.ndarray
    reference: np.ndarray

    def __bool__(self):
        return bool(self.close)

    def __repr__(self):
        return (f"GradCheckResult(name={self.name!r}, exact={self.exact}, close={self.close}, "
                f"max_abs_diff={self.max_abs_diff:.3g})")


def compare_grads(name, mine, reference=None, *, model=None, problems=None, objective="expected_reward",
                  temperature=1.0, h=1e-6, rtol=1e-5, atol=1e-8, verbose=True):
    """
    逐个情境比较你的梯度和参考梯度，打印中文表格，返回 GradCheckResult（可以当 bool 用）。

    【思路】和 nn-zero-to-hero 的 cmp 一样：每个情境一行，"完全相同"（每个数逐位相等）、
        "在容差内"（|差| ≤ atol + rtol × |参考|，即 np.allclose）、"最大差异"。
        参考从哪里来：
            · reference 给了数组 / 字典：直接比较（例如包里的 exact.grad_expected_reward）；
            · reference 给了函数 f(params)：在 model.params 处对 f 做有限差分；
            · reference 不给：在 model 的 Δ 处，对 objective（默认期望奖励 J）做有限差分，需要 model 和 problems。
        有限差分本身有 ~1e-10 的误差，所以和它比，"完全相同"几乎总是 ✗，看"在容差内"就够了。
    【参数】name：打印用的名字；mine：你的梯度，(12, 3) 数组或 {情境: [3 个数]}；
        reference：见上；model、problems：有限差分用；objective：OBJECTIVES 之一；temperature：> 0；
        h：有限差分步长；rtol、atol：容差；verbose：False 时不打印（只返回结果）
    【返回】GradCheckResult；bool(结果) 为 True 表示全部在容差内
    【边界】参数不对（形状、未知情境、缺 model / problems）时报中文错误；不会修改 model。
    【例子】
        compare_grads("我的梯度", my_grad, model=model, problems=problems)
        ok = compare_grads("对比精确梯度", my_grad, grad_expected_reward(model, problems), verbose=False)
    【Python 小知识】类里定义 __bool__，对象就能直接放进 if / assert：assert compare_grads(...)。
    """
    as_instance("name", name, str, "字符串（打印用的名字）")
    mine = as_grad_array("mine", mine)
    h = as_real("h", h, 0.0, low_open=True)
    rtol = as_real("rtol", rtol, low=0.0)
    atol = as_real("atol", atol, low=0.0)
    if reference is None or callable(reference):
        if model is None:
            raise ValueError("没有给 reference 时要用有限差分，需要 model=（以及 problems=，或者 reference=函数）")
        params = np.array(getattr(model, "params", np.zeros((len(CONTEXTS), 3))), dtype=float)
        if reference is None:
            if problems is None:
                raise ValueError("没有给 reference 时要对期望奖励做有限差分，需要 problems=（一批题）")
            reference = objective_function(model, problems, objective, temperature)
        reference = finite_difference_grad(reference, params, h)
    reference = as_grad_array("reference", reference)

    diff = np.abs(mine - reference)
    close_each = diff <= atol + rtol * np.abs(reference)
    rows = tuple((key, bool(np.array_equal(mine[i], reference[i])), bool(close_each[i].all()), float(diff[i].max()))
                 for i, key in enumerate(CONTEXTS))
    worst_i = int(np.argmax(diff.max(axis=1)))
    result = GradCheckResult(
        name=name, exact=bool(np.array_equal(mine, reference)), close=bool(close_each.all()),
        max_abs_diff=float(diff.max()), max_rel_diff=float((diff / np.maximum(np.abs(reference), atol)).max()),
        worst=CONTEXTS[worst_i], rows=rows, mine=mine, reference=reference)
    if verbose:
        print(format_result(result))
    return result


def format_result(result):
    """把 GradCheckResult 排成中文表格（compare_grads 打印的就是它）。"""
    as_instance("result", result, GradCheckResult, "compare_grads 返回的 GradCheckResult")
    width = max(display_width(CONTEXT_NAMES[key]) for key in CONTEXTS) + 2
    lines = [f"梯度检查：{result.name}",
             f"  {pad('情境', width)}{pad('完全相同', 10)}{pad('在容差内', 10)}最大差异"]
    for key, exact, close, d in result.rows:
        lines.append(f"  {pad(CONTEXT_NAMES[key], width)}{pad('✓' if exact else '✗', 10)}"
                     f"{pad('✓' if close else '✗', 10)}{d:.1e}")
    bad = sum(not close for _, _, close, _ in result.rows)
    if result.close:
        lines.append(f"✓ 全部 {len(result.rows)} 个情境都在容差内，最大差异 {result.max_abs_diff:.1e}")
    else:
        lines.append(f"✗ 有 {bad} 个情境不一致，最大差异 {result.max_abs_diff:.1e}，"
                     f"出现在「{CONTEXT_NAMES[result.worst]}」")
        hint = diagnose(result.mine, result.reference)
        if hint:
            lines.append(f"  提示：{hint}")
    return "\n".join(lines)


def diagnose(mine, reference, rtol=1e-5, atol=1e-8):
    """
    猜一猜梯度错在哪里，返回一句中文提示（猜不出来时返回空字符串）。

    【思路】几种常见错误都有"形状"：整体差一个负号（梯度下降 / 上升搞反了）、整体差一个常数倍
        （忘了除以题数或样本数，或多除了一次）、全是 0（没有累加上去）、每行三个数之和不是 0
        （softmax 的梯度 onehot − π 每行和为 0，不为 0 多半是忘了减 π）。
    【例子】diagnose(-g, g) → "整体差一个负号……"
    """
    mine, reference = as_grad_array("mine", mine), as_grad_array("reference", reference)
    rtol, atol = as_real("rtol", rtol, low=0.0), as_real("atol", atol, low=0.0)
    if not np.any(reference):
        return ""
    if not np.any(mine):
        return "你的梯度全是 0：是不是忘了把每一步的梯度累加进去？"
    if np.allclose(mine, -reference, rtol=rtol, atol=atol):
        return "整体差一个负号：检查是不是把梯度上升写成了下降（或 onehot − π 写成了 π − onehot）。"
    scale = float((mine * reference).sum() / (reference * reference).sum())
    if abs(scale - 1) > 1e-3 and np.allclose(mine, scale * reference, rtol=rtol, atol=atol):
        return f"整体是参考的 {scale:.4g} 倍：是不是忘了除以（或多除了）题数、样本数或步数？"
    if np.abs(mine.sum(axis=1)).max() > 1e-6 and np.abs(reference.sum(axis=1)).max() <= 1e-6:
        return "参考梯度每一行三个数之和是 0，你的不是：∂ log π(a) / ∂z_j = 1[j = a] − π_j，是不是忘了减 π？"
    return ""
