"""
作业：三份带自动检查的作业 notebook（第 6 讲的梯度、SFT 与评估、GRPO）。

    notebooks/homework/release/hw1/hw1_gradient.ipynb 等   学生版：打开就能做
    notebooks/homework/source/hw1/hw1_gradient.ipynb 等    教师版（含答案和隐藏测试），nbgrader 课程的 source

· toyllm.homework.framework：检查的框架；hw1、hw2、hw3：各份作业"检查"单元格调用的检查函数，打印 ✓ / ✗ 和中文提示，从不抛出异常；
  每个检查返回一个 CheckResult（通过时 .ok 为 True）；同学的函数就是或调用了包里同一个任务的实现时不通过。
· 给分的是老师的工具 tools/grader.py：它在自己的进程里调用这里的检查，同学的函数在一个隔离的进程里运行（见它的说明）。
  生成学生版、评分用的是 nbgrader（教师工具，pip install -e '.[instructor]'），见 tools/homework.py。
"""
