"""
环境自检 python -m toyllm doctor：在测试环境里全部通过；模拟缺了某样东西时给出 ✗、"怎么办"和非 0 的退出码。
"""

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toyllm import doctor
from toyllm.doctor import (CHECKS, PACKAGES, CheckResult, DoctorReport, check_blas, check_font, check_kernel,
                           check_package, check_python, check_toyllm, check_widgets, run_checks, run_doctor, satisfies)

from paths import ROOT


def run_cli(env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "toyllm", "doctor"], capture_output=True, text=True,
                          encoding="utf-8", env=env, cwd=ROOT, timeout=180)


def by_name(report, name):
    (result,) = [r for r in report if r.name == name]
    return result


def package(dist):
    (p,) = [p for p in PACKAGES if p.dist == dist]
    return p


# =============================================================================
# 真实环境：测试环境里什么都装好了
# =============================================================================
def test_doctor_command_passes_in_the_test_environment():
    proc = run_cli()
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "✗" not in out and "Traceback" not in proc.stderr and "Warning" not in proc.stderr
    for word in ("Python", "numpy", "matplotlib", "jupyterlab", "ipywidgets", "ipykernel", "跑测试用的包",
                 "notebook 内核能导入 toyllm", "ipywidgets 与 JupyterLab 扩展", "画图的中文字体"):
        assert f"✓ [必需] {word}" in out or f"✓ [可选] {word}" in out, (word, out)
    assert "[可选] 跑测试用的包：pytest、nbval" in out and "[必需] numpy" in out
    assert out.strip().splitlines()[-1].startswith("结论：必需的")


def test_broken_kernel_found_through_jupyter_path(tmp_path, monkeypatch, capsys):
    """JUPYTER_PATH 里放一个 python3 内核，它的解释器不存在（就像指向一个删掉了的旧环境）：✗，退出码非 0。"""
    kernel = tmp_path / "kernels" / "python3"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [str(tmp_path / "no-such-python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "坏掉的内核", "language": "python"}), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    monkeypatch.setattr(doctor, "CHECKS", [check_python, check_kernel])
    assert doctor.main(None) == 1
    out = capsys.readouterr().out
    assert "✗ [必需] notebook 内核能导入 toyllm" in out and "no-such-python" in out
    assert "怎么办" in out and "ipykernel install" in out
    assert "没通过" in out.strip().splitlines()[-1]


@pytest.mark.skipif(sys.platform == "win32", reason="用 shell 脚本冒充解释器")
def test_kernel_interpreter_without_toyllm(tmp_path, monkeypatch):
    """内核是另一个 Python，它 import toyllm 失败：✗，并显示它的报错。"""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'toyllm'\" >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(doctor, "_kernel_command", lambda: ([str(fake), "-m", "ipykernel_launcher"], "/x", {}))
    r = check_kernel()
    assert not r.ok and r.required and "No module named 'toyllm'" in r.detail and str(fake) in r.detail
    assert "ipykernel install" in r.hint


def test_kernel_check_uses_kernel_env_and_an_empty_folder(tmp_path, monkeypatch):
    """内核的 kernel.json 里的 env 会传给解释器；导入不是从当前文件夹里碰巧找到的。"""
    monkeypatch.setattr(doctor, "_kernel_command", lambda: ([sys.executable], "/x", {"TOYLLM_DOCTOR_PROBE": "1"}))
    seen = {}
    real_run = subprocess.run

    def spy(cmd, **kw):
        seen.update(cmd=cmd, **kw)
        return real_run(cmd, **kw)

    monkeypatch.setattr(subprocess, "run", spy)
    r = check_kernel()
    assert r.ok, r
    assert seen["cmd"][0] == sys.executable and seen["env"]["TOYLLM_DOCTOR_PROBE"] == "1"
    assert not os.path.exists(seen["cwd"])                  # 临时的空文件夹，用完删掉
    assert Path(seen["cwd"]).resolve() != ROOT


def test_kernel_check_lookup_failure_and_timeout(monkeypatch):
    def missing():
        raise LookupError("JupyterLab 找不到名为 python3 的内核")

    monkeypatch.setattr(doctor, "_kernel_command", missing)
    r = check_kernel()
    assert not r.ok and "找不到名为 python3" in r.detail and r.hint
    monkeypatch.setattr(doctor, "_kernel_command", lambda: ([sys.executable], "/x", {}))

    def slow(cmd, **kw):
        raise subprocess.TimeoutExpired(cmd, kw["timeout"])

    monkeypatch.setattr(subprocess, "run", slow)
    r = check_kernel(timeout=3)
    assert not r.ok and "3 秒" in r.detail


def test_real_kernel_command_points_to_a_python():
    argv, where, env = doctor._kernel_command()
    assert Path(argv[0]).exists() and os.path.isdir(where) and isinstance(env, dict)


# =============================================================================
# 模拟缺了某个包
# =============================================================================
def fake_version(missing=(), versions=None):
    real = importlib.metadata.version

    def version(name):
        if name in missing:
            raise importlib.metadata.PackageNotFoundError(name)
        if versions and name in versions:
            return versions[name]
        return real(name)

    return version


def test_missing_required_package_makes_doctor_fail(monkeypatch, capsys):
    monkeypatch.setattr(importlib.metadata, "version", fake_version(missing={"numpy"}))
    monkeypatch.setattr(doctor, "CHECKS", [check_python] + [c for c in CHECKS if c.__name__ in
                                                            ("check_numpy", "check_matplotlib", "check_test_packages")])
    assert doctor.main(None) == 1
    out = capsys.readouterr().out
    assert "✗ [必需] numpy：没有安装" in out and "✓ [必需] matplotlib" in out
    assert 'pip install "numpy>=1.24"' in out or 'conda install -c conda-forge "numpy>=1.24"' in out
    assert "有 1 项必需的检查没通过" in out


def test_missing_optional_package_does_not_fail(monkeypatch, capsys):
    monkeypatch.setattr(importlib.metadata, "version", fake_version(missing={"nbval"}))
    monkeypatch.setattr(doctor, "CHECKS", [c for c in CHECKS if c.__name__ in ("check_numpy", "check_test_packages")])
    assert doctor.main(None) == 0
    out = capsys.readouterr().out
    assert "✗ [可选] 跑测试用的包：没装 nbval" in out and "怎么办" in out and "1 项可选的没通过" in out


def test_test_packages_a_make_lab_student_lacks_are_one_optional_line(monkeypatch):
    """make lab 只装 .[notebook]：没有 pytest、nbval、hypothesis、playwright 时是一行 ✗ [可选]，不是四行（issue 40）。"""
    lacking = {"pytest", "nbval", "hypothesis", "playwright"}
    monkeypatch.setattr(importlib.metadata, "version", fake_version(missing=lacking, versions={"pyyaml": "5.4"}))
    monkeypatch.setattr(doctor, "_in_conda", lambda: False)
    report = run_checks([c for c in CHECKS if c.__name__.startswith("check_") and c not in
                         (check_kernel, check_blas, check_font, check_widgets, doctor.check_isolation)])
    failed = [r for r in report if not r.ok]
    assert report.ok and len(failed) == 1 and not failed[0].required
    assert failed[0].detail.startswith("没装 pytest、nbval、hypothesis、playwright；pyyaml 5.4 版本不对")
    assert "make test" in failed[0].hint and ".[dev]" in failed[0].hint
    assert not any(r.name in lacking for r in report)


def test_missing_test_package_points_to_make_test_not_make_lab(monkeypatch):
    """make lab 只装 .[notebook]：缺测试的包（pytest、nbval……）时要说 make test 或 pip install -e ".[dev]"（issue 26）。"""
    monkeypatch.setattr(importlib.metadata, "version", fake_version(missing={"nbval", "numpy"}))
    monkeypatch.setattr(doctor, "_in_conda", lambda: False)
    r = check_package(package("nbval"))
    assert not r.ok and not r.required
    assert "make test" in r.hint and '.[dev]' in r.hint and "make lab 不装" in r.hint
    assert "运行 make lab" not in r.hint
    r = check_package(package("numpy"))
    assert "make lab" in r.hint and "make test" not in r.hint and 'pip install "numpy>=1.24"' in r.hint


def test_wrong_version_and_missing_module(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "version", fake_version(versions={"matplotlib": "3.5.1"}))
    r = check_package(package("matplotlib"))
    assert not r.ok and "3.5.1 版本不对" in r.detail and ">=3.7" in r.detail and "matplotlib>=3.7" in r.hint
    monkeypatch.undo()
    monkeypatch.setattr(doctor, "_find_spec", lambda module: None)
    r = check_package(package("numpy"))
    assert not r.ok and "找不到模块" in r.detail


def test_every_package_passes_here():
    for p in PACKAGES:
        r = check_package(p)
        assert r.ok and r.required == p.required, r
    assert doctor.check_test_packages().ok


def test_python_version():
    assert check_python((3, 10, 0)).ok and check_python((3, 13, 1)).ok and check_python().ok
    r = check_python((3, 9, 18))
    assert not r.ok and r.required and "3.9.18 太老了" in r.detail and "3.11" in r.hint


def test_toyllm_not_installed_or_stale(monkeypatch):
    assert check_toyllm().ok
    monkeypatch.setattr(importlib.metadata, "version", fake_version(missing={"toyllm"}))
    r = check_toyllm()
    assert not r.ok and "没有安装" in r.detail
    monkeypatch.setattr(importlib.metadata, "version", fake_version(versions={"toyllm": "0.0.1"}))
    r = check_toyllm()
    assert not r.ok and "0.0.1" in r.detail and "旧版本" in r.detail


# =============================================================================
# ipywidgets 与 JupyterLab 扩展
# =============================================================================
def fake_extension(tmp_path, version):
    folder = tmp_path / "labextensions"
    ext = folder / "@jupyter-widgets" / "jupyterlab-manager"
    ext.mkdir(parents=True)
    (ext / "package.json").write_text(json.dumps({"name": "@jupyter-widgets/jupyterlab-manager",
                                                  "version": version}), encoding="utf-8")
    return str(folder)


def test_widgets_match_here():
    r = check_widgets()
    assert r.ok, r
    assert "jupyterlab_widgets" in r.detail and "扩展 5." in r.detail


def test_widgets_python_side_mismatch(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "version", fake_version(versions={"jupyterlab_widgets": "1.1.7"}))
    r = check_widgets()
    assert not r.ok and "1.1.7" in r.detail and "jupyterlab_widgets~=3.0" in r.hint


def test_widgets_missing_pieces(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "version", fake_version(missing={"jupyterlab_widgets"}))
    assert "没有安装 jupyterlab_widgets" in check_widgets().detail
    monkeypatch.setattr(importlib.metadata, "version", fake_version(missing={"ipywidgets"}))
    assert not check_widgets().ok


def test_widgets_extension_not_found_or_old(monkeypatch, tmp_path):
    monkeypatch.setattr(doctor, "_labextension_dirs", lambda: [str(tmp_path / "empty")])
    r = check_widgets()
    assert not r.ok and "找不到扩展" in r.detail and r.hint
    monkeypatch.setattr(doctor, "_labextension_dirs", lambda: [fake_extension(tmp_path / "a", "3.0.13")])
    r = check_widgets()
    assert not r.ok and "3.0.13" in r.detail and "5.x" in r.detail and "删掉" in r.hint
    monkeypatch.setattr(doctor, "_labextension_dirs", lambda: [fake_extension(tmp_path / "b", "5.0.99"),
                                                               fake_extension(tmp_path / "c", "3.0.0")])
    assert check_widgets().ok                                # 按顺序第一个找到的才是 JupyterLab 用的


def test_widgets_extension_found_where_jupyter_looks():
    path, version = doctor._find_labextension()
    assert path.endswith(os.path.join("@jupyter-widgets", "jupyterlab-manager", "package.json"))
    assert version.startswith("5.")


def test_required_spec_from_metadata():
    spec = doctor._required_spec("ipywidgets", "jupyterlab_widgets")
    assert spec and spec.startswith("~=3.0")
    assert doctor._required_spec("ipywidgets", "no-such-package") is None
    assert doctor._required_spec("no-such-dist-xyz", "numpy") is None


@pytest.mark.parametrize("version, spec, ok", [
    ("4.6.6", ">=4.2,<5", True), ("5.0.0", ">=4.2,<5", False), ("4.1.9", ">=4.2,<5", False),
    ("4.2", ">=4.2.0", True), ("4.2.0rc1", ">=4.2", True), ("1.24.0", ">=1.24", True), ("1.23.5", ">=1.24", False),
    ("3.0.17", "~=3.0.17", True), ("3.0.16", "~=3.0.17", False), ("3.1.0", "~=3.0.17", False),
    ("3.1.0", "~=3.0", True), ("4.0", "~=3.0", False), ("8.1.9", "==8.1.9", True), ("8.1.9", "!=8.1.9", False),
    ("8.1.9", "==8.1.*", True), ("8.2.0", "==8.1.*", False), ("0.11.0", ">0.11", False), ("0.12", ">0.11", True),
    ("2", "<=2.0", True), ("abc", ">=1", False), ("1.0", "=>1", False), ("1.0", "", True),
])
def test_satisfies(version, spec, ok):
    assert satisfies(version, spec) is ok


# =============================================================================
# 中文字体
# =============================================================================
def test_font_ok_here():
    import matplotlib
    with matplotlib.rc_context():
        r = check_font()
    assert r.ok, r
    assert "ToyLLM Sans SC" in r.detail


def test_font_missing_glyphs(monkeypatch):
    """use_chinese_font 没起作用（只有 DejaVu Sans）：画中文会报字形缺失 → ✗。"""
    import matplotlib
    import toyllm.plotstyle

    def no_op():
        matplotlib.rcParams["font.family"] = ["DejaVu Sans"]
        return "DejaVu Sans"

    monkeypatch.setattr(toyllm.plotstyle, "use_chinese_font", no_op)
    with matplotlib.rc_context():
        r = check_font()
    assert not r.ok and r.required and "方框" in r.detail and "use_chinese_font" in r.hint


def test_font_file_missing(monkeypatch, tmp_path):
    import matplotlib
    import toyllm.plotstyle
    monkeypatch.setattr(toyllm.plotstyle, "font_path", lambda: tmp_path / "gone.otf")
    with matplotlib.rc_context():
        r = check_font()
    assert not r.ok and "gone.otf" in r.detail and "重新安装" in r.hint


# =============================================================================
# 报告
# =============================================================================
def test_a_crashing_check_becomes_a_failed_line():
    def check_boom():
        raise RuntimeError("意外")

    report = run_checks([check_boom, lambda: CheckResult("x", True, "好")])
    assert len(report) == 2 and not report.ok and not report[0].ok and "意外" in report[0].detail
    assert report.failed == (report[0],)


def test_run_doctor_prints_and_returns_without_exiting():
    lines = []
    report = run_doctor([check_python, lambda: CheckResult("可选的东西", False, "没有", False, "装一下")],
                        out=lines.append)
    assert isinstance(report, DoctorReport) and report.ok and len(report.failed) == 1
    assert lines[1] == "  " + report[0].lines()[0] and lines[1].startswith("  ✓ [必需] Python：")
    assert lines[2:4] == ["  ✗ [可选] 可选的东西：没有", "      怎么办：装一下"]
    assert lines[-1] == "结论：" + report.summary() and "1 项可选的没通过" in lines[-1]
    assert "必需的 1 项全部通过" in repr(report)


def test_every_failed_required_check_has_a_hint(monkeypatch, tmp_path):
    """把能模拟的都弄坏：每一条 ✗ 都有"怎么办"。"""
    monkeypatch.setattr(importlib.metadata, "version", fake_version(missing={p.dist for p in PACKAGES} | {"toyllm"}))
    monkeypatch.setattr(doctor, "_kernel_command", lambda: ([str(tmp_path / "none")], "/x", {}))
    monkeypatch.setattr(doctor, "_labextension_dirs", lambda: [])
    monkeypatch.setattr(doctor, "grading_isolation", lambda: (None, "没有 bwrap（模拟的）"))
    report = run_checks([c for c in CHECKS if c not in (check_font, check_blas)])
    assert not report.ok
    failed = [r for r in report if not r.ok]
    assert len(failed) == len(report) - 1                   # 只有 Python 版本还是好的
    assert all(r.hint for r in failed)


def test_packages_in_step_with_pyproject():
    """doctor 检查的包和版本要求与 pyproject.toml 一致（运行时 + notebook 必需，测试可选）。"""
    tomllib = pytest.importorskip("tomllib")
    with open(ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    extras = project["optional-dependencies"]

    def parse(lines):
        out = {}
        for line in lines:
            import re
            name, spec = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*(.*)", line).groups()
            out[name.lower()] = ",".join(sorted(s.strip() for s in spec.split(",") if s.strip()))
        return out

    def ours(required, purposes):
        return {p.dist: ",".join(sorted(p.spec.split(","))) for p in PACKAGES
                if p.required == required and p.purpose in purposes}

    assert ours(True, ("运行", "notebook")) == {**parse(project["dependencies"]), **parse(extras["notebook"])}
    assert ours(False, ("测试",)) == parse(extras["test"])


def test_blas_check_names_the_kernel_and_how_to_pin_it(monkeypatch):
    """矩阵乘法内核的检查：是 Haswell 时通过；不是时说出现在是哪个内核、怎么设；它只是可选项。"""
    import toyllm.blas as blas

    monkeypatch.setattr(blas, "is_x86_64", lambda: True)
    monkeypatch.setattr(doctor, "_in_kernel", lambda: True)              # 在 notebook 里：看自己这个进程
    monkeypatch.setattr(blas, "blas_kernel", lambda: {"库": "openblas", "内核": "SkylakeX", "版本": "0.3.31"})
    r = check_blas()
    assert not r.ok and not r.required and "这个内核" in r.detail and "SkylakeX" in r.detail
    assert "make lab" in r.hint and "--env OPENBLAS_CORETYPE Haswell" in r.hint
    monkeypatch.setattr(blas, "blas_kernel", lambda: {"库": "openblas", "内核": "Haswell", "版本": "0.3.31"})
    assert check_blas().ok


def test_blas_check_from_a_terminal_asks_the_notebook_kernel(monkeypatch):
    """
    在终端里运行 doctor 时，看的是 notebook 的内核（issue 40）：它的解释器，带着 kernel.json 的 env，
    不是 doctor 自己这个进程。make lab 以后终端里没有 OPENBLAS_CORETYPE，kernel.json 里有：要通过。
    """
    import toyllm.blas as blas

    if not blas.is_x86_64():
        pytest.skip("OPENBLAS_CORETYPE 只在 x86-64 上有用")
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    monkeypatch.setattr(doctor, "_in_kernel", lambda: False)
    monkeypatch.setattr(doctor, "_kernel_command", lambda: ([sys.executable], "/k", {"OPENBLAS_CORETYPE": "Haswell"}))
    r = check_blas()
    assert r.ok and "内核 python3" in r.detail and "Haswell" in r.detail, r
    # kernel.json 的 env 真的传给了内核：换一个内核名字，问出来的就是它（doctor 自己的进程不受影响）
    monkeypatch.setattr(doctor, "_kernel_command", lambda: ([sys.executable], "/k", {"OPENBLAS_CORETYPE": "Sandybridge"}))
    r = check_blas()
    assert not r.ok and "Sandybridge" in r.detail and "kernel.json" in r.hint
    monkeypatch.setattr(doctor, "_kernel_command", lambda: ([str(Path("/no/such/python"))], "/k", {}))
    r = check_blas()
    assert not r.ok and not r.required and "查不到内核的 BLAS" in r.detail


def test_pin_blas_kernel_keeps_a_value_already_set(monkeypatch):
    import toyllm.blas as blas

    monkeypatch.setattr(blas, "is_x86_64", lambda: True)
    assert blas.pin_blas_kernel({}) == "Haswell"
    assert blas.pin_blas_kernel({"OPENBLAS_CORETYPE": "Zen"}) == "Zen"
    monkeypatch.setattr(blas, "is_x86_64", lambda: False)
    assert blas.pin_blas_kernel({}) is None


def test_makefile_pins_the_same_kernel_as_the_package():
    from pathlib import Path

    import toyllm.blas as blas

    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"export OPENBLAS_CORETYPE ?= {blas.BLAS_CORETYPE}" in text
    # make lab 把它写进内核的 kernel.json（doctor 读的就是这份），名字和 doctor 查的内核相同
    lab = text.split("\nlab:", 1)[1].split("\n\n", 1)[0]
    assert (f"-m ipykernel install --sys-prefix --name {doctor.KERNEL_NAME} --env OPENBLAS_CORETYPE $(OPENBLAS_CORETYPE)"
            in lab), lab
