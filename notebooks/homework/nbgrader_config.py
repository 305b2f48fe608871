# nbgrader 的课程设置：这个文件夹（notebooks/homework/）就是一个 nbgrader 课程。
#   source/<作业>/   教师版（答案、隐藏测试、分数都写在单元格元数据里）
#   release/<作业>/  学生版（nbgrader generate_assignment 生成，不要手改）
# 其余都是 nbgrader 的默认设置。用法见仓库 README 的「给老师」一节。
c = get_config()  # noqa: F821  nbgrader 读这个文件时提供 get_config

c.CourseDirectory.course_id = "toyllm"
# 自动评分时每个单元格最多运行几秒（默认 30；训练曲线的单元格在慢机器上可能要十几秒）
c.Execute.timeout = 300
