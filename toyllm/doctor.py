"""
环境自检：python -m toyllm doctor（也是 00_快速上手 的第一个单元格）。

【思路】同学的电脑各不相同，装环境时出的问题五花八门：Python 太老、少装了一个包、JupyterLab 用的内核
    不是装了 toyllm 的那个 Python、小部件（ipywidgets）显示不出来、图里的中文变成方框……
    doctor 把这些一项一项查一遍，每项打印一行：
        ✓ 没问题；✗ 有问题，下一行"怎么办"告诉你具体怎么修。
    每一项标明 [必需] 还是 [可选]（可选的只有跑测试才用到）。有必需的项没通过时，命令的退出码不为 0。

    每一项检查是一个小函数，返回一个 CheckResult；它、汇总的 DoctorReport 和要查的包 PACKAGES 在 doctor_report.py。
    CHECKS 是全部检查的列表。

【用法】
    python -m toyllm doctor                 # 命令行
    from toyllm.doctor import run_doctor    # notebook 里
    run_doctor()

【Python 小知识】importlib.metadata.version("numpy") 读的是"已安装的包"的版本信息，不需要真的 import 它，
    所以很快；importlib.util.find_spec("numpy") 只找模块在哪里，也不执行它。版本号的比较交给 packaging
    （pip 自己用的库）：Version("4.6.6") in SpecifierSet(">=4.2,<5")。
"""

import json
import os
import platform
import subprocess
import sys
import tempfile
import warnings
from importlib import metadata
from importlib import util as importlib_util

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .doctor_report import PACKAGES, CheckResult, DoctorReport, Package  # noqa: F401  (Package 也从这里转出)
from .isolation import grading_isolation

MIN_PYTHON = (3, 10)
KERNEL_NAME = "python3"
KERNEL_TIMEOUT = 60
FONT_SAMPLE = "中文字体测试：规模与强化学习"
WIDGETS_EXTENSION = "@jupyter-widgets/jupyterlab-manager"


# =============================================================================
# 小工具（测试可以 monkeypatch 它们来模拟各种问题）
# =============================================================================
def _version(dist):
    """已安装的包的版本；没装时返回 None。"""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _find_spec(module):
    try:
        return importlib_util.find_spec(module)
    except (ImportError, ValueError):
        return None


def _major(version):
    """版本号的大版本（"8.1.9" → 8）；看不懂时 None。"""
    try:
        return Version(str(version)).major
    except InvalidVersion:
        return None


def satisfies(version, spec):
    """
    版本号是否满足要求，例如 satisfies("4.6.6", ">=4.2,<5") → True；看不懂的版本号或要求返回 False。

    【思路】交给 packaging（PEP 440）。只比较"发行号"（4.2.0rc1 当作 4.2.0）：要求的版本的预发行版也算满足。
    """
    try:
        return SpecifierSet(str(spec)).contains(Version(str(version)).base_version)
    except (InvalidVersion, InvalidSpecifier):
        return False


def _in_conda():
    return os.path.isdir(os.path.join(sys.prefix, "conda-meta"))


def _install_hint(requirement, purpose="运行"):
    """
    缺了一个包时怎么办：make lab 只装 .[notebook]，测试的包（pytest、nbval……）要 make test 或 pip install -e ".[dev]"。

    【参数】requirement：例如 "pytest>=8"；purpose：Package.purpose（"运行" / "notebook" / "测试"）
    """
    if _in_conda():
        return f'conda install -c conda-forge "{requirement}"（或在仓库根目录运行 conda env update -f environment.yml）'
    if purpose == "测试":
        return (f'在仓库根目录运行 make test（会装好开发和测试的依赖 .[dev]；make lab 不装它们），或者手动安装：'
                f'"{sys.executable}" -m pip install -e ".[dev]"')
    return (f'在仓库根目录运行 make lab（会自动装好运行和 notebook 的依赖），或者手动安装：'
            f'"{sys.executable}" -m pip install "{requirement}"')


# =============================================================================
# 各项检查
# =============================================================================
def check_python(version_info=None):
    """Python 版本 ≥ 3.10。【参数】version_info：默认 sys.version_info（测试可以传别的值）"""
    v = tuple(version_info if version_info is not None else sys.version_info)[:3]
    text = ".".join(str(x) for x in v)
    need = ".".join(str(x) for x in MIN_PYTHON)
    if v[:2] >= MIN_PYTHON:
        return CheckResult("Python", True, f"{text}（要求 ≥ {need}）")
    return CheckResult("Python", False, f"{text} 太老了（要求 ≥ {need}）", True,
                       f"安装 Python ≥ {need}（例如 3.11），再用它重新创建虚拟环境：make clean-venv 然后 make lab "
                       "PYTHON=python3.11；conda 用户：conda env create -f environment.yml")


def check_package(package):
    """
    一个依赖包：装了没有、版本对不对、能不能找到模块。

    【参数】package：Package
    【返回】CheckResult
    【例子】check_package(PACKAGES[0]) → ✓ numpy 2.4.6（要求 >=1.24，运行时用）
    """
    requirement = f"{package.dist}{package.spec}"
    purpose = {"运行": "运行 toyllm 用", "notebook": "notebook 用", "测试": "跑测试用"}.get(package.purpose, package.purpose)
    version = _version(package.dist)
    if version is None:
        return CheckResult(package.dist, False, f"没有安装（{purpose}，要求 {package.spec}）", package.required,
                           _install_hint(requirement, package.purpose))
    if not satisfies(version, package.spec):
        return CheckResult(package.dist, False, f"{version} 版本不对（{purpose}，要求 {package.spec}）", package.required,
                           _install_hint(requirement, package.purpose))
    if _find_spec(package.module) is None:
        return CheckResult(package.dist, False, f"{version} 登记为已安装，但找不到模块 {package.module}（安装不完整）",
                           package.required, _install_hint(requirement, package.purpose) + "（可以先卸载再装）")
    return CheckResult(package.dist, True, f"{version}（{purpose}，要求 {package.spec}）", package.required)


def _package_checks():
    checks = []
    for package in (p for p in PACKAGES if p.required):
        def check(package=package):
            return check_package(package)
        check.__name__ = f"check_{package.dist}"
        check.__doc__ = f"依赖包 {package.dist}{package.spec}（必需）。"
        checks.append(check)
    return checks


def check_test_packages():
    """
    只跑测试才用的包（可选）合成一行：make lab 不装它们，学生看到一行 ✗（可选），而不是每个包一行。
    【返回】CheckResult：都装好了时 ✓；否则 detail 列出没装的和版本不对的，hint 说 make test 或 pip install -e ".[dev]"
    """
    tests = [p for p in PACKAGES if not p.required]
    bad = [(p, r) for p, r in ((p, check_package(p)) for p in tests) if not r.ok]
    name = "跑测试用的包"
    if not bad:
        return CheckResult(name, True, "、".join(p.dist for p in tests) + " 都装好了", False)
    missing = "、".join(p.dist for p, r in bad if r.detail.startswith("没有安装"))
    wrong = "；".join(f"{p.dist} {r.detail}" for p, r in bad if not r.detail.startswith("没有安装"))
    detail = "；".join(filter(None, [missing and f"没装 {missing}", wrong])) + "（学生用不到，只有跑测试才用）"
    return CheckResult(name, False, detail, False, _install_hint('" "'.join(f"{p.dist}{p.spec}" for p, _ in bad), "测试"))


def check_toyllm():
    """toyllm 本身：导入的是哪一份、装好的版本和导入的版本是否一致。"""
    from . import __version__
    here = os.path.dirname(os.path.abspath(__file__))
    installed = _version("toyllm")
    if installed is None:
        return CheckResult("toyllm", False, f"{__version__}（从 {here} 导入，但没有安装到这个 Python）", True,
                           f'在仓库根目录运行 make lab，或者 "{sys.executable}" -m pip install -e ".[dev]"')
    if installed != __version__:
        return CheckResult("toyllm", False, f"导入的是 {__version__}（{here}），但安装登记的是 {installed}：装的是旧版本",
                           True, f'在仓库根目录重新安装：make clean-venv && make lab，或者 "{sys.executable}" -m pip '
                                 'install -e ".[dev]"')
    return CheckResult("toyllm", True, f"{__version__}（{here}）")


def _kernel_command():
    """
    JupyterLab 打开 notebook 时用的 python3 内核：(命令行 list, kernel.json 所在的文件夹, 额外的环境变量 dict)。
    找不到时抛出 LookupError（中文说明）。
    """
    try:
        from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    except ImportError:
        raise LookupError("没有 jupyter_client（它随 jupyterlab 一起安装），无法查找内核") from None
    try:
        spec = KernelSpecManager().get_kernel_spec(KERNEL_NAME)
    except NoSuchKernel:
        raise LookupError(f"JupyterLab 找不到名为 {KERNEL_NAME} 的内核") from None
    argv = list(spec.argv)
    if not argv:
        raise LookupError(f"内核 {KERNEL_NAME} 的 kernel.json（{spec.resource_dir}）里没有命令行 argv")
    # 和 jupyter_client 启动内核时一样：写成 python / python3 / python3.x 的，用运行 Jupyter 的这个解释器
    if argv[0] in {"python", f"python{sys.version_info[0]}", "python%i.%i" % sys.version_info[:2]}:
        argv[0] = sys.executable
    return argv, spec.resource_dir, dict(spec.env or {})


def check_kernel(timeout=None):
    """
    notebook 的内核能不能 import toyllm。

    【思路】JupyterLab 运行 notebook 用的是"内核"（kernel），它可能是另一个 Python（例如系统自带的那个），
        那里没装 toyllm，notebook 第一行 import 就会失败。这里找到 JupyterLab 会用的 python3 内核
        （jupyter_client 的 KernelSpecManager），用它的解释器在一个空文件夹里运行 `import toyllm`。
    【参数】timeout：秒，默认 KERNEL_TIMEOUT
    """
    timeout = KERNEL_TIMEOUT if timeout is None else timeout
    name = "notebook 内核能导入 toyllm"
    fix = (f'让内核用装了 toyllm 的 Python：在仓库根目录运行 make lab；或者 "{sys.executable}" -m ipykernel install '
           f'--sys-prefix --name {KERNEL_NAME}，再重启 JupyterLab')
    try:
        argv, where, extra_env = _kernel_command()
    except LookupError as e:
        return CheckResult(name, False, str(e), True, fix)
    exe = argv[0]
    code = "import toyllm, sys; print(toyllm.__version__); print(toyllm.__file__)"
    with tempfile.TemporaryDirectory() as empty:          # 空文件夹：不会碰巧从当前目录导入源码
        try:
            proc = subprocess.run([exe, "-c", code], cwd=empty, env={**os.environ, **extra_env},
                                  capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=timeout)
        except subprocess.TimeoutExpired:
            return CheckResult(name, False, f"用内核的解释器 {exe} 导入 toyllm 超过 {timeout} 秒没有结束", True,
                               "再运行一次试试（第一次导入可能较慢）；仍然超时请检查这个 Python 能否正常启动")
        except OSError as e:                               # 解释器不存在、没有执行权限……
            why = {FileNotFoundError: "不存在", PermissionError: "不能运行（没有执行权限）"}.get(type(e), f"无法启动（{e}）")
            return CheckResult(name, False, f"内核 {KERNEL_NAME}（{where}）的解释器 {exe} {why}", True, fix)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["（没有输出）"])[-1]
        return CheckResult(name, False, f"内核 {KERNEL_NAME} 用的 {exe} 不能 import toyllm：{last}", True, fix)
    return CheckResult(name, True, f"内核 {KERNEL_NAME} → {exe}")


def _labextension_dirs():
    try:
        from jupyter_core.paths import jupyter_path
        return list(jupyter_path("labextensions"))
    except ImportError:
        return [os.path.join(sys.prefix, "share", "jupyter", "labextensions")]


def _find_labextension(name=WIDGETS_EXTENSION):
    """JupyterLab 会加载的那一份扩展（按 Jupyter 数据目录的顺序，第一个找到的）：(package.json 路径, 版本) 或 None。"""
    for folder in _labextension_dirs():
        path = os.path.join(folder, *name.split("/"), "package.json")
        if os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as f:
                    return path, str(json.load(f).get("version", "?"))
            except (OSError, ValueError):
                return path, "?"
    return None


def _required_spec(dist, dependency):
    """dist 的元数据里对 dependency 的版本要求（例如 ipywidgets 对 jupyterlab_widgets：'~=3.0.17'）；没有时 None。"""
    try:
        requires = metadata.requires(dist) or []
    except metadata.PackageNotFoundError:
        return None
    for line in requires:
        req = Requirement(line)
        if req.marker is None and canonicalize_name(req.name) == canonicalize_name(dependency):   # 带条件的（extra == "test"）跳过
            return str(req.specifier) or None
    return None


# ipywidgets 的大版本 → JupyterLab 扩展 @jupyter-widgets/jupyterlab-manager 的大版本、jupyterlab_widgets 的要求
_WIDGETS_MATCH = {8: (5, "~=3.0"), 7: (3, ">=1,<2")}


def check_widgets():
    """
    ipywidgets 和它的 JupyterLab 扩展版本是否匹配（不匹配时 notebook 里的滑块显示不出来）。

    【思路】ipywidgets（Python 这边）和 jupyterlab_widgets（浏览器这边的 JupyterLab 扩展）要成对：
        ipywidgets 8 要 jupyterlab_widgets 3.x，它装的扩展 @jupyter-widgets/jupyterlab-manager 是 5.x。
        检查三件事：jupyterlab_widgets 的版本满足 ipywidgets 的要求；JupyterLab 能找到这个扩展
        （Jupyter 数据目录下的 labextensions/@jupyter-widgets/jupyterlab-manager/package.json）；扩展的大版本对得上。
    """
    name = "ipywidgets 与 JupyterLab 扩展匹配"
    ipyw = _version("ipywidgets")
    if ipyw is None:
        return CheckResult(name, False, "没有安装 ipywidgets", True, _install_hint("ipywidgets>=8.1,<9"))
    major = _major(ipyw)
    ext_major, fallback = _WIDGETS_MATCH.get(major, (None, None))
    jlw = _version("jupyterlab_widgets")
    need = _required_spec("ipywidgets", "jupyterlab_widgets") or fallback
    if jlw is None:
        return CheckResult(name, False, f"ipywidgets {ipyw}，但没有安装 jupyterlab_widgets（JupyterLab 扩展）", True,
                           _install_hint(f"jupyterlab_widgets{need or ''}"))
    if need and not satisfies(jlw, need):
        return CheckResult(name, False, f"ipywidgets {ipyw} 要求 jupyterlab_widgets {need}，装的是 {jlw}", True,
                           _install_hint(f"jupyterlab_widgets{need}") + "；装完重启 JupyterLab 并刷新浏览器")
    found = _find_labextension()
    if found is None:
        return CheckResult(name, False, f"jupyterlab_widgets {jlw} 已安装，但 JupyterLab 找不到扩展 {WIDGETS_EXTENSION}",
                           True, _install_hint(f"jupyterlab_widgets{need or ''}") + "（先卸载再装，"
                           "让扩展文件装到 share/jupyter/labextensions 下）")
    path, ext_version = found
    if ext_major is not None and _major(ext_version) != ext_major:
        return CheckResult(name, False, f"ipywidgets {ipyw} 需要扩展 {WIDGETS_EXTENSION} {ext_major}.x，JupyterLab "
                           f"找到的是 {ext_version}（{path}）", True,
                           f"删掉旧的扩展文件夹 {os.path.dirname(path)}，再重新安装 jupyterlab_widgets："
                           + _install_hint(f"jupyterlab_widgets{need or ''}"))
    return CheckResult(name, True, f"ipywidgets {ipyw}，jupyterlab_widgets {jlw}，扩展 {ext_version}")


def check_font():
    """
    画图用的中文字体：用 toyllm.plotstyle.use_chinese_font() 登记包里自带的字体，再真的画一个中文标题，
    看 matplotlib 有没有报"字形缺失"（Glyph ... missing from font）的警告。
    """
    name = "画图的中文字体"
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return CheckResult(name, False, "没有 matplotlib，无法画图", True, _install_hint("matplotlib>=3.7"))
    try:
        from .plotstyle import font_path, use_chinese_font
        family = use_chinese_font()
    except Exception as e:                                   # 字体文件丢失等：报告原因，不让 doctor 崩溃
        return CheckResult(name, False, f"登记 toyllm 自带的中文字体失败：{e}", True,
                           f'重新安装 toyllm：在仓库根目录运行 "{sys.executable}" -m pip install -e ".[dev]"')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = Figure(figsize=(3, 1))
        fig.add_subplot().set_title(FONT_SAMPLE)
        FigureCanvasAgg(fig).draw()
    missing = [str(w.message) for w in caught if "missing from" in str(w.message) or "Glyph" in str(w.message)]
    if missing:
        return CheckResult(name, False, f"中文画不出来（会显示成方框）：{missing[0]}", True,
                           "确认在画图之前调用了 toyllm.plotstyle.use_chinese_font()；"
                           "plt.style.use(...) 之后要再调用一次；仍不行就重新安装 toyllm")
    return CheckResult(name, True, f"{family}（{font_path().name}），能画出“{FONT_SAMPLE}”")


def _in_kernel():
    """这个进程是不是 notebook 的内核（在 notebook 里调用 run_doctor 时是）。"""
    return hasattr(getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)(), "kernel")


def check_blas():
    """
    notebook 内核的 BLAS 内核（可选）：x86-64 上是 Haswell 时，notebook 08 的数字和提交的逐位相同（见 toyllm.blas）。

    【思路】要看的是 notebook 的内核，不是运行 doctor 的这个进程。在 notebook 里运行时，这个进程就是内核；
        在终端里运行时，内核是 JupyterLab 以后启动的进程：环境是启动它的环境加上 kernel.json 的 env
        （jupyter_client 就这样启动内核），用内核的解释器和这样的环境问它（toyllm.blas.kernel_of）。
        make lab 把 OPENBLAS_CORETYPE=Haswell 写进 kernel.json（Makefile），之后怎样启动 JupyterLab 都一样。
    """
    import numpy  # noqa: F401  (在内核里时 blas_kernel 要看已经载入的 BLAS)

    from .blas import BLAS_CORETYPE, blas_kernel, is_x86_64, kernel_of
    name = "notebook 内核的矩阵乘法（notebook 08）"
    fix = (f'在仓库根目录运行 make lab（它把 OPENBLAS_CORETYPE={BLAS_CORETYPE} 写进内核的 kernel.json），或者 '
           f'"{sys.executable}" -m ipykernel install --sys-prefix --name {KERNEL_NAME} --env OPENBLAS_CORETYPE '
           f'{BLAS_CORETYPE}；然后重启内核')
    try:
        argv, where, extra_env = (None, None, None) if _in_kernel() else _kernel_command()
        info = blas_kernel() if argv is None else kernel_of(argv[0], {**os.environ, **extra_env}, KERNEL_TIMEOUT)
    except (LookupError, OSError, subprocess.TimeoutExpired) as e:
        return CheckResult(name, False, f"查不到内核的 BLAS：{e}", False, "先让上面“notebook 内核”那一项通过")
    where = "这个内核" if argv is None else f"内核 {KERNEL_NAME}"
    if info is None:
        return CheckResult(name, False, f"查不到{where}用的 BLAS", False, "notebook 08 照样能运行，只是数字可能和提交的不同")
    text = f"{where}：{info['库']} {info['版本']}，内核 {info['内核']}"
    if not is_x86_64():
        return CheckResult(name, False, f"{text}；这台机器不是 x86-64", False,
                           "notebook 08 照样能运行；训练出来的数字会和提交的略有不同，结论应当一样")
    if info["内核"] != BLAS_CORETYPE:
        return CheckResult(name, False, f"{text}（提交的数字用的是 {BLAS_CORETYPE}）", False, fix)
    return CheckResult(name, True, text, False)


def check_isolation():
    """老师评分用的隔离（可选；学生用不到）。"""
    kind, why = grading_isolation()
    return CheckResult("评分的隔离（老师用）", kind is not None, why, False,
                       "" if kind else "评分时（make grade、nbgrader autograde）才需要；没有隔离时评分程序拒绝评分")


CHECKS = [check_python, check_toyllm, *_package_checks(), check_test_packages, check_kernel, check_widgets, check_font, check_blas,
          check_isolation]
"""全部检查，按顺序执行。每个元素是一个不带参数、返回 CheckResult 的函数。"""


# =============================================================================
# 运行
# =============================================================================
def run_checks(checks=None):
    """
    依次执行检查，返回 DoctorReport（不打印）。某一项自己出了意外错误时，记为 ✗ 而不是让整个 doctor 崩溃。

    【参数】checks：检查函数的列表，默认 CHECKS
    """
    results = []
    for check in (CHECKS if checks is None else checks):
        try:
            result = check()
        except Exception as e:
            label = getattr(check, "__name__", repr(check))
            result = CheckResult(label, False, f"检查时出错：{type(e).__name__}: {e}", True,
                                 "把这一行和上面的版本信息发给老师或助教")
        results.append(result)
    return DoctorReport(results)


def run_doctor(checks=None, out=print):
    """
    检查环境并打印结果（notebook 的第一个单元格调用它），不会退出程序。

    【思路】每一项打印一行 ✓ / ✗，没通过的项下面一行是"怎么办"，最后一行是结论。
    【参数】checks：检查函数的列表，默认 CHECKS（全部）；out：打印用的函数，默认 print
    【返回】DoctorReport：report.ok 为 True 表示必需的项全部通过；report.failed 是没通过的项
    【边界】版本号、路径因电脑而异，所以 notebook 里这个单元格带 # NBVAL_IGNORE_OUTPUT。
    【例子】
        from toyllm.doctor import run_doctor
        report = run_doctor()
        report.ok
    """
    out(f"toyllm 环境检查（{platform.system() or '未知系统'}，Python 解释器 {sys.executable}）")
    results = []
    for check in (CHECKS if checks is None else checks):
        result = run_checks([check]).results[0]
        results.append(result)
        for line in result.lines():
            out("  " + line)
    report = DoctorReport(results)
    out("结论：" + report.summary())
    return report


def main(args=None):
    """python -m toyllm doctor：打印检查结果；有必需的项没通过时返回 1（退出码非 0）。"""
    return 0 if run_doctor().ok else 1


if __name__ == "__main__":
    sys.exit(main())
