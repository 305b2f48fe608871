"""
environment.yml（conda 路线）和 pyproject.toml（pip / make 路线）必须列出同样的依赖、同样的版本范围。

【思路】两个文件各自解析成 {包名: 版本范围}，再比较。pyproject 用标准库 tomllib 读；environment.yml
    写成"每行一个包"的简单格式，这里逐行解析，不需要 pyyaml。
【边界】conda-forge 上有两个包名字和 pip 不同，见 CONDA_NAMES。
"""

import re
import sys

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from paths import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 没有 tomllib
    tomllib = pytest.importorskip("tomli")

# pip 名 -> conda-forge 名（其余的包两边同名）
CONDA_NAMES = {
    "matplotlib": "matplotlib-base",
    "playwright": "playwright-python",
}
# environment.yml 里允许出现、但不对应 pyproject 依赖的条目
CONDA_ONLY = {"python", "pip"}


def read_pyproject():
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def pyproject_deps():
    """pyproject 的运行时 + notebook + test + build + instructor + dev 自己的依赖，返回 {conda 名: SpecifierSet}。"""
    project = read_pyproject()["project"]
    extras = project["optional-dependencies"]
    deps = {}
    for line in project["dependencies"] + extras["notebook"] + extras["test"] + extras["build"] + extras["instructor"] \
            + extras["dev"][1:]:
        req = Requirement(line)
        name = req.name.lower()
        deps[CONDA_NAMES.get(name, name)] = req.specifier
    return deps


def parse_environment_yml(text):
    """
    逐行解析 environment.yml 的 dependencies。

    【返回】(conda, pip, python)：conda 是 {包名: 版本范围字符串}，pip 是 `pip:` 下的行（list），
        python 是 python=3.x 里的版本字符串。
    """
    conda, pip, python = {}, [], None
    section = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line.startswith(" "):
            section = line.split(":", 1)[0]
            continue
        if section != "dependencies":
            continue
        m = re.fullmatch(r"( *)- (.+)", line)
        assert m, f"environment.yml 这一行看不懂（请保持每行一个包的格式）：{raw!r}"
        indent, item = len(m.group(1)), m.group(2).strip()
        if item == "pip:":
            continue
        if indent > 2:  # pip: 下面的条目
            pip.append(item)
            continue
        name, spec = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*(.*)", item).groups()
        if name == "python":
            python = spec.lstrip("=")
        else:
            assert name not in conda, f"environment.yml 里 {name} 出现了两次"
            conda[name.lower()] = spec
    return conda, pip, python


@pytest.fixture(scope="module")
def env():
    return parse_environment_yml((ROOT / "environment.yml").read_text(encoding="utf-8"))


def test_every_pyproject_dependency_is_in_environment_yml(env):
    conda, _, _ = env
    missing = sorted(set(pyproject_deps()) - set(conda))
    assert not missing, f"environment.yml 缺少 pyproject.toml 里的依赖：{missing}"


def test_environment_yml_has_nothing_extra(env):
    conda, _, _ = env
    extra = sorted(set(conda) - set(pyproject_deps()) - CONDA_ONLY)
    assert not extra, f"environment.yml 里有 pyproject.toml 没有的依赖：{extra}（请两边一起改）"


def test_version_bounds_agree(env):
    conda, _, _ = env
    for name, spec in pyproject_deps().items():
        if name in conda:
            assert SpecifierSet(conda[name]) == spec, (
                f"{name} 的版本范围不一致：pyproject.toml 是 {str(spec)!r}，environment.yml 是 {conda[name]!r}")


def test_pip_section_installs_this_package_editable(env):
    _, pip, _ = env
    assert pip == ["-e ."], f"environment.yml 的 pip: 部分应当只有 `-e .`，收到 {pip}"


def test_python_version_satisfies_requires_python(env):
    _, _, python = env
    assert python, "environment.yml 应当固定 python 版本（例如 python=3.11）"
    requires = SpecifierSet(read_pyproject()["project"]["requires-python"])
    assert f"{python}.0" in requires, f"environment.yml 的 python={python} 不满足 requires-python {requires}"


def test_dev_extra_is_notebook_test_build_instructor():
    """dev = toyllm[notebook,test,build,instructor]，再加只有 make test 要的包（pytest-xdist）：environment.yml 逐个列出后者。"""
    extras = read_pyproject()["project"]["optional-dependencies"]
    first, *own = [Requirement(r) for r in extras["dev"]]
    assert (first.name, first.extras) == ("toyllm", {"notebook", "test", "build", "instructor"}), (
        "dev extra 应当从 toyllm[notebook,test,build,instructor] 开始，这样 environment.yml 不用再列那些 extras")
    assert own and all(r.name != "toyllm" and not r.extras for r in own), f"dev 自己的依赖应当是普通的包：{own}"


def test_tooling_stays_out_of_the_runtime_dependencies():
    """生成 notebook、字体子集的工具（tools/）和 nbgrader 只在 build / instructor extra 里；学生装的运行时依赖不带它们。"""
    project = read_pyproject()["project"]
    runtime = {Requirement(r).name.lower() for r in project["dependencies"]}
    extras = project["optional-dependencies"]
    tooling = {Requirement(r).name.lower() for r in extras["build"] + extras["instructor"]}
    assert {"jupytext", "nbclient", "nbformat", "nbgrader"} <= tooling and not runtime & tooling


def test_parser_reads_a_small_example():
    text = "name: x\ndependencies:\n  - python=3.11\n  - numpy>=1.24  # 注释\n  - pip:\n      - -e .\n"
    assert parse_environment_yml(text) == ({"numpy": ">=1.24"}, ["-e ."], "3.11")
