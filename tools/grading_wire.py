"""
评分程序和同学的进程之间传的数据：只用 JSON（不用 pickle：解开 pickle 会运行任意代码）。

【思路】参数和返回值里可能有 numpy 数组、元组、键不是字符串的字典（{情境: 梯度}）、模型（TrainableLLM）、题目、
    解答和随机数生成器。encode 把它们变成带标记的 JSON 值（{"__nd__": …}、{"__model__": …}……），decode 变回来。
    认不出的对象只传它的类型名（{"__other__": "类型名"}）：评分程序那边得到一个 Unknown，检查会说类型不对。
    同学的函数返回的正好是传进去的某个参数（例如原样返回模型）时，传 {"__arg__": 第几个}，评分程序换回它自己的那个对象。
【边界】两边都是 Python 的 json：NaN 和 ±inf 照原样传（json 的 allow_nan）。decode 模型、题目、解答时才 import toyllm。
"""

import json

import numpy as np


class Unknown:
    """同学返回了一个传不过来的对象：只知道它的类型名。"""

    def __init__(self, type_name):
        self.type_name = type_name

    def __repr__(self):
        return f"<{self.type_name} 对象>"


def encode(value, args=()):
    """value → 可以 json.dumps 的值。args：同学的函数收到的参数（返回值是其中之一时只传下标）。"""
    for i, a in enumerate(args):
        if value is a and not isinstance(value, (int, float, str, bool, type(None))):
            return {"__arg__": i}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            return {"__other__": f"ndarray（dtype={value.dtype}）"}
        return {"__nd__": value.tolist(), "dtype": value.dtype.kind, "shape": list(value.shape)}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, args) for v in value]}
    if isinstance(value, list):
        return [encode(v, args) for v in value]
    if isinstance(value, dict):
        return {"__dict__": [[encode(k, args), encode(v, args)] for k, v in value.items()]}
    if isinstance(value, np.random.Generator):
        return {"__rng__": value.bit_generator.state}
    kind = type(value).__name__
    if kind == "TrainableLLM":
        return {"__model__": {"size": value.size, "name": value.name, "params": encode(np.asarray(value.params))}}
    if kind == "Problem":
        return {"__problem__": [value.start, [[s.op, s.operand] for s in value.steps], value.answer]}
    if kind == "Sample":
        return {"__sample__": [list(value.values), list(value.procs), bool(value.correct)]}
    return {"__other__": kind}


def decode(value, args=()):
    """encode 的反方向。args：调用时的参数（{"__arg__": i} 变回 args[i]）。"""
    if isinstance(value, list):
        return [decode(v, args) for v in value]
    if not isinstance(value, dict):
        return value
    if "__arg__" in value:
        return args[value["__arg__"]]
    if "__nd__" in value:
        dtype = {"b": bool, "i": np.int64, "u": np.uint64, "f": float}[value["dtype"]]
        return np.array(value["__nd__"], dtype=dtype).reshape(value["shape"])
    if "__tuple__" in value:
        return tuple(decode(v, args) for v in value["__tuple__"])
    if "__dict__" in value:
        return {_key(decode(k, args)): decode(v, args) for k, v in value["__dict__"]}
    if "__rng__" in value:
        rng = np.random.default_rng()
        rng.bit_generator.state = value["__rng__"]
        return rng
    if "__model__" in value:
        from toyllm import TrainableLLM

        m = value["__model__"]
        model = TrainableLLM(m["size"], name=m["name"])
        model.params[...] = decode(m["params"])
        return model
    if "__problem__" in value:
        from toyllm.arithmetic import Problem, Step

        start, steps, answer = value["__problem__"]
        return Problem(start, tuple(Step(op, x) for op, x in steps), answer)
    if "__sample__" in value:
        from toyllm.toy_llm import Sample

        values, procs, correct = value["__sample__"]
        return Sample(tuple(values), tuple(procs), correct)
    if "__other__" in value:
        return Unknown(value["__other__"])
    raise ValueError(f"认不出的数据：{sorted(value)}")


def _key(k):
    return tuple(k) if isinstance(k, list) else k


def dumps(message):
    """一条消息 → 一行 JSON 文本（以换行结尾）。"""
    return json.dumps(message, ensure_ascii=False) + "\n"
