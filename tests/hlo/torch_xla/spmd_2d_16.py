# GSPMD-sharded matmul on a 4x4 (dp, tp) mesh: the partitioner emits an all-gather,
# an all-reduce and a collective-permute (channel_id, use_global_device_ids=true, num_partitions=16).
# Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=16 XLA_FLAGS="--xla_dump_to=dump_spmd --xla_dump_hlo_as_text" python spmd_2d_16.py
# Output: dump_spmd/module_0001.SyncTensorsGraph.6.cpu_after_optimizations.txt
import numpy as np, torch, torch_xla, torch_xla.runtime as xr
import torch_xla.distributed.spmd as xs
xr.use_spmd()
n = xr.global_runtime_device_count()
d = torch_xla.device()
torch.manual_seed(0)
mesh = xs.Mesh(np.arange(n), (n // 4, 4), ('dp', 'tp'))
a = torch.randn(64, 32).to(d); b = torch.randn(32, 16).to(d)
xs.mark_sharding(a, mesh, ('dp', 'tp'))
xs.mark_sharding(b, mesh, ('tp', None))
c = a @ b
xs.mark_sharding(c, mesh, (None, 'tp'))
torch_xla.sync(); print(c.cpu().shape)
