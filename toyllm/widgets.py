"""旧的位置（保留一个版本）：三个作业的面板搬到了 toyllm.dashboards，请改成 from toyllm.dashboards import ……"""


def __getattr__(name):
    """旧的名字照样能用（例如 from toyllm.widgets import grpo_dashboard）：到 toyllm.dashboards 里去找。"""
    from . import dashboards

    return getattr(dashboards, name)
