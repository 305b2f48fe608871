"""
维护者用：量一量默认设置下各作业面板重画一次（重算 + 画图 + 转 PNG）要多久（秒）。make bench 运行它。

【用法】python tools/bench_widgets.py [--repeats 3]
"""

import argparse

from toyllm.dashboards import (Dashboard, run_gradient_dashboard_logic, run_grpo_dashboard_logic,
                            run_passk_dashboard_logic)


def benchmark(repeats=3):
    """
    量一量默认设置下各作业面板重画一次（重算 + 画图 + 转 PNG）要多久（秒）。打印并返回 {面板名: 最快的一次}。

    【思路】和面板里的一样：Dashboard 复用同一张图，第一次画（要新建图）单独打印，之后的重画取 repeats 次里最快的。
        速度目标（每个作业面板重画在 0.3 秒以内）由这个函数打印出来看，不写成计时的单元测试（机器忙时会误报）。
        不需要 ipywidgets（直接调用 Dashboard.redraw，也就是控件变化时 interactive_output 调用的那一步）。
    【例子】python tools/bench_widgets.py
    """
    jobs = {"作业一 · 梯度面板": run_gradient_dashboard_logic, "作业二 · pass@k 面板": run_passk_dashboard_logic,
            "作业三 · GRPO 面板": run_grpo_dashboard_logic}
    out = {}
    for name, job in jobs.items():
        dash = Dashboard(lambda axes, job=job: (*job(axes=axes), ""))
        dash.redraw()
        first = dash.seconds
        times = []
        for _ in range(repeats):
            dash.redraw()
            if dash.error:
                raise RuntimeError(f"{name} 重画出错：{dash.error}")
            times.append(dash.seconds)
        out[name] = min(times)
        print(f"{name}：默认设置重画 {out[name]:.3f} 秒（{repeats} 次里最快的一次；第一次画要新建图：{first:.3f} 秒）")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python tools/bench_widgets.py", description="作业面板重画一次的用时")
    parser.add_argument("--repeats", type=int, default=3, help="重画几次，取最快的（默认 3）")
    benchmark(max(1, parser.parse_args().repeats))
