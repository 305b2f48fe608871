"""旧的位置（只保留这一版）：玩具的链式法则（policy_loss、LossResult、forward、backward……）已经搬进 toyllm.rl.toy。"""

import warnings

from . import toy as _new


def __getattr__(name):
    if name.startswith("__") or not hasattr(_new, name):
        raise AttributeError(f"toyllm.rl.kernel 没有 {name}（这个模块已经并入 toyllm.rl.toy）")
    warnings.warn(f"toyllm.rl.kernel 已经并入 toyllm.rl.toy：请改成 from toyllm.rl.toy import {name}",
                  DeprecationWarning, stacklevel=2)
    return getattr(_new, name)
