"""
锁文件 constraints.txt 和 pyproject.toml 保持一致。

【思路】CI 和 `make test` 用 `pip install -c constraints.txt` 安装（确切的、测过的版本），所以 nbval 比对的
    数字和 repr 不会因为上游某天发了新版本就变。锁文件由 `make lock`（uv pip compile --universal）从
    pyproject.toml 解出：同一个包在不同的 Python 版本上可以有不同的行（行尾 `; python_full_version ...`）。
    这里检查：pyproject.toml 的每一个依赖（运行时 + 所有 extras）都在锁文件里，而且每一行锁定的版本
    都满足 pyproject.toml 的版本范围；在任何一个支持的 Python 上，每个包最多只有一行适用。
【改了 pyproject.toml 的依赖以后】运行 `make lock`，再 `make test`。
"""

import importlib.util
import platform

import pytest
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from paths import ROOT

LOCK = ROOT / "constraints.txt"

_spec = importlib.util.spec_from_file_location("ci_versions", ROOT / ".ci" / "versions.py")
versions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(versions)


def _env(python):
    """某个 Python 版本（Linux、CPython）下的环境标记取值。"""
    return {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux",
            "platform_system": "Linux", "os_name": "posix", "implementation_name": "cpython",
            "platform_python_implementation": "CPython", "platform_machine": platform.machine() or "x86_64"}


def _supported_pythons():
    spec = SpecifierSet(versions.tomllib.load(open(ROOT / "pyproject.toml", "rb"))["project"]["requires-python"])
    return [f"3.{minor}" for minor in range(8, 15) if f"3.{minor}.0" in spec]


@pytest.fixture(scope="module")
def lock():
    assert LOCK.is_file(), "缺少锁文件 constraints.txt：请运行 make lock"
    return versions.read_lock(LOCK)


def test_lock_says_how_it_was_made():
    head = LOCK.read_text(encoding="utf-8").splitlines()[:3]
    assert any("make lock" in line for line in head), f"constraints.txt 开头应当写明它由 `make lock` 生成，收到 {head}"


def test_every_dependency_is_locked_within_its_range(lock):
    problems = []
    for source, req in versions.project_requirements():
        name = canonicalize_name(req.name)
        if name not in lock:
            problems.append(f"{req}（{source}）不在锁文件里")
            continue
        for version, marker in lock[name]:
            if version not in req.specifier:
                where = f"（{marker}）" if marker else ""
                problems.append(f"{req.name} 锁定的 {version}{where} 不满足 pyproject.toml 的 {req.specifier}（{source}）")
    assert not problems, "锁文件和 pyproject.toml 不一致，请运行 make lock：\n" + "\n".join(problems)


@pytest.mark.parametrize("python", _supported_pythons())
def test_one_version_per_package_on_each_supported_python(lock, python):
    env = _env(python)
    several = {name: [str(v) for v in versions.applicable(entries, env)] for name, entries in lock.items()}
    several = {name: vs for name, vs in several.items() if len(vs) > 1}
    assert not several, f"Python {python} 上这些包锁定了不止一个版本：{several}"
    missing = [str(req) for _, req in versions.project_requirements()
               if (req.marker is None or req.marker.evaluate(env))
               and not versions.applicable(lock[canonicalize_name(req.name)], env)]
    assert not missing, f"Python {python} 上这些依赖在锁文件里没有适用的版本：{missing}"


def test_read_lock_rejects_a_range(tmp_path):
    bad = tmp_path / "c.txt"
    bad.write_text("# 注释\nnumpy==2.0.0 ; python_version >= '3.10'\nmatplotlib>=3.7\n", encoding="utf-8")
    with pytest.raises(ValueError, match="第 3 行"):
        versions.read_lock(bad)


def test_lower_bound_of_a_requirement():
    from packaging.requirements import Requirement

    assert str(versions.lower_bound(Requirement("jupyterlab>=4.2,<5"))) == "4.2"
    assert versions.lower_bound(Requirement("wheel")) is None
