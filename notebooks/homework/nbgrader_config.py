# nbgrader 的课程设置：这个文件夹（notebooks/homework/）就是一个 nbgrader 课程。
#   source/<作业>/   教师版（答案、隐藏测试、分数都写在单元格元数据里）
#   release/<作业>/  学生版（nbgrader generate_assignment 生成，不要手改）
# 其余都是 nbgrader 的默认设置。用法见仓库 README 的「给老师」一节。
c = get_config()  # noqa: F821  nbgrader 读这个文件时提供 get_config

c.CourseDirectory.course_id = "toyllm"

# 自动评分时每个单元格最多运行几秒：普通单元格 60 秒；带 "train" 标签的单元格（作业里训练模型的那几个）300 秒。
# 超时的单元格被中断（nbgrader 默认 interrupt_on_timeout），输出里写明「超时」，后面的单元格照常运行、评分。
# （检查函数自己还给同学的函数每次调用 10 秒：死循环在检查里就被停下，见 toyllm/homework/framework.py。）
ORDINARY_SECONDS, TRAIN_SECONDS = 60, 300


def cell_timeout(cell):
    """nbclient 的 timeout_func：带 "train" 标签的单元格用 TRAIN_SECONDS，其余 ORDINARY_SECONDS。"""
    return TRAIN_SECONDS if "train" in cell.get("metadata", {}).get("tags", []) else ORDINARY_SECONDS


c.Execute.timeout = ORDINARY_SECONDS
c.Execute.timeout_func = cell_timeout
c.Execute.error_on_timeout = {
    "ename": "CellTimeoutError", "evalue": "超时",
    "traceback": ["超时：这个单元格运行的时间超过了上限（普通单元格 60 秒，训练的单元格 300 秒），被停下了。"
                  "是不是有死循环？后面的单元格照常运行、评分。"],
}
