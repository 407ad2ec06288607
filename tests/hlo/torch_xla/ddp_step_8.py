# DDP-style data-parallel training step: one combined gradient all-reduce (xm.optimizer_step).
# Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=8 XLA_FLAGS="--xla_dump_to=dump_ddp --xla_dump_hlo_as_text" python ddp_step_8.py
# Output: dump_ddp/module_*.SyncTensorsGraph.*.cpu_after_optimizations.txt (one per replica thread, identical)
# Note: on the CPU PJRT client, executing multi-replica collectives hangs (one thread per device),
# so the graph is compiled but not run (_xla_warm_up_cache compiles without executing).
import torch, torch.nn as nn, torch_xla, torch_xla.core.xla_model as xm

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(16, 32); self.l2 = nn.Linear(32, 8)
    def forward(self, x): return self.l2(torch.relu(self.l1(x)))

def fn(i):
    d = torch_xla.device()
    torch.manual_seed(0)
    m = MLP().to(d); opt = torch.optim.SGD(m.parameters(), lr=0.1)
    inp = torch.randn(4, 16).to(d); tgt = torch.randn(4, 8).to(d)
    loss = nn.functional.mse_loss(m(inp), tgt); loss.backward()
    xm.optimizer_step(opt)   # all-reduce of every gradient, then SGD
    torch_xla._XLAC._xla_warm_up_cache(list(m.parameters()) + [loss], [])

if __name__ == '__main__':
    torch_xla.launch(fn, args=())
