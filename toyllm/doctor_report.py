"""旧的位置（保留一个版本）：CheckResult、DoctorReport 搬到了 toyllm.doctor，请改成 from toyllm.doctor import ……"""

from .doctor import CheckResult, DoctorReport  # noqa: F401
