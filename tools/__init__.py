"""
教师和维护者的工具（不在安装给学生的包里；依赖在 pyproject.toml 的 build extra：pip install -e '.[build]'）。

    build_notebooks.py       由 notebooks/src/*.py 生成并运行讲课 notebook（jupytext + nbclient）：make notebooks
    make_lecture_figures.py  讲义的图、表格和数字：make figures
    make_font_subset.py      重新生成 toyllm/fonts/ 里的中文字体子集
    check_reference.py       最初的 trainable_llm.py 能否原样跑在 toyllm 上（.ci/run 调用）
    bench.py                 make bench：同一个 GRPO，朴素循环 vs 向量化引擎；各预设用时
    bench_eval.py            评估的速度
    bench_import.py          import toyllm 的用时、包里每个模块的物理行和代码行（超过 450 行的标出来）
    codelines.py             数代码行（文档字符串、注释、空行不算）
    train_cli.py             在命令行上用任意预设训练（选项由 RLConfig 的字段生成），可以保存模型和曲线
    checkpoint.py            保存、读取模型和训练记录（JSON，带格式版本，原子写入；玩具和小 transformer）
    grader.py                自动评分：nbgrader autograde 的执行和给分两步（课程的 nbgrader_config.py 用它）；
                             同学的代码在沙盒里运行（sandbox.py、limits.py），函数在 grading_worker.py 里被调用，
                             数据按 grading_wire.py 的 JSON 格式传回来，分数在评分程序自己的进程里算
    rubric.py                问答题的评分要点和参考答案（make grade 打印给老师）

每个文件都可以在仓库根目录用 python tools/<名字>.py 运行；测试里用 import tools.<名字>。
"""
