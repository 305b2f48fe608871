"""旧的位置（只保留这一版）：精确答案引擎（exact.answer_probs 的零件）已经改名为 toyllm.exact_answer。"""

import warnings

from . import exact_answer as _new


def __getattr__(name):
    if name.startswith("__") or not hasattr(_new, name):
        raise AttributeError(f"toyllm._value_steps 没有 {name}（这个模块已经改名为 toyllm.exact_answer）")
    warnings.warn(f"toyllm._value_steps 已经改名为 toyllm.exact_answer：请改成 from toyllm.exact_answer import {name}",
                  DeprecationWarning, stacklevel=2)
    return getattr(_new, name)
