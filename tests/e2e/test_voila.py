"""
上课用的无代码控制面板（make voila）：用 Voilà 提供 dashboards/ 里的页面，在真实浏览器里拖一个滑块，看图变了。

【检查什么】页面上没有代码；按名字（"迭代次数"）找到滑块，用键盘把它拨到最小值（和用鼠标拖一样触发重算），
    面板里的图（<img> 的 src）变成一张新图；页面没有向本机以外发任何请求（都被拦下并记录）；
    1280 像素宽的窗口里，面板的控件、文字、图都放得下，控件的标签没有被截断（browser_offline.OVERFLOW）。
【运行】python -m pytest -m browser tests/e2e/test_voila.py。需要 .[voila]（pip install -e '.[voila]'；make voila 会装）
    和 Debian 的 chromium；缺了时跳过并说明原因，TOYLLM_REQUIRE_BROWSER=1（CI）时改为失败。
    三个面板（dashboards/*.ipynb）各测一次；截图存到 artifacts/voila_<面板>.png。
【隔离】Voilà 的配置、运行时、数据目录放在临时目录里；端口是随机的空闲端口；测试结束只关掉自己启动的进程。
"""

import os
import subprocess

import pytest
from browser_offline import OVERFLOW, UNITS, offline_context, require, too_wide
from test_browser import ARTIFACTS, _free_port, wait_for_server
from paths import ROOT

pytestmark = pytest.mark.browser

DASHBOARDS = ROOT / "dashboards"
TIMEOUT_MS = 180_000


def test_every_dashboard_notebook_only_calls_a_public_entry_point():
    import nbformat

    import toyllm.dashboards

    pages = sorted(DASHBOARDS.glob("*.ipynb"))
    assert [p.stem for p in pages] == ["hw1_gradient", "hw2_passk", "hw3_grpo"]
    for path in pages:
        nb = nbformat.read(path, as_version=4)
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        assert len(code) == 1, f"{path.name} 应当只有一个代码单元格"
        name = code[0].splitlines()[-1].removesuffix("()")
        assert code[0] == f"from toyllm.dashboards import {name}\n\n{name}()", code[0]
        assert callable(getattr(toyllm.dashboards, name)), f"{path.name}：toyllm.dashboards 里没有 {name}"
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), f"{path.name} 不应提交输出"


# 每个面板：Makefile 里的 DASHBOARD、页面标题里的字、要拨动的滑块的名字
DASHBOARD_CASES = [("hw1_gradient", "每题样本数 n"), ("hw2_passk", "每题样本数 n"), ("hw3_grpo", "迭代次数")]


@pytest.fixture(params=DASHBOARD_CASES, ids=[c[0] for c in DASHBOARD_CASES])
def voila(request, tmp_path):
    """和 make voila 一样启动 Voilà（同样的参数、同样的离线模板），返回 (网址, 滑块名字, 面板名)。"""
    dashboard, slider = request.param
    exe = require("voila", "voila")
    port = _free_port()
    jupyter_path = os.pathsep.join(filter(None, [str(DASHBOARDS / "jupyter"), os.environ.get("JUPYTER_PATH")]))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               IPYTHONDIR=str(tmp_path / "ipython"), JUPYTER_PATH=jupyter_path)
    args = _make_voila_args(dashboard)
    log = open(tmp_path / "voila.log", "w", encoding="utf-8")
    proc = subprocess.Popen([str(exe), *args, "--no-browser", f"--port={port}"],
                            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(proc, base + "/", log, "Voilà", timeout=240)   # Voilà 先把面板算出来才响应
        yield base, slider, dashboard
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _make_voila_args(dashboard):
    """Makefile 里 VOILA_ARGS 的值（DASHBOARD 换成给定的面板），保证测试和 make voila 用同样的参数。"""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("VOILA_ARGS ="))
    return line.split("=", 1)[1].replace("$(DASHBOARD)", dashboard).split()


FIGURE = "() => { const i = [...document.querySelectorAll('.widget-output img')].pop(); return i ? i.src : null; }"


def _open_first_page(page, base, dashboard):
    """
    打开面板的网页。机器很忙时，一个新的 Voilà 的第一个页面偶尔一直不结束（notebook 已经运行完、内核空闲，
    页面却没有发完：Voilà 0.5 / ipykernel 的问题，根源没有找到，见 make test 的说明）；同一个服务器的下一个页面
    不会这样。学生遇到时刷新一下就好（README 的常见问题）。所以第一次最多等 90 秒，不行就打印一行、再打开一次；
    第二次还打不开就失败。
    """
    from playwright.sync_api import TimeoutError as PageTimeout

    try:
        page.goto(base + "/", timeout=90_000)
    except PageTimeout:
        print(f"Voilà（{dashboard}）的第一个页面 90 秒没有打开，刷新一次")
        page.goto(base + "/")


def test_moving_a_slider_redraws_the_figure(voila):
    base, label, dashboard = voila
    ARTIFACTS.mkdir(exist_ok=True)
    blocked = []
    with offline_context(blocked, viewport=(1280, 900)) as context:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        try:
            _open_first_page(page, base, dashboard)
            page.wait_for_function(f"() => ({FIGURE})() && ({FIGURE})().startsWith('data:image/png')")
            before = page.evaluate(FIGURE)
            wide = page.evaluate(OVERFLOW, ["body", UNITS, ".widget-label, .widget-readout"])
            body = page.inner_text("body")
            assert "面板" in body or "作业" in body
            assert "from toyllm.dashboards" not in body and "_dashboard()" not in body, "Voilà 页面上不应显示代码"

            # 按名字找滑块（例如标签是"迭代次数"的那一个）；键盘 Home 把它拨到最小值（松开才重算的滑块也会重算）
            slider = page.locator(".widget-slider", has=page.get_by_text(label, exact=True)).get_by_role("slider")
            assert slider.count() == 1
            old_value = slider.get_attribute("aria-valuenow")
            slider.focus()
            page.keyboard.press("Home")
            page.wait_for_function(f"before => ({FIGURE})() && ({FIGURE})() !== before", arg=before)
            after = page.evaluate(FIGURE)
            assert slider.get_attribute("aria-valuenow") != old_value
            assert after.startswith("data:image/png") and after != before
            assert page.evaluate("() => [...document.querySelectorAll('.widget-output img')].pop().naturalWidth") > 300
            page.screenshot(path=str(ARTIFACTS / f"voila_{dashboard}.png"), full_page=True)
        except Exception:
            page.screenshot(path=str(ARTIFACTS / f"voila_{dashboard}_failure.png"), full_page=True)
            raise
    assert not blocked, f"Voilà 页面向外发了请求（都被拦下了）：{sorted(set(blocked))[:10]}"
    assert not wide, f"面板 {dashboard} 在 1280 像素宽的窗口里放不下：\n" + too_wide(wide)
