"""
评分时同学的函数在这里运行：一个新的 Python 进程，在沙盒里（tools/sandbox.py），和评分程序只用管道传 JSON。

【思路】评分程序（tools/grader.py）启动这个进程，先发一行设置：
        {"cells": [[名字, 代码], …], "function": 函数名, "toyllm": 能不能用 toyllm, "allowed": [许用的 toyllm 函数],
         "cell_seconds": 每个单元格的秒数, "call_seconds": 每次调用的秒数}
    这里依次运行这些单元格（老师的导入单元格和同学的答案单元格），找到那个函数，回一行 {"ready": …}。
    然后每收到一行 {"args": …, "kwargs": …} 就调用一次同学的函数，回一行结果（tools/grading_wire.py 的格式）
    或者出错的种类：todo（还没实现）、crash（出错，附上同学代码里的那一行）、timeout、used_reference。
    分数不在这里算：这里只把同学的函数算出的东西交回去，评分程序在自己的进程里和它自己的参考答案比较。
【规则】toyllm 不许用的任务（"toyllm": false）：import toyllm 失败（沙盒里也看不到它的源文件）。许用 toyllm 的任务：
    同学的函数运行时，直接调用 toyllm 里不在 allowed 名单上的函数（在哪个线程里都一样）会抛出 UsedReference，
    这一次调用记为 used_reference；包里的函数和模型的方法在内部再调用别的函数不算。
【边界】同学的 print 不会传回去（标准输出、标准错误都接到 /dev/null）。exit()、KeyboardInterrupt 在单元格里被接住；
    os._exit 和死循环由评分程序发现（进程没了、或者超时）。
"""

import importlib.abc
import json
import linecache
import os
import signal
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_wire as wire  # noqa: E402  这个文件所在的文件夹（tools/）先放进 sys.path


class TimedOut(BaseException):
    """超时（BaseException：同学写的 except Exception 接不住）。"""


class UsedReference(BaseException):
    """同学的函数调用了这个任务不许用的 toyllm 函数。"""


class _NoToyllm(importlib.abc.MetaPathFinder):
    """这个任务不许用 toyllm：import toyllm 一律失败。"""

    def find_spec(self, name, path=None, target=None):
        if name == "toyllm" or name.startswith("toyllm."):
            raise ModuleNotFoundError(f"这个任务只能用 numpy 和 Python 的标准库，不能 import {name}")
        return None


_STATE = {"active": False, "used": None, "package": ""}


def _guarded(fn, label, allowed):
    """
    fn 的替身：评分调用进行时，不是从 toyllm 自己的代码里调用、又不在名单上，就抛出 UsedReference。

    【思路】看调用者那一帧的文件：在 toyllm 的文件夹里，是包里的函数（名单上的函数、模型的方法）在内部调用它，照常运行；
        否则是同学的代码直接调用（或者经过 threading、functools 这些标准库的东西），不许。
    """
    def wrapper(*args, **kwargs):
        if _STATE["active"] and label not in allowed and not sys._getframe(1).f_code.co_filename.startswith(
                _STATE["package"]):
            _STATE["used"] = label
            raise UsedReference(label)
        return fn(*args, **kwargs)
    wrapper.__name__, wrapper.__doc__, wrapper.__wrapped_by_grader__ = fn.__name__, fn.__doc__, True
    return wrapper


def _guard_module(module, allowed, done):
    """把 module 里每个在 toyllm 里定义的函数换成替身（同一个函数在各个模块里换成同一个替身）。"""
    for name, value in list(vars(module).items()):
        if getattr(value, "__wrapped_by_grader__", False) or not callable(value) or isinstance(value, type):
            continue
        if not getattr(value, "__module__", "").startswith("toyllm") or not hasattr(value, "__code__"):
            continue
        key = id(value)
        if key not in done:
            done[key] = _guarded(value, f"{value.__module__}.{value.__name__}", allowed)
        setattr(module, name, done[key])


def guard_toyllm(allowed):
    """已经导入的、和以后导入的 toyllm 模块都换上替身。"""
    done = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("toyllm"):
            _guard_module(module, allowed, done)

    class Hook(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if not name.startswith("toyllm"):
                return None
            for finder in sys.meta_path:
                if finder is self:
                    continue
                spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
                if spec is not None and spec.loader is not None:
                    run = spec.loader.exec_module

                    def exec_module(module, run=run):
                        run(module)
                        _guard_module(module, allowed, done)
                    spec.loader.exec_module = exec_module
                    return spec
            return None
    sys.meta_path.insert(0, Hook())


def _alarm(signum, frame):
    raise TimedOut()


def _limited(seconds, fn, *args, **kwargs):
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args, **kwargs)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _without_magics(source):
    """IPython 的 %魔法 和 !命令 在这里没有意义：换成 pass（缩进不变）；%% 开头的单元格整个跳过。"""
    if source.lstrip().startswith("%%"):
        return ""
    return "\n".join(line[:len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


def _student_line(error):
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith("<单元格")]
    if not frames or not (frames[-1].line or "").strip():
        return ""
    f = frames[-1]
    return f"出错的那一行（{f.name} 里，{f.filename[1:-1]}第 {f.lineno} 行）：{f.line.strip()}"


def run_cells(cells, namespace, seconds):
    """依次运行单元格：[(名字, 代码)]。返回 [(名字, 出错的说明)]；超时的单元格说明以「超时」开头。"""
    problems = []
    for label, source in cells:
        filename = f"<单元格「{label}」>"
        source = _without_magics(source)
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        try:
            _limited(seconds, exec, compile(source, filename, "exec"), namespace)
        except TimedOut:
            problems.append((label, f"超时：这个单元格运行了 {seconds} 秒还没有结束"))
        except BaseException as e:                      # noqa: BLE001  同学的代码可能抛任何东西，包括 SystemExit
            problems.append((label, f"{type(e).__name__}: {e}"))
    return problems


def call(fn, args, kwargs, seconds):
    """调用一次同学的函数：返回要传回去的消息。"""
    _STATE["active"], _STATE["used"] = True, None
    try:
        out = _limited(seconds, fn, *args, **kwargs)
        used = _STATE["used"]
    except NotImplementedError:
        return {"error": "todo"}
    except TimedOut:
        return {"error": "timeout"}
    except UsedReference as e:
        return {"error": "used_reference", "message": str(e)}
    except BaseException as e:                          # noqa: BLE001
        if _STATE["used"]:
            return {"error": "used_reference", "message": _STATE["used"]}
        return {"error": "crash", "message": f"{type(e).__name__}: {e}", "line": _student_line(e)}
    finally:
        _STATE["active"] = False
    if used:
        return {"error": "used_reference", "message": used}
    return {"ok": wire.encode(out, args), "after": [wire.encode(a) for a in args]}


def main():
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    requests = sys.stdin
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    sys.stdout = sys.stderr = open(os.devnull, "w", encoding="utf-8")
    sys.stdin = open(os.devnull, encoding="utf-8")
    setup = json.loads(requests.readline())
    if setup["toyllm"]:
        import toyllm  # 先导入，再换上替身

        _STATE["package"] = os.path.dirname(toyllm.__file__) + os.sep
        guard_toyllm(set(setup["allowed"]))
    else:
        sys.meta_path.insert(0, _NoToyllm())
    namespace = {"__name__": "__main__"}
    problems = run_cells(setup["cells"], namespace, setup["cell_seconds"])
    fn = namespace.get(setup["function"])
    channel.write(wire.dumps({"ready": callable(fn), "problems": problems}))
    channel.flush()
    for line in requests:
        request = json.loads(line)
        args = wire.decode(request["args"])
        kwargs = {k: wire.decode(v) for k, v in request["kwargs"].items()}
        channel.write(wire.dumps(call(fn, args, kwargs, setup["call_seconds"])))
        channel.flush()


if __name__ == "__main__":
    main()
