"""
断网的浏览器测试（tests/e2e/test_site.py、tests/e2e/test_voila.py）共用的小工具。

【思路】用 Debian 的 chromium（由 Python 版 Playwright 驱动，不运行 playwright install），启动参数和
    tests/e2e/test_browser.py 相同；每个页面的每个请求都经过 route：127.0.0.1 上的（本机的服务器）放行，
    其余的一律拦下并记进 blocked，测试最后断言 blocked 为空 —— "没有请求离开本机"。
"""

import shutil
import sys
import urllib.parse
from contextlib import contextmanager
from pathlib import Path

from test_browser import CHROMIUM_ARGS, _unavailable


def require(command, extra):
    """
    检查断网浏览器测试要的东西：本环境里的命令行工具 command（例如 jupyter-book、voila）、chromium、playwright。

    【返回】command 的路径。缺了时跳过（TOYLLM_REQUIRE_BROWSER=1 时失败），说明怎么装。
    """
    exe = Path(sys.executable).parent / command
    if not exe.exists():
        _unavailable(f"没有安装 {command}（pip install -e '.[{extra}]'；make {extra} 会自动装）")
    if shutil.which("chromium") is None:
        _unavailable("找不到 chromium（Debian / Ubuntu：apt-get install -y chromium fonts-noto-cjk）")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable("没有安装 playwright（pip install playwright；不需要 playwright install）")
    return exe


@contextmanager
def offline_context(blocked, viewport=(1300, 1000)):
    """
    启动 chromium，给出一个"断网"的浏览器上下文：发往 127.0.0.1 以外的请求都被拦下，网址记进 blocked（list）。
    """
    from playwright.sync_api import sync_playwright

    def route(r):
        if urllib.parse.urlsplit(r.request.url).hostname == "127.0.0.1":
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, locale="zh-CN")
            context.route("**/*", route)
            yield context
            context.close()
        finally:
            browser.close()
