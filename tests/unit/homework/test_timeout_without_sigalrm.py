"""
没有 SIGALRM 的系统（Windows）上的检查（issue #38）：framework 看到的 signal 模块去掉了 SIGALRM 和 setitimer，
检查改用 threading.Timer + _thread.interrupt_main() 计时。对的函数通过；死循环在大约 CALL_SECONDS 秒后以「超时」停下，
同学的 except Exception 接不住；真的 Ctrl+C 照样是 KeyboardInterrupt；检查结束后 SIGINT 的处理函数换回原样，
之后也不会冒出迟到的中断。
"""

import _thread
import math
import signal
import threading
import time
import types

import pytest

from toyllm.homework import framework
from toyllm.homework.hw2 import check_pass_at_k


def pass_at_k(n, c, k):
    return 1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k)


@pytest.fixture
def no_sigalrm(monkeypatch):
    """framework 用的 signal 模块没有 SIGALRM（像 Windows 那样）；返回检查前的 SIGINT 处理函数。"""
    windows = types.ModuleType("signal")
    windows.__dict__.update({k: v for k, v in vars(signal).items() if k not in ("SIGALRM", "setitimer", "ITIMER_REAL")})
    monkeypatch.setattr(framework, "signal", windows)
    assert not hasattr(framework.signal, "SIGALRM")
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGALRM)
    yield before[0]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGALRM)) == before


def _no_late_interrupt(seconds):
    """在 seconds 秒里一直执行 Python 代码：如果有迟到的中断，这里会抛出 KeyboardInterrupt。"""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    assert not [t for t in threading.enumerate() if isinstance(t, threading.Timer) and t.is_alive()]


def test_a_right_function_passes(no_sigalrm, monkeypatch, capsys):
    monkeypatch.setattr(framework, "CALL_SECONDS", 0.3)
    assert check_pass_at_k(pass_at_k).status == "pass"
    assert signal.getsignal(signal.SIGINT) is no_sigalrm
    _no_late_interrupt(0.6)


def test_an_endless_loop_times_out_and_except_exception_does_not_swallow_it(no_sigalrm, monkeypatch, capsys):
    monkeypatch.setattr(framework, "CALL_SECONDS", 0.3)
    calls = []

    def stuck(n, c, k):
        calls.append(1)
        while True:
            try:
                while True:
                    pass
            except Exception:                      # noqa: BLE001  同学可能接住所有异常：超时照样停下
                pass
    start = time.monotonic()
    result = check_pass_at_k(stuck)
    elapsed = time.monotonic() - start
    assert result.status == "error" and "超时" in result.message and len(calls) == 1
    assert 0.3 <= elapsed < 2.0, elapsed
    assert signal.getsignal(signal.SIGINT) is no_sigalrm
    _no_late_interrupt(0.3)


def test_a_real_ctrl_c_is_not_swallowed(no_sigalrm, monkeypatch, capsys):
    """计时器还没到点时的中断（Ctrl+C、Jupyter 的中断按钮）照样停下检查，是 KeyboardInterrupt，不是「超时」。"""
    monkeypatch.setattr(framework, "CALL_SECONDS", 30)
    started = threading.Event()

    def busy(n, c, k):
        started.set()
        while True:
            pass
    presser = threading.Thread(target=lambda: started.wait(10) and (time.sleep(0.2), _thread.interrupt_main()))
    presser.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        check_pass_at_k(busy)
    presser.join()
    assert time.monotonic() - start < 10
    assert "超时" not in capsys.readouterr().out
    assert signal.getsignal(signal.SIGINT) is no_sigalrm


def test_timer_firing_as_the_function_returns_never_leaks_an_interrupt(no_sigalrm, monkeypatch):
    """函数运行的时间和时限差不多时，每一次要么正常返回，要么「超时」；不会在检查之外冒出 KeyboardInterrupt。"""
    monkeypatch.setattr(framework, "CALL_SECONDS", 0.02)

    def about_the_limit(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            pass
        return 1.0
    outcomes = []
    for i in range(60):                                     # 0.01 … 0.04 秒：时限两侧都有
        try:
            framework.call(about_the_limit, 0.01 + 0.0005 * i, references={})
            outcomes.append("returned")
        except framework.TimedOut:
            outcomes.append("timed out")
    _no_late_interrupt(0.1)
    assert set(outcomes) <= {"returned", "timed out"}


def test_outside_the_main_thread_there_is_no_timer(no_sigalrm, monkeypatch, capsys):
    """不在主线程（信号只送到主线程）：和以前一样不计时，检查照常运行，不动 SIGINT。"""
    monkeypatch.setattr(framework, "CALL_SECONDS", 0.3)
    results = []
    worker = threading.Thread(target=lambda: results.append(check_pass_at_k(pass_at_k).status))
    worker.start()
    worker.join()
    assert results == ["pass"]
