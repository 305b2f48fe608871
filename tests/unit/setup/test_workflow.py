"""
GitHub Actions 的工作流（.github/workflows/ci.yml）和 .ci/run、README 保持一致。

【检查什么】文件能解析（pyyaml）；用 Debian 镜像（chromium 和中文字体来自 Debian）；Python 版本是 pyproject.toml
    支持的最老和最新的一个；每一步都是 `bash .ci/run <步骤>`，合起来正好是 .ci/run 的全部步骤、顺序相同；
    其中 test 这一步运行的正是 README 写的测试命令（make test）；pip 的下载缓存按锁文件保存。
"""

import re
import sys

import pytest

from paths import ROOT

yaml = pytest.importorskip("yaml", reason="需要 pyyaml（pip install -e '.[dev]'）")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"
CI_RUN = ROOT / ".ci" / "run"


@pytest.fixture(scope="module")
def workflow():
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and "jobs" in data, "ci.yml 应当有 jobs"
    return data


@pytest.fixture(scope="module")
def job(workflow):
    jobs = workflow["jobs"]
    assert list(jobs) == ["test"], f"ci.yml 应当只有一个 test 任务，收到 {list(jobs)}"
    return jobs["test"]


def readme_test_command():
    """README「快速上手」代码块里的测试命令（`make test   # ...` 那一行去掉注释）。"""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## 快速上手.*?```bash\n(.*?)```", text, re.S)
    assert block, "README 里找不到「快速上手」的 bash 代码块"
    commands = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    tests = [c for c in commands if c.startswith("make test")]
    assert len(tests) == 1, f"README 的快速上手里应当正好有一条测试命令，收到 {tests}"
    return tests[0]


def ci_run_steps():
    text = CI_RUN.read_text(encoding="utf-8")
    steps = re.search(r"^ALL_STEPS=\((.*?)\)", text, re.M)
    assert steps, ".ci/run 里找不到 ALL_STEPS=(...)"
    bodies = dict(re.findall(r"^step_(\w+)\(\) \{\n(.*?)^\}", text, re.M | re.S))
    return steps.group(1).split(), bodies


def supported_pythons():
    project = tomllib.load(open(ROOT / "pyproject.toml", "rb"))["project"]
    versions = sorted((c.rsplit("::", 1)[1].strip() for c in project.get("classifiers", [])
                       if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)),
                      key=lambda v: int(v.split(".")[1]))
    assert versions, "pyproject.toml 的 classifiers 里应当列出支持的 Python 版本"
    return versions, project["requires-python"]


def test_runs_in_a_debian_container(job):
    image = job["container"]["image"] if isinstance(job["container"], dict) else job["container"]
    assert re.fullmatch(r"python:\$\{\{ matrix\.python \}\}-(bookworm|trixie)(-slim)?", image), (
        f"应当用官方 Python 的 Debian 镜像（python:X-bookworm），收到 {image}")
    assert "--shm-size" in job["container"].get("options", ""), "chromium 在容器里需要 --shm-size"


def test_matrix_is_oldest_and_newest_supported_python(job):
    versions, requires = supported_pythons()
    assert requires == f">={versions[0]}", f"requires-python {requires} 和 classifiers 最老的 {versions[0]} 不一致"
    matrix = [str(v) for v in job["strategy"]["matrix"]["python"]]
    assert matrix == [versions[0], versions[-1]], f"矩阵应当是最老和最新的支持版本 {versions[0]}、{versions[-1]}，收到 {matrix}"


def test_steps_are_the_steps_of_ci_run_in_order(job):
    wanted, _ = ci_run_steps()
    runs = [step["run"].strip() for step in job["steps"] if "run" in step]
    assert runs == [f"bash .ci/run {name}" for name in wanted], (
        f"ci.yml 的步骤应当依次是 .ci/run 的 {wanted}，收到 {runs}")


def test_test_step_runs_the_readme_test_command():
    command = readme_test_command()
    assert command == "make test"
    steps, bodies = ci_run_steps()
    assert "test" in steps
    lines = [line.strip() for line in bodies["test"].splitlines()]
    assert command in lines, f".ci/run 的 test 步骤应当运行 README 的测试命令 {command!r}，收到 {lines}"


def test_pip_download_cache_is_keyed_on_the_lock(job):
    caches = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/cache@")]
    assert len(caches) == 1, "应当有一个 actions/cache 步骤缓存 pip 的下载"
    cache = caches[0]["with"]
    assert ".cache/pip" in cache["path"] and "constraints.txt" in cache["key"], cache
    assert job["steps"].index(caches[0]) < next(i for i, s in enumerate(job["steps"]) if "install" in s.get("run", ""))


def test_triggers(workflow):
    triggers = workflow.get("on", workflow.get(True))          # YAML 1.1 把不加引号的 on 读成 True
    assert {"push", "pull_request"} <= set(triggers), triggers


# ---------------------------------------------------------------------------------------------------
# Makefile：每组 extras 一个标记文件 —— make lab 建的环境（只有 notebook）再 make test 时补装 dev
# ---------------------------------------------------------------------------------------------------
def _make_dry_run(target, venv):
    import os
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("没有 make")
    # 在 make 里面运行测试时（例如 make test-min 调用的 make test VENV=.venv-min CONSTRAINTS=），外层 make 的
    # 命令行变量经 MAKEFLAGS 传给子进程；这里要的是"用户直接在仓库里敲 make"的样子，所以去掉它们。
    env = {k: v for k, v in os.environ.items()
           if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "CONSTRAINTS", "UV", "PIP_FLAGS", "VENV"}}
    out = subprocess.run(["make", "-n", "--no-print-directory", target, f"VENV={venv}"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _fake_venv(tmp_path, *extras):
    """一个"已经装好了 extras"的虚拟环境：bin/python 指向当前解释器，标记文件比 pyproject.toml 和锁文件新。"""
    import os

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    newer = max((ROOT / "pyproject.toml").stat().st_mtime, (ROOT / "constraints.txt").stat().st_mtime) + 10
    for extra in extras:
        stamp = venv / f".stamp-{extra}"
        stamp.touch()
        os.utime(stamp, (newer, newer))
    return venv


def test_make_lab_installs_only_the_notebook_extra(tmp_path):
    venv = _fake_venv(tmp_path)
    commands = _make_dry_run("lab", venv)
    assert "-c constraints.txt" in commands and "-e '.[notebook]'" in commands
    assert "'.[dev]'" not in commands and "jupyter lab" in commands


def test_make_test_after_make_lab_installs_the_dev_extra(tmp_path):
    venv = _fake_venv(tmp_path, "notebook")
    assert "-e '.[dev]'" in _make_dry_run("test", venv)
    assert "pip install" not in _make_dry_run("lab", venv)
    venv_dev = _fake_venv(tmp_path / "dev", "dev")
    assert "pip install" not in _make_dry_run("test", venv_dev)
