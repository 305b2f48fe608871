"""
doctor 要查的依赖包（PACKAGES）和结果：一项检查的 CheckResult（✓ / ✗、说明、"怎么办"）、全部检查的汇总 DoctorReport。

【思路】检查本身（各个 check_* 函数）在 doctor.py；这里只有要查哪些包、结果长什么样、怎么打印。doctor 转出这些名字。
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Package:
    """
    一个依赖包。

    【属性】dist：pip 里的名字；module：import 时的名字；spec：版本要求（和 pyproject.toml 一致，有测试检查）；
        purpose：用途（"运行" / "notebook" / "测试"）；required：是不是必需的
    """
    dist: str
    module: str
    spec: str
    purpose: str
    required: bool


PACKAGES = (
    Package("numpy", "numpy", ">=1.24", "运行", True),
    Package("matplotlib", "matplotlib", ">=3.7", "运行", True),
    Package("tqdm", "tqdm", ">=4.66", "运行", True),
    Package("packaging", "packaging", ">=23", "运行", True),
    Package("threadpoolctl", "threadpoolctl", ">=3.1", "运行", True),
    Package("safetensors", "safetensors", ">=0.4", "运行", True),
    Package("jupyterlab", "jupyterlab", ">=4.2,<5", "notebook", True),
    Package("ipywidgets", "ipywidgets", ">=8.1,<9", "notebook", True),
    Package("ipykernel", "ipykernel", ">=6.29", "notebook", True),
    Package("pytest", "pytest", ">=8", "测试", False),
    Package("nbval", "nbval", ">=0.11", "测试", False),
    Package("hypothesis", "hypothesis", ">=6.100", "测试", False),
    Package("playwright", "playwright", ">=1.45", "测试", False),
    Package("fonttools", "fontTools", ">=4.47", "测试", False),
    Package("pyyaml", "yaml", ">=6", "测试", False),
)
"""doctor 检查的依赖包：运行和 notebook 用的是必需的，只有跑测试才用的是可选的。"""


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
            text += f"；{len(bad_opt)} 项可选的没通过（只影响跑测试、评分，或 notebook 08 的数字）"
        return text

    def __repr__(self):
        return f"<DoctorReport：{self.summary()}>"


__all__ = ["PACKAGES", "CheckResult", "DoctorReport", "Package"]
