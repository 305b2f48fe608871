"""旧的位置（只留一个版本）：toyllm.rl.peers 搬到了 toyllm.peers。本包不导入 toyllm.peers，这里只报错说去哪里找。"""

raise ImportError("toyllm.rl.peers 搬到了 toyllm.peers（对照表 toyllm.peers.ROWS；RLConfig.to_trl() / to_verl() 现在是 toyllm.peers.to_trl(config) / to_verl(config)）：先 import toyllm.peers（见 README 的“搬家的名字”）")
