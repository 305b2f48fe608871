"""旧的位置（保留一个版本）：Table、format_cell 搬到了 toyllm.tables，请改成 from toyllm.tables import Table。"""

from .tables import Table, format_cell  # noqa: F401
