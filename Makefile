# toyllm 的常用命令。每个目标在需要时自动创建 .venv，并只装它要用的依赖（版本锁定在 constraints.txt）。
#   make lab          打开 JupyterLab（只装学生需要的 .[notebook]；根目录是仓库，先打开 notebooks/00_quickstart.ipynb）
#   make test         运行全部测试：tests/ 里的 pytest + notebooks/ 的 nbval（严格比对输出）；装 .[dev]
#   make test-fast    改代码时用：只跑单元测试 tests/unit/（按概念分文件夹；不跑 notebook、浏览器、网站、Voilà、评分），约一分钟
#   make demo         python -m toyllm
#   make homework     改了 notebooks/homework/src/*.py 以后：重新生成作业的教师版（运行并保存输出）和学生版（nbgrader）
#   make grade        教师用：在临时文件夹里用 nbgrader 生成作业、自动评分、生成反馈、导出成绩，打印分数表、待手工评分的问答和 CSV
#   make bench        tools/bench.py（引擎 / 地板 tools/floor.py、DAPO / GRPO、answer_probs 的用时；朴素循环 vs 引擎、各预设用时）、import toyllm 的用时和每个模块的行数（tools/bench_import.py）、面板重画用时
#   make notebooks    由 notebooks/src/*.py 重新生成并运行讲课 notebook（tools/build_notebooks.py，jupytext + nbclient）
#   make figures      重新计算讲义的图、表格和数字（tools/make_lecture_figures.py；真网络上的说法 tools/network_claims.py，约 10 分钟）
#   make pretrain     维护者用：照配方重新训练三种大小的预训练小 transformer，写 toyllm/tinylm/weights/（tools/pretrain.py，约 12 分钟）
#   make site         把讲义、notebook、作业学生版做成静态网站 site/_build/html/（离线构建，MathJax 在网站里）
#   make voila        上课用：把作业的控制面板做成不显示代码的网页（Voilà），在浏览器里打开打印的网址
#   make lock         依赖变了以后重新生成锁文件 constraints.txt（然后 make test）
#   make test-latest  用各个包的最新版（不用锁文件）在 .venv-latest 里跑全部测试，并列出和锁文件不同的版本
#   make test-min     用 pyproject.toml 写的最低版本（Python 3.10）在 .venv-min 里跑全部测试
#   make test-peers   在 .venv-peers 里装 TRL、verl，核对 toyllm.peers.to_trl(config) / to_verl(config)（tests/peers/test_peers*.py），
#                     TRL 的损失和 rl_objective 一样、GRPOTrainer 真的训练（tests/peers/test_trl.py）
#   make trl          PRESET=grpo STEPS=20：用 TRL 的 GRPOTrainer 训练课程的网络，和 numpy 并排比较（装 .venv-peers，torch 要下载）
# 可以覆盖的变量：PYTHON=python3.12（创建虚拟环境用的解释器）、VENV=.venv、PYTEST_ARGS='-m browser'、TEST_WORKERS=0

PYTHON ?= python3
# 最老的支持版本 Python 3.10：先找 PATH 上的 python3.10，再找 pyenv 装的
PYTHON_MIN ?= $(firstword $(shell for p in python3.10 $$(pyenv root 2>/dev/null)/versions/3.10*/bin/python3.10; do \
	"$$p" -c '' 2>/dev/null && echo "$$p"; done) python3.10)
VENV ?= .venv
VPY := $(VENV)/bin/python
# 装了 .[dev] 的标记（别的目标写 `目标: $(STAMP)` 就能保证开发依赖都在）
STAMP := $(VENV)/.stamp-dev
CONSTRAINTS ?= constraints.txt
PIP_FLAGS ?=
# UV=路径/uv 时改用 uv 安装（快得多；CI 用，见 .ci/run），否则用 pip。pip 装完会把 .py 编译成 .pyc，uv 默认不编译：
# 加 --compile-bytecode 和 pip 一样。否则在设了 PYTHONDONTWRITEBYTECODE 的机器上（例如 CI），每个新进程（每个
# notebook 的内核、JupyterLab、nbgrader……）都要把用到的几千个模块重新编译一遍，make test 因此多花一两分钟的 CPU。
UV ?=
PYTEST_ARGS ?=
SITE_OUT ?= site
VOILA_PORT ?= 8866

export PIP_DISABLE_PIP_VERSION_CHECK := 1
# x86-64 上矩阵乘法一律用 OpenBLAS 的 Haswell 内核：notebook 08 训练出来的数字在任何 x86-64 机器上逐位相同
# （见 toyllm/blas.py 的 BLAS_CORETYPE；已经设了别的值时不覆盖）。make lab 启动的 JupyterLab 和它的内核也带着它，
# make lab 还把它写进内核的 kernel.json（见 lab 目标）。
ifeq ($(shell uname -m),x86_64)
export OPENBLAS_CORETYPE ?= Haswell
endif
comma := ,

.PHONY: lab test test-fast demo homework grade bench notebooks figures pretrain venv clean-venv site voila lock test-latest test-min test-peers trl print-python-min

# 虚拟环境：每组 extras 一个标记文件（.venv/.stamp-notebook、.venv/.stamp-dev ……），所以 make lab 建的
# 环境（只有 notebook）再 make test 时会补装 dev 的依赖。pyproject.toml 或锁文件比标记新、或者 .venv 里的
# python 不能运行时，重新安装。CONSTRAINTS 为空时不锁版本（make test-latest 用）。
$(VENV)/.stamp-%: pyproject.toml $(CONSTRAINTS)
	@if ! $(VPY) -c '' >/dev/null 2>&1; then \
		echo ">>> 创建虚拟环境 $(VENV)（$(PYTHON)）"; \
		rm -rf $(VENV); \
		$(PYTHON) -m venv $(VENV) || exit 1; \
	fi
	@echo ">>> 安装 toyllm[$*] 到 $(VENV)$(if $(CONSTRAINTS),（版本按 $(CONSTRAINTS)）)。第一次要下载几百 MB，需要几分钟；以后就不用了"
	$(if $(UV),$(UV) pip install --compile-bytecode --python $(VPY),$(VPY) -m pip install --progress-bar on) \
		$(if $(CONSTRAINTS),-c $(CONSTRAINTS)) $(PIP_FLAGS) -e '.[$*]'
	@touch $@

venv: $(STAMP)

# make install-site、make install-voila ……：只安装某一组 extras（CI 用）
install-%: $(VENV)/.stamp-%
	@:

# 预训练的权重：两个进程同时训练三种大小（BLAS 单线程、内核固定，数字和进程数无关），写权重和清单
pretrain: $(STAMP)
	$(VPY) tools/pretrain.py

# 内核的 kernel.json 写上 OPENBLAS_CORETYPE（ipykernel install --env）：以后不用 make、直接 jupyter lab 启动时，
# notebook 的内核也用同一种 BLAS 内核；python -m toyllm doctor 读的就是它。
lab: $(VENV)/.stamp-notebook
	$(if $(OPENBLAS_CORETYPE),$(VPY) -m ipykernel install --sys-prefix --name python3 --env OPENBLAS_CORETYPE $(OPENBLAS_CORETYPE) >/dev/null)
	@echo ">>> 正在启动 JupyterLab（Ctrl+C 退出）。浏览器一般会自动打开 notebooks/00_quickstart.ipynb；"
	@echo "    没有打开的话，复制下面 JupyterLab 打印的 \"Or copy and paste one of these URLs:\" 下面那一行"
	@echo "    （http://localhost:8888/lab/tree/notebooks/00_quickstart.ipynb?token=...）到浏览器的地址栏。"
	$(VPY) -m jupyter lab --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/notebooks/00_quickstart.ipynb $$( [ "$$(id -u)" = 0 ] && echo --allow-root )

# 第一行：单元测试、浏览器测试、讲课 notebook 和作业教师版（严格比对输出）。一个进程时（默认），作业评分、构建网站、
#   在 JupyterLab 里量 notebook 和讲义，在后台线程里先开始，重跑预训练的开头和讲义里网络的数字在另外的进程里先开始，
#   别的测试同时运行，它们的测试排在最后（tests/background.py、conftest.py）。TEST_WORKERS 个进程一起跑时（pytest-xdist）：
#   --dist loadscope 把一个测试文件（一个 notebook）整个交给同一个进程，notebook 的单元格按顺序在同一个内核里运行；
#   --no-loadscope-reorder 按收集的顺序分配：最慢的（作业评分，见 conftest.py）最先开始，两个进程差不多同时结束。
# 第二行：学生版作业（还没填答案，只检查能从头跑到尾、不报错）。
# 默认一个进程（TEST_WORKERS=0）：两个进程时，机器一忙，带小部件的 notebook 的内核偶尔卡住（作业评分等满 60 秒、
# Voilà 页面打不开；ipykernel 7 的已知问题，见 microsoft/vscode-jupyter#17410、jupyter/nbclient#312），CI 不能冒这个险。
# 想快一些、也能接受偶尔重跑：make test TEST_WORKERS=2
# 先编译 toyllm 的 .pyc（可编辑安装的包 pip 不编译）：测试启动的几十个内核就不用各自再编译一遍。
TEST_WORKERS ?= 0
test: $(STAMP)
	$(VPY) -m compileall -q toyllm
	$(VPY) -m pytest -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder \
		--nbval --nbval-current-env --ignore=notebooks/homework/release $(PYTEST_ARGS)
	$(VPY) -m pytest --nbval-lax --nbval-current-env notebooks/homework/release

# 单元测试（tests/unit/）：改代码时反复跑的那一层，一个进程，本机一分钟左右。别的几层只在 make test 里跑：
#   tests/peers/（verl / TRL / CS336 的对照）、tests/notebooks/（讲课 notebook、讲义、作业的结构和讲义里的数字）、
#   tests/e2e/（真实浏览器、课程网站、Voilà、nbgrader 评分），以及 notebooks/ 的 nbval。
test-fast: $(STAMP)
	$(VPY) -m pytest tests/unit $(PYTEST_ARGS)

demo: $(STAMP)
	$(VPY) -m toyllm

homework: $(STAMP)
	$(VPY) tools/homework.py build
	$(VPY) tools/homework.py release

grade: $(STAMP)
	$(VPY) tools/homework.py grade

bench: $(STAMP)
	$(VPY) tools/bench.py
	$(VPY) tools/bench_import.py
	$(VPY) tools/bench_widgets.py
	$(VPY) tools/bench_tinylm.py --cot

notebooks: $(STAMP)
	$(VPY) tools/build_notebooks.py --all

figures: $(STAMP)
	$(VPY) tools/make_lecture_figures.py
	$(VPY) tools/network_claims.py

clean-venv:
	rm -rf $(VENV)

# ---------------------------------------------------------------------------------------------------
# 版本：锁定（constraints.txt）、最新、最低
# ---------------------------------------------------------------------------------------------------
# 锁文件：pyproject.toml 的全部依赖（所有 extras），对 Python 3.10 及以上每个版本各解一次（uv --universal）。
# tests/unit/setup/test_lock.py 检查它和 pyproject.toml 一致。
lock: $(VENV)/.stamp-lock
	$(VENV)/bin/uv pip compile pyproject.toml --all-extras --universal --python-version 3.10 \
		--custom-compile-command "make lock" --annotation-style line --upgrade -o constraints.txt
	@echo ">>> 已更新 constraints.txt；请运行 make test（CI 就用这些版本）"

# 最新版：每次都升级到最新（也装 site 和 voila，课程网站和 Voilà 的测试一起跑）；先列出和锁文件不同的版本
# （不隐藏差别），再跑和 make test 一样的测试。
LATEST_EXTRAS ?= dev,site,voila
test-latest:
	rm -f .venv-latest/.stamp-*
	$(MAKE) --no-print-directory .venv-latest/.stamp-$(LATEST_EXTRAS) VENV=.venv-latest CONSTRAINTS= \
		PIP_FLAGS="--upgrade --upgrade-strategy eager"
	@touch .venv-latest/.stamp-dev
	.venv-latest/bin/python .ci/versions.py diff constraints.txt
	$(MAKE) --no-print-directory test VENV=.venv-latest CONSTRAINTS=

# 最低版本：用 $(PYTHON_MIN)（最老的支持版本）和 uv 的 --resolution lowest-direct，让每个直接依赖正好装在
# pyproject.toml 写的下限上（间接依赖取能配合的最新版）；先核对确实装的是下限，再跑和 make test 一样的测试
# （也装 site 和 voila：课程网站和 Voilà 的浏览器测试也在最低版本上跑）。
MIN_EXTRAS ?= dev site voila
# make test-peers：用真的 TRL 和 verl 核对 toyllm.peers.to_trl(config) / to_verl(config)（tests/peers/test_peers_installed.py）。
# 版本在 tools/peers-requirements.txt（TRL、transformers……）和 tools/peers-nodeps.txt（verl，--no-deps：测试只读它的
# Hydra 配置，不 import 它）。torch 先单独用 pip 装（TORCH_SPEC；有的机器上 pip 从本地的 wheel 目录拿 CPU 版，uv 不找那里）。
PEERS_VENV ?= .venv-peers
TORCH_SPEC ?= torch==2.13.0
$(PEERS_VENV)/.stamp-peers: tools/peers-requirements.txt tools/peers-nodeps.txt pyproject.toml
	rm -rf $(PEERS_VENV)
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet $(TORCH_SPEC)
	$(PEERS_VENV)/bin/python -m pip install --quiet -r tools/peers-requirements.txt
	$(PEERS_VENV)/bin/python -m pip install --quiet --no-deps -r tools/peers-nodeps.txt
	$(PEERS_VENV)/bin/python -m pip install --quiet -e .
	@touch $@

test-peers: $(PEERS_VENV)/.stamp-peers
	HF_HUB_OFFLINE=1 $(PEERS_VENV)/bin/python -m pytest -p no:cacheprovider -q tests/peers/test_peers.py \
		tests/peers/test_peers_installed.py tests/peers/test_trl.py

# make trl PRESET=grpo STEPS=20：课程的预训练网络（MODEL=base）由 TRL 的 GRPOTrainer 在 CPU 上训练，和 numpy 上同一个预设、
# 同一个种子的 rl_train 并排打印（toyllm/peers/trl.py；讲义 8.11 节）。第一次先建 .venv-peers（同 make test-peers）。
# TRL 没有对应的选项要写进 IGNORE（逗号分开），例如 make trl PRESET=dapo IGNORE=dynamic_sampling,gen_batch_scale。
# 不用 make：.venv-peers/bin/python -m toyllm.peers.trl --preset grpo --steps 20
PRESET ?= grpo
STEPS ?= 20
MODEL ?= base
IGNORE ?=
trl: $(PEERS_VENV)/.stamp-peers
	HF_HUB_OFFLINE=1 $(PEERS_VENV)/bin/python -m toyllm.peers.trl --preset $(PRESET) --steps $(STEPS) --model $(MODEL) \
		$(if $(IGNORE),--ignore $(IGNORE)) $(TRL_ARGS)

test-min:
	rm -rf .venv-min
	$(PYTHON_MIN) -m venv .venv-min
	.venv-min/bin/python -m pip install --quiet -c $(CONSTRAINTS) uv
	.venv-min/bin/python -m uv pip install --compile-bytecode --python .venv-min/bin/python --resolution lowest-direct \
		-e '.[$(subst $(eval) ,$(comma),$(MIN_EXTRAS))]'
	.venv-min/bin/python .ci/versions.py lower-bounds $(MIN_EXTRAS)
	@touch .venv-min/.stamp-dev
	$(MAKE) --no-print-directory test VENV=.venv-min CONSTRAINTS=

print-python-min:
	@echo $(PYTHON_MIN)

# ---------------------------------------------------------------------------------------------------
# 课程网站和上课用的控制面板
# ---------------------------------------------------------------------------------------------------
# 网站：jupyter-book v1，书的根目录是仓库（讲义里 ../notebooks/… 的链接原样可用），配置和目录在 site/。
# 不执行 notebook（用提交的输出）；不需要网络。输出：$(SITE_OUT)/_build/html/index.html
site: $(VENV)/.stamp-site
	$(VENV)/bin/jupyter-book build . --config site/_config.yml --toc site/_toc.yml --path-output $(SITE_OUT) \
		--warningiserror --keep-going
	@echo ">>> 网站在 $(SITE_OUT)/_build/html/（直接打开 index.html，或者 python3 -m http.server -d $(SITE_OUT)/_build/html）"

# Voilà：dashboards/ 里每个 notebook 只调用 toyllm.dashboards 的一个面板（参考实现），网页上只有控件和图、没有代码。
# 默认是作业三的 GRPO 面板；别的：make voila DASHBOARD=hw1_gradient（或 hw2_passk）。
# 模板 toyllm-offline（dashboards/jupyter/voila/templates/）= Voilà 的 lab 模板去掉 CDN 上的图标字体：完全离线。
DASHBOARD ?= hw3_grpo
VOILA_ARGS = dashboards/$(DASHBOARD).ipynb --template=toyllm-offline --Voila.ip=127.0.0.1

voila: $(VENV)/.stamp-voila $(VENV)/.stamp-notebook
	@echo ">>> 正在启动 Voilà（Ctrl+C 退出）：面板 dashboards/$(DASHBOARD).ipynb。"
	@echo "    在浏览器打开 Voilà 下面打印的 http://127.0.0.1:$(VOILA_PORT)/ （第一次打开要等几秒：面板在算第一张图）"
	JUPYTER_PATH="$(CURDIR)/dashboards/jupyter$${JUPYTER_PATH:+:$$JUPYTER_PATH}" \
		$(VENV)/bin/voila $(VOILA_ARGS) --port=$(VOILA_PORT) --no-browser
