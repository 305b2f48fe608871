# toyllm 的常用命令。每个目标在需要时自动创建 .venv 并安装依赖（pip install -e '.[dev]'）。
#   make lab        打开 JupyterLab（根目录是仓库，先打开 notebooks/00_quickstart.ipynb；讲义链接 ../lectures/ 也能点开）
#   make test       运行全部测试：tests/ 里的 pytest + notebooks/ 的 nbval（严格比对输出）
#   make demo       python -m toyllm
#   make homework   改了 notebooks/homework/src/*.py 以后：重新生成作业的教师版（运行并保存输出）和学生版（nbgrader）
#   make grade      教师用：在临时文件夹里用 nbgrader 生成作业、自动评分、生成反馈，打印分数表
#   make bench      python -m toyllm bench，再打印 import toyllm 的用时（tools/bench_import.py）
#   make notebooks  由 notebooks/src/*.py 重新生成并运行讲课 notebook（tools/build_notebooks.py，jupytext + nbclient）
#   make figures    重新计算讲义的图、表格和数字（tools/make_lecture_figures.py）
# 可以覆盖的变量：PYTHON=python3.12（创建虚拟环境用的解释器）、VENV=.venv、PYTEST_ARGS='-m browser'

PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.stamp
PYTEST_ARGS ?=

export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: lab test demo homework grade bench notebooks figures venv clean-venv

# 虚拟环境：pyproject.toml 比 stamp 新（依赖变了）或 .venv 里的 python 不能运行时，重新安装。
$(STAMP): pyproject.toml
	@if ! $(VPY) -c '' >/dev/null 2>&1; then \
		echo ">>> 创建虚拟环境 $(VENV)（$(PYTHON)）"; \
		rm -rf $(VENV); \
		$(PYTHON) -m venv $(VENV); \
	fi
	@echo ">>> 安装 toyllm 及开发依赖到 $(VENV)"
	$(VPY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

lab: $(STAMP)
	@echo ">>> 正在启动 JupyterLab；请在浏览器打开下面打印的 http://localhost:8888/lab?token=... 网址（Ctrl+C 退出）"
	$(VPY) -m jupyter lab --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/notebooks/00_quickstart.ipynb $$( [ "$$(id -u)" = 0 ] && echo --allow-root )

# 第一行：单元测试、浏览器测试、讲课 notebook 和作业教师版（严格比对输出）；
# 第二行：学生版作业（还没填答案，只检查能从头跑到尾、不报错）。
test: $(STAMP)
	$(VPY) -m pytest --nbval --nbval-current-env --ignore=notebooks/homework/release $(PYTEST_ARGS)
	$(VPY) -m pytest --nbval-lax --nbval-current-env notebooks/homework/release

demo: $(STAMP)
	$(VPY) -m toyllm

homework: $(STAMP)
	$(VPY) tools/homework.py build
	$(VPY) tools/homework.py release

grade: $(STAMP)
	$(VPY) tools/homework.py grade

bench: $(STAMP)
	$(VPY) -m toyllm bench
	$(VPY) tools/bench_import.py

notebooks: $(STAMP)
	$(VPY) tools/build_notebooks.py --all

figures: $(STAMP)
	$(VPY) tools/make_lecture_figures.py

clean-venv:
	rm -rf $(VENV)
