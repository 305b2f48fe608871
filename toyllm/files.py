"""
写文件：全包只有这一个写法，原子地写（预训练网络的权重和清单、tools/checkpoint.py 存的模型和训练记录都用它）。

【思路】先写进同一个文件夹里的临时文件 → fsync → os.replace 换上去。os.replace 在同一个文件系统里是原子的：
    别人看到的要么是旧文件，要么是新文件，不会是写了一半的。
【边界】中途出错（包括 Ctrl+C）时删掉临时文件，原来的文件原封不动。文件夹不存在、path 是文件夹时报中文的错。
"""

import os
import tempfile


def atomic_write(path, data):
    """
    把 data（bytes，或 str：按 UTF-8、换行 \\n 写）原子地写到 path。

    【边界】覆盖已有的文件时保留它的权限；新文件的权限是 0o666 去掉 umask（一般是 0o644，大家都能读）。
    【例子】atomic_write("notes.txt", "你好\\n")
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(f"保存失败：{path} 是一个文件夹，请给一个文件名")
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"保存失败：文件夹 {folder} 不存在；请先创建它（os.makedirs({folder!r})）")
    umask = os.umask(0o22)
    os.umask(umask)
    mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            for line in data.splitlines(keepends=True):     # 一行一行地写（拼起来逐字节就是 data）
                f.write(line)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)                          # mkstemp 建的文件只有自己能读
        os.replace(tmp, path)
    except BaseException as e:                       # 包括 Ctrl+C：删掉临时文件再抛出
        os.unlink(tmp)
        if isinstance(e, OSError):
            raise OSError(e.errno, f"保存 {path} 失败（{e.strerror or e}）；原来的文件（如果有）没有被改动") from e
        raise


__all__ = ["atomic_write"]
