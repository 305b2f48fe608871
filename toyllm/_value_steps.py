"""旧的位置（只保留这一版）：精确答案引擎（exact.answer_probs 的零件）已经改名为 toyllm.exact_answer。"""

from . import exact_answer
from ._moved import renamed

__getattr__ = renamed("toyllm._value_steps", exact_answer)
