"""旧的位置（只留一个版本）：toyllm.rl.peer_losses 搬到了 toyllm.peers.losses。本包不导入 toyllm.peers，这里只报错说去哪里找。"""

raise ImportError("toyllm.rl.peer_losses 搬到了 toyllm.peers.losses：先 import toyllm.peers（见 README 的“搬家的名字”）")
