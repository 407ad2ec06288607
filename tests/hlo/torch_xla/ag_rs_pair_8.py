# FSDP-style all-gather of a parameter shard followed by a reduce-scatter of the gradient.
# Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=8 XLA_FLAGS="--xla_dump_to=dump_agrs --xla_dump_hlo_as_text" python ag_rs_pair_8.py
import torch, torch_xla, torch_xla.core.xla_model as xm

def fn(i):
    d = torch_xla.device()
    w = torch.arange(32., device=d).reshape(2, 16)
    full = xm.all_gather(w, dim=0, pin_layout=False)            # all-gather f32[2,16] -> f32[16,16]
    g = (full * 2.0).sin()
    out = xm.reduce_scatter(xm.REDUCE_SUM, g, 1.0 / 8, 0, 8, pin_layout=False)  # reduce-scatter -> f32[2,16]
    torch_xla._XLAC._xla_warm_up_cache([out], [])

if __name__ == '__main__':
    torch_xla.launch(fn, args=())
