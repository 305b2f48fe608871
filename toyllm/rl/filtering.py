"""旧的位置（只保留这一版）：奖励和分组（step_rewards、concat_rollouts、draw_size……）已经改名为 toyllm.rl.groups。"""

import warnings

from . import groups as _new


def __getattr__(name):
    if name.startswith("__") or not hasattr(_new, name):
        raise AttributeError(f"toyllm.rl.filtering 没有 {name}（这个模块已经改名为 toyllm.rl.groups）")
    warnings.warn(f"toyllm.rl.filtering 已经改名为 toyllm.rl.groups：请改成 from toyllm.rl.groups import {name}",
                  DeprecationWarning, stacklevel=2)
    return getattr(_new, name)
