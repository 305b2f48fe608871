"""旧的位置（只保留这一版）：玩具的链式法则（policy_loss、LossResult、forward、backward……）已经搬进 toyllm.rl.toy。"""

from .._moved import renamed
from . import toy

__getattr__ = renamed("toyllm.rl.kernel", toy, "并入")
