"""
作业：三份带自动检查的作业 notebook，教师版和学生版。

    notebooks/homework/source/   教师版（答案写在 ### BEGIN SOLUTION / ### END SOLUTION 之间）
    notebooks/homework/release/  学生版（由 python -m toyllm.homework release 生成，不要手改）

· toyllm.homework.checks：作业里"检查"单元格调用的检查函数，打印 ✓ / ✗ 和提示，从不抛出异常；
· toyllm.homework.release：由教师版生成学生版（nbgrader 的约定）。
"""
