"""
改了名字的模块的旧位置（只保留一个版本）：旧模块里写一行 __getattr__ = renamed(旧的名字, 新的模块, 怎么说)。
从旧位置取一个名字照样能拿到新位置上的同一个对象，同时给一条中文的 DeprecationWarning，说出新的位置。
"""

import warnings


def renamed(old, new, how="改名为"):
    """旧模块 old（名字）的 __getattr__：到模块 new 里找。how：怎么说这次搬家（"改名为"、"并入"）。"""
    def __getattr__(name):
        if name.startswith("__") or not hasattr(new, name):
            raise AttributeError(f"{old} 没有 {name}（这个模块已经{how} {new.__name__}）")
        warnings.warn(f"{old} 已经{how} {new.__name__}：请改成 from {new.__name__} import {name}",
                      DeprecationWarning, stacklevel=2)
        return getattr(new, name)
    return __getattr__


__all__ = ["renamed"]
