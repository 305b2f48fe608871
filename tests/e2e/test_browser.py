"""
真实浏览器里的小部件：启动 JupyterLab，用 Debian 的无头 Chromium（由 Python 版 Playwright 驱动）打开作业三，
Run → Run All Cells，等控制面板的滑块出现，改一个滑块的值，看面板的输出跟着变；选"你写的函数"时「优势」下拉框是灰的，
换成"包里的参考实现"后它能用、输出的第一句和图（总标题写明谁的函数）跟着变，图里的字不小于 MIN_TEXT_PX；存一张截图。
窗口 1280 像素宽、左边的文件浏览器开着（学生的默认布局）：下拉框里的每个选项都整个看得见，说明的每一行不折行，
控件不超出输出区。

【为什么要有这个测试】ipywidgets 在 JupyterLab 里常见的毛病 —— "Loading widget..."、"Error displaying widget:
model not found"、前端扩展和 Python 包版本对不上 —— 只有真的在浏览器里打开才看得出来；pytest 里直接调用
Python 对象（tests/unit/ui/test_widgets.py）是发现不了的。

【运行】`python -m pytest -m browser tests/e2e/test_browser.py`（单独运行）。需要 Debian 的 chromium
（apt-get install -y chromium fonts-noto-cjk）；**不要**运行 `playwright install`，这里直接用系统的 chromium。
没有 chromium 时跳过（并说明原因）；环境变量 TOYLLM_REQUIRE_BROWSER=1（CI 里这样设）时改为失败。
截图存到 artifacts/browser_hw3_grpo.png。

【隔离】JupyterLab 的配置、运行时、数据、工作区、用户设置全放在临时目录里（不读也不写你自己的 ~/.jupyter）；
notebook 复制到临时目录里打开（运行时的改动和自动保存不会碰仓库里的文件）；端口是随机的空闲端口，token 是随机的。
用户设置里把 notebook 的 windowingMode 设为 "none"：JupyterLab 4 默认只渲染视口附近的单元格。
"""

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from background import Background
from paths import ROOT

pytestmark = pytest.mark.browser

NOTEBOOK = ROOT / "notebooks" / "homework" / "source" / "hw3" / "hw3_grpo.ipynb"
ARTIFACTS = ROOT / "artifacts"
SCREENSHOT = ARTIFACTS / "browser_hw3_grpo.png"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
TIMEOUT_MS = 180_000


def _unavailable(reason):
    """缺少浏览器相关的东西：平时跳过；TOYLLM_REQUIRE_BROWSER=1（CI）时失败。"""
    if os.environ.get("TOYLLM_REQUIRE_BROWSER") == "1":
        pytest.fail(f"TOYLLM_REQUIRE_BROWSER=1，但是{reason}")
    pytest.skip(reason)


def _requirements():
    chromium = shutil.which("chromium")
    if chromium is None:
        _unavailable("找不到 chromium（Debian / Ubuntu：apt-get install -y chromium fonts-noto-cjk）")
    for module, hint in (("playwright.sync_api", "pip install playwright（不需要 playwright install）"),
                         ("jupyterlab", "pip install jupyterlab"), ("ipywidgets", "pip install ipywidgets")):
        try:
            __import__(module)
        except ImportError:
            _unavailable(f"没有安装 {module.split('.')[0]}（{hint}；或者 pip install -e '.[dev]'）")
    return chromium


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_server(proc, url, log, name, timeout=120):
    """
    等本机的服务器（JupyterLab、Voilà）能响应 url；进程先退出了或者超时，就带着它日志的最后一段失败。

    端口还没打开时，连接立刻被拒绝，隔 0.3 秒再试；端口一打开，就只发**一个**请求，等它到截止时间为止。
    （Voilà 每收到一个页面请求就把面板算一遍：机器忙的时候，短超时的请求一个接一个地超时，只会越堆越多。）
    """
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            log.flush()
            pytest.fail(f"{name} 没能启动：\n" + Path(log.name).read_text(encoding="utf-8")[-3000:])
        try:
            urllib.request.urlopen(url, timeout=max(deadline - time.monotonic(), 1))
            return
        except OSError:
            if time.monotonic() > deadline:
                pytest.fail(f"{name} {timeout} 秒内没有响应")
            time.sleep(0.3)


def _write_settings(folder):
    """
    JupyterLab 的用户设置：所有单元格都渲染（windowingMode none）；不弹"要不要看新闻"的通知；
    .md 文件用 Markdown 预览打开（学生读讲义的样子，tests/e2e/test_browser_fit.py 量它）。
    """
    settings = {
        ("@jupyterlab", "notebook-extension", "tracker"): {"windowingMode": "none"},
        ("@jupyterlab", "apputils-extension", "notification"): {"fetchNews": "false", "checkForUpdates": False},
        ("@jupyterlab", "docmanager-extension", "plugin"): {"defaultViewers": {"markdown": "Markdown Preview"}},
    }
    for (scope, ext, name), value in settings.items():
        path = folder / scope / ext / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")


@contextlib.contextmanager
def running_jupyterlab(tmp_path, notebooks):
    """
    在临时目录里启动 JupyterLab，把 notebooks（路径）复制进它的根目录；给出 (基础网址, token, 根目录)，
    结束时关掉它（只关自己启动的进程）。tests/e2e/test_browser_fit.py 也用它。
    """
    root = tmp_path / "root"
    root.mkdir()
    for notebook in notebooks:
        shutil.copy(notebook, root / Path(notebook).name)
    settings = tmp_path / "lab-settings"
    _write_settings(settings)
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               JUPYTER_DATA_DIR=str(tmp_path / "data"), IPYTHONDIR=str(tmp_path / "ipython"))
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={root}", f"--LabApp.user_settings_dir={settings}",
           f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(tmp_path / "jupyterlab.log", "w", encoding="utf-8")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(proc, f"{base}/api/status?token={token}", log, "JupyterLab")
        yield base, token, root
    finally:
        try:
            urllib.request.urlopen(urllib.request.Request(f"{base}/api/shutdown?token={token}", method="POST"),
                                   timeout=10)
            proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def _wait_for_idle_kernel(base, token, timeout=120):
    """等到 notebook 的内核启动并空闲（否则 Run All 会弹出"选择内核"的对话框）。"""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sessions = json.load(urllib.request.urlopen(f"{base}/api/sessions?token={token}", timeout=5))
        if sessions and sessions[0]["kernel"]["execution_state"] == "idle":
            return
        time.sleep(0.5)
    pytest.fail("内核没有在规定时间内启动")


def _run_dashboard(tmp):
    """
    在临时目录里启动 JupyterLab（只放作业三），在 chromium 里运行整个 notebook、拨动面板，逐项检查（失败就抛出）。
    大部分时间在等 JupyterLab、内核和 chromium（子进程）：在后台线程里先开始（tests/background.py），别的测试同时运行。
    """
    chromium = _requirements()
    with running_jupyterlab(tmp, [NOTEBOOK]) as (base, token, _):
        _drive_dashboard(chromium, base, token)


BACKGROUND = Background(_run_dashboard, "browser", priority=1)


def test_grpo_dashboard_in_a_real_browser(tmp_path_factory):
    BACKGROUND.get(tmp_path_factory)


FITS = r"""() => {
    const out = [...document.querySelectorAll('.widget-output')].find(e => e.innerText.includes('次迭代'));
    const panel = out.closest('.widget-vbox');
    const right = panel.parentElement.getBoundingClientRect().right;
    const ctx = document.createElement('canvas').getContext('2d');
    const problems = [];
    for (const w of panel.querySelectorAll('.widget-inline-hbox, .widget-checkbox')) {
        if (w.getBoundingClientRect().right > right + 1) problems.push('控件超出输出区：' + w.innerText.trim());
        const label = w.querySelector('.widget-label');
        if (label && label.scrollWidth > label.clientWidth + 1) problems.push('控件的名字被截断：' + label.innerText);
        const sel = w.querySelector('select');
        if (!sel) continue;
        const cs = getComputedStyle(sel);
        ctx.font = cs.font;
        for (const o of sel.options) {                       // 选项的字 + 左右留白（右边有下拉箭头）放得下
            const need = ctx.measureText(o.text).width + parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight);
            if (need > sel.clientWidth - 8) problems.push(`下拉框的选项放不下：${o.text}（要 ${need} 像素，有 ${sel.clientWidth}）`);
        }
    }
    const pre = out.querySelector('pre'), node = pre.firstChild, range = document.createRange();
    let offset = 0;
    for (const line of node.textContent.replace(/\n$/, '').split('\n')) {     // 每一行在屏幕上只占一行（不折行）
        const tops = new Set();
        for (let i = 0; i < line.length; i++) {
            range.setStart(node, offset + i);
            range.setEnd(node, offset + i + 1);
            const r = range.getClientRects()[0];
            if (r) tops.add(Math.round(r.top));
        }
        if (tops.size > 1) problems.push('说明的这一行折成了 ' + tops.size + ' 行：' + line);
        offset += line.length + 1;
    }
    return problems;
}"""
"""在面板上量：控件不超出输出区、名字不被截断、下拉框的每个选项放得下、说明的每一行不折行。【返回】问题的列表"""


def _assert_fits(page):
    editor = page.evaluate("() => document.querySelector('.jp-CodeCell .cm-scroller').clientWidth")
    assert 700 < editor < 900, f"代码编辑区 {editor} 像素：不是开着文件浏览器的默认布局"
    problems = page.evaluate(FITS)
    assert not problems, "1280 像素宽的 JupyterLab 里面板放不下：\n" + "\n".join(problems)


def _drive_dashboard(chromium, base, token):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    problems = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900}, locale="zh-CN")
        page.set_default_timeout(TIMEOUT_MS)
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" and "widget" in m.text.lower()
                else None)
        try:
            page.goto(f"{base}/lab/tree/{NOTEBOOK.name}?reset&token={token}")       # 默认布局：文件浏览器开着
            page.wait_for_selector(".jp-Notebook .jp-Cell")
            _wait_for_idle_kernel(base, token)

            # Run → Run All Cells
            page.click(".lm-MenuBar-itemLabel:text-is('Run')")
            page.click("li.lm-Menu-item[data-command='runmenu:run-all']")
            if page.locator(".jp-Dialog .jp-mod-accept").count():          # 万一还是弹出了"选择内核"
                page.click(".jp-Dialog .jp-mod-accept")

            slider = page.locator(".widget-hslider", has_text="迭代次数")
            slider.wait_for(state="visible")
            slider.scroll_into_view_if_needed()
            output = page.locator(".widget-output", has_text="次迭代").first
            output.wait_for(state="visible")
            page.wait_for_function("() => [...document.querySelectorAll('.widget-output')]"
                                   ".some(e => e.innerText.includes('30 次迭代') && e.querySelector('img'))")
            before = output.inner_text()
            assert "30 次迭代" in before and "路径 pass@1" in before

            # 改滑块的值：在滑块的读数框里输入 10，回车（continuous_update=False：回车 / 松开才触发）
            readout = slider.locator(".widget-readout")
            readout.click()
            page.keyboard.press("Control+A")
            page.keyboard.type("10")
            page.keyboard.press("Enter")
            page.wait_for_function("() => [...document.querySelectorAll('.widget-output')]"
                                   ".some(e => e.innerText.includes('10 次迭代') && e.querySelector('img'))")
            after = output.inner_text()
            assert after != before and "10 次迭代" in after

            # 作业的函数通过了检查，面板默认用"你写的函数"：「优势」下拉框变灰（不是悄悄地被忽略），输出写明是谁的实现
            assert "实现：用你写的优势函数、替代损失" in after
            advantage = page.locator(".widget-dropdown", has_text="优势（").locator("select")
            assert advantage.is_disabled()
            _assert_fits(page)
            # 换成包里的参考实现：「优势」能用了，输出的第一句跟着变；图也变了（总标题写明是谁的函数训练出来的）
            mine_src = output.locator("img").first.get_attribute("src")
            page.locator(".widget-dropdown", has_text="优势和替代损失用").locator("select").select_option(
                label="包里的参考实现")
            page.wait_for_function("() => [...document.querySelectorAll('.widget-output')]"
                                   ".some(e => e.innerText.includes('实现：用包里的参考实现') && e.querySelector('img'))")
            assert page.locator(".widget-dropdown", has_text="优势").locator("select").first.is_enabled()
            _assert_fits(page)

            img = output.locator("img").first
            assert img.get_attribute("src").startswith("data:image/png") and img.get_attribute("src") != mine_src
            natural, shown = img.evaluate("e => [e.naturalWidth, e.getBoundingClientRect().width]")
            assert natural > 500
            # 面板的图缩放以后，最小的字（DASHBOARD_STYLE 里最小的字号，按 FIG_DPI 画）不小于 MIN_TEXT_PX 像素
            from toyllm.dashboards import DASHBOARD_STYLE, FIG_DPI
            from toyllm.plotstyle import MIN_TEXT_PX
            smallest = min(DASHBOARD_STYLE.values()) * FIG_DPI / 72 * shown / natural
            assert smallest >= MIN_TEXT_PX, f"面板的图被缩小了，最小的字只有 {smallest:.1f} 像素"
            body = page.inner_text("body")
            assert "Loading widget" not in body and "Error displaying widget" not in body
            assert "组大小 G" in body and "GRPO 训练面板" in body
            output.scroll_into_view_if_needed()
            page.screenshot(path=str(SCREENSHOT))
        except Exception:
            page.screenshot(path=str(ARTIFACTS / "browser_hw3_grpo_failure.png"))
            raise
        finally:
            browser.close()
    assert not problems, f"浏览器控制台里有小部件相关的错误：{problems[:5]}"
    assert SCREENSHOT.stat().st_size > 10_000
