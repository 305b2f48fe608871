"""
改名和搬家的模块：旧的导入路径在这一个版本里照样能用，拿到的是新位置上的同一个对象；README 的「改名和搬家的名字」表里有它。
"""

import importlib

import pytest
from paths import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")

MOVED = [("text", "tables", ["bar", "display_width", "fmt_size", "mean", "pad"]),
         ("display", "tables", ["Table", "format_cell"]),
         ("widgets", "dashboards", ["gradient_dashboard", "passk_dashboard", "grpo_dashboard", "run_gradient_dashboard_logic",
                                    "run_passk_dashboard_logic", "run_grpo_dashboard_logic", "GRPO_DEFAULTS", "PACKAGE"]),
         ("dashboard", "dashboards", ["Dashboard", "build", "slider", "dropdown", "checkbox", "ipywidgets_module"]),
         ("dashboard", "plotstyle", ["FIG_DPI", "DASHBOARD_STYLE", "figure_png", "wipe", "owned", "dashboard_style"])]


@pytest.mark.parametrize("old, new, names", MOVED, ids=[f"{o}->{n}" for o, n, _ in MOVED])
def test_old_import_paths_give_the_same_objects(old, new, names):
    before, after = importlib.import_module(f"toyllm.{old}"), importlib.import_module(f"toyllm.{new}")
    for name in names:
        assert getattr(before, name) is getattr(after, name), f"toyllm.{old}.{name}"
    assert f"| `toyllm.{old}`" in README and f"| `toyllm.{new}` |" in README


def test_an_unknown_name_on_an_old_path_is_still_an_attribute_error():
    widgets = importlib.import_module("toyllm.widgets")
    with pytest.raises(AttributeError):
        widgets.no_such_dashboard
