"""
自动评分的隐藏测试从这里给分：不信任学生 notebook 里的任何名字，也不信任已经导入的 toyllm 模块有没有被改过。
老师的工具，不在学生的包里：评分在老师的仓库里运行（toyllm 用 pip install -e 装），隐藏测试在 toyllm 包旁边找到它。

【思路】隐藏测试按文件路径重新加载这个文件（不经过 sys.modules，也不用 notebook 里
    的名字），再调用 grade(作业, 检查名, 同学的函数)：
        1. 核对已经导入的每一个 toyllm 模块：它确实是包里那个文件；它的每个函数（和类的每个方法）的代码
           和从文件重新编译出来的一样。同学在 notebook 里写 toyllm.homework.hw3.check_x = 假的、
           toyllm.rl.losses.clipped_surrogate = 自己的、或者往 sys.modules 里塞一个假模块，都在这里被发现；
        2. 没被改过时，用包里的检查（toyllm.homework.hwN）检查同学的函数：它把同学的结果和检查里算出的
           正确值比较，并且发现同学的函数是不是、或者有没有调用包里同一个任务的实现（framework.run）。
    发现问题时打印中文原因，返回 False（隐藏测试的 assert 失败，这一部分记 0 分）。
【边界】能在内核里运行任意代码的人总能绕过任何检查（例如改写 Python 的导入机制或 numpy 本身）；
    这里挡住的是改名字、改包里的函数、换模块这几种。老师在 formgrader 里看得到同学交的全部代码。
"""

import contextlib
import importlib
import inspect
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "toyllm"
"""被核对的包：和这个文件在同一个仓库里的 toyllm/。"""
_STDLIB_WRAPPERS = {Path(contextlib.__file__).resolve()}
"""标准库的装饰器（contextlib.contextmanager）生成的包装函数在这些文件里：核对时看它包着的那个函数。"""


_COMPREHENSIONS = {"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"}
"""推导式的代码对象的名字（Python 3.10、3.11）：它们里面的函数的 qualname 不加 <locals>。"""


def _unwrapped(fn):
    """标准库装饰器包着的函数（例如 history.stop_on_interrupt 是 contextmanager）；别的函数原样返回。"""
    while hasattr(fn, "__wrapped__") and Path(fn.__code__.co_filename).resolve() in _STDLIB_WRAPPERS:
        fn = fn.__wrapped__
    return fn


def _codes(path):
    """
    从文件重新编译：{函数的 qualname: [代码对象]}（包括嵌套的函数、类的方法）。

    qualname 按 Python 的规则从外到内拼出来（函数里的函数是 f.<locals>.g，类里的方法是 A.f，推导式里的推导式
    不加 <locals>），
    不读 code.co_qualname：它从 Python 3.11 才有，3.10 上也要能评分。
    """
    module = compile(path.read_text(encoding="utf-8"), str(path), "exec")
    out, todo = {}, [(module, "")]
    while todo:
        code, qualname = todo.pop()
        out.setdefault(qualname, []).append(code)
        if not qualname:                                         # 模块里的函数和类
            inner = ""
        elif code.co_flags & inspect.CO_NEWLOCALS and code.co_name not in _COMPREHENSIONS:
            inner = qualname + ".<locals>."                      # 函数（和 lambda）里的函数
        else:
            inner = qualname + "."                               # 类里的方法、推导式里的推导式
        todo.extend((c, inner + c.co_name) for c in code.co_consts if isinstance(c, types.CodeType))
    return out


def _compiled_from_file(code, codes):
    """
    code 是不是从文件重新编译出来的那个代码对象（同一个 qualname 下比较；代码对象相等要求名字、行号、字节码、
    常量都相同，所以同名的嵌套函数也分得开）。Python 3.10 的代码对象没有 co_qualname：在名字相同的那些里找
    （不用 fn.__qualname__：functools.wraps 包着的函数，它写的是被包的函数的名字）。
    """
    qualname = getattr(code, "co_qualname", None)
    if qualname is not None:
        return code in codes.get(qualname, [])
    return any(code in found for name, found in codes.items() if name.rpartition(".")[2] == code.co_name)


def _functions(module):
    """模块里的函数和类的方法（只看在 toyllm 的文件里定义的）：[(打印用的名字, 函数)]。"""
    out = []
    for name, value in vars(module).items():
        value = getattr(value, "func", value)                  # functools.partial 看它包着的函数
        if isinstance(value, type) and value.__module__.startswith("toyllm"):
            out += [(f"{name}.{k}", v) for k, v in vars(value).items() if isinstance(v, types.FunctionType)]
        elif isinstance(value, types.FunctionType):
            out.append((name, _unwrapped(value)))
    return out


def tampered():
    """已经导入的 toyllm 模块里被改过的地方：[中文说明]（空列表表示都没改过）。"""
    problems = []
    for name, module in list(sys.modules.items()):
        if name != "toyllm" and not name.startswith("toyllm."):
            continue
        rel = name.split(".")[1:]
        expected = [ROOT.joinpath(*rel, "__init__.py"), ROOT.joinpath(*rel[:-1], f"{rel[-1]}.py") if rel else None]
        file = getattr(module, "__file__", None)
        if file is None or Path(file).resolve() not in expected:
            problems.append(f"sys.modules[{name!r}] 不是包里的模块")
            continue
        codes = _codes(Path(file))
        for label, fn in _functions(module):
            where = Path(fn.__code__.co_filename)
            if ROOT not in where.resolve().parents:
                if fn.__module__ in (None, "__main__") or label in codes:
                    problems.append(f"{name}.{label} 被换成了 notebook 里写的函数")
            elif where.resolve() == Path(file).resolve() and not _compiled_from_file(fn.__code__, codes):
                problems.append(f"{name}.{label} 的代码和包里的文件不同")
    return problems


def grade(assignment, check_name, fn):
    """
    隐藏测试：包没被改过，并且包里的 check_name 检查 fn 通过时返回 True；否则打印原因，返回 False。

    【参数】assignment："hw1" / "hw2" / "hw3"；check_name：例如 "check_pass_at_k"；fn：同学的函数
    【例子】assert grade("hw2", "check_pass_at_k", pass_at_k_unbiased)
    """
    problems = tampered()
    if problems:
        print("✗ 自动评分：toyllm 包在 notebook 里被改动过，这一部分记 0 分：" + "；".join(problems[:3]))
        return False
    result = getattr(importlib.import_module(f"toyllm.homework.{assignment}"), check_name)(fn)
    return bool(result.ok) and result.status == "pass"
