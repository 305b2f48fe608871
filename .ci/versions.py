"""
依赖版本的三个检查（make test-latest、make test-min 和 tests/unit/setup/test_lock.py 用）。

【思路】pyproject.toml 写的是版本范围（numpy>=1.24），constraints.txt 是 `make lock` 解出的、CI 测过的确切版本
    （uv pip compile --universal：同一个包在不同 Python 上可以有不同的行，行尾带 `; python_version ...` 标记）。
    · diff：当前环境装的版本和锁文件差在哪里（make test-latest 用：最新版和锁定版的差别要打印出来，不能藏起来）；
    · lower-bounds：当前环境里每个直接依赖是不是正好装在 pyproject.toml 写的下限上（make test-min 用）；
    · 这里的 read_lock / project_requirements 也给 tests/unit/setup/test_lock.py 用。

【用法】python .ci/versions.py diff constraints.txt
        python .ci/versions.py lower-bounds [extra ...]      （默认 dev 的全部依赖：运行时 + notebook + test）
"""

import sys
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "toyllm"


def project_requirements(extras=None, root=ROOT):
    """
    pyproject.toml 里的依赖：运行时 + 给定的 extras（None 表示全部 extras），展开 toyllm[a,b] 这样的自引用。

    【返回】[(来自哪里, Requirement)]，来自哪里是 "运行时" 或 extra 的名字。
    """
    with open(root / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    table = project.get("optional-dependencies", {})
    todo = list(table) if extras is None else list(extras)
    out = [("运行时", Requirement(r)) for r in project.get("dependencies", [])]
    seen = set()
    while todo:
        extra = todo.pop(0)
        if extra in seen:
            continue
        if extra not in table:
            raise SystemExit(f"pyproject.toml 里没有 extra {extra!r}；有的是：{'、'.join(table)}")
        seen.add(extra)
        for line in table[extra]:
            req = Requirement(line)
            if canonicalize_name(req.name) == PROJECT:
                todo.extend(sorted(req.extras))
            else:
                out.append((extra, req))
    return out


def read_lock(path):
    """
    读锁文件（pip 的 constraints 格式：`name==version`，可带 `; 环境标记`，`#` 开头是注释）。

    【返回】{规范化的包名: [(Version, Marker 或 None)]}
    【边界】出现不是 `==` 的行时报错，说明是哪一行。
    """
    lock = {}
    for number, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        req = Requirement(line)
        specs = list(req.specifier)
        if len(specs) != 1 or specs[0].operator != "==":
            raise ValueError(f"{path} 第 {number} 行应当是 `包名==版本`，收到 {raw!r}")
        lock.setdefault(canonicalize_name(req.name), []).append((Version(specs[0].version), req.marker))
    return lock


def applicable(entries, env=None):
    """锁文件里某个包在当前（或给定）环境下适用的版本。"""
    return [v for v, marker in entries if marker is None or Marker(str(marker)).evaluate(env)]


def installed():
    """当前环境装的包 {规范化名: Version}。"""
    out = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            out[canonicalize_name(name)] = Version(dist.version)
    return out


def diff(lock_path):
    """打印当前环境和锁文件不同的包。返回不同的个数（只报告，不算失败）。"""
    lock, have = read_lock(lock_path), installed()
    rows = []
    for name, entries in sorted(lock.items()):
        want = applicable(entries)
        if not want or name not in have:
            continue
        if have[name] != want[0]:
            rows.append((name, str(want[0]), str(have[name])))
    extra = sorted(set(have) - set(lock) - {PROJECT, "pip", "setuptools", "wheel"})
    print(f"== 和 {lock_path}（CI 测过的版本）相比，这个环境里版本不同的包：{len(rows)} 个 ==")
    for name, want, got in rows:
        arrow = "↑" if Version(got) > Version(want) else "↓"
        print(f"   {name:<32} {want:>12} {arrow} {got}")
    if extra:
        print(f"   锁文件里没有的包：{', '.join(extra)}")
    return len(rows)


def lower_bound(req):
    """Requirement 的下限（>= 或 == 或 ~= 的版本）；没有下限时返回 None。"""
    bounds = [Version(s.version) for s in req.specifier if s.operator in (">=", "==", "~=")]
    return max(bounds) if bounds else None


def check_lower_bounds(extras=("dev",)):
    """每个直接依赖是不是正好装在下限上。打印一张表；返回不符合的个数。"""
    have = installed()
    bad = 0
    print("== 直接依赖：pyproject.toml 写的下限 / 实际装的版本 ==")
    for source, req in project_requirements(extras):
        if req.marker is not None and not req.marker.evaluate():
            continue
        name, low = canonicalize_name(req.name), lower_bound(req)
        got = have.get(name)
        ok = got is not None and (low is None or got == low)
        bad += not ok
        print(f"   {'✓' if ok else '✗'} {req.name:<14} {str(req.specifier):<12} 装的是 {got}   （{source}）")
    if bad:
        print(f"✗ {bad} 个包没有装在下限上：下限测试不算数")
    return bad


def main(argv):
    if len(argv) >= 2 and argv[1] == "diff":
        diff(argv[2] if len(argv) > 2 else ROOT / "constraints.txt")
        return 0
    if len(argv) >= 2 and argv[1] == "lower-bounds":
        return 1 if check_lower_bounds(argv[2:] or ("dev",)) else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
