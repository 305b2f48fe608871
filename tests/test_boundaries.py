"""
公开边界：未知的情境、错的类型、NaN、空输入 —— 每个公开函数都报中文的 TypeError / ValueError
（说出参数名），不会冒出 AttributeError、numpy 的英文报错，或悄悄算出 NaN。
"""

import importlib
import inspect
import math
import random
import re

import numpy as np
import pytest

from toyllm import History, TrainableLLM, make_problem_set
from toyllm.toy_llm import UnknownContextError

MODULES = ["toy_llm", "trainable", "policy", "sampler", "exact", "evaluation", "history", "problems", "imitation",
           "rl.config", "rl.losses", "rl.kernel", "rl.filtering", "rl.loop"]
CJK = re.compile(r"[\u4e00-\u9fff]")
BAD = {"None": None, "str": "abc", "nan": math.nan, "empty_list": [], "empty_array": np.array([]), "negative": -1,
       "dict": {"x": 1}, "unknown_context": ("zz", 9.9)}
PROBLEMS = make_problem_set(random.Random(0), 4, 2, 3)
GOOD = {"model": lambda: TrainableLLM(1e9), "problems": lambda: PROBLEMS, "train_problems": lambda: PROBLEMS,
        "heldout_problems": lambda: PROBLEMS, "n": lambda: 2, "rng": lambda: np.random.default_rng(0),
        "size": lambda: 1e9, "key": lambda: ("mul", 1.5), "group_size": lambda: 2, "rewards": lambda: np.array([1., 0.]),
        "ratio": lambda: np.ones(2), "adv": lambda: np.ones(2), "logp": lambda: np.zeros(2),
        "logp_ref": lambda: np.zeros(2), "mask": lambda: np.ones((2, 2), bool), "per_step": lambda: np.ones((2, 2)),
        "probs": lambda: np.full(3, 1 / 3), "logprobs": lambda: np.log(np.full(3, 1 / 3)),
        "logits": lambda: np.zeros((12, 3)), "columns": lambda: ["a"], "k": lambda: 1, "a": lambda: "grpo",
        "b": lambda: "dapo"}


def _public_functions():
    for name in MODULES:
        module = importlib.import_module(f"toyllm.{name}")
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if inspect.isfunction(obj) and obj.__module__ == module.__name__:
                params = [p.name for p in inspect.signature(obj).parameters.values()
                          if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
                for i, p in enumerate(params):
                    yield pytest.param(obj, params, i, id=f"{name}.{attr}({p})")


@pytest.mark.parametrize("func, params, i", list(_public_functions()))
def test_bad_argument_gives_a_chinese_error(func, params, i):
    for label, bad in BAD.items():
        args = [bad if j == i else GOOD.get(p, lambda: 1)() for j, p in enumerate(params)]
        try:
            func(*args)
        except (TypeError, ValueError) as e:          # UnknownContextError 是 KeyError 也是 ValueError
            assert CJK.search(str(e)), f"{func.__name__}({params[i]}={label}) 的报错不是中文：{e!r}"
        except Exception as e:                        # noqa: BLE001 —— 别的异常就是没在边界上检查
            pytest.fail(f"{func.__name__}({params[i]}={label}) 抛出了 {type(e).__name__}: {e}")


def test_unknown_context_names_the_parameter_the_value_and_the_contexts():
    model = TrainableLLM(1e9)
    for call in (lambda: model.p_correct(("mul", 9.9)), lambda: model.context_logits("mul"),
                 lambda: model.delta[("div", 1.0)]):
        with pytest.raises(ValueError) as info:
            call()
        assert isinstance(info.value, KeyError) and isinstance(info.value, UnknownContextError)
        msg = str(info.value)
        assert ("key" in msg or "delta 的键" in msg) and "('mul', 1.5)" in msg and "可用的情境" in msg
    assert "('mul', 9.9)" in _message(lambda: model.p_correct(("mul", 9.9)))
    assert model.delta.get(("mul", 9.9)) is None and ("mul", 9.9) not in model.delta     # 字典语义不变


def test_unknown_history_column_is_a_chinese_key_error():
    hist = History(["iteration", "loss"])
    with pytest.raises(KeyError) as info:
        hist["los"]
    assert "los" in str(info.value) and "iteration、loss" in str(info.value)
    assert hist.get("los") is None


def _message(call):
    try:
        call()
    except Exception as e:                            # noqa: BLE001
        return str(e)
    return ""
