"""旧的位置（保留一个版本）：Dashboard、build 和各种控件搬到了 toyllm.dashboards，请改成 from toyllm.dashboards import ……"""


def __getattr__(name):
    """旧的名字照样能用：到 toyllm.dashboards 里去找。"""
    from . import dashboards

    return getattr(dashboards, name)
