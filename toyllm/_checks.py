"""
参数检查：公开函数在入口处检查参数，出错时给出中文说明（参数名、收到的值、接受什么）。

【思路】错误应该在学生调用的那一行就报出来，而不是在十层调用之后变成一个看不懂的 traceback，
    更不能悄悄算出一个没有意义的数。这里的小函数被各个模块共用，保证报错的说法一致。
【Python 小知识】bool 是 int 的子类（isinstance(True, int) 为 True），所以检查整数时要单独排除 bool。
"""

import difflib
import math
import numbers
import os

import numpy as np


def as_int(name, value, low=None, high=None):
    """检查 value 是整数（可以是 numpy 整数，不能是 bool 或 float），并返回 Python int。"""
    if type(value) is int:                        # 最常见的情况，先走捷径（bool 的 type 是 bool，不会走到这里）
        _check_range(name, value, low, high)
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} 必须是整数，收到 {value!r}（类型 {type(value).__name__}）")
    value = int(value)
    _check_range(name, value, low, high)
    return value


def as_real(name, value, low=None, high=None, *, low_open=False, allow_inf=False):
    """检查 value 是有限的实数（int / float / numpy 数；allow_inf=True 时也可以是 +inf，原样返回），并返回 Python float。"""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} 必须是实数，收到 {value!r}（类型 {type(value).__name__}）")
    value = float(value)
    if allow_inf and value == math.inf:
        return value
    if not math.isfinite(value):
        raise ValueError(f"{name} 必须是有限的数（不能是 NaN 或无穷），收到 {value!r}")
    if low_open and low is not None and value <= low:
        raise ValueError(f"{name} 必须 > {low}，收到 {value!r}")
    _check_range(name, value, None if low_open else low, high)
    return value


def as_bool(name, value):
    """检查 value 是 True / False（也接受 numpy 的 bool，不接受 0 / 1），并返回 Python bool。"""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} 必须是 True 或 False，收到 {value!r}（类型 {type(value).__name__}）")
    return bool(value)


def as_choice(name, value, choices):
    """
    检查 value 是 choices 中的一个；否则报中文的 ValueError，列出可接受的值，并用 difflib 提示最像的一个。

    【例子】as_choice("loss_agg", "token_mean", AGGREGATIONS) → ValueError：……你是不是想写 'token-mean'？
    """
    try:
        ok = value in choices
    except TypeError:
        ok = False
    if ok:
        return value
    close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1, cutoff=0.5)
    hint = f"你是不是想写 {close[0]!r}？" if close else ""
    raise ValueError(f"{name} 必须是 {'、'.join(repr(c) for c in choices)} 之一，收到 {value!r}。{hint}")


def as_list(name, value, what, example=None):
    """
    检查 value 是非空的一串东西（list、tuple、生成器……，不能是字符串），返回 list。

    【参数】what：里面该放什么（"数"、"Problem"……）；example：报错时给的例子
    【例子】as_list("ks", (1, 4), "k") → [1, 4]；as_list("ks", [], "k") → ValueError：ks 不能为空：至少要有一个 k
    """
    hint = f"（例如 {example}）" if example else ""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} 必须是 {what} 的列表{hint}，收到 {value!r}"[:200])
    value = list(value)
    if not value:
        raise ValueError(f"{name} 不能为空：至少要有一个 {what}{hint}")
    return value


def as_float_array(name, value, what="数（或数的数组）"):
    """把 value 变成 float 的 numpy 数组；字符串、字典或转不成数的东西报中文的 TypeError：name 必须是 what。"""
    if isinstance(value, (str, bytes, dict)):
        raise TypeError(f"{name} 必须是{what}，收到 {value!r}")
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} 必须是{what}，收到 {value!r}") from None


def as_array(name, value, shape=None, *, what="数（或数的数组）", nonneg=False, hint=""):
    """
    把 value 变成 float 的 numpy 数组并检查：形状等于 shape（给了的话）、没有 NaN / 无穷、（nonneg=True 时）没有负数。

    【参数】what：转不成数时说它该是什么；hint：有 NaN / 无穷时补在报错后面的一句提示
    【例子】as_array("counts", [[1, 2, 0]] * 12, (12, 3), nonneg=True) → (12, 3) 数组；
        as_array("Δ", [1, 2], (3,)) → ValueError：Δ 的形状必须是 (3,)，收到形状 (2,)
    """
    arr = as_float_array(name, value, what)
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} 的形状必须是 {shape}，收到形状 {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} 里不能有 NaN 或无穷{hint}，收到 {value!r}"[:300])
    if nonneg and (arr < 0).any():
        raise ValueError(f"{name} 必须是非负数，收到 {value!r}"[:300])
    return arr


def as_instance(name, value, cls, what):
    """检查 value 是 cls（一个类，或类的元组）的实例，原样返回；否则报中文的 TypeError：name 必须是 what，收到 类型名。"""
    if not isinstance(value, cls):
        raise TypeError(f"{name} 必须是 {what}，收到 {type(value).__name__}")
    return value


def as_callable(name, value, what="函数", allow_none=False):
    """检查 value 是函数（allow_none=True 时也可以是 None），原样返回；否则报中文的 TypeError。"""
    if not (callable(value) or allow_none and value is None):
        raise TypeError(f"{name} 必须是{what}，收到 {value!r}"[:300])
    return value


def as_rng(name, rng):
    """检查 rng 是 random.Random 一类的随机数发生器（有 random() 和 randrange() 方法）。"""
    if not (hasattr(rng, "random") and hasattr(rng, "randrange")) or isinstance(rng, np.random.Generator):
        raise TypeError(f"{name} 必须是 random.Random 对象（例如 random.Random(0)），收到 {rng!r}")
    return rng


def as_generator(name, rng, why=""):
    """检查 rng 是 numpy.random.Generator（例如 np.random.default_rng(0)）：全包只在这里检查。why：写在例子后面的用途。"""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{name} 必须是 numpy.random.Generator（例如 np.random.default_rng(0){why}），收到 {rng!r}")
    return rng


def as_path(name, path):
    """检查 path 是非空的文件路径（str 或 pathlib.Path），返回 str。"""
    if not isinstance(path, (str, os.PathLike)) or not isinstance(os.fspath(path), str) or not os.fspath(path):
        raise (ValueError if path == "" else TypeError)(f"{name} 必须是非空的文件路径（str 或 pathlib.Path），收到 {path!r}")
    return os.fspath(path)


def _check_range(name, value, low, high):
    if low is not None and value < low:
        raise ValueError(f"{name} 必须 >= {low}，收到 {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} 必须 <= {high}，收到 {value!r}")
