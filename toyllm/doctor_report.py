"""
doctor 的结果：一项检查的 CheckResult（✓ / ✗、说明、"怎么办"）和全部检查的汇总 DoctorReport。

【思路】检查本身（各个 check_* 函数）在 doctor.py；这里只有结果长什么样、怎么打印。doctor 转出这两个名字。
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class CheckResult:
    """
    一项检查的结果。

    【属性】name：检查的是什么（中文）；ok：通过了没有；detail：版本、路径或问题的说明；
        required：必需（True）还是可选（False）；hint：没通过时"怎么办"（通过时为空字符串）
    【例子】CheckResult("numpy", True, "2.4.6（要求 >=1.24）", True)
    """
    name: str
    ok: bool
    detail: str
    required: bool = True
    hint: str = ""

    def lines(self):
        """打印用的一到两行文字。"""
        mark = "✓" if self.ok else "✗"
        tag = "必需" if self.required else "可选"
        out = [f"{mark} [{tag}] {self.name}：{self.detail}"]
        if not self.ok and self.hint:
            out.append(f"    怎么办：{self.hint}")
        return out


class DoctorReport(tuple):
    """
    全部检查的结果（run_doctor 的返回值）：CheckResult 的元组，外加结论。

    【属性】ok：必需的项是否全部通过；failed：没通过的项（含可选的）；results：全部结果（就是它自己）
    【Python 小知识】继承 tuple，所以 for r in report、len(report)、report[0] 都能直接用；
        __repr__ 决定它在 notebook 里作为单元格最后一个值时显示成什么。
    """

    @property
    def results(self):
        return tuple(self)

    @property
    def ok(self):
        return all(r.ok for r in self if r.required)

    @property
    def failed(self):
        return tuple(r for r in self if not r.ok)

    def summary(self):
        """一行结论。"""
        required = [r for r in self if r.required]
        bad_req = [r for r in required if not r.ok]
        bad_opt = [r for r in self if not r.required and not r.ok]
        if bad_req:
            text = f"有 {len(bad_req)} 项必需的检查没通过 ✗（见上面的“怎么办”）"
        else:
            text = f"必需的 {len(required)} 项全部通过 ✓"
        if bad_opt:
            text += f"；{len(bad_opt)} 项可选的没通过（只影响跑测试，或 notebook 08 的数字）"
        return text

    def __repr__(self):
        return f"<DoctorReport：{self.summary()}>"


__all__ = ["CheckResult", "DoctorReport"]
