"""旧的位置（保留一个版本）：这些名字搬到了 toyllm.tables（表格和打印用的小工具），请改成 from toyllm.tables import ……"""

from .tables import bar, display_width, fmt_size, mean, pad  # noqa: F401
