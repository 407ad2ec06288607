# 2-D (dp=4, tp=2) GSPMD training step of a 2-layer MLP with SGD: six partitioner all-reduces
# over groups {{0,1},...} (tp) and {{0,2,4,6},{1,3,5,7}} (dp).
# Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=8 XLA_FLAGS="--xla_dump_to=dump_train --xla_dump_hlo_as_text" python spmd_train_8.py
# Output: dump_train/module_0001.SyncTensorsGraph.92.cpu_after_optimizations.txt
import numpy as np, torch, torch.nn as nn, torch_xla, torch_xla.runtime as xr
import torch_xla.distributed.spmd as xs
xr.use_spmd()
n = xr.global_runtime_device_count()
d = torch_xla.device()
torch.manual_seed(0)
mesh = xs.Mesh(np.arange(n), (n // 2, 2), ('dp', 'tp'))
m = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8)).to(d)
xs.mark_sharding(m[0].weight, mesh, ('tp', None))
xs.mark_sharding(m[2].weight, mesh, (None, 'tp'))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
inp = torch.randn(16, 16).to(d); tgt = torch.randn(16, 8).to(d)
xs.mark_sharding(inp, mesh, ('dp', None)); xs.mark_sharding(tgt, mesh, ('dp', None))
loss = nn.functional.mse_loss(m(inp), tgt); loss.backward(); opt.step()
torch_xla.sync(); print(loss.item())
