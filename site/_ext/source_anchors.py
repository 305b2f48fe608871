"""
课程网站（jupyter-book / Sphinx）的小扩展：来源表 lectures/sources.md 每一行开头的 <a id="S101"></a> 成为链接目标。

【为什么】讲义和 notebook 用 [S101](sources.md#S101) 指向来源表的一行。MyST 只认标题生成的锚点，表格里的 HTML 锚点它不知道，
    会警告"local id not found"（网站用 --warningiserror 构建，警告就是失败）。这里在读完来源表以后，把每个 <a id="S…">
    登记成那一页的锚点（MyST 查的是 env.metadata[页]["myst_slugs"]）。HTML 里锚点本来就在（表格里的原样 HTML），
    所以链接在网站上跳到那一行；在 JupyterLab 里打开 .md 时也是同一个锚点。不是 S 编号的锚点照样警告。
"""

import re

from docutils import nodes

DOC = "lectures/sources"
ANCHOR = re.compile(r'<a id="(S\d{3})">')


def _register(app, doctree):
    env = app.env
    if env.docname != DOC:
        return
    slugs = env.metadata[DOC].setdefault("myst_slugs", {})
    for raw in doctree.findall(nodes.raw):
        for anchor in ANCHOR.findall(raw.astext()):
            slugs[anchor] = (raw.line or 0, anchor, anchor)


def setup(app):
    app.connect("doctree-read", _register)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
