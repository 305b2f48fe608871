"""
自动评分：分数由这里（老师的进程）算出，同学的代码只在沙盒里运行（老师的工具，不在学生的包里）。

【思路】课程的 nbgrader_config.py 把 nbgrader autograde 的两步换成这里的：
    1. SandboxExecute：照常执行整本 notebook（输出给老师和同学看），但内核在沙盒里（tools/sandbox.py）：
       只读的文件系统、看不见别人的作业和 gradebook、内存和 CPU 有上限。单元格的时间上限由老师的 notebook 决定：
       只有老师版里带 "train" 标签、代码没改过的单元格（按单元格 id）用长的上限，同学自己加的标签不算。
       内核死了（exit()、os._exit）或者超时后停不下来（接住了中断的死循环）：后面的单元格不再运行，原因写进输出；
       分数不受影响（它们本来就不从内核来），这份作业照样有评分结果和反馈。
    2. Verdicts：每个自动评分的单元格（TASKS 里的 grade_id），不看内核的输出，而是：
       · 开一个新的沙盒进程（tools/grading_worker.py，连网络也没有），在里面运行老师的导入单元格和同学的答案单元格；
       · 用包里的检查（toyllm.homework.hwN.check_xxx）在这个进程里检查：检查把输入（每次评分新抽一些）传给沙盒里
         同学的函数（RemoteFunction），拿回结果（JSON），和这个进程里算出的正确答案比较、找常见错误；
       · 检查的中文结论写进这个单元格的输出；没通过时再加一个 error 输出 —— nbgrader 的 SaveAutoGrades 看到 error
         就记 0 分。内核里打印的东西只留作显示（stderr 改成 stdout：nbgrader 会把 stderr 当成错误）。
    同学在自己的内核里改 numpy、builtins、sys.modules、import 的路径、包的文件……都改不到这个进程。
【规则】TASKS 的 toyllm=False：这个任务的函数只能用 numpy 和标准库（沙盒里 import toyllm 失败）；toyllm=True：
    只能直接调用 allowed 里的 toyllm 函数（模型的方法都可以用），调用别的 toyllm 函数这一部分记 0 分。
"""

import contextlib
import io
import json
import os
import select
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from nbformat import NotebookNode
from nbgrader.preprocessors import ClearHiddenTests, Execute, NbGraderPreprocessor, OverwriteCells
from traitlets import Integer, Unicode

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_wire as wire  # noqa: E402
import sandbox  # noqa: E402


@dataclass(frozen=True)
class Task:
    """一个自动评分的任务：答案单元格 / 函数名、包里的检查、能不能用 toyllm、许用的 toyllm 函数。"""
    function: str
    check: str
    toyllm: bool = False
    allowed: tuple = ()


TASKS = {
    "hw1": {"check_grad_log_softmax": Task("grad_log_softmax", "check_grad_log_softmax"),
            "check_solution_grad": Task("solution_grad", "check_solution_grad", True, (
                "toyllm.trainable.step_records", "toyllm.trainable.context_key", "toyllm.toy_llm.context_index",
                "toyllm.toy_llm.softmax", "toyllm.logits.softmax", "toyllm.policy.softmax_rows",
                "toyllm.trainable.probs_for"))},
    "hw2": {"check_pass_at_k_unbiased": Task("pass_at_k_unbiased", "check_pass_at_k"),
            "check_rejection_sampling_round": Task("rejection_sampling_round", "check_rejection_sampling_round", True, (
                "toyllm.sampler.sample_rollouts", "toyllm.imitation.rollouts_to_data", "toyllm.trainable.sft",
                "toyllm.imitation.sft_rollouts", "toyllm.imitation.distinct_mask", "toyllm.trainable.log_likelihood"))},
    "hw3": {"check_group_advantages": Task("group_advantages", "check_group_advantages"),
            "check_clipped_surrogate": Task("clipped_surrogate", "check_clipped_surrogate")},
}
"""{作业: {评分单元格的 grade_id: Task}}，按 notebook 里的顺序。"""


def _teacher(course, assignment):
    """老师版 notebook（source/<作业>/*.ipynb，只有一本）。"""
    import nbformat

    paths = sorted((Path(course) / "source" / assignment).glob("*.ipynb"))
    return nbformat.read(paths[0], as_version=4)


def _nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def train_cells(course):
    """{(单元格 id, 代码)}：老师版里带 "train" 标签的单元格（它们用长的时间上限）。"""
    import nbformat

    return {(c.get("id"), c.source) for path in Path(course).glob("source/*/*.ipynb")
            for c in nbformat.read(path, as_version=4).cells if "train" in c.get("metadata", {}).get("tags", [])}


def kernel_manager(course):
    """
    一个 AsyncKernelManager 的子类：内核的命令包进沙盒（课程文件夹藏起来，只放回这份作业的文件夹），没有网络。

    【思路】内核和 nbgrader 之间用 unix 套接字（transport="ipc"，放在一个临时文件夹里，沙盒里可写）而不是本机的 TCP 端口，
        所以沙盒可以连网络一起拿掉（--unshare-net），ipykernel 也不再警告 TCP 没有加密。
    """
    from jupyter_client.manager import AsyncKernelManager

    class Sandboxed(AsyncKernelManager):
        def __init__(self, **kw):
            super().__init__(**kw)
            self._sockets = tempfile.TemporaryDirectory(prefix="toyllm-kernel-")
            self.transport, self.ip = "ipc", os.path.join(self._sockets.name, "kernel")

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            cwd = kw.get("cwd") or os.getcwd()
            kernel_cmd = sandbox.wrap(kernel_cmd, cwd, hide=[course], show=[os.path.dirname(self.connection_file)],
                                      writable=[self._sockets.name], net=False)
            return await super()._async_launch_kernel(kernel_cmd, **kw)
    return Sandboxed


def _error(ename, evalue):
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def _stdout(text):
    return NotebookNode(output_type="stream", name="stdout", text=text)


class SandboxExecute(Execute):
    """nbgrader 的 Execute，内核在沙盒里；时间上限按老师版的单元格 id；内核死了或停不下来时不再往下运行。"""

    course = Unicode("", help="课程文件夹（nbgrader_config.py 所在的文件夹）").tag(config=True)
    ordinary_seconds = Integer(60, help="普通单元格的时间上限（秒）").tag(config=True)
    train_seconds = Integer(300, help="老师版里带 train 标签的单元格的时间上限（秒）").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        kind, why = sandbox.isolation()
        if kind is None:
            raise RuntimeError("不评分：" + why)
        self.kernel_manager_class = kernel_manager(self.course)
        self._train = train_cells(self.course)
        self._stopped = None
        self.timeout_func = lambda cell: (self.train_seconds if (cell.get("id"), cell.source) in self._train
                                          else self.ordinary_seconds)
        nb, resources = super().preprocess(nb, resources, km)
        resources.setdefault("toyllm_grading", {})["stopped"] = self._stopped
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        if self._stopped is not None:
            return cell, resources
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._stop(cell, index, "内核退出了（exit()、os._exit、内存用完……）")
            return cell, resources
        except CellTimeoutError:
            self._kill(cell, index)
            return cell, resources
        if any(o.output_type == "error" and o.get("ename") == "CellTimeoutError" for o in cell.get("outputs", [])):
            timeout, self.timeout = self.timeout, 10             # 中断以后 10 秒内应该能回答 kernel_info
            try:
                self.wait_for_reply(self.kc.kernel_info())
            except Exception:                                    # noqa: BLE001  内核忙着、不回答：结束它
                self._kill(cell, index)
            finally:
                self.timeout = timeout
        return cell, resources

    def _kill(self, cell, index):
        self.km.shutdown_kernel(now=True)
        self._stop(cell, index, "超时以后内核停不下来（是不是接住了中断、还在循环？），评分程序结束了它")

    def _stop(self, cell, index, why):
        self._stopped = {"cell": index, "why": why}
        cell.setdefault("outputs", []).append(_error("评分", f"{why}：后面的单元格没有运行"))


class RestoreHiddenTests(OverwriteCells):
    """
    nbgrader 的 OverwriteCells，只是放回隐藏测试时不再警告。

    【思路】学生版的评分单元格没有隐藏测试，OverwriteCells 放回去时每个评分单元格都警告一次「checksum has changed」，
        同学真的改了只读单元格时的同一句警告就淹没在里面了。这里先看：去掉隐藏测试以后和老师版一样的，先放回老师版的代码，
        于是只剩真的改动才警告。
    """

    def preprocess_cell(self, cell, resources, cell_index):
        from nbgrader.api import MissingEntry

        info = _nbgrader(cell)
        if cell.cell_type == "code" and info.get("grade") and info.get("grade_id"):
            try:
                source = self.gradebook.find_source_cell(info["grade_id"], self.notebook_id, self.assignment_id).source
            except MissingEntry:
                source = None
            if source is not None:
                released = NotebookNode(cell_type="code", source=source, metadata={})
                ClearHiddenTests()._remove_hidden_test_region(released)
                if released.source == cell.source:
                    cell.source = source
        return super().preprocess_cell(cell, resources, cell_index)


class RemoteFunction:
    """沙盒里同学的函数在这个进程里的替身：调用它 = 把参数传过去、等结果传回来。"""

    def __init__(self, worker, name, seconds):
        self.worker, self.__name__, self.seconds = worker, name, seconds

    def __call__(self, *args, **kwargs):
        from toyllm.homework.framework import Crash, TimedOut, UsedReference

        reply = self.worker.ask({"args": wire.encode(list(args)), "kwargs": {k: wire.encode(v) for k, v in kwargs.items()}},
                                self.seconds + 5)
        if reply is None:
            raise TimedOut()
        if "ok" in reply:
            for arg, after in zip(args, reply["after"]):
                if hasattr(arg, "params") and isinstance(after, dict) and "__model__" in after:
                    arg.params[...] = wire.decode(after["__model__"]["params"])   # 同学的函数改了传进去的模型
            return wire.decode(reply["ok"], args)
        kind = reply["error"]
        if kind == "todo":
            raise NotImplementedError()
        if kind == "timeout":
            raise TimedOut()
        if kind == "used_reference":
            raise UsedReference(reply["message"] + "（这个任务不许直接调用它）")
        if kind == "dead":
            raise Crash("运行你的函数的进程退出了（os._exit、内存用完……）")
        raise Crash(reply["message"], reply.get("line", ""))


class Worker:
    """一个沙盒里的 tools/grading_worker.py 进程。"""

    def __init__(self, course, cells, task, cell_seconds, call_seconds):
        self.scratch = tempfile.TemporaryDirectory(prefix="toyllm-grading-")
        hide = [course] + ([] if task.toyllm else [str(Path(_toyllm_dir()))])
        cmd = sandbox.wrap([sys.executable, "-I", str(Path(__file__).with_name("grading_worker.py"))],
                           self.scratch.name, hide=hide, net=False)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, encoding="utf-8", bufsize=1)
        setup = {"cells": cells, "function": task.function, "toyllm": task.toyllm, "allowed": list(task.allowed),
                 "cell_seconds": cell_seconds, "call_seconds": call_seconds}
        self.ready = self.ask(setup, cell_seconds * (len(cells) + 1) + 30)

    def ask(self, message, seconds):
        """发一条消息、等一行回答（最多 seconds 秒）；进程没了时返回 {"error": "dead"}，超时返回 None（并结束进程）。"""
        try:
            self.proc.stdin.write(wire.dumps(message))
            self.proc.stdin.flush()
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                if select.select([self.proc.stdout], [], [], 0.5)[0]:
                    line = self.proc.stdout.readline()
                    return json.loads(line) if line else {"error": "dead"}
                if self.proc.poll() is not None:
                    return {"error": "dead"}
        except (BrokenPipeError, json.JSONDecodeError):
            return {"error": "dead"}
        except BaseException:
            self.close()
            raise
        self.close()
        return None

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.scratch.cleanup()


def _toyllm_dir():
    import toyllm

    return Path(toyllm.__file__).resolve().parent


def cells_for(nb, teacher, assignment, grade_id):
    """沙盒里要运行的单元格：老师版的导入单元格（*-setup），和同学到这个任务为止的各个答案单元格。"""
    order = list(TASKS[assignment])
    wanted = {TASKS[assignment][g].function for g in order[:order.index(grade_id) + 1]}
    task = TASKS[assignment][grade_id]
    setup = [("导入", c.source) for c in teacher.cells if _nbgrader(c).get("grade_id", "").endswith("-setup")]
    prelude = setup if task.toyllm else [("导入", "import math\nimport random\n\nimport numpy as np\n")]
    answers = [(_nbgrader(c)["grade_id"], c.source) for c in nb.cells
               if c.cell_type == "code" and _nbgrader(c).get("solution") and _nbgrader(c).get("grade_id") in wanted]
    return prelude + answers


def verdict(nb, teacher, course, assignment, grade_id, seed, cell_seconds=60, call_seconds=10):
    """一个任务的结论：(通过了吗, 打印的中文说明)。"""
    import importlib

    task = TASKS[assignment][grade_id]
    worker = Worker(course, cells_for(nb, teacher, assignment, grade_id), task, cell_seconds, call_seconds)
    try:
        ready = worker.ready
        if ready is None or ready.get("error") == "dead" or not ready.get("ready"):
            why = ("运行答案单元格的进程超时或者退出了" if ready is None or "error" in ready else
                   f"没有找到函数 {task.function}")
            problems = "；".join(f"{label}：{p}" for label, p in (ready or {}).get("problems", []))
            return False, f"✗ {task.function}：{why}{'（' + problems + '）' if problems else ''}。"
        timeouts = [p for label, p in ready["problems"] if label == task.function and p.startswith("超时")]
        if timeouts:
            return False, f"✗ {task.function}：答案单元格{timeouts[0]}，这一部分记 0 分。"
        check = getattr(importlib.import_module(f"toyllm.homework.{assignment}"), task.check)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            result = check(RemoteFunction(worker, task.function, call_seconds), rng=np.random.default_rng(seed))
        text = out.getvalue()
        if not task.toyllm and ("NameError" in text or "toyllm" in text) and result.status == "error":
            text += "  （这个任务只能用 numpy 和 Python 的标准库：评分时没有 toyllm，也没有导入单元格里别的名字。）\n"
        return bool(result.ok) and result.status == "pass", text
    finally:
        worker.close()


class Verdicts(NbGraderPreprocessor):
    """把每个自动评分单元格的输出换成评分程序的结论（见文件开头的说明）。"""

    course = Unicode("", help="课程文件夹（nbgrader_config.py 所在的文件夹）").tag(config=True)
    cell_seconds = Integer(60, help="沙盒里每个答案单元格的时间上限（秒）").tag(config=True)
    call_seconds = Integer(10, help="沙盒里每次调用同学的函数的时间上限（秒）").tag(config=True)

    def preprocess(self, nb, resources):
        assignment = resources["nbgrader"]["assignment"]
        teacher = _teacher(self.course, assignment)
        stopped = resources.get("toyllm_grading", {}).get("stopped")
        seed = secrets.randbits(64)
        self.log.info("评分 %s：这次新抽的输入用种子 %d", assignment, seed)
        for index, cell in enumerate(nb.cells):
            info = _nbgrader(cell)
            if not (cell.cell_type == "code" and info.get("grade") and not info.get("solution")):
                continue
            grade_id = info.get("grade_id")
            if grade_id not in TASKS.get(assignment, {}):
                ok, text = False, f"✗ 评分程序不认识这个评分单元格 {grade_id!r}（tools/grader.py 的 TASKS）。"
            else:
                ok, text = verdict(nb, teacher, self.course, assignment, grade_id, seed, self.cell_seconds,
                                   self.call_seconds)
                if stopped is not None and index > stopped["cell"]:
                    text += (f"\n（{stopped['why']}：内核在第 {stopped['cell']} 个单元格就停了，这个单元格没有内核的输出；"
                             "这一部分的分数照常由评分程序在另一个进程里算出。）")
            # 内核打印的只留作显示：和评分程序的结论一样的不再重复；stderr 改成 stdout（nbgrader 把 stderr 当作错误）
            kept = [_stdout(o.text) if o.output_type == "stream" else o for o in cell.get("outputs", [])
                    if o.output_type == "display_data" or (o.output_type == "stream" and o.text.strip() != text.strip())]
            cell.outputs = kept + [_stdout("【评分程序】" + text.strip() + "\n")]
            if not ok:
                cell.outputs.append(_error("评分", "这一部分记 0 分（原因见上一行）"))
        return nb, resources
