"""
作业检查的框架（三份作业的检查都用它，各自的检查在 hw1.py、hw2.py、hw3.py）：把同学写的函数和正确答案比较，用中文打印 ✓ 或 ✗，并提示错在哪里。

【思路】每个 check_xxx(fn) 用几组准备好的输入调用你的函数，和包里的正确实现比较：
    · 全对：打印 ✓；
    · 不对：先看是不是"常见错误"之一 —— 形状不对、符号反了、忘了减基线、差一个 G/(G−1) 倍、
      用了总体标准差而不是样本标准差、忘了截断下边…… —— 是的话直接说出来；不是的话给出一组输入、
      你的结果和应有的结果，方便你自己找；
    · 你的函数还在 raise NotImplementedError()：打印"还没有实现"。
    检查函数**从不抛出异常**（你的函数出错时，它把错误类型和信息打印出来），所以没写完的作业
    也能从头运行到尾。

【返回】每个检查返回一个 CheckResult：可以当 bool 用（通过为 True），属性 status 是
    "pass" / "fail" / "todo"（还没有实现）/ "error"（你的函数出错）之一，hint 是提示。
    在 notebook 里作为单元格最后一行时它不会再显示一遍（信息已经打印过了）。

【Python 小知识】try: … except NotImplementedError: … 可以"接住"函数里抛出的这种异常，
    程序不会停下来；except Exception 接住几乎所有错误（但不包括 Ctrl+C 产生的 KeyboardInterrupt）。
"""

import _thread
import signal
import sys
import sysconfig
import threading
import warnings
from pathlib import Path

import numpy as np

STATUSES = ("pass", "fail", "todo", "error")


class CheckResult:
    """
    一次检查的结果。bool(结果) 为 True 表示通过。

    【属性】name：检查的是哪个函数；status："pass" / "fail" / "todo" / "error"；ok：是否通过；
        hint：提示（通过时是空字符串）；message：打印出来的全文
    【Python 小知识】定义了 __bool__ 的对象可以直接写进 if 和 assert；定义 _ipython_display_ 并且
        什么都不做，Jupyter 就不会把它当作单元格的结果再显示一遍。
    """

    def __init__(self, name, status, hint="", message=""):
        if status not in STATUSES:
            raise ValueError(f"status 必须是 {'、'.join(STATUSES)} 之一，收到 {status!r}")
        self.name, self.status, self.hint, self.message = name, status, hint, message

    @property
    def ok(self):
        """是否通过。"""
        return self.status == "pass"

    def __bool__(self):
        return self.ok

    def __repr__(self):
        return f"CheckResult(name={self.name!r}, status={self.status!r}, hint={self.hint!r})"

    def _ipython_display_(self):
        """已经打印过了，Jupyter 里不再显示。"""


# =============================================================================
# 共用的小工具
# =============================================================================
class Todo(Exception):
    """同学的函数还在 raise NotImplementedError()。"""


class Crash(Exception):
    """同学的函数出错了（异常之外的任何错误）。line：同学的代码里出错的那一行的说明（找不到时是空字符串）。"""

    def __init__(self, message, line=""):
        super().__init__(message)
        self.line = line


_LIBRARY_DIRS = tuple(str(Path(p).resolve()) for p in
                      {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], sysconfig.get_paths()["stdlib"],
                       Path(__file__).resolve().parent.parent})
"""不是同学写的代码所在的文件夹：site-packages（numpy……）、标准库、toyllm 包本身。"""


def student_line(error):
    """
    异常的回溯里最深的、同学自己写的那一帧（不在 numpy、标准库、toyllm 里）：返回一行说明，
    例如 "出错的那一行（group_advantages 里，单元格第 5 行）：return (r - m) / s"；找不到时返回 ""。

    【思路】traceback.extract_tb 列出每一帧的文件、行号、函数名和那一行的代码；notebook 单元格里定义的函数，
        文件名是 IPython 给单元格起的临时名字（…/ipykernel_…/….py 或 <ipython-input-…>），代码行由 linecache 取出。
    """
    import traceback

    mine = [f for f in traceback.extract_tb(error.__traceback__)
            if f.filename != __file__ and not str(Path(f.filename).resolve()).startswith(_LIBRARY_DIRS)]
    if not mine or not (mine[-1].line or "").strip():
        return ""
    frame = mine[-1]
    cell = "ipykernel_" in frame.filename or frame.filename.startswith("<ipython-input")
    where = f"单元格第 {frame.lineno} 行" if cell else f"{Path(frame.filename).name} 第 {frame.lineno} 行"
    return f"出错的那一行（{frame.name} 里，{where}）：{frame.line.strip()}"


CALL_SECONDS = 10
"""检查里每次调用同学的函数最多运行几秒（死循环时打印「超时」，这个检查不通过，notebook 接着往下运行）。"""


class TimedOut(BaseException):
    """同学的函数运行超过 CALL_SECONDS 秒（BaseException：同学写的 except Exception 接不住它）。"""


class UsedReference(Exception):
    """同学的函数就是、或者调用了包里同一个任务的实现。"""


def _alarm(signum, frame):
    raise TimedOut()


def _start_timer(seconds):
    """
    开始给同学的函数计时：seconds 秒后在主线程里抛出 TimedOut。返回停表的函数（无论有没有超时，都要调用它一次）。

    【思路】Linux 和 macOS 用 SIGALRM 闹钟：到点时操作系统发信号，_alarm 抛出 TimedOut。
        Windows 没有 SIGALRM，改用 _start_interrupt_timer。不在主线程时两种都用不了（信号只送到主线程），不计时。
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    if not hasattr(signal, "SIGALRM"):
        return _start_interrupt_timer(seconds)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)

    def stop():
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return stop


def _start_interrupt_timer(seconds):
    """
    没有 SIGALRM 时（Windows）的计时：一个 threading.Timer 到点后调用 _thread.interrupt_main()，
    在主线程里产生一次和 Ctrl+C 一样的 SIGINT；计时期间 SIGINT 由 on_interrupt 处理。

    【思路】on_interrupt 只在计时器真的到点（fired）时抛出 TimedOut（BaseException，同学的 except Exception 接不住），
        并且马上换回原来的 SIGINT 处理函数；计时器没到点时，那是同学按了 Ctrl+C（或 Jupyter 的中断按钮），
        照原来的处理函数办（通常是抛出 KeyboardInterrupt），不会被吞掉。
    【边界】计时器恰好在同学的函数返回时到点：stop 先在锁里记下 done，此后到点不再发中断；
        已经发出、还没送到的那一次，送到 on_interrupt 时因为 done 被忽略（stop 换回原来的处理函数之前就会送到）。
    【Python 小知识】threading.Timer(秒, 函数) 在另一个线程里等到点再调用函数，cancel() 取消；
        _thread.interrupt_main() 在主线程里模拟一次 SIGINT，主线程执行下一段 Python 代码时处理它。
    """
    old = signal.getsignal(signal.SIGINT)
    old = signal.default_int_handler if old is None else old
    lock, state = threading.Lock(), {"fired": False, "done": False}

    def fire():
        with lock:
            if not state["done"]:
                state["fired"] = True
                _thread.interrupt_main()

    def on_interrupt(signum, frame):
        if not state["fired"]:                              # 真的 Ctrl+C
            if callable(old):
                return old(signum, frame)
            if old == signal.SIG_IGN:
                return None
            raise KeyboardInterrupt
        if state["done"]:                                   # 停表以后才送到的那一次：不算数
            return None
        state["done"] = True
        signal.signal(signal.SIGINT, old)
        raise TimedOut()

    signal.signal(signal.SIGINT, on_interrupt)
    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()

    def stop():
        with lock:
            state["done"] = True
        timer.cancel()
        for _ in range(2):                                  # 让已经发出的那一次在换回之前送到 on_interrupt
            pass
        if signal.getsignal(signal.SIGINT) is on_interrupt:
            signal.signal(signal.SIGINT, old)
    return stop


def _traced(fn, args, kwargs, references):
    """运行 fn：references 是 {(文件, 函数名): 名字}，其中任何一个被执行都记下来（sys.setprofile 看每一次 Python 调用）。"""
    seen = []

    def hook(frame, event, arg):
        if event == "call" and (frame.f_code.co_filename, frame.f_code.co_name) in references:
            seen.append(references[frame.f_code.co_filename, frame.f_code.co_name])
    old = sys.getprofile()
    sys.setprofile(hook)
    try:
        out = fn(*args, **kwargs)
    finally:
        changed = sys.getprofile() is not hook
        sys.setprofile(old)
    if seen or changed:
        raise UsedReference(seen[0] if seen else "（你的函数关掉了检查用的 sys.setprofile）")
    return out


_ACTIVE = {"references": {}}
"""正在进行的检查里不许同学的函数调用的实现（run 设置，call 使用）。"""


def call(fn, *args, references=None, **kwargs):
    """
    调用同学的函数：NotImplementedError → Todo；超时（CALL_SECONDS 秒）→ TimedOut；
    执行了 references 里的包内实现 → UsedReference；其他异常 → Crash；不让 numpy 的警告刷屏。

    【参数】references：{(文件, 函数名): 打印用的名字}（见 reference_codes），默认用 run 给这次检查设的
    """
    stop = _start_timer(CALL_SECONDS)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return _traced(fn, args, kwargs, _ACTIVE["references"] if references is None else references)
    except NotImplementedError:
        raise Todo() from None
    except (UsedReference, TimedOut, Crash):                # Crash：评分程序传回的、沙盒里同学的函数出的错
        raise
    except Exception as e:                                  # noqa: BLE001  同学的代码可能抛任何错误
        raise Crash(f"{type(e).__name__}: {e}", student_line(e)) from None
    finally:
        try:
            stop()
        except TimedOut:                                    # 超时恰好在停表时送到（至多一次）：停完表再报超时
            stop()
            raise


def reference_codes(*functions):
    """包里的参考实现 → call 的 references：{(源文件, 函数名): "模块.函数名"}（装饰过的函数沿 __wrapped__ 找到本体）。"""
    out = {}
    for f in functions:
        for g in (f, getattr(f, "__wrapped__", None)):
            if g is not None and hasattr(g, "__code__"):
                out[g.__code__.co_filename, g.__code__.co_name] = f"{f.__module__}.{f.__name__}"
    return out


def finish(name, status, lines, hint=""):
    """打印一次检查的结论（✓ / ✗ / …、提示、细节），返回 CheckResult。"""
    mark = {"pass": "✓", "fail": "✗", "todo": "…", "error": "✗"}[status]
    body = [f"{mark} {name}：" + lines[0]] + (["  提示：" + hint] if hint else []) + ["  " + x for x in lines[1:]]
    message = "\n".join(body)
    print(message)
    return CheckResult(name, status, hint, message)


def passed(name, detail):
    """通过：打印 ✓。"""
    return finish(name, "pass", [detail])


def failed(name, hint, details=()):
    """结果不对：打印 ✗、提示和细节。"""
    return finish(name, "fail", ["结果不对。", *details], hint)


def todo(name):
    """同学的函数还在 raise NotImplementedError()。"""
    return finish(name, "todo", ["还没有实现。把 raise NotImplementedError() 换成你的代码，再运行上面定义函数的单元格和这个单元格。"])


BROADCAST_HINT = ("两个数组的形状对不上（numpy 的「广播」失败了）：错误信息里的 shapes 是参与运算的两个数组的形状。"
                  "在下面那一行前面 print 一下它们的 .shape，看哪一个和你想的不一样（例如少了 reshape，或者按组算的结果"
                  "是 (组数,)，要和 (组数, G) 的数组运算，得先变成 (组数, 1)）。")
"""广播错误（operands could not be broadcast together）的提示。"""


def crashed(name, err, hint="", line=""):
    """同学的函数出错了：打印错误、提示，和同学的代码里出错的那一行（line，见 student_line）。"""
    if not hint:
        hint = BROADCAST_HINT if "could not be broadcast" in err else (
            "看一下下面出错的那一行和错误信息里提到的变量；可以先用一个小例子单独调用你的函数试试。" if line else
            "看一下错误信息提到的变量；可以先用一个小例子单独调用你的函数试试。")
    return finish(name, "error", [f"你的函数出错了：{err}"] + ([line] if line else []), hint)


def used_reference(name, what):
    """同学的函数就是、或者调用了包里同一个任务的实现：不通过，说明原因。"""
    return finish(name, "fail", [f"你的函数调用了包里的 {what}，或者它就是包里的实现。"],
                  "这个任务要你自己写出来：包里的实现可以在作业的其他单元格里用来对照，但不能在要交的函数里调用"
                  "（自动评分时这一部分记 0 分）。")


def guard(name, body):
    """运行一个检查的主体；无论出什么事都不抛出异常。"""
    try:
        return body()
    except Todo:
        return todo(name)
    except Crash as e:
        return crashed(name, str(e), line=e.line)
    except UsedReference as e:
        return used_reference(name, str(e))
    except TimedOut:                                        # 整个检查到此为止，不再用别的输入调用它
        return crashed(name, f"超时：运行了 {CALL_SECONDS} 秒还没有结束，检查把它停下了。",
                       "是不是有死循环（while 的条件永远成立、循环变量没有更新）？自动评分时这一部分记 0 分。")
    except Exception as e:                                  # noqa: BLE001  检查本身出错也不能让 notebook 停下
        return finish(name, "error", [f"检查时出了意外的错误：{type(e).__name__}: {e}"],
                      "请确认传进来的是函数本身（不要加括号），参数的个数和顺序和题目说的一样。")


def run(fn, default_name, body, references=()):
    """
    检查 fn 是函数、不是包里的实现，然后在 guard 里运行 body(名字, fn)。名字是 fn.__name__（没有时用 default_name）。

    【参数】references：包里同一个任务的实现（函数）；fn 就是其中之一、或者 fn 的代码和它们的代码相同，都判为不通过
        （fn 在检查里运行时调用了它们，由 call 发现）
    """
    name = getattr(fn, "__name__", default_name)
    if not callable(fn):
        return finish(name, "error", [f"需要一个函数，收到的是 {type(fn).__name__}。"],
                      f"把函数本身传进来：check_xxx({name})，不要写成 check_xxx({name}(...))。")
    refs = reference_codes(*references)
    code = getattr(getattr(fn, "func", fn), "__code__", None)          # functools.partial 看它包着的函数
    if code is not None and (code.co_filename, code.co_name) in refs:
        return used_reference(name, refs[code.co_filename, code.co_name])
    _ACTIVE["references"] = refs
    try:
        return guard(name, lambda: body(name, fn))
    finally:
        _ACTIVE["references"] = {}


def as_array(value):
    """把同学返回的东西变成 float 数组；不是数组的返回 None。"""
    if value is None:
        return None
    try:
        return np.array(value, dtype=float)
    except (TypeError, ValueError):
        return None


def fmt(x, digits=4):
    """数或数组 → 打印用的短文字。"""
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:
        return f"{float(x):.6g}"
    return np.array2string(x, precision=digits, suppress_small=True, max_line_width=110)


def close(a, b, rtol=1e-7, atol=1e-9):
    """a、b 形状相同、a 全是有限的数、并且在容差内相等。"""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all(np.isfinite(a))) and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def all_close(got, want, **tol):
    """got 的每一项都不是 None，并且和 want 的对应项 close。"""
    return all(g is not None and close(g, w, **tol) for g, w in zip(got, want))


def onehot(n, a):
    """长度 n、第 a 个是 1 的向量。"""
    e = np.zeros(n)
    e[a] = 1.0
    return e
