"""
包的结构：模块之间只用公开的名字，导入只朝一个方向（下层从不导入上层，没有循环）。

读源码（ast），不运行它：函数里面的延迟导入也算。
"""

import ast
import functools

import pytest

from paths import ROOT

PKG = ROOT / "toyllm"

# 从下到上。同一层的模块可以互相导入（但不能成环）；上层可以导入下层；下层导入上层就是错的。
LAYERS = [
    ("基础：参数检查、表格和文字（text、display 是它的旧名字）、题目、BLAS 内核、softmax、熵、优化器、写文件",
     ["_checks", "_moved", "tables", "text", "display", "estimators", "arithmetic_np", "arithmetic", "problems", "blas", "logits",
      "entropy", "optim", "files", "saving"]),
    ("模型", ["toy_llm"]),
    ("可训练的模型", ["trainable"]),
    ("策略表", ["policy"]),
    ("采样、精确计算（answer_probs 的零件在 exact_answer；_value_steps 是旧名字）", ["sampler", "exact_answer", "_value_steps", "exact"]),
    ("RL 的公式和它们的选项、登记表（不知道玩具模型）；搬走的旧模块（只报错）", ["rl.surrogates", "rl.losses",
                                                                      "rl.peer_losses", "rl.peer_advantages", "rl.cs336",
                                                                      "rl.peer_rows", "rl.peers"]),
    ("训练记录、RL 的配置（从公式导入选项）和预设、目标函数", ["history", "rl.config", "rl.presets", "rl.critic",
                                                         "rl.objective"]),
    ("训练：RL、模仿学习（rl.kernel、rl.filtering 是旧名字）", ["rl.groups", "rl.loop", "rl.toy", "rl.kernel", "rl.filtering", "rl",
                                                  "imitation", "gradcheck", "scaling"]),
    ("verl / TRL 的那一层（toyllm.peers：登记进 RL 的登记表；本包从不导入它）",
     ["peers.rows", "peers.losses", "peers.advantages", "peers.cs336", "peers.table", "peers.options", "peers.convert",
      "peers"]),
    ("评估、画图、命令行", ["evaluation", "experiments", "plotstyle", "dashboard_plots", "plots", "demo",
                         "doctor_report", "isolation", "doctor"]),
    ("小 transformer：题目写成文字", ["tinylm.text"]),
    ("小 transformer：各层（前向和反向）", ["tinylm.layers"]),
    ("小 transformer：模型、生成、保存", ["tinylm.model"]),
    ("小 transformer：训练、分析", ["tinylm.analysis", "tinylm.policy", "tinylm.train"]),
    ("小 transformer：预训练的网络（配方、权重文件）、包的入口", ["tinylm.pretraining", "tinylm"]),
    ("真的训练框架（toyllm.peers 里的网络导出成 GPT-2、用 TRL 训练；要 torch，本包从不导入它们）", ["peers.hf", "peers.trl"]),
    ("界面（dashboard、widgets 是 dashboards 的旧名字）、作业、入口", ["dashboards", "dashboard", "widgets", "homework",
                                                                "homework.framework", "homework.hw1", "homework.hw2",
                                                                "homework.hw3", "__main__", ""]),
]
LAYER_OF = {name: i for i, (_, names) in enumerate(LAYERS) for name in names}
TOP = len(LAYERS) - 1

# 已知的例外（模块还在时必须仍然是例外，否则请删掉这一行）；现在没有
KNOWN_PRIVATE = {}


def _modules():
    """{模块名（相对 toyllm，包的 __init__ 用包名，根包是 ""）: 文件路径}"""
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(PKG).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_package(name):
    return MODULES[name].name == "__init__.py"


def _resolve(importer, level, module):
    """把 from ... import 的相对写法变成相对 toyllm 的模块名；不是 toyllm 的模块时返回 None。"""
    if level == 0:
        if module is None or not (module == "toyllm" or module.startswith("toyllm.")):
            return None
        return module[len("toyllm."):] if module != "toyllm" else ""
    parts = importer.split(".") if importer else []
    if not _is_package(importer):
        parts = parts[:-1]
    parts = parts[:len(parts) - (level - 1)] if level > 1 else parts
    return ".".join(parts + ([module] if module else []))


def _imports(name):
    """[(被导入的模块, 导入的名字 或 None, 行号)]：名字是子模块时算作导入那个子模块。"""
    return list(_imports_of(name, MODULES[name].read_text(encoding="utf-8"), frozenset(MODULES)))


@functools.lru_cache(maxsize=None)
def _imports_of(name, source, modules):
    """_imports 的计算（每个测试都要整个包的导入图：同样的源码、同样的模块表只解析一次）。"""
    tree = ast.parse(source)
    out, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                target = _resolve(name, 0, a.name)
                if target is not None:
                    out.append((target, None, node.lineno))
                    aliases[a.asname or a.name.split(".")[0]] = target
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, node.level, node.module)
            if base is None:
                continue
            for a in node.names:
                sub = f"{base}.{a.name}" if base else a.name
                if sub in modules:
                    out.append((sub, None, node.lineno))
                    aliases[a.asname or a.name] = sub
                else:
                    out.append((base, a.name, node.lineno))
    for node in ast.walk(tree):                            # 通过模块别名取私有属性：losses._x
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            out.append((aliases[node.value.id], node.attr, node.lineno))
    return tuple(out)


def _private(attr):
    return attr is not None and attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__"))


def private_imports():
    found = {}
    for name in MODULES:
        for target, attr, line in _imports(name):
            if target != name and _private(attr):
                found[(name, target, attr)] = line
    return found


def test_no_module_imports_a_private_name_of_another():
    found = private_imports()
    bad = {k: v for k, v in found.items() if k not in KNOWN_PRIVATE}
    assert not bad, "这些模块导入了别的模块的私有名字（请把它变成公开的名字）：" + "；".join(
        f"toyllm/{a.replace('.', '/')} 第 {line} 行从 {b or 'toyllm'} 导入 {c}" for (a, b, c), line in bad.items())
    stale = [k for k in KNOWN_PRIVATE if k[0] in MODULES and k not in found]
    assert not stale, f"KNOWN_PRIVATE 里这些例外已经不存在了，请删掉：{stale}"


def test_private_import_check_catches_a_violation(tmp_path, monkeypatch):
    """检查本身会失败：造一个导入私有名字的模块。"""
    fake = tmp_path / "fake.py"
    fake.write_text("from .rl.toy import _call_surrogate\nfrom .rl import losses\nlosses._as_eps\n", encoding="utf-8")
    monkeypatch.setitem(MODULES, "fake", fake)
    found = private_imports()
    assert ("fake", "rl.toy", "_call_surrogate") in found and ("fake", "rl.losses", "_as_eps") in found


def test_every_module_has_a_layer():
    missing = sorted(m for m in MODULES if m not in LAYER_OF)
    assert not missing, f"这些模块还没有放进 LAYERS（tests/unit/api/test_architecture.py），请决定它在哪一层：{missing}"


def _edges():
    edges = {}
    for name in MODULES:
        for target, attr, line in _imports(name):
            if target == name or (target == "" and attr is not None and attr.startswith("__")):
                continue                                   # from . import __version__：只取版本号，不算依赖
            while target not in MODULES and "." in target:
                target = target.rsplit(".", 1)[0]
            edges.setdefault(name, {}).setdefault(target, line)
    return edges


def upward_imports():
    bad = []
    for name, targets in _edges().items():
        for target, line in targets.items():
            if LAYER_OF.get(target, TOP) > LAYER_OF.get(name, TOP):
                bad.append(f"toyllm/{name.replace('.', '/') or '__init__'} 第 {line} 行导入了上层的 "
                           f"{target or 'toyllm'}（{LAYERS[LAYER_OF.get(target, TOP)][0]}）")
    return bad


def test_lower_layers_never_import_upper_layers():
    bad = upward_imports()
    assert not bad, "导入方向反了：\n" + "\n".join(bad)


def import_cycles():
    edges = _edges()
    state, cycles = {}, []

    def visit(node, stack):
        state[node] = "open"
        for nxt in edges.get(node, {}):
            if nxt.startswith(node + ".") or (node == "" and nxt):
                continue                        # 包导入自己的子模块（__init__ 的再导出）不算环
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for m in MODULES:
        if m not in state:
            visit(m, [m])
    return cycles


def test_no_import_cycles():
    cycles = import_cycles()
    assert not cycles, f"导入成环：{cycles}"


def test_layer_and_cycle_checks_catch_violations(tmp_path, monkeypatch):
    """检查本身会失败：让 problems（最下层）导入 rl，让 rl.losses 导入 rl.config（它们就互相导入了）。"""
    fake = tmp_path / "problems.py"
    fake.write_text("def f():\n    from .rl import train\n", encoding="utf-8")
    losses = tmp_path / "losses.py"
    losses.write_text("from .config import RLConfig\n", encoding="utf-8")
    monkeypatch.setitem(MODULES, "problems", fake)
    monkeypatch.setitem(MODULES, "rl.losses", losses)
    bad = upward_imports()
    assert any("toyllm/problems" in line and "rl" in line for line in bad)
    assert any("toyllm/rl/losses" in line and "rl.config" in line for line in bad)
    assert any(set(c) >= {"rl.config", "rl.losses"} for c in import_cycles())


@pytest.mark.parametrize("module, allowed", [("rl.surrogates", {"_checks"}),
                                             ("rl.losses", {"_checks", "entropy", "rl.surrogates"}),
                                             ("rl.config", {"_checks", "rl.losses", "rl.surrogates"}),
                                             *((old, set()) for old in ("rl.peers", "rl.peer_losses", "rl.peer_advantages",
                                                                        "rl.peer_rows", "rl.cs336")),
                                             ("peers.losses", {"_checks", "rl.surrogates"}),
                                             ("peers.advantages", {"_checks", "rl.losses"}),
                                             ("peers.cs336", {"_checks", "rl.surrogates"}),
                                             ("peers.rows", set()),
                                             ("peers.table", {"rl.losses", "peers.rows"})])
def test_rl_formulas_know_nothing_of_the_toy_model(module, allowed):
    """losses（和它转出的 surrogates）/ config 也给小 transformer 用：只能导入参数检查、文字、熵的公式；config 从 losses 导入公式的选项，反过来不行。"""
    assert set(_edges().get(module, {})) <= allowed


def test_formulas_sit_below_the_configuration():
    """公式拥有自己的选项列表（ADVANTAGES、AGGREGATIONS……），config 从 losses 导入它们：公式不依赖配置。"""
    assert LAYER_OF["rl.losses"] < LAYER_OF["rl.config"]
    assert "rl.losses" in _edges()["rl.config"] and "rl.config" not in _edges().get("rl.losses", {})


def _is_peers(name):
    return name == "peers" or name.startswith("peers.")


def core_imports_of_peers():
    """核心（toyllm/ 除了 peers/）里导入 toyllm.peers 的地方，函数里的延迟导入也算。"""
    return [f"toyllm/{name.replace('.', '/') or '__init__'} 第 {line} 行导入了 {target}"
            for name, targets in _edges().items() if not _is_peers(name)
            for target, line in targets.items() if _is_peers(target)]


def test_the_core_never_imports_the_peers_layer():
    """学生的包从不导入 toyllm.peers：verl / TRL 的东西由 import toyllm.peers 登记进来（登记表在 rl.surrogates、rl.losses、
    rl.config、rl.presets），反过来不行。"""
    bad = core_imports_of_peers()
    assert not bad, "核心导入了 toyllm.peers：\n" + "\n".join(bad)
    assert {m for m in MODULES if _is_peers(m)} >= {"peers", "peers.losses", "peers.table", "peers.convert"}


def test_the_peers_check_catches_a_violation(tmp_path, monkeypatch):
    """检查本身会失败：让 rl.objective 在函数里延迟导入 toyllm.peers、让 imitation 用绝对路径导入它的子模块。"""
    lazy = tmp_path / "objective.py"
    lazy.write_text("def f():\n    from ..peers import to_trl\n", encoding="utf-8")
    absolute = tmp_path / "imitation.py"
    absolute.write_text("import toyllm.peers.losses\n", encoding="utf-8")
    monkeypatch.setitem(MODULES, "rl.objective", lazy)
    monkeypatch.setitem(MODULES, "imitation", absolute)
    bad = core_imports_of_peers()
    assert any("toyllm/rl/objective" in line and "peers" in line for line in bad)
    assert any("toyllm/imitation" in line and "peers.losses" in line for line in bad)


@pytest.mark.parametrize("old, new, name", [("toyllm.rl.kernel", "toyllm.rl.toy", "policy_loss"),
                                            ("toyllm.rl.filtering", "toyllm.rl.groups", "step_rewards"),
                                            ("toyllm._value_steps", "toyllm.exact_answer", "advance")])
def test_old_module_paths_still_work_for_one_release(old, new, name):
    """改了名的模块：旧的导入路径这一版还能用，给出中文的 DeprecationWarning，说出新的位置。"""
    import importlib
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        got = getattr(importlib.import_module(old), name)
    assert got is getattr(importlib.import_module(new), name)
