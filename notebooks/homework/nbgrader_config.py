# nbgrader 的课程设置：这个文件夹（notebooks/homework/）就是一个 nbgrader 课程。
#   source/<作业>/   教师版（答案、分数都写在单元格元数据里）
#   release/<作业>/  学生版（nbgrader generate_assignment 生成，不要手改）
# 用法见仓库 README 的「给老师」一节。nbgrader autograde 和 formgrader 的 Autograde 按钮都读这个文件。
#
# 自动评分不相信同学的内核：仓库里的 tools/grader.py 换掉了 autograde 的两步 ——
#   SandboxExecute：内核在沙盒里执行整本 notebook（tools/sandbox.py：只读、看不见别人的作业和 gradebook、内存有上限），
#       输出只给人看；没有隔离可用时不评分；
#   Verdicts：每个自动评分单元格的分数由评分程序在它自己的进程里算出：同学的函数在另一个沙盒进程里、用新抽的输入运行，
#       结果传回来和包里的参考答案比较。
import sys
import warnings
from pathlib import Path

c = get_config()  # noqa: F821  nbgrader 读这个文件时提供 get_config

HERE = Path(__file__).resolve().parent
REPO = next((p for p in (HERE.parents[1], *HERE.parents) if (p / "tools" / "grader.py").exists()), None)
if REPO is None:                      # 课程被复制到了仓库外面：评分程序在装 toyllm 的那个仓库里
    import importlib.util

    REPO = Path(importlib.util.find_spec("toyllm").submodule_search_locations[0]).parent
sys.path.insert(0, str(REPO))

from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearOutput, DeduplicateIds,  # noqa: E402
                                    IgnorePattern, LimitOutput, OverwriteKernelspec, SaveAutoGrades)

from tools.grader import RestoreHiddenTests, SandboxExecute, Verdicts  # noqa: E402

# 日志里只留有用的警告：nbgrader 0.9 和 SQLAlchemy 2 之间每份提交都有的几句 SAWarning 不显示；放回隐藏测试不再警告
# （RestoreHiddenTests），于是「checksum has changed」只在同学真的改了只读单元格时出现。
warnings.filterwarnings("ignore", message=r"Object of type <Submitted\w+> not in session")

c.CourseDirectory.course_id = "toyllm"
# release_assignment / fetch_assignment / submit / collect 用的交换文件夹：放在课程文件夹里（nbgrader 默认的
# /srv/nbgrader/exchange 要 root 先建好），读这个文件时创建
c.Exchange.root = str(HERE / "exchange")
(HERE / "exchange").mkdir(exist_ok=True)
c.Autograde.sanitize_preprocessors = [ClearOutput, DeduplicateIds, OverwriteKernelspec, RestoreHiddenTests,
                                      CheckCellMetadata]
c.Autograde.autograde_preprocessors = [SandboxExecute, Verdicts, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
                                       SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]

# 时间上限：普通单元格 60 秒；老师版里带 "train" 标签的单元格（按单元格 id，代码没改过）300 秒。
# 超时的单元格被中断，输出里写明「超时」，后面的单元格照常运行；停不下来时结束内核，后面的部分记 0 分。
# 评分时同学的函数在沙盒进程里：每个答案单元格 60 秒，每次调用 10 秒。
c.SandboxExecute.course = c.Verdicts.course = str(HERE)
c.SandboxExecute.ordinary_seconds, c.SandboxExecute.train_seconds = 60, 300
c.Verdicts.cell_seconds, c.Verdicts.call_seconds = 60, 10
c.SandboxExecute.error_on_timeout = {
    "ename": "CellTimeoutError", "evalue": "超时",
    "traceback": ["超时：这个单元格运行的时间超过了上限（普通单元格 60 秒，训练的单元格 300 秒），被停下了。"
                  "是不是有死循环？后面的单元格照常运行。"],
}
