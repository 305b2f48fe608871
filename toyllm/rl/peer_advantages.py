"""旧的位置（只留一个版本）：toyllm.rl.peer_advantages 搬到了 toyllm.peers.advantages。本包不导入 toyllm.peers，这里只报错说去哪里找。"""

raise ImportError("toyllm.rl.peer_advantages 搬到了 toyllm.peers.advantages（reinforce_pp_advantages 和 whiten 留在 toyllm.rl.losses）：先 import toyllm.peers（见 README 的“搬家的名字”）")
